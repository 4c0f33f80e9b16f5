/**
 * Follows search cursors in pages of at most 100 until `limit` results or the end. `accept` is a
 * post-filter: rejected nodes do not count towards `limit`, so they never crowd out later matches.
 */
import type { GitHubClient } from './client.js';
import type { SearchPage } from './operations.js';

export const PAGE_SIZE = 100;

export interface SearchResult<N> {
  nodes: N[];
  /** GitHub's total count (may exceed what Search returns: it stops at 1,000). */
  total: number;
  pages: number;
  /** Distinct results looked at, accepted or not. */
  examined: number;
}

export async function searchAll<N extends { __typename?: string }>(
  client: GitHubClient,
  operation: string,
  query: string,
  typename: string,
  limit: number,
  signal?: AbortSignal,
  accept?: (node: N) => boolean,
): Promise<SearchResult<N>> {
  const nodes: N[] = [];
  const seen = new Set<unknown>();
  let after: string | null = null;
  let total = 0;
  let pages = 0;
  while (nodes.length < limit) {
    signal?.throwIfAborted();
    // Never more than `limit` (the automation's batch_size) per request. With a post-filter, how
    // many of a page pass is unknown, so every page asks for the full `limit`, not what is missing.
    const first = Math.min(PAGE_SIZE, accept ? limit : limit - nodes.length);
    const page: { data: SearchPage<N> } = await client.graphql<SearchPage<N>>(operation, {
      query,
      first,
      after,
    });
    const data = page.data;
    pages += 1;
    total = data.search.issueCount;
    for (const node of data.search.nodes) {
      if (!node || node.__typename !== typename) continue;
      const id = (node as { id?: unknown }).id;
      if (seen.has(id)) continue;
      seen.add(id);
      if (accept && !accept(node as N)) continue;
      nodes.push(node as N);
      if (nodes.length >= limit) break;
    }
    if (!data.search.pageInfo.hasNextPage || !data.search.pageInfo.endCursor) break;
    after = data.search.pageInfo.endCursor;
  }
  return { nodes, total, pages, examined: seen.size };
}
