import type http from 'node:http';
import type { Client } from '@temporalio/client';
import { RetrysafeClient } from '../../../client';
import type { ApprovalSigner, Operator, SignedEvent } from '../approval-signer';
import { loadQueue, type ActionQueue } from './action-queues';
import {
  DECIDE_FIELDS,
  RESOLVE_FIELDS,
  submitApprovalForm,
  submitResolutionForm,
  type DecisionContext,
} from './decision-submissions';
import { html } from './html';
import { pageDocument } from './page-layout';
import { redirect, sendAsset, sendPage } from './page-responses';
import { queuePage } from './queue-view';
import { crossSiteProblem, hostAllowed, tokensMatch } from './request-guards';
import { parseForm, readBody, type FormFields } from './request-body';
import { clearedSessionCookie, sessionCookie, sessionIdOf } from './session-cookie';
import { createSessionStore, type Session, type SessionStore } from './session-store';
import { signInPage } from './sign-in-view';
import { loadStaticAssets, STATIC_PREFIX } from './static-assets';

/**
 * The approval page for people, beside the approval service's JSON API:
 *
 *   GET  /sign-in          the sign-in form (an anonymous session holds its CSRF token)
 *   POST /sign-in          token → a new session (HttpOnly, SameSite=Strict cookie); the token is never shown again
 *   GET  /queue            the operator's tenants' actions awaiting confirmation and in needs_review
 *   POST /queue/decide     approve or reject, signed for the signed-in operator and delivered to the action
 *   POST /queue/resolve    a signed resolve decision for an action in needs_review
 *   POST /sign-out         ends the session
 *   GET  /static/…         the stylesheet and the script
 *
 * Every post needs a same-origin signal and the session's CSRF token; the operator comes from the session and the
 * tenant from the action key, never from a form.
 */

/** 8 KiB: a decision form is a few short fields and a 500-character reason; anything larger is refused unread. */
export const MAX_FORM_BODY_BYTES = 8 * 1024;

export interface ApprovalPageOptions {
  signer: ApprovalSigner;
  temporal: { client: Client; namespace: string; webUiUrl?: string };
  secureCookies?: boolean;
  onSigned?: (event: SignedEvent) => void;
  sessions?: SessionStore;
  log?: (msg: string) => void;
}

export interface ApprovalPage {
  /** Whether `path` is one of the page's routes (the JSON API answers the rest). */
  handles(path: string): boolean;
  handle(req: http.IncomingMessage, res: http.ServerResponse, path: string): Promise<void>;
  /** Where the server listens, once it does (for the Host check). */
  listening(address: { host: string; port: number }): void;
  /** The operator signed in on the request's session cookie, as the operators file lists them now. */
  signedInOperator(req: http.IncomingMessage): Operator | undefined;
}

const PAGE_ROUTES = new Set(['/', '/sign-in', '/sign-out', '/queue', '/queue/decide', '/queue/resolve']);

