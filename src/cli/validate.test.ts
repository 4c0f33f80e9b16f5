import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSettingsFromText } from '../config/load.js';
import { runCliCaptured } from './testing.js';
import { explainAutomation, screeningSummary, unvouchedLines } from './validate.js';

const dir = mkdtempSync(join(tmpdir(), 'curupira-validate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SECRET = 's3cretPassw0rd';
const file = join(dir, 'settings.toml');
writeFileSync(
  file,
  `[settings]
workspace_dir = "ws"
[repositories.api]
remote = "https://deploy:${SECRET}@git.example.com/acme/api.git"
[automations.fix]
repository = "api"
repo = "acme/api"
labels = ["agent-ready"]
prompt = "Fix \${issue_number}: \${issue_title}"
`,
);

describe('validate', () => {
  it('--explain never prints a password embedded in a remote URL', async () => {
    const result = await runCliCaptured(['validate', '-c', file, '--explain']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      `  repository:     api (https://[redacted]@git.example.com/acme/api.git → ${join(dir, 'ws', 'api')})`,
    );
    expect(result.stdout + result.stderr).not.toContain(SECRET);
  });

  it('--json prints the verdict and what each automation does, credentials scrubbed', async () => {
    const result = await runCliCaptured(['validate', '-c', file, '--json']);
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain(SECRET);
    const report = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(report).toMatchObject({
      valid: true,
      file,
      problems: [],
      warnings: [],
      maxActiveTasks: 1,
      automations: [
        {
          id: 'fix',
          trigger: 'github-issues',
          repository: {
            alias: 'api',
            remote: 'https://[redacted]@git.example.com/acme/api.git',
            checkout: join(dir, 'ws', 'api'),
          },
          profile: 'opencode',
          provider: 'opencode',
          placeholders: ['issue_number', 'issue_title'],
          untrustedPlaceholders: ['issue_title'],
          explain: {
            'search query': 'repo:acme/api is:issue is:open label:agent-ready sort:created-asc',
          },
        },
      ],
    });
  });

  it('--json lists every problem with its line, and exits 2', async () => {
    const bad = join(dir, 'bad.toml');
    writeFileSync(bad, '[settings]\nmax_active_tasks = 0\n');
    const result = await runCliCaptured(['validate', '-c', bad, '--json']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual({
      valid: false,
      file: bad,
      problems: [
        { path: 'settings.max_active_tasks', message: 'must be at least 1, got 0', line: 2, column: 1 },
        {
          path: 'repositories',
          message: 'at least one [repositories.<alias>] table is required',
          line: null,
          column: null,
        },
        {
          path: 'automations',
          message: 'at least one [automations.<id>] table is required',
          line: null,
          column: null,
        },
      ],
      warnings: [],
    });
  });
});

describe('validate --explain: screening', () => {
  it('says what screening does for each automation', () => {
    const { settings } = loadSettingsFromText(
      `[repositories.api]
remote = "https://github.com/acme/api.git"
[settings.screening]
trusted_authors = ["alice"]
[automations.triage]
repository = "api"
repo = "acme/api"
prompt = "x"
[automations.labelled]
repository = "api"
repo = "acme/api"
prompt = "x"
[automations.labelled.screening]
required = false
require_trusted_labeler = true
[automations.nightly]
repository = "api"
schedule = "0 3 * * *"
prompt = "x"
`,
      '/work/s.toml',
    );
    expect(settings.automations.map((a) => screeningSummary(a, settings))).toEqual([
      'block; no classifier: vouched items run, unvouched ones are held; trusted: alice and association ≥ COLLABORATOR',
      'block; no classifier (scanners only); trusted: alice and association ≥ COLLABORATOR; labels must come from a trusted actor',
      'not screened (a schedule carries no third-party text)',
    ]);
  });
});

describe('validate: unvouched items', () => {
  it('says in one line per distinct answer what happens to an unvouched item', () => {
    const { settings } = loadSettingsFromText(
      `[repositories.api]
remote = "https://github.com/acme/api.git"
[automations.triage]
repository = "api"
repo = "acme/api"
prompt = "x"
[automations.relaxed]
repository = "api"
repo = "acme/api"
prompt = "x"
[automations.relaxed.screening]
required = false
[automations.nightly]
repository = "api"
schedule = "0 3 * * *"
prompt = "x"
`,
      '/work/s.toml',
    );
    expect(unvouchedLines(settings)).toEqual([
      'Unvouched items (triage) — an untrusted author, with no matching label applied by a trusted actor — are held (blocked): no classifier is configured; set classifier_model, classifier_command or classifier_agent = true under [settings.screening], or required = false to screen them with the scanners alone.',
      'Unvouched items (relaxed) — an untrusted author, with no matching label applied by a trusted actor — run when the deterministic scanners find nothing to block (required = false, no classifier).',
    ]);
  });
});

describe('validate --explain: enabled = false', () => {
  it('says the automation is disabled, and says nothing of it when enabled', () => {
    const { settings } = loadSettingsFromText(
      `[repositories.api]
remote = "https://github.com/acme/api.git"
[automations.off]
repository = "api"
repo = "acme/api"
prompt = "x"
enabled = false
[automations.on]
repository = "api"
repo = "acme/api"
prompt = "x"
`,
      '/work/s.toml',
    );
    const [off, on] = settings.automations.map((a) => explainAutomation(a, new Date(0), settings));
    expect(off?.[1]).toMatch(/^ {2}state: +disabled \(enabled = false\): never polled or fired/);
    expect(on?.join('\n')).not.toContain('disabled');
  });
});

describe('validate --explain: one row per label', () => {
  it('prints `code:` once for a review watch and a commit trigger (the pinned commit, said once)', () => {
    const { settings } = loadSettingsFromText(
      `[repositories.api]
remote = "https://github.com/acme/api.git"
[automations.review]
trigger_type = "review-watch"
repository = "api"
repo = "acme/api"
prompt = "Review \${review_range}"
[automations.commits]
trigger_type = "github-commits"
repository = "api"
repo = "acme/api"
branch = "main"
prompt = "Look at \${commit_sha}"
`,
      '/work/s.toml',
    );
    expect(settings.automations.map((a) => a.triggerType)).toEqual(['review-watch', 'github-commits']);
    for (const automation of settings.automations) {
      const lines = explainAutomation(automation, new Date(0), settings);
      const labels = lines.slice(1).map((line) => /^ {2}([^:]+):/.exec(line)?.[1]);
      expect(
        labels.filter((label) => label === 'code'),
        lines.join('\n'),
      ).toHaveLength(1);
      expect(new Set(labels).size, lines.join('\n')).toBe(labels.length);
      expect(lines.join('\n')).toContain('a new branch at the commit each task is pinned to');
    }
    expect(explainAutomation(settings.automations[0]!, new Date(0), settings).join('\n')).toMatch(
      /^ {2}baseline now: +`curupira trigger review --baseline` \(or the board's button\): the whole repository at the branch’s head, at any time$/m,
    );
  });
});

describe('validate --explain: the prompt line', () => {
  it('says when a prompt that names no item gets the item appended, and only then', () => {
    const { settings } = loadSettingsFromText(
      `[repositories.api]
remote = "https://github.com/acme/api.git"
[automations.plain]
repository = "api"
repo = "acme/api"
labels = ["ready"]
prompt = "Fix the bug."
[automations.named]
repository = "api"
repo = "acme/api"
labels = ["ready"]
prompt = "Fix \${issue_title}"
[automations.nightly]
repository = "api"
schedule = "0 3 * * *"
prompt = "Tidy up."
`,
      '/work/s.toml',
    );
    const promptLine = (id: string): string =>
      explainAutomation(settings.automations.find((a) => a.id === id)!, new Date(0), settings).find((line) =>
        line.startsWith('  prompt:'),
      )!;
    expect(promptLine('plain')).toMatch(
      /placeholders: none; names no item, so the item's number, title and fenced body are appended$/,
    );
    expect(promptLine('named')).not.toContain('appended');
    expect(promptLine('nightly')).not.toContain('appended');
  });
});
