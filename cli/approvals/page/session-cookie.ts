import type http from 'node:http';

/**
 * The session cookie: HttpOnly (no script reads it), SameSite=Strict (no other site's page sends it), Path=/, and
 * Secure with the `__Host-` prefix when the page is served over TLS (then the browser also refuses it from any
 * other host or path).
 */

export function sessionCookieName(secure: boolean): string {
  return secure ? '__Host-retrysafe-session' : 'retrysafe-session';
}

export function sessionCookie(id: string, secure: boolean): string {
  return [
    `${sessionCookieName(secure)}=${id}`,
    'HttpOnly',
    'SameSite=Strict',
    'Path=/',
    ...(secure ? ['Secure'] : []),
  ].join('; ');
}

export function clearedSessionCookie(secure: boolean): string {
  return `${sessionCookie('', secure)}; Max-Age=0`;
}

/** The session id the request carries, or undefined (also when it carries the cookie more than once). */
export function sessionIdOf(req: http.IncomingMessage, secure: boolean): string | undefined {
  const name = sessionCookieName(secure);
  const values = (req.headers.cookie ?? '')
    .split(';')
    .map((part) => part.trim())
    .filter((part) => part.startsWith(`${name}=`))
    .map((part) => part.slice(name.length + 1));
  return values.length === 1 && /^[A-Za-z0-9_-]{43}$/.test(values[0]) ? values[0] : undefined;
}
