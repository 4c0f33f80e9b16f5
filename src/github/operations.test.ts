import { type GraphQLSchema, parse, validate } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { githubSchema } from '../simulator/schema.js';
import { ITEM_STATES_PER_REQUEST, itemStatesOperation, OPERATIONS } from './operations.js';

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

describe('the generated reconciliation query', () => {
  it("validates against GitHub's schema for one item, several repositories and a full request", () => {
    const shapes = [
      [{ repo: 'acme/api', number: 7 }],
      [
        { repo: 'acme/api', number: 1 },
        { repo: 'acme/web', number: 1 },
        { repo: 'acme/api', number: 12 },
        { repo: 'acme/api', number: 12 },
      ],
      Array.from({ length: ITEM_STATES_PER_REQUEST }, (_, i) => ({ repo: `acme/r${i % 3}`, number: i + 1 })),
    ];
    for (const items of shapes) {
      const { query, variables } = itemStatesOperation(items);
      expect(validate(schema, parse(query)).map((e) => e.message)).toEqual([]);
      expect(Object.keys(variables)).toHaveLength(2 * new Set(items.map((i) => i.repo)).size);
    }
  });

  it('would catch a misspelt field, and refuses what is not an item number', () => {
    const { query } = itemStatesOperation([{ repo: 'acme/api', number: 1 }]);
    expect(validate(schema, parse(query.replace('labels(first: 100)', 'labelz(first: 100)')))).not.toEqual(
      [],
    );
    expect(() => itemStatesOperation([{ repo: 'acme/api', number: 0.5 }])).toThrow('not an item number: 0.5');
  });
});
