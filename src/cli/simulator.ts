import type { Command } from 'commander';
import { UsageError } from '../core/errors.js';
import { type CliIo, writeLine } from './io.js';

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
    .action(async (options: { fixture?: string; port: string }) => {
      if (!/^\d+$/.test(options.port) || Number(options.port) > 65535) {
        throw new UsageError(`--port must be a port number, got '${options.port}'`);
      }
      const port = Number(options.port);
      // The simulator (GitHub's schema, graphql-js) loads only for this command.
      const { runSimulatorFromFixture, startSimulator } = await import('../simulator/index.js');
      const { demoWorld } = await import('../simulator/demo.js');
      const sim = options.fixture
        ? await runSimulatorFromFixture(options.fixture, { port })
        : await startSimulator({ world: demoWorld(), port });
      writeLine(io.stdout, sim.url);
      writeLine(
        io.stderr,
        `GitHub simulator listening on ${sim.url} (GraphQL at ${sim.url}/graphql); set [settings.github] api_url to it. Ctrl+C stops it.`,
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
      await sim.close();
    });
}
