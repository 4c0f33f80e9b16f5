/** The engine's watch policy on the injected clock: no real time passes in these tests. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadSettingsFromText } from '../config/load.js';
import type { Settings } from '../config/types.js';
import { FakeClock } from '../core/clock.js';
import { ConfigError } from '../core/errors.js';
import { runEngine } from '../features.js';
import { silentLogger } from '../log.js';
import { openStore } from '../store/index.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A schedule that never comes due in these tests, so nothing runs and nothing talks to GitHub. */
function settings(dir: string, prompt = 'Tidy up'): Settings {
  return loadSettingsFromText(
    `[settings]
workspace_dir = "ws"
state_db_path = "state/state.sqlite3"
[repositories.api]
remote = "https://example.com/acme/api.git"
[agents.profiles.main]
provider = "claude"
[agents.defaults]
profile = "main"
[automations.nightly]
repository = "api"
schedule = "0 3 1 7 *"
prompt = ${JSON.stringify(prompt)}
`,
    join(dir, 'settings.toml'),
  ).settings;
}

/** Lets the engine run until it sleeps on the fake clock again. */
async function untilSleeping(clock: FakeClock): Promise<void> {
  for (let i = 0; i < 500 && clock.pending === 0; i += 1) await new Promise((r) => setTimeout(r, 2));
}

async function watchWith(
  reload: () => Settings | ConfigError | undefined,
  steps: number,
  stepMs: number,
  reloadIntervalMs: number,
): Promise<{ reloadTimes: number[]; clock: FakeClock }> {
  const dir = mkdtempSync(join(tmpdir(), 'curupira-engine-'));
  dirs.push(dir);
  const initial = settings(dir);
  const store = await openStore(initial.execution.state_db_path);
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const start = clock.now();
  const reloadTimes: number[] = [];
  const stop = new AbortController();
  try {
    const done = runEngine({
      settings: initial,
      mode: 'watch',
      store,
      clock,
      log: silentLogger(),
      env: {},
      github: () => {
        throw new Error('no GitHub in this test');
      },
      transcriptsDir: join(dir, 'transcripts'),
      stopSignal: stop.signal,
      reload: () => {
        reloadTimes.push(clock.now() - start);
        return reload();
      },
      reloadIntervalMs,
    });
    for (let i = 0; i < steps; i += 1) {
      await untilSleeping(clock);
      await clock.advance(stepMs);
    }
    await untilSleeping(clock);
    stop.abort();
    await clock.advance(stepMs);
    await done;
  } finally {
    await store.close();
  }
  return { reloadTimes, clock };
}

describe('engine watch policy (fake clock)', () => {
  it('checks the settings file once per reload interval, however often it wakes', async () => {
    const { reloadTimes } = await watchWith(() => undefined, 12, 500, 2000);
    expect(reloadTimes).toEqual([0, 2000, 4000, 6000]);
  });

  it('sleeps no longer than the reload interval while nothing is due', async () => {
    const { clock } = await watchWith(() => undefined, 3, 3000, 3000);
    expect(Math.max(...clock.sleeps)).toBeLessThanOrEqual(3000);
  });

  it('a reload that fails keeps checking on the same interval', async () => {
    const { reloadTimes } = await watchWith(
      () => new ConfigError([{ path: 'x', message: 'broken' }]),
      4,
      1000,
      1000,
    );
    expect(reloadTimes).toEqual([0, 1000, 2000, 3000, 4000]);
  });
});
