import type { Hono } from 'hono';
import type { ApprovalSigner } from '../approval-signer';
import { methodNotAllowed, redirect, sendPage } from './page-responses';
import type { PageEnv } from './page-session';
import { formPost } from './request-guards';
import { clearSessionCookie, setSessionCookie } from './session-cookie';
import type { SessionStore } from './session-store';
import { signInPage } from './sign-in-view';

/**
 *   GET  /           to the queue when signed in, else to the sign-in form
 *   GET  /sign-in    the sign-in form (an anonymous session holds its CSRF token)
 *   POST /sign-in    token → a new session (a new id and CSRF token); the token is never shown again
 *   POST /sign-out   ends the session
 */
export interface SignInDeps {
  signer: ApprovalSigner;
  sessions: SessionStore;
  secure: boolean;
  maxFormBytes: number;
}

export function signInRoutes(app: Hono<PageEnv>, deps: SignInDeps): void {
  const { sessions, secure } = deps;
  const form = (allowed: readonly string[]) =>
    formPost({ allowed, maxBytes: deps.maxFormBytes, scheme: secure ? 'https' : 'http' });

  app.get('/', (c) => redirect(c, c.var.operator ? '/queue' : '/sign-in'));

  app.get('/sign-in', (c) => {
    if (c.var.operator) return redirect(c, '/queue');
    const anonymous = c.var.session ?? sessions.startAnonymous();
    setSessionCookie(c, anonymous.id, secure);
    const signedOut = c.req.query('signed-out') !== undefined;
    return sendPage(c, 200, signInPage({ csrfToken: anonymous.csrfToken, signedOut }));
  });

  app.post('/sign-in', form(['csrf', 'token']), (c) => {
    const session = c.var.session!;
    const authenticated = deps.signer.authenticate(c.var.form.token);
    if (!authenticated) {
      const page = signInPage({ csrfToken: session.csrfToken, error: 'That operator token is not recognized.' });
      return sendPage(c, 401, page);
    }
    setSessionCookie(c, sessions.signIn(session, authenticated).id, secure);
    return redirect(c, '/queue');
  });
  app.all('/sign-in', (c) => methodNotAllowed(c, 'GET, POST'));

  app.post('/sign-out', form(['csrf']), (c) => {
    sessions.end(c.var.session!.id);
    clearSessionCookie(c, secure);
    return redirect(c, '/sign-in?signed-out');
  });
  app.all('/sign-out', (c) => methodNotAllowed(c, 'POST'));
}
