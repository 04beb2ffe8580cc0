import { createHash, timingSafeEqual } from 'node:crypto';
import type http from 'node:http';

/**
 * Checks every page request passes before anything else looks at it: the Host it was sent to (a DNS-rebinding
 * guard for a page on loopback), that a form post comes from this page (Fetch Metadata, else Origin, else
 * Referer), and the form's CSRF token (compared in constant time with the session's).
 */

const LOOPBACK_HOST = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/**
 * Whether the Host header names this server. Bound to loopback, only loopback names with the server's port are
 * accepted, so a page on another site whose name resolves to 127.0.0.1 is not served. Bound elsewhere (behind a
 * TLS proxy), any host is accepted: the proxy decides which names reach it.
 */
export function hostAllowed(req: http.IncomingMessage, server: { host: string; port: number }): boolean {
  if (!LOOPBACK_HOST.test(server.host)) return true;
  const match = /^(.+):(\d+)$/.exec(req.headers.host ?? '');
  return match !== null && LOOPBACK_HOST.test(match[1]) && Number(match[2]) === server.port;
}

/**
 * Why a state-changing request does not come from this site, or undefined when it does. Browsers send
 * Sec-Fetch-Site with every request; where it is missing the Origin header must name this host, or else the
 * Referer. (The page's own `Referrer-Policy: no-referrer` makes browsers send `Origin: null` with its form posts,
 * which is why Sec-Fetch-Site comes first.) A request with none of the three is refused.
 */
export function crossSiteProblem(req: http.IncomingMessage, scheme: 'http' | 'https'): string | undefined {
  const expected = `${scheme}://${req.headers.host ?? ''}`;
  const site = header(req, 'sec-fetch-site');
  if (site !== undefined) return site === 'same-origin' ? undefined : `Sec-Fetch-Site is ${site}`;
  const origin = header(req, 'origin');
  if (origin !== undefined && origin !== 'null') {
    return origin === expected ? undefined : `Origin ${origin} is not ${expected}`;
  }
  const referer = header(req, 'referer');
  if (referer !== undefined) {
    let refererOrigin: string;
    try {
      refererOrigin = new URL(referer).origin;
    } catch {
      return 'the Referer is not a URL';
    }
    return refererOrigin === expected ? undefined : `Referer origin ${refererOrigin} is not ${expected}`;
  }
  return 'the request names no origin (no Sec-Fetch-Site, Origin or Referer)';
}

/** Constant-time comparison of two tokens of any length (both are hashed first). */
export function tokensMatch(given: string | undefined, expected: string): boolean {
  if (typeof given !== 'string' || given.length === 0 || given.length > 256) return false;
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}

function header(req: http.IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
}
