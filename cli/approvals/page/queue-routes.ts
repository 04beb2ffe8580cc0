import type { Hono } from 'hono';
import type { RetrysafeClient } from '../../../client';
import type { Operator } from '../approval-signer';
import { loadQueue, type ActionQueue } from './action-queues';
import {
  DECIDE_FIELDS,
  RESOLVE_FIELDS,
  submitApprovalForm,
  submitResolutionForm,
  type DecisionContext,
} from './decision-submissions';
import { methodNotAllowed, redirect, refusal, sendPage } from './page-responses';
import type { PageContext, PageEnv } from './page-session';
import { queuePage } from './queue-view';
import { formPost } from './request-guards';
import type { Session } from './session-store';

/**
 *   GET  /queue            the operator's tenants' actions awaiting confirmation and in needs_review
 *   POST /queue/decide     approve or reject, signed for the signed-in operator and delivered to the action
 *   POST /queue/resolve    a signed resolve decision for an action in needs_review
 * The operator comes from the session and the tenant from the action key, never from a form.
 */
export interface QueueDeps {
  retrysafe: RetrysafeClient;
  decisions: DecisionContext;
  namespace: string;
  webUiUrl?: string;
  secure: boolean;
  maxFormBytes: number;
  log: (msg: string) => void;
}

export function queueRoutes(app: Hono<PageEnv>, deps: QueueDeps): void {
  const scheme = deps.secure ? 'https' : 'http';
  app.get('/queue', (c) => {
    const { operator, session } = c.var;
    return operator && session ? showQueue(c, deps, session, operator) : redirect(c, '/sign-in');
  });
  app.all('/queue', (c) => methodNotAllowed(c, 'GET'));

  for (const [path, fields, submit] of [
    ['/queue/decide', DECIDE_FIELDS, submitApprovalForm],
    ['/queue/resolve', RESOLVE_FIELDS, submitResolutionForm],
  ] as const) {
    app.post(
      path,
      async (c, next) => {
        if (c.var.operator) return next();
        return refusal(c, 401, 'Not signed in', 'Sign in again (the session ended or expired); nothing was sent.');
      },
      formPost({ allowed: fields, maxBytes: deps.maxFormBytes, scheme }),
      async (c) => {
        c.var.session!.notice = await submit(deps.decisions, c.var.operator!, c.var.form);
        return redirect(c, '/queue');
      },
    );
    app.all(path, (c) => methodNotAllowed(c, 'POST'));
  }
}

async function showQueue(c: PageContext, deps: QueueDeps, session: Session, operator: Operator) {
  const notice = session.notice;
  session.notice = undefined;
  const load = (status: ActionQueue['status']) =>
    loadQueue(deps.retrysafe, operator, status).catch((err: unknown) => {
      deps.log(`approval page: listing ${status} failed: ${(err as Error).message}`);
      return undefined;
    });
  const [awaiting, review] = await Promise.all([load('awaiting_confirmation'), load('needs_review')]);
  const page = queuePage({
    operator,
    csrfToken: session.csrfToken,
    ...(notice ? { notice } : {}),
    ...(awaiting ? { awaiting } : {}),
    ...(review ? { review } : {}),
    namespace: deps.namespace,
    ...(deps.webUiUrl !== undefined ? { webUiUrl: deps.webUiUrl } : {}),
  });
  return sendPage(c, awaiting && review ? 200 : 502, page);
}
