/**
 * What the bench process (client side) and the DBOS service process must agree on. Both import this module and
 * nothing else of each other.
 */

/** DBOS scopes workflows, queues and versions by application name; the client enqueues on its behalf. */
export const APP_NAME = 'retrysafe-bench';

/** The database-backed queue the service dequeues from and the bench enqueues onto. */
export const QUEUE_NAME = 'retrysafe-bench-effects';

/**
 * Pinned so that a restarted service recovers what the killed one left PENDING: launch recovers only the workflows
 * of its own executor ID and application version. Left unset, the executor ID is 'local' (or $DBOS__VMID) and the
 * version a hash of the workflows' source, which would also match across restarts of the same code; pinning both
 * makes the match independent of the environment and of how tsx compiles the source.
 */
export const EXECUTOR_ID = 'retrysafe-bench-dbos-1';
export const APP_VERSION = 'retrysafe-bench-1';

/**
 * DBOS polls both ways: the service polls its queue for new work, the client polls the workflow's row for the
 * result. Both default to 1000 ms, which would dominate a charge's latency; the bench tunes both to this.
 */
export const POLLING_MS = 20;

/** The registered workflows, by the name the client enqueues them under. */
export const WORKFLOW_NAMES = {
  charge: 'keyedCharge',
  renewal: 'renewal',
  crash: 'singleEffect',
} as const;

/** Environment of the service process. */
export const SYSTEM_DATABASE_URL_ENV = 'RETRYSAFE_DBOS_SYSTEM_DATABASE_URL';
export const PROVIDER_URLS_ENV = 'RETRYSAFE_DBOS_PROVIDER_URLS';
