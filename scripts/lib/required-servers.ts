/**
 * RETRYSAFE_REQUIRE_SERVERS=1 (set by .ci/run): a real server the tests need (Mailpit, localstripe, toxiproxy)
 * that cannot be installed or started fails the run instead of skipping its tests, so a green run covers what it
 * says. (The Compose client of test/unit/compose.test.ts is no server: `npm test` runs before `test:cluster` builds
 * it, so it still skips.) Without it, a developer's machine that lacks one still runs the rest, and each skip says why and how
 * to make it a failure.
 */
export const REQUIRE_SERVERS_ENV = 'RETRYSAFE_REQUIRE_SERVERS';

export function serversRequired(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[REQUIRE_SERVERS_ENV] === '1';
}

/** A server the run needs is missing while RETRYSAFE_REQUIRE_SERVERS=1. */
export class MissingServerError extends Error {
  override readonly name = 'MissingServerError';
}

/**
 * What a test does without its server: `false` when it is here; the skip's reason when it is not; a
 * MissingServerError, thrown, when servers are required.
 */
export function skipWithout(why: string | false, env: NodeJS.ProcessEnv = process.env): string | false {
  if (why === false) return false;
  if (serversRequired(env)) throw new MissingServerError(`${why}; ${REQUIRE_SERVERS_ENV}=1 makes that a failure`);
  return `${why} (skipped: ${REQUIRE_SERVERS_ENV}=1 makes this a failure)`;
}
