/**
 * The demo fixture (`fixtures/demo.json`): one repository, `acme/widgets`, with a few labels and four
 * issues, one of them labelled `agent-ready`. Imported as a module so the build ships it in dist/.
 */
import demo from './fixtures/demo.json' with { type: 'json' };
import { type SimWorld, type WorldOptions, worldFromFixture } from './world.js';

/** The token the demo fixture accepts (it authenticates as `octocat`). */
export const DEMO_TOKEN = 'curupira-demo-token';

export const demoFixture: unknown = demo;

/** A fresh world seeded from the demo fixture. */
export function demoWorld(options: WorldOptions = {}): SimWorld {
  return worldFromFixture(demoFixture, options);
}
