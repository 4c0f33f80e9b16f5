import { describe, expect, it } from 'vitest';
import { PromptRenderError } from '../core/errors.js';
import {
  analyzePrompt,
  formatPlaceholderList,
  PromptTemplateError,
  renderPrompt,
  resolveSyntax,
  unknownPlaceholders,
} from './index.js';

function templateErrorOf(run: () => unknown): PromptTemplateError {
  try {
    run();
  } catch (error) {
    if (error instanceof PromptTemplateError) return error;
    throw error;
  }
  throw new Error('expected a PromptTemplateError');
}

const ISSUE_FIELDS = new Set([
  'repo',
  'repository',
  'automation_id',
  'task_type',
  'task_number',
  'task_title',
  'task_body',
  'task_url',
  'issue_number',
  'issue_title',
  'issue_body',
  'issue_url',
  'issue_labels',
]);

describe('resolveSyntax', () => {
  it.each([
    ['Fix ${issue_title}', 'template'],
    ['Fix {{ issue_title }}', 'jinja'],
    ['{% if x %}y{% endif %}', 'jinja'],
    ['{# note #}Fix it', 'jinja'],
    ['Use a {single} brace and 100% effort', 'template'],
  ] as const)('auto: %j is %s', (template, expected) => {
    expect(resolveSyntax(template, 'auto')).toBe(expected);
  });

  it('an explicit setting wins over the text', () => {
    expect(resolveSyntax('{{ x }}', 'template')).toBe('template');
    expect(resolveSyntax('${x}', 'jinja')).toBe('jinja');
  });
});

describe('analyzePrompt', () => {
  it('lists the placeholders of a ${…} prompt', () => {
    expect(analyzePrompt('Resolve issue ${issue_number}: ${issue_title}\n\n${issue_body}')).toEqual({
      syntax: 'template',
      placeholders: ['issue_number', 'issue_title', 'issue_body'],
    });
  });

  it('lists the placeholders of a Jinja prompt', () => {
    expect(analyzePrompt('{% for l in issue_labels %}{{ l }} {% endfor %}{{ issue_title | upper }}')).toEqual(
      {
        syntax: 'jinja',
        placeholders: ['issue_labels', 'issue_title'],
      },
    );
  });

  it.each(['', '   ', '\n\t\n'])('rejects an empty prompt (%j)', (template) => {
    expect(() => analyzePrompt(template)).toThrow(new PromptTemplateError('prompt must not be empty'));
  });

  it('rejects an invalid $ placeholder and says where it is', () => {
    const error = templateErrorOf(() => analyzePrompt('Fix ${issue_title}\nfor 5$'));
    expect(error.message).toBe(
      'prompt contains an invalid template placeholder at line 2, column 6 (write $$ for a literal $)',
    );
    expect([error.line, error.column]).toEqual([2, 6]);
  });

  it('rejects ${a-b} in a ${…} prompt', () => {
    expect(() => analyzePrompt('${a-b}')).toThrow('prompt contains an invalid template placeholder');
  });

  it('rejects a Jinja syntax error with its detail and position', () => {
    const error = templateErrorOf(() => analyzePrompt('Fix:\n{% if issue_title %}{{ issue_title }}'));
    expect(error.message).toBe(
      'prompt has a Jinja syntax error: expected elif, else, or endif, got end of file (line 2, column 38)',
    );
    expect([error.line, error.column]).toEqual([2, 38]);
  });

  it('checks the syntax the setting asks for', () => {
    expect(analyzePrompt('{{ x }} costs $5', 'jinja').placeholders).toEqual(['x']);
    expect(() => analyzePrompt('{{ x }} costs $5', 'template')).toThrow('invalid template placeholder');
  });
});

describe('unknownPlaceholders', () => {
  it('lists names outside the allowed set, sorted and once each', () => {
    const analysis = analyzePrompt('${zeta} ${issue_title} ${alpha} ${zeta} ${task_url}');
    expect(unknownPlaceholders(analysis, ISSUE_FIELDS)).toEqual(['alpha', 'zeta']);
  });

  it('is empty when every placeholder is allowed', () => {
    expect(unknownPlaceholders(analyzePrompt('{{ repo }}: {{ issue_title }}'), ISSUE_FIELDS)).toEqual([]);
  });

  it('catches a misspelt field in a Jinja prompt', () => {
    expect(unknownPlaceholders(analyzePrompt('{{ isue_title | upper }}'), ISSUE_FIELDS)).toEqual([
      'isue_title',
    ]);
  });
});

describe('formatPlaceholderList', () => {
  it('prints names as a Python list', () => {
    expect(formatPlaceholderList(['a', 'b'])).toBe("['a', 'b']");
    expect(formatPlaceholderList([])).toBe('[]');
  });

  it('quotes like Python repr when a name holds quotes or control characters', () => {
    expect(formatPlaceholderList(["it's", 'x"y', 'tab\tq', 'back\\slash'])).toBe(
      `["it's", 'x"y', 'tab\\tq', 'back\\\\slash']`,
    );
  });
});

describe('renderPrompt', () => {
  const context = {
    issue_number: 12,
    issue_title: 'Crash on start',
    issue_labels: ['bug', 'p1'],
    issue_milestone: null,
    issue_locked: false,
  };

  it('renders a ${…} prompt with flattened values', () => {
    expect(
      renderPrompt(
        '#${issue_number} ${issue_title} ${issue_labels} [${issue_milestone}] $issue_locked $$',
        context,
      ),
    ).toBe('#12 Crash on start ["bug","p1"] [] false $');
  });

  it('renders a Jinja prompt with lists kept as lists', () => {
    expect(
      renderPrompt(
        '#{{ issue_number }} {{ issue_labels | join("+") }} {{ issue_labels }} {{ issue_locked }}',
        context,
      ),
    ).toBe('#12 bug+p1 ["bug","p1"] false');
  });

  it('renders the syntax the setting asks for', () => {
    expect(renderPrompt('{{ not jinja }} ${issue_number}', context, 'template')).toBe('{{ not jinja }} 12');
    expect(renderPrompt('${issue_number} {{ issue_number }}', context, 'jinja')).toBe('${issue_number} 12');
  });

  it('names the automation when a placeholder has no value', () => {
    const render = () => renderPrompt('${issue_url}', context, 'auto', 'triage');
    expect(render).toThrow(PromptRenderError);
    expect(render).toThrow("could not render prompt for triage: no value for placeholder 'issue_url'");
  });

  it('names the automation when a Jinja prompt fails', () => {
    expect(() => renderPrompt('{{ issue_title() }}', context, 'auto', 'triage')).toThrow(
      /^could not render prompt for triage: line 1: Unable to call `issue_title`/,
    );
  });

  it('reports an invalid placeholder at render time too', () => {
    expect(() => renderPrompt('pay $', context, 'template', 'billing')).toThrow(
      'could not render prompt for billing: Invalid placeholder in string: line 1, col 5',
    );
  });

  it('still explains the failure without an automation id', () => {
    expect(() => renderPrompt('${nope}', {})).toThrow(
      "could not render prompt: no value for placeholder 'nope'",
    );
  });
});
