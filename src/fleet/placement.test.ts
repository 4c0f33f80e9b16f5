/**
 * Placement only where a job can run (issue 33): what a host lacks for a job, why no live worker
 * can run one, and what a worker refuses, from its advertised capabilities and its own settings.
 */
import { describe, expect, it } from 'vitest';
import { loadSettingsFromText } from '../config/load.js';
import { capabilitiesOf, lacks, NO_LIVE_WORKER, refusalOf, unplaceable } from './placement.js';
import type { HostCapabilities } from './types.js';

function can(automations: string[], repositories = ['acme/api']): HostCapabilities {
  return { automations, repositories, providers: ['claude'], sandbox: 'none' };
}

const needs = { automationId: 'extra', repo: 'acme/api' };

describe('placement', () => {
  it('a host lacks the automation, or its repository; one that advertises nothing is given any job', () => {
    expect(lacks(can(['fix', 'extra']), needs)).toBeUndefined();
    expect(lacks(can(['fix']), needs)).toBe('automation extra');
    expect(lacks(can(['extra'], ['acme/web']), needs)).toBe('repository acme/api');
    expect(lacks(null, needs)).toBeUndefined();
  });

  it('says why no live worker can run a job, host by host, and nothing when one can', () => {
    expect(unplaceable([], needs)).toBe(NO_LIVE_WORKER);
    expect(
      unplaceable(
        [
          { name: 'w1', capabilities: can(['fix']) },
          { name: 'w2', capabilities: null },
        ],
        needs,
        new Map([['w2', 'refused by w2: automation extra is not configured on this host']]),
      ),
    ).toBe(
      'no live worker can run it: w1 has no automation extra; w2 refused it (refused by w2: automation extra is not configured on this host)',
    );
    expect(
      unplaceable(
        [
          { name: 'w1', capabilities: can(['fix']) },
          { name: 'w2', capabilities: can(['extra']) },
        ],
        needs,
      ),
    ).toBeUndefined();
  });
});

describe('a project board automation without repo', () => {
  const settings = loadSettingsFromText(
    `[repositories.api]
remote = "https://github.com/acme/api.git"
[automations.fix]
repository = "api"
repo = "acme/api"
labels = ["agent-ready"]
prompt = "Fix \${issue_number}"
[automations.board]
trigger_type = "github-project-items"
repository = "api"
project_owner = "acme"
project_number = 1
status = "Ready"
prompt = "Work on \${item_title}"
[automations.web-cards]
trigger_type = "github-project-items"
repository = "api"
project_owner = "acme"
project_number = 1
status = "Ready"
repo = "acme/web"
prompt = "Work on \${item_title}"
`,
    '/tmp/curupira-placement/settings.toml',
  ).settings;

  it('runs cards of any repository: advertised as such, placed and not refused; one with repo stays pinned', () => {
    const capabilities = capabilitiesOf(settings);
    expect(capabilities).toMatchObject({
      automations: ['board', 'fix', 'web-cards'],
      repositories: ['acme/api', 'acme/web'],
      anyRepository: ['board'],
    });
    for (const repo of ['acme/api', 'acme/other']) {
      expect(lacks(capabilities, { automationId: 'board', repo })).toBeUndefined();
      expect(refusalOf(settings.automations, { automationId: 'board', repo })).toBeUndefined();
    }
    expect(refusalOf(settings.automations, { automationId: 'web-cards', repo: 'acme/api' })).toBe(
      'automation web-cards works on acme/web on this host, not on acme/api',
    );
    expect(lacks(capabilities, { automationId: 'fix', repo: 'acme/other' })).toBe('repository acme/other');
  });
});
