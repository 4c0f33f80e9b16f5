/** JSON Schemas (draft 2020-12) of our zod schemas, as `curupira schema` and schema/ publish them. */
import { z } from 'zod';

/** The input side of `schema` (what a file may contain), with its descriptions and defaults. */
export function publishedJsonSchema(schema: z.ZodType, name: string, title: string): Record<string, unknown> {
  const json = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    target: 'draft-2020-12',
  }) as Record<string, unknown>;
  return { ...json, $id: `https://github.com/curupira/curupira/schema/${name}.schema.json`, title };
}
