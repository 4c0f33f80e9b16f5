/**
 * Turns what PostgreSQL and the `pg` driver report into `StateError`s a user can act on. A message
 * never holds the connection's password: the store is named by its redacted URL, and any text that
 * came from the driver has the password taken out before it is used.
 */
import { StateError } from '../../core/errors.js';

/** What the messages need to know about the connection (never its password). */
export interface ConnectionInfo {
  /** The URL without its password (`redactUrl`). */
  redacted: string;
  /** The password, when the URL held one: removed from any driver text before it is shown. */
  secret?: string;
  host: string;
  port: string;
  user: string;
  database: string;
  schema: string;
  /** Why the password file was passed over at the last login, if it was (see pgpass.ts). */
  passwordNote?: string;
}

function pgCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** The driver's words, with the password (raw or URL-encoded) taken out. */
export function scrub(text: string, secret: string | undefined): string {
  if (!secret) return text;
  let out = text;
  for (const form of new Set([secret, encodeURIComponent(secret)])) {
    if (form.length > 0) out = out.split(form).join('***');
  }
  return out;
}

function messageOf(error: unknown, info: ConnectionInfo): string {
  const text = error instanceof Error ? error.message : String(error);
  return scrub(text, info.secret);
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
]);

/**
 * What the driver says, with no code, when the server did not answer in time: a connection that
 * broke or could not open, a pool whose connections were all busy for `connectionTimeoutMillis`
 * (pg-pool: 'timeout exceeded when trying to connect'), and a statement unanswered for
 * `query_timeout` (pg: 'Query read timeout', which may have taken effect, as after a cut).
 */
const UNANSWERED =
  /Connection terminated|timeout expired|timeout exceeded when trying to connect|Query read timeout/i;

/**
 * A server-side or network error that a retry later may cure (the server restarting, a failover,
 * a server too busy to answer in time).
 */
export function isConnectionError(error: unknown): boolean {
  const code = pgCode(error);
  if (code === undefined) {
    return error instanceof Error && UNANSWERED.test(error.message);
  }
  return NETWORK_CODES.has(code) || code.startsWith('08') || code === '57P01' || code === '57P03';
}

/**
 * The error met while opening the store (connecting, creating the schema, migrating), said in
 * words that point at what to fix. `StateError`s pass through unchanged.
 */
export function openError(error: unknown, info: ConnectionInfo): StateError {
  if (error instanceof StateError) return error;
  const code = pgCode(error);
  const detail = messageOf(error, info);
  const where = `PostgreSQL state database ${info.redacted}`;
  let advice: string;
  if (code === '28P01' || code === '28000' || /password must be a string|SASL/i.test(detail)) {
    advice = `the server refused the login of user '${info.user}': check the user name, and put the password in PGPASSWORD or ~/.pgpass (not in state_db_url)${info.passwordNote ? `; ${info.passwordNote}` : ''}`;
  } else if (code === '3D000') {
    advice = `database '${info.database}' does not exist on ${info.host}:${info.port}: create it (createdb ${info.database}) or fix state_db_url`;
  } else if (code === '42501') {
    advice = `user '${info.user}' may not create or use schema '${info.schema}': create it for them (CREATE SCHEMA ${info.schema} AUTHORIZATION ${info.user}) or grant the privileges`;
  } else if (isConnectionError(error)) {
    advice = `the server at ${info.host}:${info.port} cannot be reached: is it running, and are the host and port in state_db_url right?`;
  } else {
    advice = 'it could not be opened';
  }
  return new StateError(`${where} cannot be used: ${advice} (${detail})`, { cause: error });
}

/** Maps an error thrown while using an open store. `StateError`s pass through unchanged. */
export function useError(error: unknown, info: ConnectionInfo): StateError {
  if (error instanceof StateError) return error;
  const detail = messageOf(error, info);
  if (isConnectionError(error)) {
    return new StateError(
      `PostgreSQL state database ${info.redacted} cannot be reached (${detail}); is the server at ${info.host}:${info.port} running?`,
      { cause: error },
    );
  }
  return new StateError(`PostgreSQL state database ${info.redacted}: ${detail}`, { cause: error });
}
