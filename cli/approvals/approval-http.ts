import type { Context } from 'hono';
import { Hono } from 'hono';
import type { Client } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import { listenHttp } from '../../workers/http-listener';
import { createApprovalPage, PAGE_PATHS, type ApprovalPage } from './page/approval-page';
import { refusal } from './page/page-responses';
import { createCodecRoutes } from './codec-http';
import { bearerOperator, decisionApi, sendJson } from './decision-api';
import type { ApprovalSigner, SignedEvent } from './approval-signer';

/**
 * The approval service over HTTP, on Hono: the JSON API that signs decisions for operators' bearer tokens
 * (decision-api.ts). It binds to loopback by default: bearer tokens need TLS in front of it before it listens
 * anywhere else.
 *
 * Given `codec`, POST /codec/encode and /codec/decode serve Temporal's remote codec protocol to authenticated
 * operators (the page's session or a bearer token), for the Web UI (codec-http.ts).
 * Given `temporal`, the same server also serves the approval page for people (page/approval-page.ts:
 * GET /sign-in, GET /queue, …), which signs decisions for the signed-in operator and delivers them to the actions.
 */

export { MAX_APPROVAL_BODY_BYTES } from './decision-api';
export type { SignedEvent } from './approval-signer';

/** A running approval service: its base URL (the page is at `/sign-in`) and how to stop it. */
export interface ApprovalServer {
  url: string;
  /** Stops accepting requests and closes the listening socket. */
  close(): Promise<void>;
}

export interface ApprovalServerOptions {
  port: number;
  host?: string;
  onSigned?: (event: SignedEvent) => void;
  /** Hears every codec request served (who, encode or decode, how many payloads), for an audit log. */
  onDecoded?: (event: {
    operator: string;
    operation: 'encode' | 'decode';
    namespace?: string;
    payloads: number;
  }) => void;
  /** Serve the approval page too, listing and deciding actions through this client. */
  temporal?: { client: Client; namespace: string; webUiUrl?: string };
  /** Mark the page's session cookie Secure (and `__Host-`): set it when TLS terminates in front of the server. */
  secureCookies?: boolean;
  /**
   * Serve Temporal's remote codec protocol at /codec/encode and /codec/decode, for the Web UI and
   * `temporal --codec-endpoint`: only to an operator signed in to the page (its session cookie, sent by the Web UI
   * with "include cross-origin credentials") or one sending its token as a bearer.
   */
  codec?: { codec: PayloadCodec; allowedOrigins: string[] };
}

export async function startApprovalServer(
  signer: ApprovalSigner,
  options: ApprovalServerOptions,
): Promise<ApprovalServer> {
  const page = options.temporal
    ? createApprovalPage({
        signer,
        temporal: options.temporal,
        secureCookies: options.secureCookies === true,
        ...(options.onSigned ? { onSigned: options.onSigned } : {}),
      })
    : undefined;
  const app = approvalApp(signer, options, page);
  const listener = await listenHttp(app, { port: options.port, host: options.host ?? '127.0.0.1' });
  page?.listening({ host: listener.host, port: listener.port });
  return { url: listener.origin, close: listener.close };
}

function approvalApp(signer: ApprovalSigner, options: ApprovalServerOptions, page: ApprovalPage | undefined): Hono {
  const app = new Hono();
  if (page) app.route('/', page.routes);
  if (options.codec) {
    const routes = createCodecRoutes({
      codec: options.codec.codec,
      allowedOrigins: options.codec.allowedOrigins,
      // A payload names no tenant the codec could check, so only an operator of every tenant ("*") with a role
      // may read decoded payloads; anyone else is refused as unauthenticated.
      authorize: async (c) => {
        const operator = page?.signedInOperator(c) ?? bearerOperator(signer, c.req.header('authorization'));
        return operator && operator.tenants.includes('*') && operator.roles.length > 0
          ? { operator: operator.name }
          : undefined;
      },
      onServed: (e) => options.onDecoded?.(e),
    });
    app.route('/codec', routes);
  }
  app.route('/', decisionApi(signer, options.onSigned));
  app.notFound((c) =>
    sendJson(c, 404, { error: 'not-found', message: 'POST /decisions, POST /approvals or GET /public-key' }),
  );
  app.onError((err, c) => {
    // Never echo internals (or anything from the signer) to the caller.
    process.stderr.write(`approval service: ${c.req.method} ${c.req.path}: ${err.message}\n`);
    if (page && isPagePath(c)) {
      return refusal(c, 500, 'Something failed', 'The approval page failed; see the approval service log.');
    }
    return sendJson(c, 500, { error: 'internal', message: 'the approval service failed; see its log' });
  });
  return app;
}

function isPagePath(c: Context): boolean {
  return PAGE_PATHS.some((p) => (p.endsWith('*') ? c.req.path.startsWith(p.slice(0, -1)) : c.req.path === p));
}
