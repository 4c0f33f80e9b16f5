/**
 * The Jira stand-in (src/simulator/jira-stand-in.ts) for tests: every request body and answer
 * checked with ajv against Jira's published OpenAPI description (the excerpt in
 * src/simulator/fixtures/jira-openapi.json; test/fixtures/jira/README.md).
 */
import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import { JIRA_OPENAPI, JiraStandIn as Served } from '../../src/simulator/jira-stand-in.js';

export {
  operationSchema,
  type StandInJiraIssue,
  type StandInJiraUser,
  type StandInJiraWrite,
} from '../../src/simulator/jira-stand-in.js';

const ajv = new Ajv({ strict: false, validateFormats: false, allErrors: true });
ajv.addSchema({ ...JIRA_OPENAPI, $id: 'jira' });
// Jira Software's Agile API (boards) is described apart from the platform's: its board
// configuration operation, in the shape Atlassian publishes (test/fixtures/jira/README.md).
const AGILE = JSON.parse(
  readFileSync(new URL('../fixtures/jira/agile-openapi.json', import.meta.url), 'utf8'),
);
ajv.addSchema({ ...AGILE, $id: 'jira-agile' });

/** The validator of a component schema of Jira's description (or of Jira Software's). */
export function jiraSchema(name: string): ValidateFunction {
  const validate =
    ajv.getSchema(`jira#/components/schemas/${name}`) ??
    ajv.getSchema(`jira-agile#/components/schemas/${name}`);
  if (!validate) throw new Error(`Jira's description has no schema ${name}`);
  return validate;
}

/** The validator of Jira Software's board configuration answer (`BoardConfigBean`). */
export function boardConfigSchema(): ValidateFunction {
  return jiraSchema('BoardConfigBean');
}

/** The stand-in checking every body and answer against Jira's description. */
export class JiraStandIn extends Served {
  constructor(email: string, token: string, me: string) {
    super(email, token, me, (schema, value) => {
      const validate = jiraSchema(schema);
      return validate(value) ? undefined : ajv.errorsText(validate.errors);
    });
  }
}
