/**
 * Trust by actor: who wrote (or labelled) a piece of text decides whether screening may block it.
 * Pure: team memberships are resolved by the caller and passed in.
 *
 * An actor is trusted when `trusted_authors` lists them (`alice`, `app/dependabot` for a bot,
 * `@acme/maintainers` for a team member) or when their GitHub `authorAssociation` on the repository
 * is at least `min_author_association` (OWNER > MEMBER > COLLABORATOR > CONTRIBUTOR >
 * FIRST_TIME_CONTRIBUTOR > FIRST_TIMER > NONE).
 */

export const ASSOCIATION_ORDER = [
  'OWNER',
  'MEMBER',
  'COLLABORATOR',
  'CONTRIBUTOR',
  'FIRST_TIME_CONTRIBUTOR',
  'FIRST_TIMER',
  'NONE',
] as const;

export interface Actor {
  /** GraphQL's login (a bot's without `[bot]`). */
  login: string;
  /** True for a GitHub App's bot account. */
  bot: boolean;
  /** `authorAssociation` on the item's repository, when GitHub reported one. */
  association?: string;
}

export interface TrustRules {
  trustedAuthors: readonly string[];
  minAuthorAssociation: string;
  /** Lower-case logins of every member of each `@org/team` in `trustedAuthors`, by `org/team`. */
  teams: ReadonlyMap<string, ReadonlySet<string>>;
}

/** The `@org/team` entries of a trusted-authors list, as `org/team`. */
export function teamsIn(trustedAuthors: readonly string[]): string[] {
  return trustedAuthors.filter((entry) => entry.startsWith('@')).map((entry) => entry.slice(1).toLowerCase());
}

function rank(association: string): number {
  const index = ASSOCIATION_ORDER.indexOf(association as (typeof ASSOCIATION_ORDER)[number]);
  return index < 0 ? ASSOCIATION_ORDER.length : index;
}

/** Why `actor` is trusted (`listed in trusted_authors`, `MEMBER ≥ COLLABORATOR`…), or undefined when not. */
export function trustReason(actor: Actor | null, rules: TrustRules): string | undefined {
  if (!actor) return undefined;
  const login = actor.login.toLowerCase().replace(/\[bot\]$/, '');
  for (const entry of rules.trustedAuthors) {
    const wanted = entry.toLowerCase();
    if (wanted.startsWith('@')) {
      if (!actor.bot && rules.teams.get(wanted.slice(1))?.has(login)) return `member of ${entry}`;
    } else if (wanted.startsWith('app/')) {
      if (actor.bot && wanted.slice(4).replace(/\[bot\]$/, '') === login)
        return `${entry} in trusted_authors`;
    } else if (!actor.bot && wanted === login) return `${entry} in trusted_authors`;
  }
  if (actor.association !== undefined && rank(actor.association) <= rank(rules.minAuthorAssociation))
    return `${actor.association} ≥ ${rules.minAuthorAssociation}`;
  return undefined;
}

export function isTrusted(actor: Actor | null, rules: TrustRules): boolean {
  return trustReason(actor, rules) !== undefined;
}
