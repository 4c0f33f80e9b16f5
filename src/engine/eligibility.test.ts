import { describe, expect, it } from 'vitest';
import type { Item } from '../core/types.js';
import { neverEligible } from './eligibility.js';

function item(fields: Item['fields']): Item {
  return { id: '1', title: 't', url: 'u', body: '', itemKey: 'issue:1', fields };
}

describe('items never eligible', () => {
  it('agent:log and agent:difficulty (any case) on issues, pull requests and board items', () => {
    expect(neverEligible(item({ issue_labels: ['bug', 'agent:log'] }))).toBe(true);
    expect(neverEligible(item({ pull_request_labels: ['Agent:Difficulty'] }))).toBe(true);
    expect(neverEligible(item({ item_labels: ['agent:difficulty'] }))).toBe(true);
  });

  it('other labels, look-alikes and items without labels stay eligible', () => {
    expect(neverEligible(item({ issue_labels: ['agent-ready', 'agent:logs', 'log'] }))).toBe(false);
    expect(neverEligible(item({ issue_title: 'agent:log' }))).toBe(false);
    expect(neverEligible(item({}))).toBe(false);
  });
});
