/** Errors the API answers with: `{ "error": { "code", "message" } }` and an HTTP status per code. */
import type { ControlReason } from '../core/errors.js';
import type { FleetView } from '../fleet/types.js';

export type ApiErrorCode =
  | ControlReason
  | 'unauthorized'
  | 'not_found'
  | 'bad_request'
  | 'method_not_allowed'
  | 'not_blocked'
  | 'confirmation_required'
  | 'no_fleet'
  | 'database_unreachable'
  | 'internal';

export const HTTP_STATUS: Record<ApiErrorCode, 400 | 401 | 404 | 405 | 409 | 500 | 503> = {
  unauthorized: 401,
  not_found: 404,
  bad_request: 400,
  method_not_allowed: 405,
  internal: 500,
  automation_not_found: 404,
  automation_disabled: 409,
  run_not_found: 404,
  run_not_active: 409,
  run_active: 409,
  not_retryable: 409,
  worktree_not_kept: 409,
  scan_not_offered: 409,
  not_blocked: 409,
  confirmation_required: 409,
  no_fleet: 404,
  database_unreachable: 503,
};

/** What `/api/v1/fleet` and `/fleet` answer on the embedded store. */
export const NO_FLEET_MESSAGE =
  'no fleet: this curupira keeps its state in one process (state_db_path); a fleet needs state_db_url (docs/deployment.md)';

export class ApiError extends Error {
  constructor(
    readonly code: ApiErrorCode,
    message: string,
    /** More of the answer, beside `error` (what a removal would lose…). */
    readonly extra?: Readonly<Record<string, unknown>>,
  ) {
    super(message);
  }
}

/** While the database does not answer this process, the fleet's API and page say since when (503). */
export function throwWhenUnreachable(fleet: FleetView | undefined): void {
  const since = fleet?.unreachableSince?.();
  if (since !== undefined) throw new ApiError('database_unreachable', `database unreachable since ${since}`);
}
