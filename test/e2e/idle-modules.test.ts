/**
 * Issue 16, item 6: an idle `run --watch` loads only what watching needs. The built CLI runs under
 * a module hook that lists every module it loads (ESM through a resolve hook, CommonJS through
 * `Module._load`), and the list taken once the daemon is idle must hold none of what only a run,
 * another command or another feature loads: the classifier runners, the screening scanners, the
 * agent drivers, the board and API server, the simulator, the other commands, nunjucks,
 * onnxruntime, OpenTelemetry. After a screened run the same hook does list the classifier runner,
 * so the check cannot pass because the hook saw nothing. (RSS itself is measured in bench/, not
 * asserted: it moves with the machine.)
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness, runBuiltCli, startBuiltCli, waitFor } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

/** What an idle daemon must not have loaded, as patterns on a module's URL or path. */
const NOT_AT_IDLE: readonly [what: string, pattern: RegExp][] = [
  ['a classifier runner', /\/dist\/screening\/classifier\/(command|prompt-guard|unigram|messages)\.js$/],
  ['a screening scanner', /\/dist\/screening\/(scanners\/|scan\.js|lexicon\.js|text\.js|index\.js)/],
  ['an agent driver', /\/dist\/agents\/[a-z]+\/index\.js$/],
  ['the board or API server', /\/dist\/server\//],
  ['the simulator', /\/dist\/simulator\//],
  [
    'another command',
    /\/dist\/cli\/(validate|schema|runs|serve|control|allow|reset|doctor|gc|simulator|demo|init)\.js$/,
  ],
  ['nunjucks', /\/node_modules\/nunjucks\//],
  ['onnxruntime', /onnxruntime/],
  ['OpenTelemetry', /opentelemetry|\/dist\/telemetry\/otel\.js$/],
];

function hookFiles(dir: string, log: string): string {
  const hooks = join(dir, 'load-hooks.mjs');
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';
let file;
export function initialize(data) { file = data.file; }
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(file, result.url + '\\n');
  return result;
}
`,
  );
  const register = join(dir, 'load-register.mjs');
  writeFileSync(
    register,
    `import { appendFileSync } from 'node:fs';
import Module, { register } from 'node:module';
import { pathToFileURL } from 'node:url';
const file = ${JSON.stringify(log)};
register(pathToFileURL(${JSON.stringify(hooks)}), { data: { file } });
const load = Module._load;
Module._load = function (request, parent, isMain) {
  let path = request;
  try { path = Module._resolveFilename(request, parent, isMain); } catch {}
  appendFileSync(file, 'require:' + path + '\\n');
  return load.apply(this, arguments);
};
`,
  );
  return pathToFileURL(register).href;
}

describe('idle run --watch', () => {
  it('loads no classifier, scanner, driver, server, simulator, other command, nunjucks or SDK until a run needs it', async () => {
    h = await createHarness({
      issues: [],
      settingsExtra: '[settings.polling]\npoll_interval_seconds = 0.2\n',
    });
    const classifier = join(h.dir, 'low.mjs');
    writeFileSync(
      classifier,
      `let input = '';\nfor await (const c of process.stdin) input += c;\nconst { texts } = JSON.parse(input);\nprocess.stdout.write(JSON.stringify({ scores: texts.map(() => 0.01) }));\n`,
    );
    h.configure({
      screening: `mode = "block"\nclassifier_command = ${JSON.stringify([process.execPath, classifier])}`,
    });
    const log = join(h.dir, 'loads.txt');
    const env = { ...h.env, NODE_OPTIONS: `--import=${hookFiles(h.dir, log)}` };
    const cli = startBuiltCli(['--config', h.settingsFile, 'run', '--watch', '--size', '1'], { env });
    try {
      // Idle: a poll found nothing (a conditional request, then the search) and the next has begun.
      await waitFor('a second poll', () => {
        const polls = h!.sim.requests.filter(
          (r) => r.method === 'GET' && r.path === '/repos/acme/api/issues',
        );
        return polls.length >= 2 && h!.sim.requests.some((r) => r.path === '/graphql');
      });
      const idle = readFileSync(log, 'utf8').split('\n').filter(Boolean);
      expect(idle.some((url) => url.endsWith('/dist/engine/engine.js'))).toBe(true);
      expect(idle.some((path) => path.startsWith('require:') && path.includes('better-sqlite3'))).toBe(true);
      for (const [what, pattern] of NOT_AT_IDLE)
        expect(
          idle.filter((url) => pattern.test(url)),
          `${what} loaded at idle`,
        ).toEqual([]);

      // A task arrives: it is screened by the classifier command, whose runner loads now.
      h.world.addIssue('acme/api', {
        title: 'Late',
        body: 'Please fix.',
        labels: ['agent-ready'],
        author: 'octocat',
      });
      const result = await cli.done;
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/^1 run: 1 succeeded\n/);
      const after = readFileSync(log, 'utf8');
      expect(after).toMatch(/\/dist\/screening\/classifier\/command\.js\n/);
      expect(after).toMatch(/\/dist\/agents\/claude\/index\.js\n/);
    } finally {
      cli.child.kill('SIGKILL');
      expect(existsSync(log)).toBe(true);
    }
  }, 60_000);
});

/**
 * Every package an idle `run --watch` loads, by name: the settings (smol-toml, zod), the state
 * file (better-sqlite3 and the two small packages that find its binary) and the command line
 * (commander). The log and the GitHub client are curupira's own (issue 31: pino and Octokit's
 * request layer were loaded by every daemon). A package that joins them makes every daemon
 * heavier at rest: it is either loaded on first use or added here on purpose.
 */
const IDLE_PACKAGES = ['better-sqlite3', 'bindings', 'commander', 'file-uri-to-path', 'smol-toml', 'zod'];

/** The package names in a module list (the last `node_modules/` segment of each path). */
function packagesIn(loaded: readonly string[]): string[] {
  const names = new Set<string>();
  for (const entry of loaded) {
    const match = /.*\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(entry);
    if (match) names.add(match[1]!);
  }
  return [...names].sort();
}

describe('idle run --watch with 50 automations', () => {
  it('loads exactly the packages watching needs, and none of what only a run loads', async () => {
    const automations = Array.from(
      { length: 50 },
      (_, i) => `[automations.watch${i}]
trigger_type = "github-issues"
repository = "api"
repo = "acme/api"
labels = ["label-${i}"]
prompt = "Fix \${issue_number}"
`,
    ).join('\n');
    h = await createHarness({
      issues: [],
      settingsExtra: '[settings.polling]\npoll_interval_seconds = 0.2\n',
      automation: automations,
    });
    const log = join(h.dir, 'loads.txt');
    const env = { ...h.env, NODE_OPTIONS: `--import=${hookFiles(h.dir, log)}` };
    const cli = startBuiltCli(['--config', h.settingsFile, 'run', '--watch'], { env });
    try {
      // Idle: every automation has searched once, and the change probes of later polls go on.
      const searches = () => h!.sim.requests.filter((r) => r.path === '/graphql').length;
      const probes = () =>
        h!.sim.requests.filter((r) => r.method === 'GET' && r.path === '/repos/acme/api/issues').length;
      // Event waits, not sleeps: generous limits cost nothing on a quiet machine (the test takes
      // about 2 s there) and keep two crowded cores from failing it (over 30 s beside other work).
      await waitFor('a search of every automation', () => searches() >= 50, 75_000);
      const seen = probes();
      await waitFor('later polls', () => probes() > seen + 50, 75_000);
      const idle = readFileSync(log, 'utf8').split('\n').filter(Boolean);
      expect(packagesIn(idle)).toEqual(IDLE_PACKAGES);
      for (const [what, pattern] of NOT_AT_IDLE)
        expect(
          idle.filter((url) => pattern.test(url)),
          `${what} loaded at idle`,
        ).toEqual([]);
    } finally {
      cli.child.kill('SIGKILL');
      await cli.done;
    }
  }, 180_000);
});

describe('--version and --help', () => {
  it('--version loads main.js and version.js alone; --help no settings schema, zod, logger or command module', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'curupira-start-up-'));
    try {
      const loads = async (args: string[]) => {
        const log = join(dir, `${args.join('')}.txt`);
        const result = await runBuiltCli(args, {
          env: { ...process.env, NODE_OPTIONS: `--import=${hookFiles(dir, log)}` },
        });
        expect(result.code, result.stderr).toBe(0);
        return { stdout: result.stdout, loaded: readFileSync(log, 'utf8').split('\n').filter(Boolean) };
      };
      const heavy =
        /\/node_modules\/(zod|pino|smol-toml|better-sqlite3|@octokit)\/|\/dist\/(config\/(load|schema)|log|engine|store|cli\/(run|validate|serve|doctor))\.js$/;
      const version = await loads(['--version']);
      expect(version.stdout).toMatch(/^curupira \d+\.\d+\.\d+/);
      expect(
        [...new Set(version.loaded.filter((url) => !url.startsWith('node:')))].map((url) =>
          url.slice(url.indexOf('/dist/')),
        ),
      ).toEqual(['/dist/cli/main.js', '/dist/version.js']);
      const help = await loads(['--help']);
      expect(help.stdout).toContain('Commands:');
      expect(help.loaded.some((url) => url.includes('/node_modules/commander/'))).toBe(true);
      expect(help.loaded.filter((url) => heavy.test(url))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
