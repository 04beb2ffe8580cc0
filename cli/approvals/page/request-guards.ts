import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { every } from 'hono/combine';
import { csrf } from 'hono/csrf';
import { HTTPException } from 'hono/http-exception';
import { refusal } from './page-responses';
import { parseForm, type FormFields } from './request-body';
import type { PageEnv } from './page-session';

/**
 * Checks every page request passes before anything else looks at it: the Host it was sent to (a DNS-rebinding
 * guard for a page on loopback), that a form post comes from this page (Hono's CSRF middleware: Sec-Fetch-Site
 * same-origin, else an Origin naming this host), its type and size, and the form's CSRF token (compared in constant
 * time with the session's).
 */

const LOOPBACK_HOST = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/**
 * Whether the Host header names this server. Bound to loopback, only loopback names with the server's port are
 * accepted, so a page on another site whose name resolves to 127.0.0.1 is not served. Bound elsewhere (behind a
 * TLS proxy), any host is accepted: the proxy decides which names reach it.
 */
export function hostAllowed(hostHeader: string | undefined, server: { host: string; port: number }): boolean {
  if (!LOOPBACK_HOST.test(server.host)) return true;
  const match = /^(.+):(\d+)$/.exec(hostHeader ?? '');
  return match !== null && LOOPBACK_HOST.test(match[1]) && Number(match[2]) === server.port;
}

/** 421 for a Host that is not this server's loopback name (not checked behind a TLS proxy, `secure`). */
export function hostGuard(
  address: () => { host: string; port: number } | undefined,
  secure: boolean,
): MiddlewareHandler {
  return async (c, next) => {
    const where = address();
    if (where && !secure && !hostAllowed(c.req.header('host'), where)) {
      return refusal(c, 421, 'Unknown host', 'This page is served on loopback names only.');
    }
    await next();
  };
}

/** Constant-time comparison of two tokens of any length (both are hashed first). */
export function tokensMatch(given: string | undefined, expected: string): boolean {
  if (typeof given !== 'string' || given.length === 0 || given.length > 256) return false;
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/**
 * A form post's checks, in the order that reads nothing it need not: same origin (before the body is read), the
 * form type, at most `maxBytes`, only the `allowed` fields, each once, and the session's CSRF token. The fields are
 * then `c.var.form`. A browser sends Sec-Fetch-Site with every request; where it is missing the Origin header
 * must name this host (`scheme://Host`). A post with neither is refused.
 */
export function formPost(options: {
  allowed: readonly string[];
  maxBytes: number;
  scheme: 'http' | 'https';
}): MiddlewareHandler<PageEnv> {
  const sameOrigin = csrf({
    secFetchSite: 'same-origin',
    origin: (origin, c) => origin === `${options.scheme}://${c.req.header('host') ?? ''}`,
  });
  return every(
    async (c: Context<PageEnv>, next: () => Promise<void>) => {
      try {
        return await sameOrigin(c, next);
      } catch (err) {
        if (!(err instanceof HTTPException) || err.status !== 403) throw err;
        return refusal(c, 403, 'Cross-site request refused', 'This form was not posted from this page.');
      }
    },
    async (c, next) => {
      const type = (c.req.header('content-type') ?? '').split(';')[0].trim().toLowerCase();
      if (type !== 'application/x-www-form-urlencoded') {
        return refusal(c, 415, 'Unsupported form', 'Forms are posted as application/x-www-form-urlencoded.');
      }
      await next();
    },
    bodyLimit({
      maxSize: options.maxBytes,
      onError: (c) => refusal(c, 413, 'Form too large', `A form is at most ${options.maxBytes} bytes.`),
    }),
    async (c, next) => {
      const parsed = parseForm(await c.req.text(), options.allowed);
      if ('problem' in parsed) return refusal(c, 400, 'Malformed form', `${parsed.problem}; nothing was sent.`);
      if (!csrfTokenMatches(c, parsed.fields)) {
        return refusal(
          c,
          403,
          'Form refused',
          'The form did not carry this session’s CSRF token (it is from another or an earlier session); nothing was sent. Reload the page and try again.',
        );
      }
      c.set('form', parsed.fields);
      await next();
    },
  );
}

function csrfTokenMatches(c: Context<PageEnv>, fields: FormFields): boolean {
  const session = c.var.session;
  return session !== undefined && tokensMatch(fields.csrf, session.csrfToken);
}
