/**
 * The demo fixture (`fixtures/demo.json`): one repository, `acme/widgets`, with a few labels and four
 * issues, one of them (by mona, a stranger) labelled `agent-ready` by octocat, a maintainer. Imported as a module so the build ships it in dist/.
 */
import demo from './fixtures/demo.json' with { type: 'json' };
import { setPermission } from './reviews.js';
import { type SimWorld, type WorldOptions, worldFromFixture } from './world.js';

/** The token the demo fixture accepts (it authenticates as `octocat`). */
export const DEMO_TOKEN = 'curupira-demo-token';

export const demoFixture: unknown = demo;

/** A fresh world seeded from the demo fixture; octocat, who labels the work, maintains `acme/widgets`. */
export function demoWorld(options: WorldOptions = {}): SimWorld {
  const world = worldFromFixture(demoFixture, options);
  setPermission(world, 'acme/widgets', 'octocat', 'write');
  world.setAssociation('acme/widgets', 'octocat', 'COLLABORATOR');
  return world;
}
