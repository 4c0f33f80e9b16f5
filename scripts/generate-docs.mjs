// Regenerates the committed JSON Schema and configuration reference from the built schema.
// Run through `npm run generate` (which builds first).
import { writeFileSync } from 'node:fs';
import { renderConfigurationReference } from '../dist/config/docs.js';
import { settingsJsonSchema } from '../dist/config/schema.js';

const schema = settingsJsonSchema();
writeFileSync(
  new URL('../schema/settings.schema.json', import.meta.url),
  `${JSON.stringify(schema, null, 2)}\n`,
);
writeFileSync(new URL('../docs/configuration.md', import.meta.url), renderConfigurationReference(schema));
console.log('wrote schema/settings.schema.json and docs/configuration.md');
