#!/usr/bin/env node
/**
 * Cuts a published GraphQL schema down to what curupira's operations use, so the excerpt can be
 * kept in the repository: every type, field and argument the operations reach, input types kept to
 * the fields listed in `--keep` (plus every required field), enums and scalars whole. An operation
 * valid against the excerpt is valid against the full schema (nothing is renamed or loosened).
 *
 *   node scripts/schema-excerpt.mjs <full schema.graphql> <operations module> <keep.json> > excerpt.graphql
 *
 * `operations module` exports `LINEAR_OPERATIONS` (an array of documents); `keep.json` maps an
 * input type to the fields to keep.
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import {
  buildSchema,
  getNamedType,
  isInputObjectType,
  Kind,
  parse,
  print,
  TypeInfo,
  validate,
  visit,
  visitWithTypeInfo,
} from 'graphql';

const [schemaPath, operationsPath, keepPath] = process.argv.slice(2);
const sdl = readFileSync(schemaPath, 'utf8');
const full = buildSchema(sdl, { assumeValidSDL: true });
const { LINEAR_OPERATIONS: operations } = await import(pathToFileURL(operationsPath).href);
const keep = JSON.parse(readFileSync(keepPath, 'utf8'));

const outputFields = new Map(); // type → Set(field)
const usedArgs = new Map(); // `type.field` → Set(arg)
const named = new Set(['Query']);
const inputs = new Set();
const add = (map, key, value) => {
  if (!map.has(key)) map.set(key, new Set());
  map.get(key).add(value);
};

for (const source of operations) {
  const document = parse(source);
  const errors = validate(full, document);
  if (errors.length > 0) throw new Error(`not valid against the full schema: ${errors.join('; ')}`);
  const info = new TypeInfo(full);
  visit(
    document,
    visitWithTypeInfo(info, {
      OperationDefinition(node) {
        named.add(node.operation === 'mutation' ? 'Mutation' : 'Query');
      },
      VariableDefinition(node) {
        let type = node.type;
        while (type.kind !== Kind.NAMED_TYPE) type = type.type;
        const t = full.getType(type.name.value);
        if (isInputObjectType(t)) inputs.add(t.name);
        else named.add(type.name.value);
      },
      Field(node) {
        const parent = info.getParentType();
        const def = info.getFieldDef();
        if (!parent || !def || node.name.value.startsWith('__')) return;
        add(outputFields, parent.name, node.name.value);
        named.add(parent.name);
        named.add(getNamedType(def.type).name);
        for (const arg of node.arguments ?? []) {
          add(usedArgs, `${parent.name}.${node.name.value}`, arg.name.value);
          const argDef = def.args.find((a) => a.name === arg.name.value);
          const t = getNamedType(argDef.type);
          if (isInputObjectType(t)) inputs.add(t.name);
          else named.add(t.name);
        }
        for (const argDef of def.args)
          if (argDef.type.toString().endsWith('!') && argDef.defaultValue === undefined)
            add(usedArgs, `${parent.name}.${node.name.value}`, argDef.name);
      },
    }),
  );
}

// Input types: the listed fields, plus required ones; the closure of what they reference.
const inputFields = new Map();
const pending = [...inputs];
while (pending.length > 0) {
  const name = pending.pop();
  if (inputFields.has(name)) continue;
  const type = full.getType(name);
  const wanted = keep[name];
  const fields = Object.values(type.getFields()).filter(
    (f) =>
      (wanted ? wanted.includes(f.name) : !isInputObjectType(getNamedType(f.type))) ||
      (f.type.toString().endsWith('!') && f.defaultValue === undefined),
  );
  inputFields.set(name, new Set(fields.map((f) => f.name)));
  for (const f of fields) {
    const t = getNamedType(f.type);
    if (isInputObjectType(t)) pending.push(t.name);
    else named.add(t.name);
  }
}
for (const [name, wanted] of Object.entries(keep))
  if (inputFields.has(name))
    for (const field of wanted)
      if (!inputFields.get(name).has(field)) throw new Error(`${name}.${field} is not in the schema`);

const document = parse(sdl, { noLocation: true });
const definitions = [];
for (const node of document.definitions) {
  const name = node.name?.value;
  switch (node.kind) {
    case Kind.OBJECT_TYPE_DEFINITION:
    case Kind.INTERFACE_TYPE_DEFINITION: {
      const fields = outputFields.get(name);
      if (!fields) continue;
      definitions.push({
        ...node,
        interfaces: [],
        fields: node.fields
          .filter((f) => fields.has(f.name.value))
          .map((f) => ({
            ...f,
            arguments: f.arguments.filter((a) => usedArgs.get(`${name}.${f.name.value}`)?.has(a.name.value)),
          })),
      });
      break;
    }
    case Kind.INPUT_OBJECT_TYPE_DEFINITION: {
      const fields = inputFields.get(name);
      if (fields) definitions.push({ ...node, fields: node.fields.filter((f) => fields.has(f.name.value)) });
      break;
    }
    case Kind.ENUM_TYPE_DEFINITION:
    case Kind.SCALAR_TYPE_DEFINITION:
    case Kind.UNION_TYPE_DEFINITION:
      if (named.has(name)) definitions.push(node);
      break;
    default:
      break;
  }
}
const excerpt = print({ kind: Kind.DOCUMENT, definitions });
const schema = buildSchema(excerpt);
for (const source of operations) {
  const errors = validate(schema, parse(source));
  if (errors.length > 0) throw new Error(`not valid against the excerpt: ${errors.join('; ')}`);
}
process.stdout.write(`${excerpt}\n`);
