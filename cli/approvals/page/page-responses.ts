import type http from 'node:http';
import type { SafeHtml } from './html';

/**
 * What every page response carries: a CSP that allows only this server's own script and stylesheet (no inline
 * script or style, no framing, forms post only here), no framing, no referrer to the Web UI links, no caching.
 */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export const PAGE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

export function sendPage(
  res: http.ServerResponse,
  status: number,
  page: SafeHtml,
  headers: Record<string, string | string[]> = {},
): void {
  const body = page.text;
  res.writeHead(status, {
    ...PAGE_SECURITY_HEADERS,
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}

/** 303 See Other: after a form post the browser GETs `location`, so a reload never posts the form again. */
export function redirect(
  res: http.ServerResponse,
  location: string,
  headers: Record<string, string | string[]> = {},
): void {
  res.writeHead(303, { ...PAGE_SECURITY_HEADERS, Location: location, 'Content-Length': 0, ...headers });
  res.end();
}

export function sendAsset(res: http.ServerResponse, asset: { type: string; body: Buffer }): void {
  res.writeHead(200, { ...PAGE_SECURITY_HEADERS, 'Content-Type': asset.type, 'Content-Length': asset.body.length });
  res.end(asset.body);
}
