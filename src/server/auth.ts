/**
 * The token on every route but `/api/v1/health`: `Authorization: Bearer <token>` always works;
 * board pages (GET, HTML) also take the `curupira_token` cookie that visiting `/?token=<token>`
 * sets (HttpOnly, SameSite=Strict). Actions are POST and need the header, so a page on another
 * site cannot trigger one (no CORS headers are sent, so it cannot read answers either).
 */
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { tokensEqual } from './token.js';

export const COOKIE = 'curupira_token';

function bearer(c: Context): string | undefined {
  const header = c.req.header('authorization');
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1];
}

export function authenticated(c: Context, token: string): boolean {
  if (tokensEqual(bearer(c), token)) return true;
  return c.req.method === 'GET' && tokensEqual(getCookie(c, COOKIE), token);
}

/** `?token=` on a page: a valid one sets the cookie and redirects to the same page without it. */
export function tokenLogin(token: string): MiddlewareHandler {
  return async (c, next) => {
    const given = c.req.query('token');
    if (c.req.method !== 'GET' || given === undefined || c.req.path.startsWith('/api/')) return next();
    if (!tokensEqual(given, token)) return next();
    setCookie(c, COOKIE, token, { httpOnly: true, sameSite: 'Strict', path: '/' });
    const url = new URL(c.req.url);
    url.searchParams.delete('token');
    return c.redirect(`${url.pathname}${url.search}`, 303);
  };
}
