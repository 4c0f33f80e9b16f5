import { type GraphQLSchema, parse, validate } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { githubSchema } from '../simulator/schema.js';
import { OPERATIONS } from './operations.js';

let schema: GraphQLSchema;
beforeAll(() => {
  schema = githubSchema();
});

describe("every GraphQL operation validates against GitHub's public schema", () => {
  for (const [name, text] of Object.entries(OPERATIONS)) {
    it(name, () => {
      const errors = validate(schema, parse(text));
      expect(errors.map((e) => e.message)).toEqual([]);
    });
  }

  it('would catch a misspelt field', () => {
    const broken = OPERATIONS.SEARCH_ISSUES.replace('createdAt', 'createdOn');
    expect(validate(schema, parse(broken)).map((e) => e.message)).toEqual([
      'Cannot query field "createdOn" on type "Issue". Did you mean "createdAt"?',
    ]);
  });
});
