import type { Context } from 'hono';
import { Hono } from 'hono';
import type { Client } from '@temporalio/client';
import { RetrysafeClient } from '../../../client';
import type { ApprovalSigner, Operator, SignedEvent } from '../approval-signer';
import type { DecisionContext } from './decision-submissions';
import { methodNotAllowed, pageHeaders, refusal } from './page-responses';
import { currentOperator, loadSession, type PageEnv } from './page-session';
import { queueRoutes } from './queue-routes';
import { hostGuard } from './request-guards';
import { sessionIdOf } from './session-cookie';
import { createSessionStore, type SessionStore } from './session-store';
import { signInRoutes } from './sign-in-routes';
import { loadStaticAssets, STATIC_PREFIX } from './static-assets';

/**
 * The approval page for people, beside the approval service's JSON API. Its routes are in sign-in-routes.ts
 * (/, /sign-in, /sign-out) and queue-routes.ts (/queue, /queue/decide, /queue/resolve), its views in *-view.ts,
 * and the checks every request passes in request-guards.ts; /static/ serves the stylesheet and the script.
 *
 * Every post needs a same-origin signal and the session's CSRF token; the operator comes from the session and the
 * tenant from the action key, never from a form.
 */

/** 8 KiB: a decision form is a few short fields and a 500-character reason; anything larger is refused unread. */
export const MAX_FORM_BODY_BYTES = 8 * 1024;

/** The paths the page answers; the JSON API answers the rest. */
export const PAGE_PATHS = [
  '/',
  '/sign-in',
  '/sign-out',
  '/queue',
  '/queue/decide',
  '/queue/resolve',
  `${STATIC_PREFIX}*`,
];

export interface ApprovalPageOptions {
  signer: ApprovalSigner;
  temporal: { client: Client; namespace: string; webUiUrl?: string };
  secureCookies?: boolean;
  onSigned?: (event: SignedEvent) => void;
  sessions?: SessionStore;
  log?: (msg: string) => void;
}

export interface ApprovalPage {
  /** The page's routes, to mount on the approval service's app at `/`. */
  routes: Hono<PageEnv>;
  /** Where the server listens, once it does (for the Host check). */
  listening(address: { host: string; port: number }): void;
  /** The operator signed in on the request's session cookie, as the operators file lists them now. */
  signedInOperator(c: Context): Operator | undefined;
}

export function createApprovalPage(options: ApprovalPageOptions): ApprovalPage {
  const secure = options.secureCookies === true;
  const sessions = options.sessions ?? createSessionStore();
  const log = options.log ?? ((msg: string) => process.stderr.write(`${msg}\n`));
  const retrysafe = new RetrysafeClient(options.temporal.client);
  const decisions: DecisionContext = {
    signer: options.signer,
    retrysafe,
    log,
    ...(options.onSigned ? { onSigned: options.onSigned } : {}),
  };
  let address: { host: string; port: number } | undefined;

  const routes = new Hono<PageEnv>();
  // Behind a TLS proxy (secure cookies) the proxy decides which host names reach the page.
  for (const path of PAGE_PATHS) {
    routes.use(
      path,
      pageHeaders(secure),
      hostGuard(() => address, secure),
      loadSession(options.signer, sessions, secure),
    );
  }
  staticRoutes(routes);
  signInRoutes(routes, { signer: options.signer, sessions, secure, maxFormBytes: MAX_FORM_BODY_BYTES });
  queueRoutes(routes, {
    retrysafe,
    decisions,
    namespace: options.temporal.namespace,
    ...(options.temporal.webUiUrl !== undefined ? { webUiUrl: checkedWebUiUrl(options.temporal.webUiUrl) } : {}),
    secure,
    maxFormBytes: MAX_FORM_BODY_BYTES,
    log,
  });
  return {
    routes,
    listening: (where) => void (address = where),
    // The Web UI's codec calls run in the background of an open tab: they must not keep a session from idling out.
    signedInOperator: (c) => currentOperator(options.signer, sessions, sessions.peek(sessionIdOf(c, secure))),
  };
}

function staticRoutes(routes: Hono<PageEnv>): void {
  const assets = loadStaticAssets();
  routes.get(`${STATIC_PREFIX}*`, (c) => {
    const asset = assets.get(c.req.path);
    if (!asset) return refusal(c, 404, 'Not found', 'There is no such file.');
    return c.body(new Uint8Array(asset.body), 200, { 'Content-Type': asset.type });
  });
  routes.all(`${STATIC_PREFIX}*`, (c) => methodNotAllowed(c, 'GET'));
}

/** The Web UI's base URL without a trailing slash; only http(s) URLs, since it becomes a link's href. */
function checkedWebUiUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`webUiUrl ${JSON.stringify(url)} is not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new Error(`webUiUrl must be an http or https URL, not ${parsed.protocol}`);
  }
  return url.replace(/\/+$/, '');
}
