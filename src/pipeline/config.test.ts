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
