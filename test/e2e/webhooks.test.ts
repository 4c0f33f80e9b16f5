/**
 * Issue 15, item 7 (acceptance): a GitHub webhook starts work now. With `poll_interval_seconds`
 * an hour long, an `issues.labeled` delivery makes the engine poll the automation at once and the
 * agent starts within seconds; a bad signature is refused (401) and polls nothing; a duplicate
 * delivery id is acted on once.
 */
import { sign } from '@octokit/webhooks-methods';
import { afterEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness, issueAutomation, waitFor } from '../helpers/harness.js';
import { type Served, serveInProcess } from '../helpers/serve.js';

const SECRET = 'e2e-webhook-secret-0001';

let h: Harness | undefined;
let served: Served | undefined;
afterEach(async () => {
  await served?.stop();
  await h?.cleanup();
  served = undefined;
  h = undefined;
});

function labeled(number: number) {
  return {
    action: 'labeled',
    label: { name: 'agent-ready' },
    issue: { number, title: 'Waiting for a label' },
    repository: { full_name: 'acme/api' },
    sender: { login: 'octocat' },
  };
}

async function deliver(s: Served, payload: unknown, id: string, secret = SECRET): Promise<Response> {
  const body = JSON.stringify(payload);
  return s.app.request('/webhooks/github', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'issues',
      'x-github-delivery': id,
      'x-hub-signature-256': await sign(secret, body),
    },
    body,
  });
}

describe('GitHub webhooks on curupira serve', () => {
  it('an issues.labeled delivery starts the run without waiting for the poll interval; bad signatures and duplicates do nothing', async () => {
    h = await createHarness({
      issues: [{ title: 'Waiting for a label', labels: [] }],
      settingsExtra: '[settings.polling]\npoll_interval_seconds = 3600',
      automation: issueAutomation('fix', { prompt: 'Fix ${issue_number}' }),
    });
    const s = await serveInProcess(h, { webhookSecret: SECRET });
    served = s;
    const polledAt = await waitFor('the first poll', () => s.engine.automations()[0]?.lastPollAt);
    h.world.addLabels('acme/api', 1, ['agent-ready'], 'octocat');

    const forged = await deliver(s, labeled(1), 'delivery-1', 'not-the-secret');
    expect(forged.status).toBe(401);
    // A whole round of the loop after the refusal: a delivery that asked for a poll would have had it.
    expect(await s.round()).toMatchObject({ running: [], queued: 0 });
    expect(s.engine.automations()[0]?.lastPollAt).toBe(polledAt);
    expect(h.agentRuns('claude')).toHaveLength(0);

    const sentAt = Date.now();
    const response = await deliver(s, labeled(1), 'delivery-1');
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ polled: ['fix'] });
    const [call] = await waitFor(
      'the agent to start',
      () => h?.agentRuns('claude').at(0) && h.agentRuns('claude'),
    );
    // An hour-long poll interval: only the webhook can have started it, within seconds.
    expect(Date.parse(call!.time) - sentAt).toBeLessThan(15_000);
    await waitFor('the run to finish', () => s.runs.length === 1);
    expect(s.runs[0]).toMatchObject({ status: 'succeeded', itemId: '1' });

    const again = await deliver(s, labeled(1), 'delivery-1');
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ duplicate: true, polled: [] });
    expect(await s.round()).toMatchObject({ running: [], queued: 0 });
    expect(h.agentRuns('claude')).toHaveLength(1);
  });
});
