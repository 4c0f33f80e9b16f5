import type { Command } from 'commander';
import { settingsJsonSchema } from '../config/schema.js';
import { type CliIo, writeLine } from './io.js';

export function registerSchema(program: Command, io: CliIo): void {
  program
    .command('schema')
    .description("Print the settings file's JSON Schema (generated from the schema that validates).")
    .action(() => {
      writeLine(io.stdout, JSON.stringify(settingsJsonSchema(), null, 2));
    });
}
