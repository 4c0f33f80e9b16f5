import { describe, expect, it } from 'vitest';
import { isTrusted, type TrustRules, teamsIn, trustReason } from './trust.js';

const rules: TrustRules = {
  trustedAuthors: ['alice', 'app/dependabot', '@acme/core'],
  minAuthorAssociation: 'COLLABORATOR',
  teams: new Map([['acme/core', new Set(['carol'])]]),
};

describe('trust by actor', () => {
  it('trusts listed logins, bots only as app/<name>, team members and associations at or above the minimum', () => {
    expect(trustReason({ login: 'Alice', bot: false }, rules)).toBe('alice in trusted_authors');
    expect(trustReason({ login: 'dependabot', bot: true }, rules)).toBe('app/dependabot in trusted_authors');
    expect(trustReason({ login: 'carol', bot: false }, rules)).toBe('member of @acme/core');
    expect(trustReason({ login: 'dave', bot: false, association: 'MEMBER' }, rules)).toBe(
      'MEMBER ≥ COLLABORATOR',
    );
    expect(isTrusted({ login: 'dave', bot: false, association: 'COLLABORATOR' }, rules)).toBe(true);
  });

  it('does not trust strangers, a user named like a trusted bot, a bot named like a trusted user, or nobody', () => {
    expect(isTrusted({ login: 'mallory', bot: false, association: 'CONTRIBUTOR' }, rules)).toBe(false);
    expect(isTrusted({ login: 'mallory', bot: false, association: 'NONE' }, rules)).toBe(false);
    expect(isTrusted({ login: 'dependabot', bot: false }, rules)).toBe(false);
    expect(isTrusted({ login: 'alice', bot: true }, rules)).toBe(false);
    expect(isTrusted({ login: 'carol', bot: true }, rules)).toBe(false);
    expect(isTrusted({ login: 'eve', bot: false, association: 'SOMETHING_NEW' }, rules)).toBe(false);
    expect(isTrusted(null, rules)).toBe(false);
  });

  it('lists the teams to resolve', () => {
    expect(teamsIn(['alice', '@Acme/Core', 'app/x'])).toEqual(['acme/core']);
  });
});
