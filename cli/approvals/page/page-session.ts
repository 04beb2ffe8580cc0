import type { Context, MiddlewareHandler } from 'hono';
import type { ApprovalSigner, Operator } from '../approval-signer';
import type { FormFields } from './request-body';
import { sessionIdOf } from './session-cookie';
import type { Session, SessionStore } from './session-store';

/** What the page's middlewares hand its routes. */
export type PageEnv = {
  Variables: {
    /** The request's live session, anonymous or signed in; a session whose operator left has ended. */
    session?: Session;
    /** The signed-in operator as the operators file lists them now, when the session has one. */
    operator?: Operator;
    /** A form post's fields, once every check passed (request-guards.ts). */
    form: FormFields;
  };
};

export type PageContext = Context<PageEnv>;

/**
 * The session's operator as the operators file lists them now (the signer re-reads it when it changes), so a
 * narrowed scope counts at once; a session whose operator was removed or given a new token ends.
 */
export function currentOperator(
  signer: ApprovalSigner,
  sessions: SessionStore,
  session: Session | undefined,
): Operator | undefined {
  const signedIn = session?.operator;
  if (!session || !signedIn) return undefined;
  const now = signer.operators.find((o) => o.name === signedIn.name && o.tokenSha256 === signedIn.tokenSha256);
  if (!now) sessions.end(session.id);
  return now;
}

/** Puts the request's session and operator on the context (`c.var.session`, `c.var.operator`). */
export function loadSession(
  signer: ApprovalSigner,
  sessions: SessionStore,
  secure: boolean,
): MiddlewareHandler<PageEnv> {
  return async (c, next) => {
    const found = sessions.get(sessionIdOf(c, secure));
    const operator = currentOperator(signer, sessions, found);
    // A session whose operator left the operators file has ended: it counts as none.
    const session = found?.operator && !operator ? undefined : found;
    if (session) c.set('session', session);
    if (operator) c.set('operator', operator);
    await next();
  };
}
