/** The OpenAPI 3.1 description served at `/api/v1/openapi.json`. */

import { HTTP_STATUS } from './errors.js';

const error = {
  description: 'An error: `{ "error": { "code", "message" } }`',
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
};

function op(summary: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    summary,
    responses: { '200': { description: 'OK' }, '401': error, '404': error, '409': error },
    ...extra,
  };
}

const idParam = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'string' } });

export function openApiDocument(version: string): Record<string, unknown> {
  const run = idParam('id');
  return {
    openapi: '3.1.0',
    info: {
      title: 'curupira serve',
      version,
      description:
        'Every route but /api/v1/health needs `Authorization: Bearer <token>` (the token `curupira serve` printed; kept in <state folder>/serve-token). Actions are POST only. Events are server-sent events.',
    },
    servers: [{ url: '/api/v1' }],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: {
        Error: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message'],
              properties: {
                code: {
                  type: 'string',
                  enum: Object.keys(HTTP_STATUS),
                },
                message: { type: 'string' },
              },
            },
          },
        },
      },
    },
    security: [{ bearer: [] }],
    paths: {
      '/health': { get: op('Liveness (no token needed)', { security: [] }) },
      '/state': {
        get: op(
          'Summary line, attention count, the newest 10 items that need attention (their newest run each, with `earlierAttempts`), running runs, automations, reload error, 7-day figures',
        ),
      },
      '/figures': {
        get: op('Outcome figures over a window, in total and per agent profile', {
          parameters: [
            { name: 'automation', in: 'query', schema: { type: 'string' } },
            {
              name: 'window',
              in: 'query',
              schema: { type: 'string', enum: ['24h', '7d', '30d'], default: '7d' },
            },
          ],
        }),
      },
      '/automations': { get: op('Automations with trigger, next fire or poll, last poll and its error') },
      '/runs': {
        get: op('Runs, newest first, paginated', {
          parameters: [
            { name: 'automation', in: 'query', schema: { type: 'string' } },
            {
              name: 'status',
              in: 'query',
              description: 'comma-separated statuses',
              schema: { type: 'string' },
            },
            { name: 'attention', in: 'query', schema: { type: 'string', enum: ['true', 'false'] } },
            { name: 'profile', in: 'query', description: 'agent profile', schema: { type: 'string' } },
            { name: 'repo', in: 'query', description: 'owner/name', schema: { type: 'string' } },
            { name: 'q', in: 'query', description: 'text in the item title', schema: { type: 'string' } },
            {
              name: 'task',
              in: 'query',
              description: 'task key: an item’s attempts',
              schema: { type: 'string' },
            },
            {
              name: 'limit',
              in: 'query',
              schema: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
            },
            {
              name: 'cursor',
              in: 'query',
              description: 'nextCursor of the previous page',
              schema: { type: 'string' },
            },
          ],
        }),
      },
      '/findings': {
        get: op('Findings of code-review watches, oldest first (docs/review-watches.md)', {
          parameters: [
            {
              name: 'watch',
              in: 'query',
              description: 'the watch’s automation id',
              schema: { type: 'string' },
            },
            {
              name: 'status',
              in: 'query',
              schema: { type: 'string', enum: ['open', 'resolved', 'all'], default: 'open' },
            },
            {
              name: 'limit',
              in: 'query',
              schema: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
            },
          ],
        }),
      },
      '/runs/{id}': {
        get: op(
          'One run, and its delivery (`delivery`: branch, pull request, state, since, detail, and while open its follow-up `gate`, `gateSince`, `gateDetail`; null when none); `source`: where the item comes from for a source outside GitHub (`Linear team ENG, project "Mobile", …`; null otherwise); `repositories`: for a task across repositories, each one (`alias`, `repo`, `primary`, `worktreePath`, `delivery`), the primary first (empty otherwise)',
          {
            parameters: [run],
          },
        ),
      },
      '/runs/{id}/events': {
        get: op(
          'Server-sent events: `run` (status changes), `agent` (normalised events, id = index; send Last-Event-ID to resume), `end`',
          {
            parameters: [run],
          },
        ),
      },
      '/fleet': {
        get: op(
          'The fleet (PostgreSQL state only): `hosts` (name, role, health, load, capacity, heartbeatAt, polling, checkouts, capabilities, version…), `dispatches` not yet settled, oldest first, and `waiting`: tasks no live worker can run, with the reason; 404 `no_fleet` on the embedded store',
        ),
      },
      '/events': { get: op('Server-sent `change` events when the board changes') },
      '/automations/{id}/run': {
        post: op('Run now: a schedule fires at once, an event trigger polls', {
          parameters: [idParam('id')],
          description:
            'Optional body `{"inputs": {"focus": "docs"}}`: inputs for the runs this starts (the fired occurrence, or the items the poll offers), each one the automation declares in `inputs` (as `curupira run --set`); an undeclared key or a value that is not a string is refused with 400 `bad_request` naming the declared inputs.',
          requestBody: {
            required: false,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: { inputs: { type: 'object', additionalProperties: { type: 'string' } } },
                },
              },
            },
          },
        }),
      },
      '/automations/{id}/baseline': {
        post: op(
          'Run a baseline now (a review watch, whatever its own scan): a review of the whole repository pinned at the branch’s head as GitHub names it now; 409 `scan_not_offered` for an automation that is not a review watch',
          { parameters: [idParam('id')] },
        ),
      },
      '/automations/{id}/pause': {
        post: op('Pause (remembered across restarts)', { parameters: [idParam('id')] }),
      },
      '/automations/{id}/resume': {
        post: op(
          'Resume (refused with `automation_disabled` while the settings file says `enabled = false`)',
          {
            parameters: [idParam('id')],
          },
        ),
      },
      '/runs/{id}/cancel': { post: op('Cancel a running run (its session is kept)', { parameters: [run] }) },
      '/runs/{id}/retry': { post: op('Run the task again (resumes a saved session)', { parameters: [run] }) },
      '/runs/{id}/dismiss': { post: op('Dismiss from Needs attention', { parameters: [run] }) },
      '/runs/{id}/allow': {
        post: op('Let the exact text a screening block stopped run once (as `curupira allow`)', {
          parameters: [run],
          description:
            'Recorded with who and when: `{"by": "<name>"}` names who allows it (default `board`). An allowance already waiting for the run is kept, not doubled.',
          requestBody: {
            required: false,
            content: {
              'application/json': {
                schema: { type: 'object', properties: { by: { type: 'string' } } },
              },
            },
          },
        }),
      },
      '/runs/{id}/remove-worktree': {
        post: op('Remove the kept worktree (as `curupira gc`)', {
          parameters: [run],
          description:
            'A worktree that holds unpushed commits or changed files is removed only with the body `{"confirm": true}`; without it nothing is deleted and the answer is 409 `confirmation_required` with `wouldLose` (path, branch, unpushedCommits, changedFiles).',
          requestBody: {
            required: false,
            content: {
              'application/json': {
                schema: { type: 'object', properties: { confirm: { type: 'boolean' } } },
              },
            },
          },
        }),
      },
    },
  };
}
