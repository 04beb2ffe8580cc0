import type { Connection } from '@temporalio/client';

/**
 * How long after a close a retried call may still fire: the client's gRPC retry interceptor waits at most 5 s (with
 * 20% jitter) before its next attempt.
 */
export const RETRY_AFTER_CLOSE_WINDOW_MS = 10_000;

/** What grpc-js throws when a call is started on a channel that was closed. */
export const CLOSED_CHANNEL_MESSAGE = 'Channel has been shut down';

/**
 * Closes a client connection at the end of a run, when calls nobody awaits any more (the loser of a race, a poll cut
 * short) may still be waiting out a retry. `@temporalio/client`'s retry interceptor starts the next attempt from a
 * timer, and on a closed channel that start throws inside the timer, where nothing can catch it: an uncaught
 * exception that ended a 90-minute chaos run before it printed its report. For the window after the close, that one
 * error is dropped; any other uncaught exception is left to the process's other handlers, or thrown again when there
 * are none.
 */
export async function closeConnection(
  connection: Pick<Connection, 'close'>,
  windowMs = RETRY_AFTER_CLOSE_WINDOW_MS,
): Promise<void> {
  const dropRetryIntoClosedChannel = (err: Error) => {
    if (err instanceof Error && err.message === CLOSED_CHANNEL_MESSAGE) return;
    if (process.listenerCount('uncaughtException') > 1) return; // another handler (a test runner's) deals with it
    process.off('uncaughtException', dropRetryIntoClosedChannel);
    throw err;
  };
  process.on('uncaughtException', dropRetryIntoClosedChannel);
  setTimeout(() => process.off('uncaughtException', dropRetryIntoClosedChannel), windowMs).unref();
  await connection.close();
}
