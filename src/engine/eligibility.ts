/**
 * Items no automation ever runs (issue 12, seed 001): curupira's own run-log issues (`agent:log`)
 * and items a person marked as too hard for agents (`agent:difficulty`). Matched case-insensitively,
 * as GitHub matches label names, on the item's label field (`issue_labels`, `pull_request_labels`,
 * `item_labels`).
 */
import type { Item } from '../core/types.js';

export const NEVER_ELIGIBLE_LABELS: readonly string[] = ['agent:log', 'agent:difficulty'];

const LABEL_FIELDS = ['issue_labels', 'pull_request_labels', 'item_labels'] as const;

export function neverEligible(item: Item): boolean {
  const never = new Set(NEVER_ELIGIBLE_LABELS);
  return LABEL_FIELDS.some((field) => {
    const labels = item.fields[field];
    return (
      Array.isArray(labels) &&
      labels.some((label) => typeof label === 'string' && never.has(label.toLowerCase()))
    );
  });
}
