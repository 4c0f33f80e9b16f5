/**
 * Issue 29, the MCP server: `curupira mcp` (the built CLI, over stdio) driven by the MCP SDK's own
 * client. Every tool; a malformed automation refused with the messages `validate` gives; a created
 * automation written beside the settings file (which stays byte for byte the user's), shown by
 * `validate --explain`, on the board, and run.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { automationsFileOf } from '../../src/config/automations-file.js';
import {
  CLI,
  createHarness,
  type Harness,
  issueAutomation,
  ROOT,
  runBuiltCli,
  waitFor,
} from '../helpers/harness.js';
import { type Served, serveInProcess } from '../helpers/serve.js';

interface Answer {
  text: string;
  data: Record<string, unknown>;
  isError: boolean;
}

let h: Harness;
let client: Client;
let served: Served | undefined;

async function connect(): Promise<Client> {
  const c = new Client({ name: 'curupira-test', version: '1.0.0' });
  const env = Object.fromEntries(
    Object.entries(h.env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  await c.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '-c', h.settingsFile],
      env,
      cwd: ROOT,
      stderr: 'pipe',
    }),
  );
  return c;
}

async function call(name: string, args: Record<string, unknown> = {}): Promise<Answer> {
  const result = (await client.callTool({ name, arguments: args })) as {
    content: { type: string; text: string }[];
    structuredContent?: Record<string, unknown>;
    isError?: boolean;
  };
  return {
    text: result.content.map((c) => c.text).join('\n'),
    data: result.structuredContent ?? {},
    isError: result.isError === true,
  };
}

/** The user's own file, with a comment `curupira mcp` must never lose. */
const USER_COMMENT = '# my own notes: do not touch\n';

beforeEach(async () => {
  h = await createHarness({ issues: [{ title: 'Fix the login', labels: ['agent-ready'] }] });
  writeFileSync(h.settingsFile, `${USER_COMMENT}${readFileSync(h.settingsFile, 'utf8')}`);
  client = await connect();
});

afterEach(async () => {
  await client.close();
  await served?.stop();
  served = undefined;
  await h.cleanup();
});

const triage = {
  trigger_type: 'github-issues',
  repository: 'api',
  repo: 'acme/api',
  labels: ['triage-me'],
  prompt: 'Triage issue ${issue_number}: ${issue_title}',
};

