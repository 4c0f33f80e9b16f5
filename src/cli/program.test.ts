import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { commandIn, createProgram, createSummaryProgram, isTopLevelHelp } from './program.js';
import { COMMAND_SUMMARY } from './summary.js';
import { runCliCaptured } from './testing.js';

const dir = mkdtempSync(join(tmpdir(), 'curupira-program-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SETTINGS = `[repositories.api]
remote = "https://github.com/acme/api.git"
[automations.fix]
repository = "api"
repo = "acme/api"
prompt = "Fix \${issue_number}"
`;
const file = join(dir, 'x.toml');
writeFileSync(file, SETTINGS);
const VALID =
  'Configuration is valid (1 automation; max active tasks: 1).\nUnvouched items — an untrusted author, with no matching label applied by a trusted actor — are held (blocked): no classifier is configured; set classifier_model, classifier_command or classifier_agent = true under [settings.screening], or required = false to screen them with the scanners alone.\n';

describe('--config', () => {
  it('is accepted before or after the command, long or short', async () => {
    for (const argv of [
      ['--config', file, 'validate'],
      ['validate', '--config', file],
      ['-c', file, 'validate'],
      ['validate', '-c', file],
      ['validate', `--config=${file}`],
    ]) {
      const result = await runCliCaptured(argv, { env: { HOME: dir } });
      expect(result, argv.join(' ')).toEqual({ code: 0, stdout: VALID, stderr: '' });
    }
  });

  it('after a nested command too (runs show)', async () => {
    const result = await runCliCaptured(['runs', 'show', 'r_x', '-c', join(dir, 'none.toml')]);
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n')[0]).toBe(
      `Configuration error: configuration file not found: ${join(dir, 'none.toml')}`,
    );
  });

  it('reads CURUPIRA_CONFIG (relative to the working folder); the option wins over it', async () => {
    const viaEnv = await runCliCaptured(['validate'], { env: { CURUPIRA_CONFIG: 'x.toml' }, cwd: dir });
    expect(viaEnv).toEqual({ code: 0, stdout: VALID, stderr: '' });
    const missing = join(dir, 'missing.toml');
    const option = await runCliCaptured(['validate', '-c', missing], { env: { CURUPIRA_CONFIG: file } });
    expect(option.code).toBe(2);
    expect(option.stderr).toContain(`configuration file not found: ${missing}`);
  });

  it('a missing file points at `curupira init`', async () => {
    const result = await runCliCaptured(['validate', '-c', join(dir, 'nope.toml')]);
    expect(result.stderr.split('\n')[1]).toBe(
      '`curupira init` writes a commented starter file there (or pass --config PATH / set CURUPIRA_CONFIG); `curupira demo` runs without one.',
    );
  });

  it('is in the help of every command that reads the settings file', async () => {
    for (const argv of [
      ['validate'],
      ['run'],
      ['runs'],
      ['runs', 'show'],
      ['doctor'],
      ['gc'],
      ['init'],
      ['allow'],
      ['reset'],
      ['retry'],
    ]) {
      const result = await runCliCaptured([...argv, '--help']);
      expect(result.code, argv.join(' ')).toBe(0);
      expect(result.stdout, argv.join(' ')).toContain('-c, --config <path>');
      expect(result.stdout, argv.join(' ')).toContain('$CURUPIRA_CONFIG');
      expect(result.stdout, argv.join(' ')).toContain('--log-level <level>');
    }
  });

  it('and the other commands say it does not apply to them', async () => {
    for (const command of ['schema', 'simulator', 'demo']) {
      const result = await runCliCaptured([command, '--help']);
      expect(result.code, command).toBe(0);
      expect(result.stdout, command).toContain(
        'This command reads no settings file, so -c/--config does not apply.',
      );
    }
  });
});

describe('--log-level', () => {
  it('rejects an unknown level with exit 2', async () => {
    const result = await runCliCaptured(['validate', '-c', file, '--log-level', 'loud']);
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: "error: --log-level must be one of debug, info, warn, error, silent, got 'loud'\n",
    });
  });

  it('is accepted before the command', async () => {
    const result = await runCliCaptured(['--log-level', 'debug', 'validate', '-c', file]);
    expect(result.code).toBe(0);
  });
});

describe('removed commands', () => {
  for (const name of ['watch', 'batch']) {
    it(`\`${name}\` is an unknown command, exit 2, not the root help`, async () => {
      const result = await runCliCaptured([name]);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(`error: unknown command '${name}'\n(run with --help for usage)\n`);
    });
  }
});

