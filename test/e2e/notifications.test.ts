/**
 * Issue 15, item 6 (acceptance): notifications from a real engine. A run fails; a local receiver
 * (webhook and Slack targets) answers 500 a few times; the engine is stopped with the
 * notifications still pending and started again on the same state file. Each event reaches each
 * target exactly once, signed for the webhook, as blocks for Slack, and no body holds a secret
 * (canary values in curupira's environment and in the issue's text, as test/e2e/canary.test.ts).
 */
import { randomBytes } from 'node:crypto';
import { verify } from '@octokit/webhooks-methods';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/core/types.js';
import { Engine, runEngine } from '../../src/features.js';
import { createNotifier } from '../../src/notify/index.js';
import { registerSecretEnv } from '../../src/security/redact.js';
import {
  createHarness,
  type Harness,
  issueAutomation,
  runBuiltCli,
  startBuiltCli,
  TOKEN,
  waitFor,
} from '../helpers/harness.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';

const SECRET = 'e2e-notify-signing-secret';

let h: Harness | undefined;
let receiver: Receiver | undefined;
afterEach(async () => {
  await receiver?.close();
  await h?.cleanup();
  h = undefined;
  receiver = undefined;
});

const TARGETS = `
[notifications.ops]
kind = "webhook"
url_env = "NOTIFY_URL"
secret_env = "NOTIFY_SECRET"
events = ["failed", "automation_paused"]

[notifications.team]
kind = "slack"
url_env = "SLACK_WEBHOOK_URL"
events = ["failed"]
automations = ["fix"]
`;

/** One engine in watch mode over the harness, its notifier retrying every 300 ms, until `stop`. */
async function watchOnce(
  harness: Harness,
  until: (runs: RunRecord[]) => boolean,
  afterStart?: (pause: (id: string) => Promise<void>) => Promise<void>,
) {
  const store = await harness.openStore();
  const stop = new AbortController();
  const runs: RunRecord[] = [];
  const options = harness.engineOptions(store, {
    mode: 'watch',
    stop: stop.signal,
    onRun: (r) => runs.push(r),
  });
  const notifier = createNotifier(options.settings, options.env, { ...options, backoffMs: [300] });
  const engine = new Engine({ ...options, ...(notifier ? { notifier } : {}) });
  const done = engine.run();
  await waitFor('runs', () => until(runs), 20_000);
  await afterStart?.((id) => engine.setPaused(id, true));
  return {
    runs,
    async stop() {
      stop.abort();
      await done;
      await store.close();
    },
  };
}

/** No notification in the state file waits to be sent (each went out, or gave up). */
async function nothingPending(harness: Harness): Promise<boolean> {
  const store = await harness.openStore();
  try {
    return (await store.listNotifications({ status: 'pending' })).length === 0;
  } finally {
    await store.close();
  }
}

