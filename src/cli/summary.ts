/**
 * The command list of top-level help, as text, so `curupira --help` answers without loading every
 * command's module. `program.test.ts` fails when it differs from what the registered commands say
 * (update it from that test's output when a command or its description changes).
 */
export const COMMAND_SUMMARY: readonly (readonly [term: string, description: string])[] = [
  ['validate [options]', 'Check the settings file without contacting GitHub or writing anything.'],
  ['schema', "Print the settings file's JSON Schema (generated from the schema that validates)."],
  ['run [options]', 'Run agents on the tasks available now (or keep watching with --watch).'],
  [
    'runs [options]',
    'List runs from the history (newest first; times in UTC); `runs show ID` for one run and its transcript.',
  ],
  ['serve [options]', 'Run the engine (as `run --watch`) with the board, the JSON API and CLI control.'],
  [
    'worker [options]',
    'Run fleet jobs on this host (needs state_db_url): `serve --role worker`, without the board.',
  ],
  ['status [options]', 'What the daemon is doing (or, without one, what the state file says).'],
  [
    'cancel [options] <run>',
    'Cancel a running run: its agent is stopped, its session kept (needs `curupira serve`).',
  ],
  [
    'trigger [options] <automation>',
    'Run an automation now: a schedule fires at once, an event trigger polls (needs `curupira serve`).',
  ],
  [
    'pause [options] <automation>',
    'Pause an automation (no polls, no fires) until resumed; remembered across restarts.',
  ],
  ['resume [options] <automation>', 'Resume a paused automation.'],
  [
    'allow [options] <run-id>',
    'Let the text a screening block stopped run once (the run id, or a prefix only one run has); recorded with who and when.',
  ],
  [
    'reset [options] <run-id>',
    'Forget the failures of the item a run worked on (any run of it, or a prefix only one run has): an escalated item runs again.',
  ],
  [
    'retry [options] <run-id>',
    'Run a finished run’s item again, as Retry on the board does: lifts a cancel or an escalation that holds it (with a daemon, it starts now).',
  ],
  [
    'doctor [options]',
    'Check the settings, the GitHub token and API, each automation’s matches, each repository’s remote, the agent CLIs, git, the state folder and the state file.',
  ],
  [
    'gc [options]',
    'List worktrees kept because they held unpushed work (and folders or files left by a crash); remove them with --older-than or --all.',
  ],
  [
    'simulator [options]',
    'Serve a local GitHub simulator (GraphQL on GitHub’s public schema, REST, rate limits) until Ctrl+C.',
  ],
  [
    'demo [options]',
    'Run the real engine end to end, offline: a local GitHub simulator, a local git remote and a scripted agent.',
  ],
  [
    'init [options]',
    'Write a commented starter settings file (one repository, one agent, one automation); never overwrites.',
  ],
  ['mcp [options]', 'Serve the MCP tools (automations, runs) over stdio, for agents and people.'],
  [
    'findings [options]',
    'List the findings of code-review watches (open ones by default), from the state file.',
  ],
];
