import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { CookieOptions } from 'hono/utils/cookie';

/**
 * The session cookie, by Hono's cookie helper: HttpOnly (no script reads it), SameSite=Strict (no other site's page
 * sends it), Path=/, and Secure with the `__Host-` prefix when the page is served over TLS (then the browser also
 * refuses it from any other host or path).
 */

const NAME = 'retrysafe-session';
/** A session id is 32 random bytes in base64url; anything else is not looked up. */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

function options(secure: boolean): CookieOptions {
  return secure
    ? { httpOnly: true, sameSite: 'Strict', path: '/', secure: true, prefix: 'host' }
    : { httpOnly: true, sameSite: 'Strict', path: '/' };
}

export function setSessionCookie(c: Context, id: string, secure: boolean): void {
  setCookie(c, NAME, id, options(secure));
}

export function clearSessionCookie(c: Context, secure: boolean): void {
  deleteCookie(c, NAME, options(secure));
}

/** The session id the request carries, or undefined. */
export function sessionIdOf(c: Context, secure: boolean): string | undefined {
  const id = getCookie(c, NAME, secure ? 'host' : undefined);
  return id !== undefined && SESSION_ID.test(id) ? id : undefined;
}
