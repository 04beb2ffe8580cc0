import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import { RetrysafeError } from '../../policies/errors';
import { createApprovalPage } from './page/approval-page';
import { readBody } from './page/request-body';
import { createCodecHandler } from './codec-http';
import type { ApprovalSigner, SignedEvent } from './approval-signer';

/**
 * The approval service over HTTP:
 *   POST /decisions   Authorization: Bearer <operator token>;
 *                     body { decision, key, requestHash? (actions), params?, ttlSeconds? }
 *                     → 200 SignedDecision | 400 { field } | 401 | 403 { missing } (role or tenant) | 413
 *   POST /approvals   the same, kept for approve and reject
 * The operator and the tenant are never taken from the body: they come from the token and the key.
 *   GET  /public-key  → { keyId, publicKey }, what workers put in their trusted keys (public, unauthenticated)
 * It binds to loopback by default: bearer tokens need TLS in front of it before it listens anywhere else.
 *
 * Given `codec`, POST /codec/encode and /codec/decode serve Temporal's remote codec protocol to authenticated
 * operators (the page's session or a bearer token), for the Web UI.
 * Given `temporal`, the same server also serves the approval page for people (approval-page/approval-page.ts:
 * GET /sign-in, GET /queue, …), which signs decisions for the signed-in operator and delivers them to the actions.
 */

/** 16 KiB: a signing request is four short fields; anything larger is refused unread. */
export const MAX_APPROVAL_BODY_BYTES = 16 * 1024;

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
   * Serve Temporal's remote codec protocol at /codec/encode and /codec/decode (scripts/lib/codec-http.ts), for
   * the Web UI and `temporal --codec-endpoint`: only to an operator signed in to the page (its session cookie,
   * sent by the Web UI with "include cross-origin credentials") or one sending its token as a bearer.
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
  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      // Never echo internals (or anything from the signer) to the caller.
      if (!res.headersSent) send(res, 500, { error: 'internal', message: 'the approval service failed; see its log' });
      else res.destroy();
      process.stderr.write(`approval service: ${err instanceof Error ? err.message : String(err)}\n`);
    });
  });

  const codec = options.codec
    ? createCodecHandler({
        codec: options.codec.codec,
        allowedOrigins: options.codec.allowedOrigins,
        // A payload names no tenant the codec could check, so only an operator of every tenant ("*") with a role
        // may read decoded payloads; anyone else is refused as unauthenticated.
        authorize: async (req) => {
          const operator = page?.signedInOperator(req) ?? bearerOperator(req);
          return operator && operator.tenants.includes('*') && operator.roles.length > 0
            ? { operator: operator.name }
            : undefined;
        },
        onServed: (e) => options.onDecoded?.(e),
      })
    : undefined;
  const bearerOperator = (req: http.IncomingMessage) => {
    const match = /^Bearer[ ]+([^\s]+)[ ]*$/i.exec(req.headers.authorization ?? '');
    return match ? signer.authenticate(match[1]) : undefined;
  };

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (page?.handles(path)) return page.handle(req, res, path);
    if (codec && path.startsWith('/codec/')) return codec(req, res, path.slice('/codec'.length));
    if (path === '/public-key') {
      req.resume();
      if (req.method !== 'GET')
        return send(res, 405, { error: 'method-not-allowed', message: 'use GET' }, { Allow: 'GET' });
      return send(res, 200, { keyId: signer.keyId, publicKey: signer.publicKeyHex });
    }
    if (path !== '/approvals' && path !== '/decisions') {
      req.resume();
      return send(res, 404, { error: 'not-found', message: 'POST /decisions, POST /approvals or GET /public-key' });
    }
    if (req.method !== 'POST') {
      req.resume();
      return send(res, 405, { error: 'method-not-allowed', message: 'use POST' }, { Allow: 'POST' });
    }

    // Authenticate before reading the body: an unauthenticated caller learns nothing about its request.
    const match = /^Bearer[ ]+([^\s]+)[ ]*$/i.exec(req.headers.authorization ?? '');
    const operator = bearerOperator(req);
    if (!operator) {
      req.resume();
      return send(
        res,
        401,
        {
          error: 'unauthorized',
          message: match ? 'the operator token is not recognized' : 'send Authorization: Bearer <operator token>',
        },
        { 'WWW-Authenticate': 'Bearer realm="retrysafe-approvals"' },
      );
    }

    const body = await readBody(req, MAX_APPROVAL_BODY_BYTES);
    if (body === undefined) {
      return send(
        res,
        413,
        { error: 'too-large', message: `the body is over ${MAX_APPROVAL_BODY_BYTES} bytes` },
        { Connection: 'close' },
      );
    }
    let request: unknown;
    try {
      request = JSON.parse(body);
    } catch {
      return send(res, 400, { error: 'invalid-request', field: '(body)', message: '(body): must be JSON' });
    }
    try {
      const approval = signer.sign(operator, request);
      options.onSigned?.({
        operator: operator.name,
        key: approval.claims.key,
        decision: approval.claims.decision,
        keyId: approval.publicKeyId,
        expiresAt: approval.claims.expiresAt,
      });
      return send(res, 200, approval);
    } catch (err) {
      if (err instanceof RetrysafeError && err.code === 'InvalidIntent') {
        return send(res, 400, { error: 'invalid-request', field: err.details.field, message: err.message });
      }
      if (err instanceof RetrysafeError && err.code === 'DecisionRejected') {
        return send(res, 403, { error: 'forbidden', missing: err.details.missing, message: err.message });
      }
      throw err;
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  page?.listening({ host, port });
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
    ...headers,
  });
  res.end(text);
}
