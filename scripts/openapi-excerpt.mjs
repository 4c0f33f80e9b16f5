#!/usr/bin/env node
/**
 * Cuts a published OpenAPI description down to the operations curupira calls: those operations,
 * the component schemas they reach (transitively), and the security schemes; examples are left out.
 *
 *   node scripts/openapi-excerpt.mjs <full openapi.json> "post /rest/api/3/search/jql" … > excerpt.json
 */
import { readFileSync } from 'node:fs';

const [file, ...operations] = process.argv.slice(2);
const full = JSON.parse(readFileSync(file, 'utf8'));
const refs = new Set();
const strip = (value) => {
  if (Array.isArray(value)) return value.map(strip);
  if (value === null || typeof value !== 'object') return value;
  const out = {};
  for (const [key, v] of Object.entries(value)) {
    if (key === 'example' || key === 'examples') continue;
    if (key === '$ref') refs.add(v);
    out[key] = strip(v);
  }
  return out;
};
const paths = {};
for (const operation of operations) {
  const [method, path] = operation.split(' ');
  const found = full.paths[path]?.[method];
  if (!found) throw new Error(`${operation} is not in ${file}`);
  paths[path] ??= {};
  paths[path][method] = strip(found);
}
const schemas = {};
const done = new Set();
while ([...refs].some((r) => !done.has(r))) {
  const ref = [...refs].find((r) => !done.has(r));
  done.add(ref);
  const name = ref.replace('#/components/schemas/', '');
  schemas[name] = strip(full.components.schemas[name]);
}
const sorted = Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b)));
const excerpt = {
  openapi: full.openapi,
  info: { title: full.info.title, version: full.info.version },
  paths,
  components: { schemas: sorted, securitySchemes: full.components.securitySchemes },
};
process.stdout.write(`${JSON.stringify(excerpt, null, 1)}\n`);
