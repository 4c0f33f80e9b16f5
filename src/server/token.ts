/**
 * The board's bearer token: 32 random bytes, made on the first `curupira serve` and kept in the
 * state folder with mode 0600 (`serve-token`), so the CLI of the same user can read it.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const TOKEN_FILE = 'serve-token';

export function tokenPath(stateDir: string): string {
  return join(stateDir, TOKEN_FILE);
}

/** The saved token, or a new one (`created: true`) written with mode 0600. */
export function loadOrCreateToken(stateDir: string): { token: string; created: boolean } {
  const file = tokenPath(stateDir);
  const saved = readToken(stateDir);
  if (saved) {
    chmodSync(file, 0o600);
    return { token: saved, created: false };
  }
  mkdirSync(stateDir, { recursive: true });
  const token = randomBytes(32).toString('base64url');
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return { token, created: true };
}

export function readToken(stateDir: string): string | undefined {
  const file = tokenPath(stateDir);
  if (!existsSync(file)) return undefined;
  const token = readFileSync(file, 'utf8').trim();
  return token === '' ? undefined : token;
}

/** Compares in constant time (for equal lengths; a length mismatch fails at once, leaking only the length). */
export function tokensEqual(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  if (a.length !== b.length) return false;
  return timingSafeEqual(a, b);
}
