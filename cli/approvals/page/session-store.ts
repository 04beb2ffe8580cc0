import { randomBytes } from 'node:crypto';
import type { Operator } from '../approval-signer';

/**
 * Server-side sessions of the approval page. The browser holds only a random id (256 bits) in an HttpOnly cookie;
 * everything else stays here. A session starts anonymous when the sign-in form is shown (so that form has a CSRF
 * token too), and signing in replaces it with a new session under a new id and a new CSRF token, so an id or a
 * token seen before sign-in is worth nothing after it. Sessions end after an idle time, after an absolute
 * lifetime whatever the activity, and at sign-out. The store is in memory and bounded: a restart signs everyone out.
 */

/** 15 min without a request: long enough to read a dry run, short enough for an unattended screen. */
export const SESSION_IDLE_MS = 15 * 60 * 1000;
/** 8 h: one working day; then the operator signs in again whatever the activity. */
export const SESSION_ABSOLUTE_MS = 8 * 60 * 60 * 1000;
/** 10 min: how long a shown sign-in form stays usable. */
export const SIGN_IN_FORM_MS = 10 * 60 * 1000;
/** Sessions held at once; past it the oldest anonymous ones go first, so showing the form cannot evict operators. */
export const MAX_SESSIONS = 10_000;

/** What the page tells the operator after a form was handled (shown once, on the next page). */
export interface Notice {
  outcome: 'done' | 'refused' | 'failed';
  title: string;
  detail?: string;
  /** The refusal's reason code (hash-mismatch, missing-tenant, stale-form, …). */
  reason?: string;
  key?: string;
}

export interface Session {
  readonly id: string;
  readonly csrfToken: string;
  /** Undefined until the token was accepted. */
  readonly operator?: Operator;
  readonly createdAt: number;
  lastSeenAt: number;
  notice?: Notice;
}

export interface SessionStore {
  /** A new anonymous session (for the sign-in form). */
  startAnonymous(): Session;
  /** A new session for `operator`; `previous` (the anonymous one) ends. */
  signIn(previous: Session | undefined, operator: Operator): Session;
  /** The live session with this id, its idle clock restarted; undefined when unknown or expired. */
  get(id: string | undefined): Session | undefined;
  /** Like `get`, but not a sign of activity: the idle clock keeps running (background calls, e.g. the codec). */
  peek(id: string | undefined): Session | undefined;
  end(id: string): void;
  readonly size: number;
}

export interface SessionStoreOptions {
  idleMs?: number;
  absoluteMs?: number;
  signInFormMs?: number;
  maxSessions?: number;
  now?: () => number;
}

export function createSessionStore(options: SessionStoreOptions = {}): SessionStore {
  const lifetimes = {
    idleMs: options.idleMs ?? SESSION_IDLE_MS,
    absoluteMs: options.absoluteMs ?? SESSION_ABSOLUTE_MS,
    signInFormMs: options.signInFormMs ?? SIGN_IN_FORM_MS,
  };
  const maxSessions = options.maxSessions ?? MAX_SESSIONS;
  const now = options.now ?? Date.now;
  // Insertion order is creation order, which eviction relies on.
  const sessions = new Map<string, Session>();
  const expired = (s: Session, at: number) => hasExpired(s, at, lifetimes);
  const makeRoom = () => evictBeyond(sessions, maxSessions, (s) => expired(s, now()));

  function create(operator?: Operator): Session {
    makeRoom();
    const at = now();
    const session: Session = {
      id: randomBytes(32).toString('base64url'),
      csrfToken: randomBytes(32).toString('base64url'),
      ...(operator ? { operator } : {}),
      createdAt: at,
      lastSeenAt: at,
    };
    sessions.set(session.id, session);
    return session;
  }

  return {
    startAnonymous: () => create(),
    signIn(previous, operator) {
      if (previous) sessions.delete(previous.id);
      return create(operator);
    },
    get(id) {
      if (id === undefined) return undefined;
      const session = sessions.get(id);
      if (!session) return undefined;
      const at = now();
      if (expired(session, at)) {
        sessions.delete(id);
        return undefined;
      }
      session.lastSeenAt = at;
      return session;
    },
    peek(id) {
      if (id === undefined) return undefined;
      const session = sessions.get(id);
      if (!session || expired(session, now())) return undefined;
      return session;
    },
    end(id) {
      sessions.delete(id);
    },
    get size() {
      return sessions.size;
    },
  };
}

function hasExpired(
  s: Session,
  at: number,
  limits: { idleMs: number; absoluteMs: number; signInFormMs: number },
): boolean {
  return s.operator
    ? at - s.lastSeenAt >= limits.idleMs || at - s.createdAt >= limits.absoluteMs
    : at - s.createdAt >= Math.min(limits.signInFormMs, limits.absoluteMs);
}

/** Makes room for one more session: expired ones go first, then anonymous ones, then the oldest. */
function evictBeyond(sessions: Map<string, Session>, maxSessions: number, expired: (s: Session) => boolean): void {
  if (sessions.size < maxSessions) return;
  for (const [id, s] of sessions) if (expired(s)) sessions.delete(id);
  for (const [id, s] of sessions) {
    if (sessions.size < maxSessions) return;
    if (!s.operator) sessions.delete(id);
  }
  for (const id of sessions.keys()) {
    if (sessions.size < maxSessions) return;
    sessions.delete(id);
  }
}
