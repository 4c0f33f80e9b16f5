import { resolve } from 'node:path';
import type { Command } from 'commander';
import { errorMessage, UsageError } from '../core/errors.js';
import { importOptional, SIMULATOR_PACKAGES } from '../core/optional.js';
import { type CliIo, writeLine } from './io.js';
import { serveTrackers, TRACKERS_DIR, TRACKERS_REPO } from './simulator-trackers.js';

export function registerSimulator(program: Command, io: CliIo): void {
  program
    .command('simulator')
    .description(
      'Serve a local GitHub simulator (GraphQL on GitHub’s public schema, REST, rate limits) until Ctrl+C.',
    )
    .option(
      '--fixture <file>',
      'JSON fixture describing repositories, issues, pull requests and boards (default: the demo world)',
    )
    .option('--port <port>', 'port on 127.0.0.1 (default: a free one)', '0')
    .option(
      '--token <token>',
      'accept only this token (and the fixture’s own); without it any token is accepted',
    )
    .option(
      '--login <login>',
      'who a token authenticates as (default: the fixture’s first token user, else octocat)',
    )
    .option(
      '--trackers [dir]',
      `also serve local Linear and Jira stand-ins with a demo issue each, and prepare DIR (default ${TRACKERS_DIR}) for examples/trackers.toml: a git remote, the scripted agent and DIR/settings.toml`,
    )
    .option('--linear-port <port>', 'with --trackers: the Linear stand-in’s port (0: a free one)', '8788')
    .option('--jira-port <port>', 'with --trackers: the Jira stand-in’s port (0: a free one)', '8789')
    .action(async (options: SimulatorOptions) => {
      const port = portOption('--port', options.port);
      const trackerPorts = {
        linear: portOption('--linear-port', options.linearPort),
        jira: portOption('--jira-port', options.jiraPort),
      };
      // The simulator (GitHub's schema, graphql-js) loads only for this command.
      if (options.token !== undefined && options.token.trim() === '')
        throw new UsageError('--token must not be empty');
      const { githubSchemaPath, readFixture, realTimeClock, startSimulator, worldFromFixture } =
        await importOptional(
          () => import('../simulator/index.js'),
          'The GitHub simulator (curupira simulator)',
          SIMULATOR_PACKAGES,
        );
      githubSchemaPath(); // says now, not at the first request, when the schema's package is missing
      const { demoFixture } = await import('../simulator/demo.js');
      let world: ReturnType<typeof worldFromFixture>;
      try {
        // The demo world runs on today's time, and so does a fixture that sets no `now`; one that
        // sets it keeps that stepping clock (a minute per object: predictable orders).
        const fixture: unknown = options.fixture ? await readFixture(options.fixture) : demoFixture;
        const setsNow = typeof fixture === 'object' && fixture !== null && 'now' in fixture;
        world =
          options.fixture && setsNow
            ? worldFromFixture(fixture)
            : worldFromFixture(fixture, { now: realTimeClock() });
      } catch (error) {
        throw new UsageError(
          `${options.fixture ? `fixture ${options.fixture}: ` : ''}${errorMessage(error)} (format: docs/simulator.md)`,
        );
      }
      const login = options.login ?? world.firstTokenLogin() ?? 'octocat';
      if (options.token === undefined) world.acceptAnyToken(login);
      else world.addToken(options.token, login);
      const sim = await startSimulator({ world, port });
      writeLine(io.stdout, sim.url);
      let trackers: { close(): Promise<void> } | undefined;
      if (options.trackers !== undefined) {
        const dir = resolve(options.trackers === true ? TRACKERS_DIR : options.trackers);
        try {
          const served = await serveTrackers(io, dir, trackerPorts);
          trackers = served;
          // The demo repository is the folder's remote too: a GitHub automation on it pushes
          // there, and the simulator's pull requests read their head and base from it.
          const repo = world.repo(TRACKERS_REPO);
          if (repo && repo.gitDir === undefined) world.addRepo(TRACKERS_REPO, { gitDir: served.remote });
        } catch (error) {
          await sim.close();
          throw error;
        }
      }
      writeLine(
        io.stderr,
        `GitHub simulator listening on ${sim.url} (GraphQL at ${sim.url}/graphql); set [settings.github] api_url to it. Ctrl+C stops it.`,
      );
      writeLine(
        io.stderr,
        options.token === undefined
          ? `Any token is accepted and authenticates as ${login} (e.g. GH_TOKEN=sim); --token TOKEN accepts only that one.`
          : `Token: ${options.token} (authenticates as ${login}); other tokens are refused.`,
      );
      await new Promise<void>((resolve) => {
        const stop = (): void => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          resolve();
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
      await trackers?.close();
      await sim.close();
    });
}

interface SimulatorOptions {
  fixture?: string;
  port: string;
  token?: string;
  login?: string;
  trackers?: string | true;
  linearPort: string;
  jiraPort: string;
}

function portOption(name: string, value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535)
    throw new UsageError(`${name} must be a port number, got '${value}'`);
  return Number(value);
}
