import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { demoFixture } from './demo.js';
import { SimulatorFixture, simulatorFixtureJsonSchema } from './fixture-schema.js';
import { worldFromFixture } from './world.js';

const root = join(import.meta.dirname, '../..');

function docsExample(): unknown {
  const text = readFileSync(join(root, 'docs/simulator.md'), 'utf8');
  const block = /```json\n([\s\S]*?)\n```/.exec(text)?.[1];
  if (!block) throw new Error('docs/simulator.md has no json example');
  return JSON.parse(block);
}

describe('simulator fixture schema', () => {
  it('schema/simulator-fixture.schema.json is current (run `npm run generate` after a change)', () => {
    const committed = readFileSync(join(root, 'schema/simulator-fixture.schema.json'), 'utf8');
    expect(committed).toBe(`${JSON.stringify(simulatorFixtureJsonSchema(), null, 2)}\n`);
  });

  it('the demo fixture and the documented example follow it and load', () => {
    for (const fixture of [demoFixture, docsExample()]) {
      expect(SimulatorFixture.safeParse(fixture).error).toBeUndefined();
      worldFromFixture(fixture);
    }
    const world = worldFromFixture(docsExample());
    expect(world.viewerForToken('sim-token')?.login).toBe('alice');
  });

  it('rejects a misspelt key', () => {
    const result = SimulatorFixture.safeParse({ repos: [{ name: 'acme/api', issue: [] }] });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]).toMatchObject({ code: 'unrecognized_keys', keys: ['issue'] });
  });
});
