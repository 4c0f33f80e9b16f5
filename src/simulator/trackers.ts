/**
 * The Linear and Jira stand-ins as `curupira simulator --trackers` serves them: the same local
 * stand-ins the tests use (linear-stand-in.ts, jira-stand-in.ts), each seeded with one issue for
 * the demo's repository and accepting the demo's credentials below, so that examples/trackers.toml
 * runs a Linear automation and a Jira automation end to end without an account.
 */
import { JiraStandIn } from './jira-stand-in.js';
import { LinearStandIn } from './linear-stand-in.js';

/** The credentials the stand-ins accept (what examples/trackers.toml's readers export). */
export const TRACKER_DEMO = {
  linearKey: 'lin_api_demo',
  jiraEmail: 'demo@curupira.invalid',
  jiraToken: 'demo',
} as const;

export interface TrackerStandIns {
  linear: LinearStandIn;
  jira: JiraStandIn;
  close(): Promise<void>;
}

const CREATED = '2026-01-05T09:00:00Z';

export async function startTrackerStandIns(ports: {
  linear: number;
  jira: number;
}): Promise<TrackerStandIns> {
  const linear = new LinearStandIn(TRACKER_DEMO.linearKey, 'u-curupira');
  linear.addUser({
    id: 'u-curupira',
    name: 'curupira',
    displayName: 'curupira',
    email: TRACKER_DEMO.jiraEmail,
  });
  linear.addUser({ id: 'u-ada', name: 'Ada', displayName: 'ada', email: 'ada@acme.test', admin: true });
  linear.addIssue({
    team: 'ENG',
    number: 1,
    title: 'Widget labels crash when a widget has no name',
    description:
      '`label()` in src/widgets/list.ts throws on a widget without a name. Show "unnamed" instead.',
    labels: ['agent'],
    creatorId: 'u-ada',
    priority: 2,
    createdAt: CREATED,
  });
  const jira = new JiraStandIn(TRACKER_DEMO.jiraEmail, TRACKER_DEMO.jiraToken, 'acc-curupira');
  jira.users.set('acc-curupira', {
    accountId: 'acc-curupira',
    displayName: 'curupira',
    accountType: 'atlassian',
  });
  jira.users.set('acc-ada', { accountId: 'acc-ada', displayName: 'Ada', accountType: 'atlassian' });
  jira.issues.push({
    key: 'WID-1',
    summary: 'Document the widgets module in the README',
    description: 'The README says nothing about src/widgets. Add a short section.',
    labels: ['agent'],
    reporter: 'acc-ada',
    created: CREATED,
  });
  await linear.start(ports.linear);
  try {
    await jira.start(ports.jira);
  } catch (error) {
    await linear.stop();
    throw error;
  }
  return {
    linear,
    jira,
    async close() {
      await Promise.all([linear.stop(), jira.stop()]);
    },
  };
}
