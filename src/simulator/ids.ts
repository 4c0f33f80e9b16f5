/**
 * Identifiers the simulator hands out: opaque global node ids, connection cursors, commit shas and
 * timestamps in GitHub's format. All deterministic, so fixtures and tests see stable values.
 */
import { createHash } from 'node:crypto';

/** GitHub's node id prefixes (`I_…` issue, `PR_…` pull request…), so ids look like the real ones. */
export const NODE_PREFIX = {
  Issue: 'I',
  PullRequest: 'PR',
  Repository: 'R',
  User: 'U',
  Bot: 'BOT',
  Organization: 'O',
  Label: 'LA',
  Milestone: 'MI',
  IssueComment: 'IC',
  PullRequestReview: 'PRR',
  ProjectV2: 'PVT',
  ProjectV2Item: 'PVTI',
  ProjectV2SingleSelectField: 'PVTSSF',
  ProjectV2ItemFieldSingleSelectValue: 'PVTFSV',
  DraftIssue: 'DI',
  Commit: 'C',
  LabeledEvent: 'LE',
  Team: 'T',
} as const;

export type NodeKind = keyof typeof NODE_PREFIX;

export function nodeId(kind: NodeKind, seq: number): string {
  return `${NODE_PREFIX[kind]}_kwDOSIM${Buffer.from(`${kind}:${seq}`).toString('base64url')}`;
}

/** Cursor of the item at 1-based `position` in a connection (GitHub's search cursors have this form). */
export function encodeCursor(position: number): string {
  return Buffer.from(`cursor:${position}`).toString('base64');
}

/** The 1-based position a cursor points at, or `undefined` when it is not one of ours. */
export function decodeCursor(cursor: string): number | undefined {
  const text = Buffer.from(cursor, 'base64').toString('utf8');
  const match = /^cursor:(\d+)$/.exec(text);
  if (!match) return undefined;
  return Number(match[1]);
}

export function sha1Hex(text: string): string {
  return createHash('sha1').update(text).digest('hex');
}

/** GitHub's DateTime format: ISO 8601 in UTC without milliseconds. */
export function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Where GitHub's web pages are: the start of every `html_url` and `url` the simulator answers. */
export const HTML_BASE = 'https://github.com';