describe('the installed package', () => {
  it('carries every file that messages and the starter settings file point to', async () => {
    const root = join(import.meta.dirname, '../..');
    const { readFileSync, existsSync } = await import('node:fs');
    const files = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { files: string[] }).files;
    const sources = ['src/cli/init.ts', 'src/cli/simulator.ts', 'src/cli/program.ts', 'src/cli/demo.ts']
      .map((f) => readFileSync(join(root, f), 'utf8'))
      .join('\n');
    const referenced = [
      ...new Set(sources.match(/\b(?:docs|examples|schema)\/[\w.-]+\.(?:md|toml|json)\b/g)),
    ];
    expect(referenced).toEqual(expect.arrayContaining(['docs/configuration.md', 'docs/simulator.md']));
    for (const path of referenced) {
      expect(existsSync(join(root, path)), path).toBe(true);
      expect(files, path).toContain(path.split('/')[0]);
    }
  });
});

describe('reportError', () => {
  it('never prints credentials of a remote URL', async () => {
    const { PassThrough } = await import('node:stream');
    const { WorkspaceError } = await import('../core/errors.js');
    const { reportError } = await import('./program.js');
    const stderr = new PassThrough();
    let text = '';
    stderr.on('data', (d: Buffer) => {
      text += d.toString();
    });
    const io = { stdout: new PassThrough(), stderr, env: {}, cwd: dir, programName: 'curupira' };
    expect(reportError(new WorkspaceError('cannot fetch https://bot:s3cret@git.example.com/a.git'), io)).toBe(
      1,
    );
    expect(reportError(new Error('odd: ssh://me:pw@host/x'), io)).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(text).toBe(
      'Error: cannot fetch https://[redacted]@git.example.com/a.git\nUnexpected error: odd: ssh://[redacted]@host/x\n',
    );
  });
});

describe('loading only the command that runs', () => {
  it('finds the command after program options, and none for help, version or an unknown word', () => {
    expect(commandIn(['run', '--watch'])).toBe('run');
    expect(commandIn(['-c', 'run', 'validate'])).toBe('validate');
    expect(commandIn(['--log-level', 'debug', 'runs', 'show', 'r_1'])).toBe('runs');
    expect(commandIn(['--help', 'run'])).toBeNull();
    expect(commandIn(['-V'])).toBeNull();
    expect(commandIn(['help', 'run'])).toBeNull();
    expect(commandIn(['rn'])).toBeNull();
    expect(commandIn([])).toBeNull();
  });

  it('still lists every command in help and suggests one for a typo', async () => {
    const help = await runCliCaptured(['--help'], { env: { HOME: dir } });
    for (const name of ['validate', 'schema', 'run', 'runs', 'doctor', 'gc', 'simulator', 'demo', 'init'])
      expect(help.stdout).toMatch(new RegExp(`^  ${name}\\b`, 'm'));
    const typo = await runCliCaptured(['rnu'], { env: { HOME: dir } });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/Did you mean run/);
    const runHelp = await runCliCaptured(['run', '--help'], { env: { HOME: dir } });
    expect(runHelp.stdout).toMatch(/--watch/);
  });
});

describe('top-level help without loading the commands', () => {
  const io = {
    stdout: new PassThrough(),
    stderr: new PassThrough(),
    env: {},
    cwd: dir,
    programName: 'curupira',
  };

  it('COMMAND_SUMMARY gives the same help as every registered command', async () => {
    const full = await createProgram(io, null);
    const terms = full.commands.map((command) => [
      full.createHelp().subcommandTerm(command),
      command.description(),
    ]);
    // On a mismatch, this list is what COMMAND_SUMMARY must say.
    expect(terms.filter(([term]) => !term?.startsWith('help '))).toEqual(
      COMMAND_SUMMARY.map((row) => [...row]),
    );
    expect(createSummaryProgram(io).helpInformation()).toBe(full.helpInformation());
  });

  it('answers --help, -h and no arguments, and nothing else', async () => {
    for (const argv of [[], ['--help'], ['-h']]) expect(isTopLevelHelp(argv)).toBe(true);
    for (const argv of [['help'], ['run', '--help'], ['--help', 'run'], ['-c', 'x', '--help']])
      expect(isTopLevelHelp(argv)).toBe(false);
    const help = await runCliCaptured(['-h'], { env: { HOME: dir } });
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: curupira \[options\] \[command\]/);
    expect(help.stdout).toMatch(/^ {2}help \[command\] +display help for command$/m);
  });
});
