import type { Context } from 'hono';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { RetrysafeError } from '../../policies/errors';
import type { ApprovalSigner, Operator, SignedEvent } from './approval-signer';

/**
 * The approval service's JSON API:
 *   POST /decisions   Authorization: Bearer <operator token>;
 *                     body { decision, key, requestHash? (actions), params?, ttlSeconds? }
 *                     → 200 SignedDecision | 400 { field } | 401 | 403 { missing } (role or tenant) | 413
 *   POST /approvals   the same, kept for approve and reject
 *   GET  /public-key  → { keyId, publicKey }, what workers put in their trusted keys (public, unauthenticated)
 * The operator and the tenant are never taken from the body: they come from the token and the key.
 */

/** 16 KiB: a signing request is four short fields; anything larger is refused unread. */
export const MAX_APPROVAL_BODY_BYTES = 16 * 1024;

type ApiEnv = { Variables: { operator: Operator } };

const BEARER = /^Bearer[ ]+([^\s]+)[ ]*$/i;

/** Every answer of the API: JSON, never cached. */
export function sendJson(c: Context, status: number, body: unknown, headers: Record<string, string> = {}) {
  return c.json(body, status as 200, { 'Cache-Control': 'no-store', ...headers });
}

/** The operator whose token the request carries as a bearer, or undefined. */
export function bearerOperator(signer: ApprovalSigner, authorization: string | undefined): Operator | undefined {
  const match = BEARER.exec(authorization ?? '');
  return match ? signer.authenticate(match[1]) : undefined;
}

export function decisionApi(
  signer: ApprovalSigner,
  onSigned: ((event: SignedEvent) => void) | undefined,
): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  app.get('/public-key', (c) => sendJson(c, 200, { keyId: signer.keyId, publicKey: signer.publicKeyHex }));
  app.all('/public-key', (c) =>
    sendJson(c, 405, { error: 'method-not-allowed', message: 'use GET' }, { Allow: 'GET' }),
  );
  for (const path of ['/decisions', '/approvals']) {
    app.post(
      path,
      // Authenticate before reading the body: an unauthenticated caller learns nothing about its request.
      async (c, next) => {
        const authorization = c.req.header('authorization');
        const operator = bearerOperator(signer, authorization);
        if (operator) {
          c.set('operator', operator);
          return next();
        }
        const message = BEARER.test(authorization ?? '')
          ? 'the operator token is not recognized'
          : 'send Authorization: Bearer <operator token>';
        return sendJson(
          c,
          401,
          { error: 'unauthorized', message },
          { 'WWW-Authenticate': 'Bearer realm="retrysafe-approvals"' },
        );
      },
      bodyLimit({
        maxSize: MAX_APPROVAL_BODY_BYTES,
        onError: (c) =>
          sendJson(
            c,
            413,
            { error: 'too-large', message: `the body is over ${MAX_APPROVAL_BODY_BYTES} bytes` },
            { Connection: 'close' },
          ),
      }),
      async (c) => signDecision(c, signer, onSigned),
    );
    app.all(path, (c) => sendJson(c, 405, { error: 'method-not-allowed', message: 'use POST' }, { Allow: 'POST' }));
  }
  return app;
}

async function signDecision(
  c: Context<ApiEnv>,
  signer: ApprovalSigner,
  onSigned: ((event: SignedEvent) => void) | undefined,
) {
  let request: unknown;
  try {
    request = JSON.parse(await c.req.text());
  } catch {
    return sendJson(c, 400, { error: 'invalid-request', field: '(body)', message: '(body): must be JSON' });
  }
  const operator = c.var.operator;
  try {
    const approval = signer.sign(operator, request);
    onSigned?.({
      operator: operator.name,
      key: approval.claims.key,
      decision: approval.claims.decision,
      keyId: approval.publicKeyId,
      expiresAt: approval.claims.expiresAt,
    });
    return sendJson(c, 200, approval);
  } catch (err) {
    if (err instanceof RetrysafeError && err.code === 'InvalidIntent') {
      return sendJson(c, 400, { error: 'invalid-request', field: err.details.field, message: err.message });
    }
    if (err instanceof RetrysafeError && err.code === 'DecisionRejected') {
      return sendJson(c, 403, { error: 'forbidden', missing: err.details.missing, message: err.message });
    }
    throw err;
  }
}
