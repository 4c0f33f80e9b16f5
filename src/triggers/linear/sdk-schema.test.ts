/**
 * The Linear schema excerpt (src/simulator/fixtures/linear-schema.graphql, cut from Linear's published
 * schema) against the types of @linear/sdk, the version this project installs: every type and
 * field curupira's operations use is declared there too, so the excerpt has not drifted from the
 * API the SDK describes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isInputObjectType, isObjectType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { linearSchema } from '../../../test/helpers/linear-stand-in.js';

const SDK = join(import.meta.dirname, '../../../node_modules/@linear/sdk/dist');

/** Each `type Name = … {` block of the SDK's declarations: its field names. */
function sdkTypes(): Map<string, Set<string>> {
  const types = new Map<string, Set<string>>();
  for (const file of readdirSync(SDK).filter((name) => name.endsWith('.d.mts'))) {
    let current: Set<string> | undefined;
    for (const line of readFileSync(join(SDK, file), 'utf8').split('\n')) {
      const start = /^(?:export )?type (\w+) = (?:[\w& ]*& )?\{$/.exec(line);
      if (start) {
        current = new Set();
        if (!types.has(start[1]!)) types.set(start[1]!, current);
        continue;
      }
      if (line === '};') current = undefined;
      const field = current && /^ {2}(\w+)\??:/.exec(line);
      if (field) current!.add(field[1]!);
    }
  }
  return types;
}

describe('the Linear schema excerpt and @linear/sdk', () => {
  it('declares every type and field the excerpt keeps', () => {
    const sdk = sdkTypes();
    const missing: string[] = [];
    let checked = 0;
    for (const type of Object.values(linearSchema().getTypeMap())) {
      if (type.name.startsWith('__') || !(isObjectType(type) || isInputObjectType(type))) continue;
      const fields = sdk.get(type.name);
      if (!fields) {
        missing.push(type.name);
        continue;
      }
      for (const field of Object.keys(type.getFields())) {
        checked += 1;
        if (!fields.has(field)) missing.push(`${type.name}.${field}`);
      }
    }
    expect(missing).toEqual([]);
    // Query, Mutation, Issue, User, the filters…: a hundred or so fields, each found.
    expect(checked).toBeGreaterThan(80);
  });
});
