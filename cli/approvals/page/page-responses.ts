import type { Context, MiddlewareHandler } from 'hono';
import { secureHeaders } from 'hono/secure-headers';
import { html, type SafeHtml } from './html';
import { pageDocument } from './page-layout';

/**
 * What every page response carries: a CSP that allows only this server's own script and stylesheet (no inline
 * script or style, no framing, forms post only here), no framing, no referrer to the Web UI links, no caching.
 */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/**
 * The page's security headers, by Hono's secure-headers middleware: the CSP above (directives in that order),
 * X-Frame-Options DENY, Referrer-Policy no-referrer, nosniff, same-origin opener and resource policies, and
 * Cache-Control no-store. Strict-Transport-Security only when TLS terminates in front (secure cookies): a browser
 * ignores it over plain http anyway.
 */
export function pageHeaders(secure: boolean): MiddlewareHandler {
  const headers = secureHeaders({
    contentSecurityPolicy: {
      defaultSrc: ["'none'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'"],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
      baseUri: ["'none'"],
    },
    xFrameOptions: 'DENY',
    referrerPolicy: 'no-referrer',
    crossOriginOpenerPolicy: 'same-origin',
    crossOriginResourcePolicy: 'same-origin',
    strictTransportSecurity: secure ? 'max-age=15552000' : false,
  });
  return async (c, next) => {
    await headers(c, async () => {
      await next();
      c.header('Cache-Control', 'no-store');
    });
  };
}

export function sendPage(c: Context, status: number, page: SafeHtml, headers: Record<string, string> = {}) {
  return c.html(page, status as 200, headers);
}

/** 303 See Other: after a form post the browser GETs `location`, so a reload never posts the form again. */
export function redirect(c: Context, location: string) {
  return c.redirect(location, 303);
}

/** A page that says why a request was refused (`#refusal`), with a way back to the queue. */
export function refusal(c: Context, status: number, title: string, detail: string) {
  return sendPage(
    c,
    status,
    pageDocument(
      title,
      html`<main class="sign-in">
        <h1>${title}</h1>
        <p id="refusal">${detail}</p>
        <p><a href="/queue">Back to the queue</a></p>
      </main>`,
    ),
  );
}

export function methodNotAllowed(c: Context, allow: string) {
  return sendPage(c, 405, pageDocument('Method not allowed', html`<main><p>Use ${allow}.</p></main>`), {
    Allow: allow,
  });
}
