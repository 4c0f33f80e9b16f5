import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PROVIDERS } from '../agents/schemas.js';
import { loadSettingsFromText } from '../config/load.js';
import { repoFromRemote, starterSettings } from './init.js';
import { runCliCaptured } from './testing.js';

const dir = mkdtempSync(join(tmpdir(), 'curupira-init-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('curupira init', () => {
  it('writes a commented starter file that validates, where --config points', async () => {
    const file = join(dir, 'nested', 'settings.toml');
    const result = await runCliCaptured([
      'init',
      '-c',
      file,
      '--repo',
      'octo/widgets',
      '--provider',
      'codex',
    ]);
    expect(result).toEqual({
      code: 0,
      stdout: `Wrote ${file}\nConfiguration is valid (1 automation; max active tasks: 1).\nNext: edit it, then \`curupira validate --explain\`, \`curupira doctor\` and \`curupira run --dry-run\`.\n`,
      stderr: '',
    });
    const text = readFileSync(file, 'utf8');
    expect(text).toContain('[repositories.widgets]\nremote = "https://github.com/octo/widgets.git"');
    expect(text).toContain('[agents.profiles.codex]\nprovider = "codex"\nsandbox = "workspace-write"');
    expect(text).toMatch(/^# curupira settings, written by `curupira init`\./);
    const validate = await runCliCaptured(['validate', '-c', file, '--explain']);
    expect(validate.code).toBe(0);
    expect(validate.stdout).toContain(
      'search query:   repo:octo/widgets is:issue is:open label:agent-ready -linked:pr sort:created-asc',
    );
    // A second `run` or a restart does not pay for the same issue again.
    expect(validate.stdout).toContain('item memory:    once: an issue fires at most once (issue:<number>)');
  });

  it('refuses to overwrite an existing file, and leaves it as it was', async () => {
    const file = join(dir, 'existing.toml');
    writeFileSync(file, '# mine\n');
    const result = await runCliCaptured(['init', '-c', file]);
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: `error: ${file} already exists; init never overwrites. Edit it, or pass --config NEW_PATH to write another.\n`,
    });
    expect(readFileSync(file, 'utf8')).toBe('# mine\n');
  });

  it('writes to CURUPIRA_CONFIG when set; a placeholder repository says so', async () => {
    const file = join(dir, 'env.toml');
    const result = await runCliCaptured(['init'], { env: { CURUPIRA_CONFIG: file } });
    expect(result.code).toBe(0);
    expect(readFileSync(file, 'utf8')).toContain('acme/api below is a placeholder');
  });

  it('rejects a bad provider or remote without writing anything', async () => {
    const file = join(dir, 'bad.toml');
    const provider = await runCliCaptured(['init', '-c', file, '--provider', 'hal']);
    expect(provider.code).toBe(2);
    expect(provider.stderr).toBe(`error: --provider must be one of ${PROVIDERS.join(', ')}, got 'hal'\n`);
    const remote = await runCliCaptured(['init', '-c', file, '--remote', 'nope']);
    expect(remote.code).toBe(2);
    expect(remote.stderr).toContain('repositories.api.remote: remote must be a full Git URL');
    expect(existsSync(file)).toBe(false);
  });

  it('has a valid starter profile for every provider', () => {
    for (const provider of PROVIDERS) {
      const { settings } = loadSettingsFromText(starterSettings({ provider }), join(dir, `${provider}.toml`));
      expect(settings.automations[0]?.profile.provider).toBe(provider);
    }
  });

  it('reads owner/name from GitHub remotes', () => {
    expect(repoFromRemote('https://github.com/o/n.git')).toBe('o/n');
    expect(repoFromRemote('git@github.com:o/n.git')).toBe('o/n');
    expect(repoFromRemote('https://gitlab.com/o/n.git')).toBeUndefined();
  });
});

describe('curupira init --pipeline (issue 32)', () => {
  it('writes the five steps wired by labels and chains; validate --explain shows each outcome set and handoff', async () => {
    const file = join(dir, 'pipeline', 'settings.toml');
    const result = await runCliCaptured(['init', '-c', file, '--pipeline', '--repo', 'octo/widgets']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Configuration is valid (5 automations;');
    const { settings } = loadSettingsFromText(readFileSync(file, 'utf8'), file);
    expect(settings.automations.map((a) => a.id)).toEqual([
      'explore',
      'triage',
      'implement',
      'shepherd',
      'review',
    ]);

    const validate = await runCliCaptured(['validate', '-c', file, '--explain']);
    expect(validate.code).toBe(0);
    const out = validate.stdout;
    const section = (id: string): string => {
      const start = out.indexOf(`automation ${id}`);
      expect(start, `no section for ${id} in:\n${out}`).toBeGreaterThanOrEqual(0);
      const next = out.indexOf('\nautomation ', start + 1);
      return out.slice(start, next < 0 ? undefined : next);
    };
    for (const id of ['explore', 'triage', 'implement', 'shepherd', 'review'])
      expect(section(id)).toMatch(new RegExp(`step:\\s+${id} \\(seed 001's preset`));
    expect(section('explore')).toContain('filed, noop, skipped, failed');
    expect(section('explore')).toContain('focus (default "anything"), explore_batch (default "5")');
    const triage = section('triage');
    expect(triage).toContain('ready-for-agent, needs-info, duplicate, noop, skipped, failed');
    expect(triage).toMatch(/on ready-for-agent:\s+takes off needs-triage, then puts on agent:ready/);
    expect(triage).toMatch(/on needs-info:\s+takes off needs-triage, then puts on needs-info/);
    expect(triage).toMatch(/on duplicate:\s+takes off needs-triage, then puts on duplicate/);
    const implement = section('implement');
    expect(implement).toContain('label:"agent:ready"');
    expect(implement).toContain('implemented, noop, skipped, failed');
    expect(implement).toMatch(/on implemented:\s+takes off agent:ready/);
    expect(implement).toMatch(/on noop:\s+takes off agent:ready/);
    const shepherd = section('shepherd');
    expect(shepherd).toContain("runs when:      a run of 'implement' reports the outcome implemented");
    expect(shepherd).toContain('on-track, needs-human, noop, skipped, failed');
    const review = section('review');
    expect(review).toContain('approve, request-changes, noop, skipped, failed');
    expect(review).toMatch(/on approve:\s+takes off agent:changes-requested, then puts on agent:approved/);
  });

  it('refuses --label with --pipeline, and never overwrites', async () => {
    const file = join(dir, 'pipeline-label', 'settings.toml');
    const refused = await runCliCaptured(['init', '-c', file, '--pipeline', '--label', 'x']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--label goes without --pipeline');
    expect(existsSync(file)).toBe(false);
  });

  it('validates for every provider', () => {
    for (const provider of PROVIDERS)
      expect(() =>
        loadSettingsFromText(starterSettings({ provider, pipeline: true }), join(dir, `${provider}.toml`)),
      ).not.toThrow();
  });
});
