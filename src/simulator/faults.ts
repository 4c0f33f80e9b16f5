/**
 * Faults a test switches on: each is queued with how many requests it hits (`times`, default 1,
 * or `'always'`) and an optional match on the method, the path (exact, or a prefix ending in `*`)
 * and the GraphQL operation name. A request takes the first queued fault that matches it.
 *
 *   { kind: 'status', status: 502 }                                  a 5xx (or any) status
 *   { kind: 'secondary-rate-limit', status: 403 | 429, retryAfterSeconds: 60 }
 *   { kind: 'primary-rate-limit', resetInSeconds: 120 }              remaining 0, reset ahead
 *   { kind: 'slow', delayMs: 2000 }                                  answer normally, late
 *   { kind: 'malformed-json' }                                       200 with a truncated body
 *   { kind: 'reset-connection' }                                     destroy the socket
 */

export type FaultSpec =
  | { readonly kind: 'status'; readonly status: number }
  | {
      readonly kind: 'secondary-rate-limit';
      readonly status?: 403 | 429;
      readonly retryAfterSeconds?: number;
    }
  | { readonly kind: 'primary-rate-limit'; readonly resetInSeconds?: number }
  | { readonly kind: 'slow'; readonly delayMs: number }
  | { readonly kind: 'malformed-json' }
  | { readonly kind: 'reset-connection' };

export type FaultKind = FaultSpec['kind'];

export interface FaultMatch {
  readonly method?: string;
  /** Exact path (`/graphql`, `/repos/acme/api/issues/1`), or a prefix ending in `*`. */
  readonly path?: string;
  readonly operationName?: string;
}

export type Fault = FaultSpec & {
  readonly times?: number | 'always';
  readonly match?: FaultMatch;
};

export interface FaultTarget {
  readonly method: string;
  readonly path: string;
  readonly operationName: string | null;
}

interface Queued {
  readonly spec: FaultSpec;
  readonly match: FaultMatch | undefined;
  left: number;
}

function matches(match: FaultMatch | undefined, target: FaultTarget): boolean {
  if (!match) return true;
  if (match.method && match.method.toUpperCase() !== target.method.toUpperCase()) return false;
  if (match.path !== undefined) {
    const ok = match.path.endsWith('*')
      ? target.path.startsWith(match.path.slice(0, -1))
      : target.path === match.path;
    if (!ok) return false;
  }
  return match.operationName === undefined || match.operationName === target.operationName;
}

/** Checks a fault given as JSON (the control API) and returns it typed. */
export function parseFault(input: unknown): Fault {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new Error('a fault must be a JSON object with a "kind"');
  }
  const raw = input as Record<string, unknown>;
  const times = raw.times;
  if (times !== undefined && times !== 'always' && !(typeof times === 'number' && times >= 1)) {
    throw new Error('"times" must be a positive number or "always"');
  }
  const match = raw.match;
  if (match !== undefined && (typeof match !== 'object' || match === null)) {
    throw new Error('"match" must be an object with method, path or operationName');
  }
  const common = { times: times as Fault['times'], match: match as FaultMatch | undefined };
  const number = (key: string, fallback?: number): number => {
    const value = raw[key] ?? fallback;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw new Error(`fault "${String(raw.kind)}" needs a non-negative number "${key}"`);
    }
    return value;
  };
  switch (raw.kind) {
    case 'status':
      return { kind: 'status', status: number('status'), ...common };
    case 'secondary-rate-limit': {
      const status = raw.status ?? 403;
      if (status !== 403 && status !== 429) throw new Error('a secondary rate limit answers 403 or 429');
      return {
        kind: 'secondary-rate-limit',
        status,
        retryAfterSeconds: number('retryAfterSeconds', 60),
        ...common,
      };
    }
    case 'primary-rate-limit':
      return { kind: 'primary-rate-limit', resetInSeconds: number('resetInSeconds', 60), ...common };
    case 'slow':
      return { kind: 'slow', delayMs: number('delayMs'), ...common };
    case 'malformed-json':
      return { kind: 'malformed-json', ...common };
    case 'reset-connection':
      return { kind: 'reset-connection', ...common };
    default:
      throw new Error(
        `unknown fault kind ${JSON.stringify(raw.kind)}; use status, secondary-rate-limit, primary-rate-limit, slow, malformed-json or reset-connection`,
      );
  }
}

export class FaultQueue {
  private queue: Queued[] = [];

  /** Queues a fault (after the ones already queued). */
  add(fault: Fault): this {
    const { times, match } = fault;
    this.queue.push({
      spec: fault,
      match,
      left: times === 'always' ? Number.POSITIVE_INFINITY : (times ?? 1),
    });
    return this;
  }

  clear(): void {
    this.queue = [];
  }

  /** Faults still queued, with how many requests each will still hit. */
  get pending(): readonly { spec: FaultSpec; match?: FaultMatch; left: number }[] {
    return this.queue.map((q) => ({ spec: q.spec, match: q.match, left: q.left }));
  }

  /** The fault this request meets, if any, counting it as used. */
  take(target: FaultTarget): FaultSpec | undefined {
    const index = this.queue.findIndex((q) => matches(q.match, target));
    if (index < 0) return undefined;
    const queued = this.queue[index]!;
    queued.left -= 1;
    if (queued.left <= 0) this.queue.splice(index, 1);
    return queued.spec;
  }
}
