/**
 * Primary rate limits, per user and per resource, as GitHub keeps them: a budget (`limit`) spent
 * over a one-hour window that starts with the first request and resets whole at `resetAt`.
 * `graphql` is spent in points (the query's cost), `core` (REST) one per request.
 */

export type RateLimitResource = 'graphql' | 'core';

export interface RateLimitState {
  readonly resource: RateLimitResource;
  readonly limit: number;
  readonly used: number;
  readonly remaining: number;
  /** Milliseconds since the epoch. */
  readonly resetAt: number;
}

export interface RateLimiterOptions {
  readonly limit: number;
  readonly now: () => number;
  /** Default one hour. */
  readonly windowMs?: number;
}

interface Window {
  used: number;
  resetAt: number;
}

export class RateLimiter {
  readonly resource: RateLimitResource;
  limit: number;
  private readonly now: () => number;
  private readonly windowMs: number;
  private readonly windows = new Map<string, Window>();

  constructor(resource: RateLimitResource, options: RateLimiterOptions) {
    this.resource = resource;
    this.limit = options.limit;
    this.now = options.now;
    this.windowMs = options.windowMs ?? 3_600_000;
  }

  private window(key: string): Window {
    const now = this.now();
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      window = { used: 0, resetAt: now + this.windowMs };
      this.windows.set(key, window);
    }
    return window;
  }

  private state(window: Window): RateLimitState {
    return {
      resource: this.resource,
      limit: this.limit,
      used: window.used,
      remaining: Math.max(0, this.limit - window.used),
      resetAt: window.resetAt,
    };
  }

  /** The user's budget without spending anything. */
  peek(key: string): RateLimitState {
    return this.state(this.window(key));
  }

  /** Whether `cost` more points fit in the user's remaining budget. */
  allows(key: string, cost: number): boolean {
    const window = this.window(key);
    return window.used + cost <= this.limit;
  }

  /** Spends `cost` points and returns the budget afterwards. */
  charge(key: string, cost: number): RateLimitState {
    const window = this.window(key);
    window.used += cost;
    return this.state(window);
  }

  /** Sets how much of the current window is spent (a test shortcut to an almost-exhausted budget). */
  setUsed(key: string, used: number): RateLimitState {
    const window = this.window(key);
    window.used = used;
    return this.state(window);
  }

  /** Forgets every window. */
  reset(): void {
    this.windows.clear();
  }
}

/** The `x-ratelimit-*` headers GitHub sends with every API response. */
export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  return {
    'x-ratelimit-limit': String(state.limit),
    'x-ratelimit-remaining': String(state.remaining),
    'x-ratelimit-reset': String(Math.ceil(state.resetAt / 1000)),
    'x-ratelimit-used': String(state.used),
    'x-ratelimit-resource': state.resource,
  };
}
