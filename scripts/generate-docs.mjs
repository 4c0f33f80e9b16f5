// Regenerates the committed JSON Schema and configuration reference from the built schema.
// Run through `npm run generate` (which builds first).
import { writeFileSync } from 'node:fs';
import { renderConfigurationReference } from '../dist/config/docs.js';
import { settingsJsonSchema } from '../dist/config/schema.js';
import { simulatorFixtureJsonSchema } from '../dist/simulator/fixture-schema.js';

const schema = settingsJsonSchema();
writeFileSync(
  new URL('../schema/settings.schema.json', import.meta.url),
  `${JSON.stringify(schema, null, 2)}\n`,
);
writeFileSync(new URL('../docs/configuration.md', import.meta.url), renderConfigurationReference(schema));
writeFileSync(
  new URL('../schema/simulator-fixture.schema.json', import.meta.url),
  `${JSON.stringify(simulatorFixtureJsonSchema(), null, 2)}\n`,
);
console.log(
  'wrote schema/settings.schema.json, docs/configuration.md and schema/simulator-fixture.schema.json',
);
