import { describe, expect, it } from 'vitest';
import { explainAutomation } from '../cli/validate.js';
import { loadSettingsFromText } from '../config/load.js';
import { ConfigError } from '../core/errors.js';

const BASE = `
[repositories.app]
remote = "https://example.com/app.git"
`;

function load(text: string) {
  return loadSettingsFromText(`${BASE}${text}`, '/tmp/curupira-pipeline/settings.toml');
}

function problems(text: string): string[] {
  try {
    load(text);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues.map((i) => `${i.path}: ${i.message}`);
    throw error;
  }
  return [];
}

const TRIAGE = `
[automations.triage]
repository = "app"
repo = "acme/app"
labels = ["needs-triage"]
prompt = "Triage #\${task_number} with focus \${focus}"
outcomes = ["ready-for-agent", "needs-info"]
inputs = { focus = "bugs" }

[automations.triage.handoffs.ready-for-agent]
add_labels = ["agent:ready"]
remove_labels = ["needs-triage"]
`;

describe('pipeline keys (issue 32)', () => {
  it('a triage step with outcomes, a handoff and an input loads, and --explain shows them', () => {
    const { settings } = load(TRIAGE);
    const triage = settings.automations.find((a) => a.id === 'triage')!;
    const text = explainAutomation(triage, new Date(0)).join('\n');
    expect(text).toContain('outcomes');
    expect(text).toContain('ready-for-agent, needs-info, noop, skipped, failed');
    expect(text).toMatch(
      /on ready-for-agent:\s+takes off needs-triage, then puts on agent:ready \(write queue\)/,
    );
    expect(text).toContain('focus (default "bugs"); set per run with --set key=value');
  });

  it("a handoff's review is validated and --explain shows it", () => {
    const review = `
[automations.review]
trigger_type = "github-pull-requests"
repository = "app"
repo = "acme/app"
prompt = "Review #\${pull_request_number}"
outcomes = ["approve"]

[automations.review.handoffs.approve]
add_labels = ["agent:approved"]
review = "APPROVE"
`;
    const { settings } = load(review);
    const text = explainAutomation(settings.automations[0]!, new Date(0)).join('\n');
    expect(text).toMatch(
      /on approve:\s+puts on agent:approved, then posts a review \(APPROVE\) on a pull request \(write queue\)/,
    );
    expect(problems(review.replace('"APPROVE"', '"LGTM"')).join('\n')).toContain(
      'automations.review.handoffs.approve.review',
    );
  });

  it('handoffs need outcomes, and name outcomes of the set', () => {
    expect(
      problems(`
[automations.fix]
repository = "app"
repo = "acme/app"
prompt = "Fix"
[automations.fix.handoffs.done]
add_labels = ["x"]
`),
    ).toEqual([
      'automations.fix.handoffs: handoffs act on the outcome the agent reports, which needs outcomes = [...] (the closed set it reports from)',
    ]);
    expect(
      problems(`
[automations.fix]
repository = "app"
repo = "acme/app"
prompt = "Fix"
outcomes = ["implemented"]
[automations.fix.handoffs.done]
add_labels = ["x"]
`),
    ).toEqual([
      "automations.fix.handoffs.done: 'done' is not an outcome of this automation (implemented, noop, skipped, failed)",
    ]);
  });

  it('a chain on an outcome names one its upstream declares', () => {
    const chain = (on: string) => `${TRIAGE}
[automations.ask]
after = "triage"
on = "${on}"
repository = "app"
prompt = "Ask"
`;
    expect(problems(chain('needs-info'))).toEqual([]);
    expect(problems(chain('noop'))).toEqual([]);
    expect(problems(chain('wontfix'))).toEqual([
      "automations.ask.on: 'wontfix' is not an outcome of 'triage': use one of success, failure, any, ready-for-agent, needs-info, noop, skipped",
    ]);
  });

  it('an input cannot shadow a prompt field, and the prompt may use declared inputs only', () => {
    expect(
      problems(`
[automations.fix]
repository = "app"
repo = "acme/app"
prompt = "Fix \${task_title} \${area}"
inputs = { task_title = "x" }
`),
    ).toEqual([
      "automations.fix.prompt: unsupported prompt placeholders for 'fix': ['area']",
      "automations.fix.inputs.task_title: input 'task_title' has the name of a prompt field: choose another name",
    ]);
  });
});

describe('step presets (issue 32)', () => {
  it('step = "triage" fills in the filters, outcomes, handoffs, lease and prompt; --explain shows them', () => {
    const { settings } = load(`
[automations.triage]
step = "triage"
repository = "app"
repo = "acme/app"
`);
    const triage = settings.automations.find((a) => a.id === 'triage')!;
    expect(triage.triggerType).toBe('github-issues');
    expect(triage.config).toMatchObject({
      labels: ['needs-triage'],
      outcomes: ['ready-for-agent', 'needs-info', 'duplicate'],
      lease_ttl: '1 hour',
      handoffs: { 'ready-for-agent': { remove_labels: ['needs-triage'], add_labels: ['agent:ready'] } },
    });
    expect(triage.config.prompt).toContain('#${issue_number} needs-info');
    const text = explainAutomation(triage, new Date(0)).join('\n');
    expect(text).toMatch(/step:\s+triage \(seed 001's preset/);
    expect(text).toContain('ready-for-agent, needs-info, duplicate, noop, skipped, failed');
    expect(text).toMatch(/on needs-info:\s+takes off needs-triage, then puts on needs-info/);
  });

  it("the table's own keys win; review and explore bring their triggers; shepherd chains on implemented", () => {
    const { settings } = load(`
[automations.implement]
step = "implement"
repository = "app"
repo = "acme/app"
labels = ["ready"]
prompt = "Fix #\${issue_number}"

[automations.shepherd]
step = "shepherd"
after = "implement"
repository = "app"

[automations.review]
step = "review"
repository = "app"
repo = "acme/app"

[automations.explore]
step = "explore"
repository = "app"
schedule = "0 3 * * *"
`);
    const of = (id: string) => settings.automations.find((a) => a.id === id)!;
    expect(of('implement').config).toMatchObject({
      labels: ['ready'],
      prompt: 'Fix #${issue_number}',
      outcomes: ['implemented'],
      deliver: 'pr',
      lease_ttl: '3 hours',
    });
    expect(of('shepherd').triggerType).toBe('after');
    expect(of('shepherd').config).toMatchObject({ on: 'implemented', outcomes: ['on-track', 'needs-human'] });
    expect(of('review').triggerType).toBe('github-pull-requests');
    expect(of('review').config).toMatchObject({ once: 'head', worktree_from: 'head', draft: false });
    expect(of('explore').triggerType).toBe('cron');
    expect(of('explore').config).toMatchObject({ schedule: '0 3 * * *', outcomes: ['filed'] });
  });

  it('an unknown step is refused with the list', () => {
    expect(
      problems(`
[automations.fix]
step = "deploy"
repository = "app"
repo = "acme/app"
prompt = "Fix"
`).join('\n'),
    ).toMatch(/automations\.fix\.step: .*explore.*triage.*implement.*shepherd.*review/);
  });
});