export function createApprovalPage(options: ApprovalPageOptions): ApprovalPage {
  const secure = options.secureCookies === true;
  const scheme = secure ? 'https' : 'http';
  const webUiUrl = checkedWebUiUrl(options.temporal.webUiUrl);
  const sessions = options.sessions ?? createSessionStore();
  const assets = loadStaticAssets();
  const log = options.log ?? ((msg: string) => process.stderr.write(`${msg}\n`));
  const retrysafe = new RetrysafeClient(options.temporal.client);
  const decisions: DecisionContext = {
    signer: options.signer,
    retrysafe,
    log,
    ...(options.onSigned ? { onSigned: options.onSigned } : {}),
  };
  let address: { host: string; port: number } | undefined;

  const refuse = (res: http.ServerResponse, status: number, title: string, detail: string) =>
    sendPage(
      res,
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

  function sessionOf(req: http.IncomingMessage): Session | undefined {
    return sessions.get(sessionIdOf(req, secure));
  }

  /**
   * The session's operator as the operators file lists them now (the signer re-reads it when it changes), so a
   * narrowed scope counts at once; a session whose operator was removed or given a new token ends.
   */
  function operatorOf(session: Session | undefined): Operator | undefined {
    const signedIn = session?.operator;
    if (!session || !signedIn) return undefined;
    const now = options.signer.operators.find(
      (o) => o.name === signedIn.name && o.tokenSha256 === signedIn.tokenSha256,
    );
    if (!now) sessions.end(session.id);
    return now;
  }

  /**
   * The fields of a same-origin form post whose CSRF token matches `session`, or undefined once a refusal has been
   * sent. The origin is checked before the body is read, the token after.
   */
  async function formOf(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    session: Session | undefined,
    allowed: readonly string[],
  ): Promise<FormFields | undefined> {
    const crossSite = crossSiteProblem(req, scheme);
    if (crossSite) {
      req.resume();
      refuse(res, 403, 'Cross-site request refused', `This form was not posted from this page (${crossSite}).`);
      return undefined;
    }
    const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    if (type !== 'application/x-www-form-urlencoded') {
      req.resume();
      refuse(res, 415, 'Unsupported form', 'Forms are posted as application/x-www-form-urlencoded.');
      return undefined;
    }
    const body = await readBody(req, MAX_FORM_BODY_BYTES);
    if (body === undefined) {
      refuse(res, 413, 'Form too large', `A form is at most ${MAX_FORM_BODY_BYTES} bytes.`);
      return undefined;
    }
    const parsed = parseForm(body, allowed);
    if ('problem' in parsed) {
      refuse(res, 400, 'Malformed form', `${parsed.problem}; nothing was sent.`);
      return undefined;
    }
    if (!session || !tokensMatch(parsed.fields.csrf, session.csrfToken)) {
      refuse(
        res,
        403,
        'Form refused',
        'The form did not carry this session’s CSRF token (it is from another or an earlier session); nothing was sent. Reload the page and try again.',
      );
      return undefined;
    }
    return parsed.fields;
  }

  async function showQueue(res: http.ServerResponse, session: Session, operator: Operator): Promise<void> {
    const notice = session.notice;
    session.notice = undefined;
    const load = (status: ActionQueue['status']) =>
      loadQueue(retrysafe, operator, status).catch((err: unknown) => {
        log(`approval page: listing ${status} failed: ${(err as Error).message}`);
        return undefined;
      });
    const [awaiting, review] = await Promise.all([load('awaiting_confirmation'), load('needs_review')]);
    sendPage(
      res,
      awaiting && review ? 200 : 502,
      queuePage({
        operator,
        csrfToken: session.csrfToken,
        ...(notice ? { notice } : {}),
        ...(awaiting ? { awaiting } : {}),
        ...(review ? { review } : {}),
        namespace: options.temporal.namespace,
        ...(webUiUrl !== undefined ? { webUiUrl } : {}),
      }),
    );
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse, path: string): Promise<void> {
    // Behind a TLS proxy (secure cookies) the proxy decides which host names reach the page.
    if (address && !secure && !hostAllowed(req, address)) {
      req.resume();
      return refuse(res, 421, 'Unknown host', 'This page is served on loopback names only.');
    }
    const method = req.method ?? 'GET';
    const asset = assets.get(path);
    if (asset) {
      req.resume();
      if (method !== 'GET') return methodNotAllowed(res, 'GET');
      return sendAsset(res, asset);
    }
    const found = sessionOf(req);
    const operator = operatorOf(found);
    // A session whose operator left the operators file has ended: it counts as none.
    const session = found?.operator && !operator ? undefined : found;
    const operatorSession = operator ? session : undefined;

    switch (path) {
      case '/':
        req.resume();
        return redirect(res, operatorSession ? '/queue' : '/sign-in');
      case '/sign-in': {
        if (method === 'GET') {
          req.resume();
          if (operatorSession) return redirect(res, '/queue');
          const anonymous = session ?? sessions.startAnonymous();
          const signedOut = new URL(req.url ?? '/', 'http://page').searchParams.has('signed-out');
          return sendPage(res, 200, signInPage({ csrfToken: anonymous.csrfToken, signedOut }), {
            'Set-Cookie': sessionCookie(anonymous.id, secure),
          });
        }
        if (method !== 'POST') return methodNotAllowed(res, 'GET, POST');
        const form = await formOf(req, res, session, ['csrf', 'token']);
        if (!form || !session) return;
        const authenticated = options.signer.authenticate(form.token);
        if (!authenticated) {
          return sendPage(
            res,
            401,
            signInPage({ csrfToken: session.csrfToken, error: 'That operator token is not recognized.' }),
          );
        }
        const signedIn = sessions.signIn(session, authenticated);
        return redirect(res, '/queue', { 'Set-Cookie': sessionCookie(signedIn.id, secure) });
      }
      case '/queue':
        req.resume();
        if (method !== 'GET') return methodNotAllowed(res, 'GET');
        if (!operatorSession || !operator) return redirect(res, '/sign-in');
        return showQueue(res, operatorSession, operator);
      case '/queue/decide':
      case '/queue/resolve': {
        if (method !== 'POST') {
          req.resume();
          return methodNotAllowed(res, 'POST');
        }
        if (!operatorSession || !operator) {
          req.resume();
          return refuse(res, 401, 'Not signed in', 'Sign in again (the session ended or expired); nothing was sent.');
        }
        const decide = path === '/queue/decide';
        const form = await formOf(req, res, operatorSession, decide ? DECIDE_FIELDS : RESOLVE_FIELDS);
        if (!form) return;
        operatorSession.notice = decide
          ? await submitApprovalForm(decisions, operator, form)
          : await submitResolutionForm(decisions, operator, form);
        return redirect(res, '/queue');
      }
      case '/sign-out': {
        if (method !== 'POST') {
          req.resume();
          return methodNotAllowed(res, 'POST');
        }
        const form = await formOf(req, res, session, ['csrf']);
        if (!form || !session) return;
        sessions.end(session.id);
        return redirect(res, '/sign-in?signed-out', { 'Set-Cookie': clearedSessionCookie(secure) });
      }
    }
  }

  return {
    // The Web UI's codec calls run in the background of an open tab: they must not keep a session from idling out.
    signedInOperator: (req) => operatorOf(sessions.peek(sessionIdOf(req, secure))),
    handles: (path) => PAGE_ROUTES.has(path) || path.startsWith(STATIC_PREFIX),
    async handle(req, res, path) {
      try {
        await handle(req, res, path);
      } catch (err) {
        log(`approval page: ${req.method} ${path} failed: ${err instanceof Error ? err.message : String(err)}`);
        if (res.headersSent) return void res.destroy();
        refuse(res, 500, 'Something failed', 'The approval page failed; see the approval service log.');
      }
    },
    listening(where) {
      address = where;
    },
  };

  function methodNotAllowed(res: http.ServerResponse, allow: string): void {
    sendPage(res, 405, pageDocument('Method not allowed', html`<main><p>Use ${allow}.</p></main>`), { Allow: allow });
  }
}

/** The Web UI's base URL without a trailing slash; only http(s) URLs, since it becomes a link's href. */
function checkedWebUiUrl(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
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
