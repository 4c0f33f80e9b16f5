import { describe, expect, it } from 'vitest';
import { PromptRenderError } from '../core/errors.js';
import { analyzeJinjaTemplate, JinjaSyntaxError, renderJinjaTemplate } from './jinja.js';

function identifiers(template: string): string[] {
  return analyzeJinjaTemplate(template).identifiers;
}

function syntaxErrorOf(template: string): JinjaSyntaxError {
  try {
    analyzeJinjaTemplate(template);
  } catch (error) {
    if (error instanceof JinjaSyntaxError) return error;
    throw error;
  }
  throw new Error(`expected a syntax error for ${JSON.stringify(template)}`);
}

describe('analyzeJinjaTemplate', () => {
  it('lists the names a template reads, each once, in first-seen order', () => {
    expect(
      identifiers('{{ issue_title }} ({{ issue_number }}): {{ issue_body }} #{{ issue_number }}'),
    ).toEqual(['issue_title', 'issue_number', 'issue_body']);
  });

  it('reports only the top-level name of attribute and index lookups', () => {
    expect(identifiers('{{ issue.title }} {{ labels[0] }} {{ data["k"] }}')).toEqual([
      'issue',
      'labels',
      'data',
    ]);
  });

  it('reports names used as indexes, filter arguments, conditions and function arguments', () => {
    expect(identifiers('{{ a[idx] }} {{ b | default(fallback) }} {{ c if cond else d }}')).toEqual([
      'a',
      'idx',
      'b',
      'fallback',
      'c',
      'cond',
      'd',
    ]);
  });

  it('does not report loop variables or loop, but does report what the loop iterates', () => {
    expect(identifiers('{% for label in labels %}{{ loop.index }}. {{ label }}{% endfor %}')).toEqual([
      'labels',
    ]);
  });

  it('does not report key/value loop variables', () => {
    expect(identifiers('{% for k, v in mapping %}{{ k }}={{ v }}{% endfor %}')).toEqual(['mapping']);
  });

  it('reports a loop variable used after its loop, and names used in the else branch', () => {
    expect(identifiers('{% for x in xs %}{{ x }}{% else %}{{ empty_note }}{% endfor %}{{ x }}')).toEqual([
      'xs',
      'empty_note',
      'x',
    ]);
  });

  it('does not report names the template sets, but does report what it sets them from', () => {
    expect(
      identifiers(
        '{% set n = labels | length %}{{ n }} {% set body %}{{ issue_body }}{% endset %}{{ body }}',
      ),
    ).toEqual(['labels', 'issue_body']);
  });

  it('reports a name read before the template sets it', () => {
    expect(identifiers('{{ n }}{% set n = 1 %}{{ n }}')).toEqual(['n']);
  });

  it('counts a name set in an if as set only when every branch sets it', () => {
    expect(identifiers('{% if a %}{% set x = 1 %}{% else %}{% set x = 2 %}{% endif %}{{ x }}')).toEqual([
      'a',
    ]);
    expect(identifiers('{% if a %}{% set y = 1 %}{% endif %}{{ y }}')).toEqual(['a', 'y']);
  });

  it('does not report macro arguments, but does report what a macro reads from outside', () => {
    expect(
      identifiers(
        '{% macro greet(name, greeting="hi") %}{{ greeting }} {{ name }} {{ repo }}{% endmacro %}{{ greet(author) }}',
      ),
    ).toEqual(['repo', 'author']);
  });

  it('does not report built-in globals, literals or keyword argument names', () => {
    expect(
      identifiers(
        '{% for i in range(3) %}{{ i }}{% endfor %}{{ true }} {{ None }} {{ x | truncate(length=5) }}',
      ),
    ).toEqual(['x']);
  });

  it('does not report dict keys written as bare words', () => {
    expect(identifiers('{{ {title: issue_title} | dump }}')).toEqual(['issue_title']);
  });

  it('reports a syntax error with its line and column', () => {
    const error = syntaxErrorOf('Title: {{ issue_title }}\nBody: {{ issue_body | }}');
    expect(error.line).toBe(2);
    expect(error.column).toBe(23);
    expect(error.message).toBe('expected symbol, got variable-end (line 2, column 23)');
  });

  it('places an unclosed block at the end of the template', () => {
    const error = syntaxErrorOf('{% if x %}\nyes');
    expect(error.detail).toBe('expected elif, else, or endif, got end of file');
    expect([error.line, error.column]).toEqual([2, 4]);
  });

  it('rejects an unterminated expression', () => {
    expect(syntaxErrorOf('Fix {{ issue_title').detail).toBe('expected variable end');
  });

  it('rejects an unknown tag', () => {
    expect(syntaxErrorOf('{% frobnicate %}').detail).toBe('unknown block tag: frobnicate');
  });

  it('rejects an unknown filter where it is used', () => {
    const error = syntaxErrorOf('ok\n{{ labels | jion(", ") }}');
    expect(error.detail).toBe("no filter named 'jion'");
    expect([error.line, error.column]).toEqual([2, 13]);
  });

  it('rejects an unknown test', () => {
    expect(syntaxErrorOf('{% if x is frobbed %}{% endif %}').detail).toBe("no test named 'frobbed'");
  });

  it.each([
    '{% include "other.txt" %}',
    '{% import "m.njk" as m %}',
    '{% from "m.njk" import a %}',
    '{% extends "base" %}',
  ])('rejects tags that would read other files: %s', (template) => {
    expect(syntaxErrorOf(template).detail).toMatch(/tag is not available in prompt templates/);
  });

  it('rejects assignment to something that is not a name', () => {
    expect(syntaxErrorOf('{% set a.b = 1 %}').detail).toBe('can only assign to names');
  });
});

