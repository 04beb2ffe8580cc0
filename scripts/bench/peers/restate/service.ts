/**
 * The Restate peer's service process: serves the peer's workflows (handlers.ts) as an HTTP/2 endpoint on the
 * given loopback port, then prints one ready line on stdout. Started by service-process.ts, never by hand.
 *
 *   RETRYSAFE_RESTATE_SERVICE_PORT  the port (the same on every restart: Restate pins an invocation to its deployment's URI)
 *   RETRYSAFE_PEER_PROVIDERS        JSON of PeerProviderUrls
 *   RETRYSAFE_CRASH_AT              optional crash spec, e.g. `after-commit:send-email` (activities/crash-points.ts)
 */
import './promise-with-resolvers';

import * as restate from '@restatedev/restate-sdk';

import type { PeerProviderUrls } from '../types';
import { peerWorkflows } from './handlers';
import { SERVICE_READY_EVENT } from './service-process';
import { killAt, parseCrashSpecs } from 'retrysafe/testing';

async function main(): Promise<void> {
  const port = Number(process.env.RETRYSAFE_RESTATE_SERVICE_PORT);
  if (!Number.isInteger(port) || port <= 0) throw new Error('RETRYSAFE_RESTATE_SERVICE_PORT must be a port number');
  const providers = JSON.parse(process.env.RETRYSAFE_PEER_PROVIDERS ?? 'null') as PeerProviderUrls | null;
  if (!providers) throw new Error('RETRYSAFE_PEER_PROVIDERS is not set');
  const crashAt = process.env.RETRYSAFE_CRASH_AT;
  const crash = killAt(parseCrashSpecs(crashAt), (point, operation) =>
    process.stderr.write(`crash point ${point}:${operation} reached: SIGKILL\n`),
  );
  // The IPC channel closes however the parent dies; without it this process would outlive a killed bench.
  if (process.send) process.on('disconnect', () => process.exit(0));

  const workflows = peerWorkflows(providers, crash);
  const bound = await restate.serve({ services: Object.values(workflows), port });
  process.stdout.write(`${JSON.stringify({ event: SERVICE_READY_EVENT, port: bound, crashAt: crashAt ?? null })}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(
    `restate peer service failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
