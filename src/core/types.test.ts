import { describe, expect, it } from 'vitest';
import { identityKey } from './types.js';

describe('identityKey', () => {
  it('is the compact JSON array of the reference', () => {
    expect(
      identityKey({ automationId: 'triage', repo: 'acme/api', taskType: 'github-issues', id: '42' }),
    ).toBe('["triage","acme/api","github-issues","42"]');
  });
});