describe('notifications from the engine', () => {
  it('delivers each event exactly once per target across retries and a restart, signed, with no secret', async () => {
    receiver = await startReceiver({ failFirst: 1000 });
    const canary = `canary-env-${randomBytes(8).toString('hex')}`;
    const inTitle = `canary-title-${randomBytes(8).toString('hex')}`;
    h = await createHarness({
      issues: [{ title: `Broken ${inTitle}`, body: 'fails', labels: ['agent-ready'] }],
      settingsExtra: '[settings.polling]\npoll_interval_seconds = 3600',
      automation: `${issueAutomation('fix', { prompt: 'Break [[fake:fail]] ${issue_number}' })}\n${TARGETS}`,
    });
    Object.assign(h.env, {
      NOTIFY_URL: `${receiver.url}?to=ops`,
      NOTIFY_SECRET: SECRET,
      SLACK_WEBHOOK_URL: `${receiver.url}?to=slack`,
      DEPLOY_SECRET_TOKEN: canary,
    });
    registerSecretEnv(h.env);
    registerSecretEnv({ CANARY_TITLE_SECRET: inTitle });

    const first = await watchOnce(h, (runs) => runs.length === 1);
    expect(first.runs[0]!.status).toBe('failed');
    await waitFor('three refused attempts', () => receiver!.requests.length >= 3);
    await first.stop();
    const failedRun = first.runs[0]!.id;
    // Stopped with nothing delivered: both notifications wait in the state file.
    expect(receiver.accepted()).toHaveLength(0);
    const store = await h.openStore();
    expect((await store.listNotifications({ status: 'pending' })).map((n) => n.target)).toEqual([
      'ops',
      'team',
    ]);
    await store.close();
    receiver.failNext(2);

    // Started again on the same state file: what is pending goes out; the pause is one more event.
    const second = await watchOnce(
      h,
      () => true,
      async (pause) => {
        await pause('fix');
        await pause('fix'); // already paused: no second event
      },
    );
    const accepted = (to: string) => receiver!.accepted().filter((r) => r.path.endsWith(`to=${to}`));
    await waitFor(
      'both targets served',
      () =>
        accepted('ops').some((r) => r.headers['x-curupira-event'] === 'automation_paused') &&
        accepted('slack').length > 0 &&
        accepted('ops').some((r) => r.headers['x-curupira-delivery'] === `run:${failedRun}:failed`),
    );
    // Everything in the state file has gone out: a duplicate would be a row still to send.
    await waitFor('nothing left to send', () => nothingPending(h!));
    await second.stop();

    const ids = accepted('ops').map((r) => String(r.headers['x-curupira-delivery']));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toContain(`run:${failedRun}:failed`);
    expect(ids.filter((id) => id.startsWith('pause:fix:'))).toHaveLength(1);
    const slackBodies = accepted('slack').map(
      (r) => JSON.parse(r.body) as { text: string; blocks: { type: string }[] },
    );
    expect(slackBodies.length).toBe(new Set(accepted('slack').map((r) => r.body)).size);
    expect(slackBodies[0]!.blocks.map((b) => b.type)).toEqual(['section', 'context']);
    for (const request of accepted('ops')) {
      expect(await verify(SECRET, request.body, String(request.headers['x-curupira-signature-256']))).toBe(
        true,
      );
    }
    const failedBody = JSON.parse(
      accepted('ops').find((r) => r.headers['x-curupira-delivery'] === `run:${failedRun}:failed`)!.body,
    );
    expect(failedBody).toMatchObject({
      event: 'failed',
      automation: 'fix',
      run: { id: failedRun, status: 'failed', item_id: '1' },
    });
    expect(failedBody.run.item_title).toBe('Broken [redacted]');
    for (const request of receiver.requests) {
      for (const secret of [canary, inTitle, SECRET, TOKEN, receiver.url])
        expect(request.body).not.toContain(secret);
    }
  });

  it('refuses to start when a target names an unset variable, saying which key and where', async () => {
    h = await createHarness({ automation: `${issueAutomation('fix', { prompt: 'Fix' })}\n${TARGETS}` });
    const store = await h.openStore();
    try {
      await expect(runEngine(h.engineOptions(store))).rejects.toThrow(
        /notifications\.ops\.url_env: environment variable NOTIFY_URL is not set \(notification 'ops' reads its URL from it\).*settings\.toml:\d+:\d+/,
      );
    } finally {
      await store.close();
    }
    // validate (which contacts nothing) and doctor say so before a start does: they passed it before.
    const env: NodeJS.ProcessEnv = {
      ...h.env,
      NOTIFY_SECRET: 'x',
      SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T/B/C',
    };
    delete env.NOTIFY_URL;
    const validate = await runBuiltCli(['--config', h.settingsFile, 'validate'], { env });
    expect(validate.code).toBe(0);
    expect(validate.stderr).toMatch(
      /^warning: notifications\.ops\.url_env: environment variable NOTIFY_URL is not set .*: `curupira run` and `serve` refuse to start until it is set$/m,
    );
    const json = await runBuiltCli(['--config', h.settingsFile, 'validate', '--json'], { env });
    expect((JSON.parse(json.stdout) as { warnings: string[] }).warnings).toEqual([
      expect.stringContaining('environment variable NOTIFY_URL is not set'),
    ]);
    const doctor = await runBuiltCli(['--config', h.settingsFile, 'doctor'], { env });
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(
      /^FAIL {2}notifications: notifications\.ops\.url_env: environment variable NOTIFY_URL is not set/m,
    );
    // Set, each target is named by kind and host, and its URL (a credential for Slack) is not shown.
    const ready = await runBuiltCli(['--config', h.settingsFile, 'doctor'], {
      env: { ...env, NOTIFY_URL: 'http://127.0.0.1:9/hook-secret-path' },
    });
    expect(ready.stdout).toContain(
      'ok    notification ops: webhook to http://127.0.0.1:9/… for failed, automation_paused',
    );
    expect(ready.stdout).toContain(
      'ok    notification team: slack to https://hooks.slack.com/… for failed of fix',
    );
    expect(ready.stdout).not.toContain('hook-secret-path');
    expect(ready.stdout).not.toContain('services/T/B/C');
  });
});

describe('notifications across a kill -9 (slow)', () => {
  it('a notification pending when `run --watch` is killed is delivered once by the next process', async () => {
    receiver = await startReceiver({ failFirst: 1000 });
    h = await createHarness({
      settingsExtra: '[settings.polling]\npoll_interval_seconds = 3600',
      automation: `${issueAutomation('fix', { prompt: 'Break [[fake:fail]] ${issue_number}' })}
[notifications.ops]
kind = "webhook"
url_env = "NOTIFY_URL"
secret_env = "NOTIFY_SECRET"
events = ["failed"]
`,
    });
    Object.assign(h.env, { NOTIFY_URL: receiver.url, NOTIFY_SECRET: SECRET });
    const args = ['--config', h.settingsFile, 'run', '--watch'];
    const first = startBuiltCli(args, { env: h.env });
    await waitFor('a refused attempt', () => receiver!.requests.length >= 1, 30_000);
    first.child.kill('SIGKILL');
    await first.done;
    const store = await h.openStore();
    const [pending] = await store.listNotifications({ status: 'pending' });
    await store.close();
    expect(pending).toMatchObject({ event: 'failed', target: 'ops' });
    expect(receiver.accepted()).toHaveLength(0);

    receiver.failNext(1);
    const second = startBuiltCli(args, { env: h.env });
    try {
      await waitFor(
        'the pending notification delivered',
        () => receiver!.accepted().some((r) => r.headers['x-curupira-delivery'] === pending!.eventId),
        60_000,
      );
      await waitFor('nothing left to send', () => nothingPending(h!));
    } finally {
      second.child.kill('SIGTERM');
      await second.done;
    }
    const ids = receiver.accepted().map((r) => String(r.headers['x-curupira-delivery']));
    expect(ids.filter((id) => id === pending!.eventId)).toHaveLength(1);
    expect(new Set(ids).size).toBe(ids.length);
    for (const request of receiver.accepted())
      expect(await verify(SECRET, request.body, String(request.headers['x-curupira-signature-256']))).toBe(
        true,
      );
  }, 120_000);
});