describe('renderJinjaTemplate', () => {
  it('prints strings and numbers as they are', () => {
    expect(renderJinjaTemplate('#{{ n }}: {{ title }}', { n: 12, title: 'Crash <on> "start" & stop' })).toBe(
      '#12: Crash <on> "start" & stop',
    );
  });

  it('prints a list as compact JSON, like ${…} templates', () => {
    expect(renderJinjaTemplate('{{ labels }}', { labels: ['bug', 'ação'] })).toBe(
      '["bug","a\\u00e7\\u00e3o"]',
    );
  });

  it('prints booleans in lowercase and null as nothing', () => {
    expect(
      renderJinjaTemplate('[{{ draft }}|{{ merged }}|{{ milestone }}|{{ missing }}]', {
        draft: true,
        merged: false,
        milestone: null,
      }),
    ).toBe('[true|false||]');
  });

  it('prints an object as compact JSON', () => {
    expect(renderJinjaTemplate('{{ o }}', { o: { k: 1, l: [true, null] } })).toBe('{"k":1,"l":[true,null]}');
  });

  it('keeps lists as lists inside expressions', () => {
    const context = { labels: ['bug', 'ui', 'p1'] };
    expect(
      renderJinjaTemplate(
        '{{ labels | join(", ") }}; {{ labels | length }}; {{ labels | first }}..{{ labels | last }}',
        context,
      ),
    ).toBe('bug, ui, p1; 3; bug..p1');
    expect(renderJinjaTemplate('{% if "ui" in labels %}touches the UI{% endif %}', context)).toBe(
      'touches the UI',
    );
  });

  it('runs for loops with loop variables and else', () => {
    const template =
      '{% for l in labels %}{{ loop.index }}={{ l }}{% if not loop.last %}, {% endif %}{% else %}none{% endfor %}';
    expect(renderJinjaTemplate(template, { labels: ['a', 'b'] })).toBe('1=a, 2=b');
    expect(renderJinjaTemplate(template, { labels: [] })).toBe('none');
  });

  it('runs if/elif/else and set', () => {
    const template =
      '{% set n = body | length %}{% if n > 10 %}long{% elif n > 0 %}short{% else %}empty{% endif %}';
    expect(renderJinjaTemplate(template, { body: 'a long issue body' })).toBe('long');
    expect(renderJinjaTemplate(template, { body: 'tiny' })).toBe('short');
    expect(renderJinjaTemplate(template, { body: '' })).toBe('empty');
  });

  it('applies filters with arguments', () => {
    const context = { title: 'Crash when the settings file is missing', assignee: null, name: '  Ana  ' };
    expect(renderJinjaTemplate('{{ title | truncate(20) }}', context)).toBe('Crash when the...');
    expect(renderJinjaTemplate('{{ assignee | default("none") }}', context)).toBe('none');
    expect(renderJinjaTemplate('{{ undefined_name | default("none") }}', context)).toBe('none');
    expect(
      renderJinjaTemplate(
        '[{{ name | trim | upper }}] [{{ title | lower | replace("crash", "hang") }}]',
        context,
      ),
    ).toBe('[ANA] [hang when the settings file is missing]');
  });

  it('keeps a present value in default, and replaces empty values only when asked', () => {
    expect(renderJinjaTemplate('{{ v | default("x") }}|{{ v | default("x", true) }}', { v: '' })).toBe('|x');
    expect(renderJinjaTemplate('{{ v | default("x") }}', { v: false })).toBe('false');
  });

  it('accepts Jinja spellings of the constants and tests', () => {
    expect(
      renderJinjaTemplate(
        '{{ m is none }} {{ d is true }} {{ d is false }} {{ d == True }} {{ m == None }}',
        {
          m: null,
          d: true,
        },
      ),
    ).toBe('true true false true true');
  });

  it('does not escape HTML', () => {
    expect(renderJinjaTemplate('{{ body }}', { body: '<b>&amp;</b>' })).toBe('<b>&amp;</b>');
  });

  it('keeps whitespace control working', () => {
    expect(renderJinjaTemplate('a\n{%- if true %}\nb\n{%- endif %}', {})).toBe('a\nb');
  });

  it('fails with a PromptRenderError that says where, when a render step fails', () => {
    const render = () => renderJinjaTemplate('ok\nok\n{{ helper() }}', {});
    expect(render).toThrow(PromptRenderError);
    expect(render).toThrow('line 3: Unable to call `helper`, which is undefined or falsey');
  });

  it('fails with a PromptRenderError on a syntax error', () => {
    expect(() => renderJinjaTemplate('{% if %}', {})).toThrow(PromptRenderError);
    expect(() => renderJinjaTemplate('{{ x | nope }}', {})).toThrow(
      "Jinja syntax error: no filter named 'nope'",
    );
  });

  it('renders the same template with different values independently', () => {
    const template = '{% set greeting = "hi " ~ who %}{{ greeting }}';
    expect(renderJinjaTemplate(template, { who: 'ana' })).toBe('hi ana');
    expect(renderJinjaTemplate(template, { who: 'bo' })).toBe('hi bo');
  });
});
