/**
 * What screening reads from GitHub at dispatch, once per item about to run: the newest comments
 * with their authors' association, the item author's association, and (for
 * `require_trusted_labeler`) who applied each label. Team memberships for `@org/team` entries are
 * read once and kept for five minutes.
 */
import type { GitHubClient } from '../github/client.js';
import {
  type ActorNode,
  SCREENING_CONTEXT,
  type ScreeningContextPage,
  TEAM_MEMBERS,
  type TeamMembersPage,
} from '../github/operations.js';
import type { ScreenTarget } from '../triggers/types.js';
import type { Actor } from './trust.js';

/** Comments read per item (seed 004: the newest 30). */
export const SCREENED_COMMENTS = 30;

export interface ContextComment {
  author: Actor | null;
  createdAt: string;
  body: string;
}

export interface LabelEvent {
  label: string;
  actor: Actor | null;
  createdAt: string;
}

export interface ItemContext {
  author: Actor | null;
  /** Oldest first. */
  comments: ContextComment[];
  /** Every labeled event, oldest first (read only when asked). */
  labelEvents: LabelEvent[];
}

function actorOf(node: ActorNode | null | undefined, association?: string): Actor | null {
  if (!node) return null;
  return {
    login: node.login,
    bot: node.__typename === 'Bot',
    ...(association === undefined ? {} : { association }),
  };
}

/** The target's own fields, for an item with nothing to read on GitHub (a draft card). */
function localContext(target: ScreenTarget): ItemContext {
  return {
    author: target.author ? { login: target.author, bot: /\[bot\]$/i.test(target.author) } : null,
    comments: [],
    labelEvents: [],
  };
}

export async function readItemContext(
  github: GitHubClient,
  target: ScreenTarget,
  options: { timeline: boolean; signal?: AbortSignal },
): Promise<ItemContext> {
  if (target.read) return { ...(await target.read(options.signal)), labelEvents: [] };
  if (!target.source) return localContext(target);
  const [owner, name] = target.source.repo.split('/');
  const { data } = await github.graphql<ScreeningContextPage>(SCREENING_CONTEXT, {
    owner,
    name,
    number: target.source.number,
    comments: SCREENED_COMMENTS,
    timeline: options.timeline,
  });
  const node = data.repository?.issueOrPullRequest;
  if (!node) throw new Error(`${target.source.repo}#${target.source.number} was not found on GitHub`);
  return {
    author: actorOf(node.author, node.authorAssociation),
    comments: node.comments.nodes
      .filter((c) => c !== null)
      .map((c) => ({
        author: actorOf(c.author, c.authorAssociation),
        createdAt: c.createdAt,
        body: c.body,
      })),
    labelEvents: (node.timelineItems?.nodes ?? [])
      .filter((e) => e !== null && e.__typename === 'LabeledEvent' && e.label)
      .map((e) => ({ label: e!.label!.name, actor: actorOf(e!.actor), createdAt: e!.createdAt ?? '' })),
  };
}

const TEAM_TTL_MS = 5 * 60_000;

/** Members of `org/team` entries, cached for five minutes; a team that cannot be read has no members. */
export class TeamCache {
  private readonly cache = new Map<string, { at: number; members: Promise<ReadonlySet<string>> }>();

  constructor(private readonly now: () => number) {}

  async resolve(
    github: () => GitHubClient,
    teams: readonly string[],
    onError: (team: string, error: unknown) => void,
  ): Promise<Map<string, ReadonlySet<string>>> {
    const out = new Map<string, ReadonlySet<string>>();
    for (const team of teams) {
      let entry = this.cache.get(team);
      if (!entry || this.now() - entry.at > TEAM_TTL_MS) {
        entry = { at: this.now(), members: readTeam(github(), team) };
        this.cache.set(team, entry);
      }
      try {
        out.set(team, await entry.members);
      } catch (error) {
        this.cache.delete(team);
        onError(team, error);
        out.set(team, new Set());
      }
    }
    return out;
  }
}

async function readTeam(github: GitHubClient, team: string): Promise<ReadonlySet<string>> {
  const [org, slug] = team.split('/');
  const members = new Set<string>();
  let after: string | null = null;
  for (let page = 0; page < 50; page += 1) {
    const reply: { data: TeamMembersPage } = await github.graphql<TeamMembersPage>(TEAM_MEMBERS, {
      org,
      slug,
      after,
    });
    const connection:
      | NonNullable<NonNullable<TeamMembersPage['organization']>['team']>['members']
      | undefined = reply.data.organization?.team?.members;
    if (!connection) throw new Error(`team @${team} was not found (or the token cannot read it)`);
    for (const node of connection.nodes) if (node) members.add(node.login.toLowerCase());
    if (!connection.pageInfo.hasNextPage) break;
    after = connection.pageInfo.endCursor;
  }
  return members;
}
