import { describe, expect, it } from 'vitest';
import type { FieldValue } from '../core/types.js';
import { flattenFields, flattenValue } from './fields.js';

describe('flattenValue', () => {
  it.each<[string, FieldValue, string]>([
    ['null is empty', null, ''],
    ['true is lowercase', true, 'true'],
    ['false is lowercase', false, 'false'],
    ['strings stay as they are', 'Fix the login page', 'Fix the login page'],
    ['non-ASCII strings stay as they are', 'ação 😀', 'ação 😀'],
    ['an empty string stays empty', '', ''],
    ['integers', 42, '42'],
    ['fractions', 2.5, '2.5'],
    ['negative numbers', -3, '-3'],
    ['a list of strings is compact JSON', ['bug', 'agent-ready'], '["bug","agent-ready"]'],
    ['an empty list', [], '[]'],
    ['an empty object', {}, '{}'],
    [
      'nested lists and objects, with null and booleans inside',
      { k: 1, n: null, b: true, l: [1, 2.5, { x: 'y' }] },
      '{"k":1,"n":null,"b":true,"l":[1,2.5,{"x":"y"}]}',
    ],
    ['non-ASCII inside JSON is escaped like Python', ['ação'], '["a\\u00e7\\u00e3o"]'],
    ['characters outside the BMP become surrogate escapes', ['😀'], '["\\ud83d\\ude00"]'],
    ['DEL and line separators are escaped', ['\u007f\u2028'], '["\\u007f\\u2028"]'],
    ['quotes, backslashes and control characters are escaped', ['"\\\n\t'], '["\\"\\\\\\n\\t"]'],
    ['object keys are escaped too', { ação: 1 }, '{"a\\u00e7\\u00e3o":1}'],
  ])('%s', (_name, value, expected) => {
    expect(flattenValue(value)).toBe(expected);
  });
});

describe('flattenFields', () => {
  it('flattens every field and keeps their order', () => {
    const flat = flattenFields({
      issue_number: 12,
      issue_title: 'Crash on start',
      issue_labels: ['bug'],
      issue_milestone: null,
      pull_request_is_draft: false,
    });
    expect(flat).toEqual({
      issue_number: '12',
      issue_title: 'Crash on start',
      issue_labels: '["bug"]',
      issue_milestone: '',
      pull_request_is_draft: 'false',
    });
    expect(Object.keys(flat)).toEqual([
      'issue_number',
      'issue_title',
      'issue_labels',
      'issue_milestone',
      'pull_request_is_draft',
    ]);
  });
});
