import { describe, expect, it } from 'vitest';
import { loadSettingsFromText } from '../config/load.js';
import type { Item } from '../core/types.js';
import { taskFromItem } from './task.js';

function automation(extra = '') {
  const { settings } = loadSettingsFromText(
    `[repositories.api]
remote = "https://example.com/acme/api.git"
[agents.profiles.main]
provider = "claude"
[agents.defaults]
profile = "main"
[automations.fix]
repository = "api"
repo = "acme/api"
labels = ["ready"]
prompt = "Fix \${issue_number}"
${extra}
`,
    '/tmp/settings.toml',
  );
  return settings.automations[0]!;
}

function item(labels: string[]): Item {
  return {
    id: '7',
    title: 'Issue 7',
    url: 'https://example.com/7',
    body: 'text',
    itemKey: 'issue:7',
    fields: { issue_number: '7', issue_title: 'Issue 7', issue_labels: labels },
  };
}

describe('task fingerprints', () => {
  it("leave out the automation's own state labels, so its writes never dispatch the item again", () => {
    const fix = automation(
      'status_label = "agent:implementing"\nfailed_label = "Agent:Failed"\nblocked_label = "agent:blocked"\nescalated_label = "agent:escalated"',
    );
    const base = taskFromItem(fix, item(['ready'])).fingerprint;
    for (const own of [
      ['agent:implementing'],
      ['agent:failed'],
      ['agent:blocked'],
      ['agent:implementing', 'agent:failed'],
    ])
      expect(taskFromItem(fix, item(['ready', ...own])).fingerprint).toBe(base);
    // A person's label, and the escalated label (removing it is the reset), still count.
    expect(taskFromItem(fix, item(['ready', 'bug'])).fingerprint).not.toBe(base);
    expect(taskFromItem(fix, item(['ready', 'agent:escalated'])).fingerprint).not.toBe(base);
  });

  it('count every label when the automation writes none', () => {
    const fix = automation();
    expect(taskFromItem(fix, item(['ready', 'agent:implementing'])).fingerprint).not.toBe(
      taskFromItem(fix, item(['ready'])).fingerprint,
    );
  });
});