describe('curupira mcp', () => {
  it('lists its tools, each with an input schema', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      'automation_create',
      'automation_delete',
      'automation_pause',
      'automation_resume',
      'automation_run',
      'automation_update',
      'automation_validate',
      'automations_list',
      'run_show',
      'runs_list',
    ]);
    for (const t of tools) expect(t.inputSchema.type).toBe('object');
    expect(client.getServerVersion()?.name).toBe('curupira');
  });

  it('refuses a malformed automation with the messages `validate` gives, and writes nothing', async () => {
    const bad = { ...triage, repository: 'nowhere', labels: 'triage-me', timeout: 'soon' };
    const answer = await call('automation_create', { id: 'triage', table: bad });
    expect(answer.isError).toBe(true);
    expect(existsSync(automationsFileOf(h.settingsFile))).toBe(false);

    // The same table written in a settings file, checked by `validate --json`.
    const copy = `${h.dir}/copy.toml`;
    writeFileSync(
      copy,
      `${readFileSync(h.settingsFile, 'utf8')}\n[automations.triage]\ntrigger_type = "github-issues"\nrepository = "nowhere"\nrepo = "acme/api"\nlabels = "triage-me"\ntimeout = "soon"\nprompt = ${JSON.stringify(triage.prompt)}\n`,
    );
    const validated = await runBuiltCli(['validate', '--json', '-c', copy], { env: h.env });
    expect(validated.code).toBe(2);
    const expected = (JSON.parse(validated.stdout) as { problems: { path: string; message: string }[] })
      .problems;
    const got = (answer.data.problems as { path: string; message: string }[]).map(({ path, message }) => ({
      path,
      message,
    }));
    expect(expected.length).toBeGreaterThanOrEqual(2);
    expect(got).toEqual(expected.map(({ path, message }) => ({ path, message })));
    for (const { message } of expected) expect(answer.text).toContain(message);
    // Located by key only: a line of the automations file, which was not written, would point at nothing.
    expect(answer.text).toContain('nothing was written');
    expect(answer.text).not.toContain('.automations.toml:');
    expect((answer.data.problems as { line: number | null }[]).map((p) => p.line)).toEqual(
      expected.map(() => null),
    );

    const validate = await call('automation_validate', { id: 'triage', table: bad });
    expect(validate.isError).toBe(true);
    expect(validate.data.problems).toEqual(answer.data.problems);
  });

  it('creates an automation beside the settings file, shown by validate --explain; the user file is untouched', async () => {
    const before = readFileSync(h.settingsFile, 'utf8');
    const checked = await call('automation_validate', { id: 'triage', table: triage });
    expect(checked.isError).toBe(false);
    expect(checked.text).toContain('Valid (nothing written).');
    expect(existsSync(automationsFileOf(h.settingsFile))).toBe(false);

    const created = await call('automation_create', { id: 'triage', table: triage });
    expect(created.isError).toBe(false);
    expect(created.text).toContain(`Written to ${automationsFileOf(h.settingsFile)}.`);
    expect(created.text).toContain('automation triage');
    expect(readFileSync(h.settingsFile, 'utf8')).toBe(before);
    expect(readFileSync(automationsFileOf(h.settingsFile), 'utf8')).toContain('[automations.triage]');

    const explained = await runBuiltCli(['validate', '--explain', '-c', h.settingsFile], { env: h.env });
    expect(explained.stderr).toBe('');
    expect(explained.code).toBe(0);
    expect(explained.stdout).toContain('Configuration is valid (2 automations;');
    expect(explained.stdout).toMatch(
      /automation triage\n {2}written in: +\S+settings\.automations\.toml \(the automations file/,
    );
    expect(explained.stdout).toContain('is:issue is:open label:triage-me');

    // The same id again, a change to the user's own automation, and screening turned off: refused.
    expect((await call('automation_create', { id: 'triage', table: triage })).text).toContain(
      "automation 'triage' already exists",
    );
    expect((await call('automation_create', { id: 'fix', table: triage })).text).toContain(
      "automation 'fix' already exists",
    );
    const user = await call('automation_update', { id: 'fix', table: triage });
    expect(user.isError).toBe(true);
    expect(user.text).toContain('is defined in the settings file');
    const weakened = await call('automation_create', {
      id: 'loose',
      table: { ...triage, screening: { mode: 'off' }, untrusted_text: 'raw' },
    });
    expect(weakened.isError).toBe(true);
    expect(weakened.text).toContain(
      'automations.loose.screening: an automation in the automations file is screened',
    );
    expect(weakened.text).toContain('automations.loose.untrusted_text:');
    expect(readFileSync(h.settingsFile, 'utf8')).toBe(before);

    // Changed, then deleted.
    const updated = await call('automation_update', {
      id: 'triage',
      table: { ...triage, labels: ['later'] },
    });
    expect(updated.isError).toBe(false);
    expect(updated.text).toContain('label:later');
    const list = await call('automations_list');
    expect(
      (list.data.automations as { id: string; editable: boolean }[]).map((a) => [a.id, a.editable]),
    ).toEqual([
      ['fix', false],
      ['triage', true],
    ]);
    expect((await call('automation_delete', { id: 'triage' })).isError).toBe(false);
    expect((await call('automation_delete', { id: 'fix' })).isError).toBe(true);
    const after = await runBuiltCli(['validate', '-c', h.settingsFile], { env: h.env });
    expect(after.stdout).toContain('Configuration is valid (1 automation;');
    expect(readFileSync(h.settingsFile, 'utf8')).toBe(before);
  });

  it('pauses and resumes without a daemon (in the state file); running now needs one', async () => {
    expect((await call('automation_pause', { id: 'fix' })).text).toBe(
      'Paused fix in the state file (no daemon is running; the next start honours it).',
    );
    const listed = await call('automations_list');
    expect(listed.data.automations).toMatchObject([{ id: 'fix', paused: true, lastRun: null }]);
    expect((await call('automation_resume', { id: 'fix' })).isError).toBe(false);
    expect((await call('automations_list')).data.automations).toMatchObject([{ id: 'fix', paused: false }]);
    const run = await call('automation_run', { id: 'fix' });
    expect(run).toMatchObject({ isError: true, text: 'no daemon running; start `curupira serve`' });
    expect((await call('automation_pause', { id: 'ghost' })).text).toBe(
      "no automation 'ghost' is configured",
    );
  });

  it('a created automation appears on the board of a running daemon and runs now; its run and transcript read back', async () => {
    h.configure({ automation: issueAutomation('fix', { prompt: 'Fix ${issue_number}', labels: ['never'] }) });
    served = await serveInProcess(h, { listen: true, reload: true });
    const created = await call('automation_create', {
      id: 'triage',
      table: { ...triage, labels: ['agent-ready'] },
    });
    expect(created.isError).toBe(false);
    await waitFor('the daemon to load triage', () =>
      served!.engine.automations().some((a) => a.id === 'triage'),
    );
    const board = await served.app.request('/', { headers: { authorization: `Bearer ${served.token}` } });
    expect(await board.text()).toContain('triage');

    const ran = await call('automation_run', { id: 'triage' });
    expect(ran.isError).toBe(false);
    const run = await waitFor('the run of triage', () =>
      served!.runs.find((r) => r.automationId === 'triage'),
    );
    expect(run.status).toBe('succeeded');

    const runs = await call('runs_list', { automation: 'triage' });
    expect(runs.data.runs).toMatchObject([{ id: run.id, automationId: 'triage', status: 'succeeded' }]);
    // The item as `curupira runs` names it, not its internal key.
    expect(runs.text).toMatch(new RegExp(`^${run.id}  triage  acme/api#${run.itemId}  succeeded`));
    const shown = await call('run_show', { id: run.id });
    expect(shown.isError).toBe(false);
    expect((shown.data.transcript as string[]).length).toBeGreaterThan(0);
    expect(shown.text).toContain(
      `${run.id}  triage  acme/api#${run.itemId} ${JSON.stringify(run.itemTitle)}  succeeded`,
    );

    expect((await call('automation_pause', { id: 'triage' })).text).toBe('Paused triage.');
    await waitFor(
      'triage paused',
      () => served!.engine.automations().find((a) => a.id === 'triage')?.paused === true,
    );
    expect((await call('automation_resume', { id: 'triage' })).text).toBe('Resumed triage.');
    // Inputs (issue 32): an undeclared one is refused, naming the declared; a declared one reaches the run.
    const chores = {
      trigger_type: 'cron',
      repository: 'api',
      schedule: '0 3 1 1 *',
      inputs: { area: 'docs' },
      prompt: 'Yearly chores in ${area}',
    };
    expect((await call('automation_create', { id: 'chores', table: chores })).isError).toBe(false);
    await waitFor('the daemon to load chores', () =>
      served!.engine.automations().some((a) => a.id === 'chores'),
    );
    const undeclared = await call('automation_run', { id: 'chores', inputs: { colour: 'blue' } });
    expect(undeclared).toMatchObject({
      isError: true,
      text: "unknown input 'colour': 'chores' declares area (inputs = { … } in the automation's table)",
    });
    expect((await call('automation_run', { id: 'chores', inputs: { area: 'tests' } })).isError).toBe(false);
    const chore = await waitFor('the run of chores', () =>
      served!.runs.find((r) => r.automationId === 'chores'),
    );
    expect(chore.inputs).toEqual({ area: 'tests' });
    expect(chore.prompt).toContain('Yearly chores in tests');
  });
});
