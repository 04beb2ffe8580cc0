import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { RetrysafeError } from '../../policies/errors';
import type { Decision } from '../../policies/signed-decision';
import type { ApprovalSigner } from './approval-signer';

/**
 * The approval service over HTTP:
 *   POST /decisions   Authorization: Bearer <operator token>;
 *                     body { decision, key, requestHash? (actions), params?, ttlSeconds? }
 *                     → 200 SignedDecision | 400 { field } | 401 | 403 { missing } (role or tenant) | 413
 *   POST /approvals   the same, kept for approve and reject
 * The operator and the tenant are never taken from the body: they come from the token and the key.
 *   GET  /public-key  → { keyId, publicKey }, what workers put in their trusted keys (public, unauthenticated)
 * It binds to loopback by default: bearer tokens need TLS in front of it before it listens anywhere else.
 */

/** 16 KiB: a signing request is four short fields; anything larger is refused unread. */
export const MAX_APPROVAL_BODY_BYTES = 16 * 1024;

export interface SignedEvent {
  operator: string;
  key: string;
  decision: Decision;
  keyId: string;
  expiresAt: string;
}

export interface ApprovalServer {
  url: string;
  close(): Promise<void>;
}

export async function startApprovalServer(
  signer: ApprovalSigner,
  options: { port: number; host?: string; onSigned?: (event: SignedEvent) => void },
): Promise<ApprovalServer> {
  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      // Never echo internals (or anything from the signer) to the caller.
      if (!res.headersSent) send(res, 500, { error: 'internal', message: 'the approval service failed; see its log' });
      else res.destroy();
      process.stderr.write(`approval service: ${err instanceof Error ? err.message : String(err)}\n`);
    });
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
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
    const operator = match ? signer.authenticate(match[1]) : undefined;
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

/** The body as UTF-8, or undefined as soon as it exceeds `limit` bytes (the rest is then discarded). */
function readBody(req: http.IncomingMessage, limit: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      return resolve(undefined);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      // Stop buffering but keep draining, so the 413 can still be written on this connection.
      req.off('data', onData);
      req.resume();
      resolve(undefined);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.once('error', reject);
  });
}
