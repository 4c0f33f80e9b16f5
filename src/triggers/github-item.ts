/** What an issue and a pull request share as an item: its identity and the prompt fields both have. */
import type { Fields, Item } from '../core/types.js';
import type { IssueNode } from '../github/operations.js';

/** The parts of a search node that issues and pull requests both have. */
export type GitHubItemNode = Pick<
  IssueNode,
  'number' | 'title' | 'url' | 'body' | 'author' | 'labels' | 'assignees' | 'milestone' | 'createdAt'
>;

/**
 * An issue or pull request as an item: `<prefix>_number` … `<prefix>_created_at` in the documented
 * order (the fingerprint's), then the trigger's own `extra` fields.
 */
/**
 * The item's labels with their descriptions, one `- name: description` line each (labels without
 * one left out): the repository's guidance for the agent (seed 001's client guidance), written by
 * its maintainers, fenced in the prompt like any text curupira did not write.
 */
export function labelDescriptions(node: Pick<GitHubItemNode, 'labels'>): string {
  return (node.labels?.nodes ?? [])
    .filter((l) => (l.description ?? '').trim() !== '')
    .map((l) => `- ${l.name}: ${(l.description ?? '').trim()}`)
    .join('\n');
}

export function githubItem(
  node: GitHubItemNode,
  kind: { prefix: 'issue' | 'pull_request'; key: 'issue' | 'pr'; state: string },
  extra: Fields = {},
): Item {
  const number = String(node.number);
  const p = kind.prefix;
  return {
    id: number,
    title: node.title,
    url: node.url,
    body: node.body ?? '',
    itemKey: `${kind.key}:${number}`,
    fields: {
      [`${p}_number`]: number,
      [`${p}_title`]: node.title,
      [`${p}_body`]: node.body ?? '',
      [`${p}_url`]: node.url,
      [`${p}_state`]: kind.state,
      [`${p}_author`]: node.author?.login ?? null,
      [`${p}_labels`]: (node.labels?.nodes ?? []).map((l) => l.name),
      [`${p}_assignees`]: (node.assignees?.nodes ?? []).map((a) => a.login),
      [`${p}_milestone`]: node.milestone?.title ?? null,
      [`${p}_created_at`]: node.createdAt,
      ...extra,
    },
    // Not fingerprinted: a maintainer editing a description does not make the item new.
    volatile: { [`${p}_label_descriptions`]: labelDescriptions(node) },
  };
}
