/** The leases feature's hooks on a fake kernel port, against the local GitHub simulator. */
import { afterEach, describe, expect, it } from 'vitest';
import {
  cleanupFeatureSetups,
  featureSetup,
  gateRequest,
  ISSUE_AUTOMATION,
  issueTask,
  SIM_TOKEN,
  simulatorWithIssue,
} from '../../test/helpers/feature-setup.js';
import { createGitHubClient } from '../github/client.js';
import { staticTokenSource } from '../github/token.js';
import { silentLogger } from '../log.js';
import type { Simulator } from '../simulator/index.js';
import { LeasesFeature } from './leases-feature.js';
import { createRunWrites } from './run-writes.js';

let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
  await cleanupFeatureSetups();
});

const LEASED = ISSUE_AUTOMATION.replace('prompt = "Fix"', 'prompt = "Fix"\nlease_ttl = "1 hour"');

async function setup(automations: string, options: { writes?: boolean } = {}) {
  sim = await simulatorWithIssue();
  const apiUrl = sim.url;
  const s = await featureSetup({ automations, mode: 'watch' });
  const tokens = staticTokenSource(SIM_TOKEN);
  const log = silentLogger();
  const writes =
    options.writes === false
      ? undefined
      : createRunWrites({ store: s.store, apiUrl, tokens, clock: s.clock, log });
  const feature = new LeasesFeature({
    port: s.port,
    store: s.store,
    log,
    github: () => createGitHubClient({ apiUrl, tokens, clock: s.clock }),
    tokens,
    stopSignal: new AbortController().signal,
    writes: () => writes,
    trust: async () => ({ trustedAuthors: ['octocat'], minAuthorAssociation: 'OWNER', teams: new Map() }),
  });
  return { ...s, feature };
}

describe('the leases feature', () => {
  it('without lease_ttl builds nothing: every run goes, the executor claims nothing, GitHub is not read', async () => {
    const s = await setup(ISSUE_AUTOMATION);
    const task = issueTask(s.automation, '1');
    expect(await s.feature.gate(gateRequest(s.automation, task))).toEqual({ kind: 'go' });
    expect(s.feature.runDeps()).toBeUndefined();
    await s.feature.finished('fix', task);
    expect(sim!.requests).toEqual([]);
  });

  it('with lease_ttl but no write queue, takes no lease (leases are GitHub writes)', async () => {
    const s = await setup(LEASED, { writes: false });
    expect(s.feature.leases()).toBeUndefined();
    expect(await s.feature.gate(gateRequest(s.automation, issueTask(s.automation, '1')))).toEqual({
      kind: 'go',
    });
  });

  it('with lease_ttl, lets a free item go and gives the executor its claim; GitHub unreachable holds the item, offered again once done', async () => {
    const s = await setup(LEASED);
    const task = issueTask(s.automation, '1');
    expect(await s.feature.gate(gateRequest(s.automation, task))).toEqual({ kind: 'go' });
    expect(typeof s.feature.runDeps()?.claim).toBe('function');
    await sim!.close();
    sim = undefined;
    expect(await s.feature.gate(gateRequest(s.automation, task))).toEqual({ kind: 'hold' });
    await s.feature.finished('fix', task);
    expect(s.port.forgets).toEqual([{ taskKey: task.key, options: { automationId: 'fix', task } }]);
  });
});
