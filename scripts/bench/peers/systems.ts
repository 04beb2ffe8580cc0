import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { ExampleClient } from '../../../examples/client';
import { exampleRegistry } from '../../../examples/tools';
import type { RenewalResult } from '../../../examples/workflows/renewal';
import { baselineChargeWorkflow, retrysafeChargeWorkflow } from '../../../examples/workflows/baseline';
import { createApprover } from '../../chaos/approvals';
import { waitForActionStatus } from '../../chaos/observe';
import type { Stack } from '../../lib/stack';
import type { InProcessWorkers } from '../in-process-workers';
import { startDbosPeer } from './dbos';
import { chargeIntent, crashIntent } from './intents';
import { peerProviderUrls } from './provider-urls';
import { startRestatePeer } from './restate';
import type { PeerChargeInput, PeerCrashInput, PeerRenewalInput, PeerSystem } from './types';
import { runWorkflowId } from 'retrysafe';
import type { ActionLedger } from 'retrysafe/worker';

/** The charge as the Temporal workflows take it: the peers' intent, without its operation. */
function chargeArgs(input: PeerChargeInput) {
  const { operation: _operation, ...fields } = chargeIntent(input);
  return fields;
}

/** How long retrysafe's crashed action may take to settle: a lookup after the provider's lag, or review. */
const SETTLE_TIMEOUT_MS = 60_000;

/**
 * Temporal itself, as two systems of the peer bench: retrysafe's action (and renewal run), and the bare
 * activity as the floor (a charge only: it has no renewal and no crash scenario of its own here).
 */
export function retrysafeSystem(stack: Stack, taskQueue: string, crashQueue: string) {
  const retrysafe = new ExampleClient(stack.client, { taskQueue, tools: exampleRegistry() });
  const crashClient = new ExampleClient(stack.client, { taskQueue: crashQueue, tools: exampleRegistry() });
  const approver = createApprover('peers-approver');
  return {
    name: 'retrysafe',
    version: 'retrysafe on Temporal dev server',
    async charge(input: PeerChargeInput) {
      const r = await stack.client.workflow.execute(retrysafeChargeWorkflow, {
        workflowId: runWorkflowId(input.tenant, input.eventId),
        taskQueue,
        args: [chargeArgs(input)],
      });
      if (r.status !== 'confirmed' || !r.chargeId)
        throw new Error(`retrysafe charge ${input.eventId} ended ${r.status}`);
      return { chargeId: r.chargeId };
    },
    async renewal(input: PeerRenewalInput) {
      const run = await retrysafe.startRenewal(input);
      const r = (await run.result()) as RenewalResult;
      if (r.status !== 'renewed') throw new Error(`retrysafe renewal ${input.eventId} ended ${r.status}`);
      return { reservationId: r.reservationId!, chargeId: r.chargeId!, shipmentId: r.shipmentId! };
    },
    /**
     * A worker on a queue of its own that SIGKILLs itself after the provider committed, then its successor; the
     * action ends confirmed (found by lookup) or in needs_review (nothing to look it up by): never resent.
     */
    async crashAfterCommit(input: PeerCrashInput): Promise<string> {
      const env = { ...approver.workerEnv, RETRYSAFE_TASK_QUEUE: crashQueue };
      const doomed = await stack.startWorker({
        name: `peers-crash-${input.eventId}`,
        env,
        crashAt: `after-commit:${input.target}`,
      });
      const snap = await crashClient.claimAction(input, crashIntent(input), { wait: false });
      // retrysafe's decision table asks a person to sign every customer email before it is sent; the peers have
      // no such gate. The bench signs it as that person would, bound to this request's hash.
      const first = await waitForActionStatus(
        stack.client,
        snap.key,
        ['awaiting_confirmation', 'dispatching', 'unknown', 'confirmed', 'failed', 'needs_review'],
        AbortSignal.timeout(SETTLE_TIMEOUT_MS),
      );
      if (first?.status === 'awaiting_confirmation') await approver.approve(stack.client, snap.key, snap.requestHash);
      const exit = await Promise.race([
        doomed.exited,
        new Promise<never>((_, reject) =>
          setTimeout(
            () => reject(new Error(`the worker for ${snap.key} did not reach its crash point`)),
            SETTLE_TIMEOUT_MS,
          ).unref(),
        ),
      ]).catch(async (err: unknown) => {
        await doomed.stop();
        throw err;
      });
      if (exit.signal !== 'SIGKILL') throw new Error(`the crashing worker ended by ${exit.signal ?? exit.code}`);
      const successor = await stack.startWorker({ name: `peers-successor-${input.eventId}`, env });
      try {
        const state = await waitForActionStatus(
          stack.client,
          snap.key,
          ['confirmed', 'failed', 'needs_review'],
          AbortSignal.timeout(SETTLE_TIMEOUT_MS),
        );
        if (!state) throw new Error(`${snap.key} did not settle within ${SETTLE_TIMEOUT_MS / 1000} s`);
        return state.status;
      } finally {
        await successor.stop();
      }
    },
  };
}

/**
 * retrysafe as an agent service with its own worker runs it: the workers in this process, and the service's client
 * on each worker's connection starting runs with `eagerStart`, so the server hands the run's first workflow task
 * (the act in it) back in the answer to the start. The workflows, the plugin and the ledger are the other retrysafe
 * system's; only where the client sits differs. Charge and renewal; the crash scenario is the other system's.
 */
export function retrysafeEagerSystem(workers: InProcessWorkers, taskQueue: string, ledger: ActionLedger) {
  const clients = workers.clients.map(
    (client) => new ExampleClient(client, { taskQueue, tools: exampleRegistry(), ledger, eagerStart: true }),
  );
  const starts = { requested: 0, eager: 0 };
  let turn = 0;
  const next = () => clients[turn++ % clients.length];
  const counted = <H extends { eagerlyStarted?: boolean }>(handle: H): H => {
    starts.requested++;
    if (handle.eagerlyStarted) starts.eager++;
    return handle;
  };
  return {
    name: 'retrysafe, eager start',
    version: 'retrysafe on Temporal dev server, workers in the bench process (eager start)',
    /** Starts asked to be eager, and those the server started eagerly: a leg with none times another shape. */
    starts,
    async charge(input: PeerChargeInput) {
      const run = counted(
        await next().startRun(retrysafeChargeWorkflow, {
          tenant: input.tenant,
          eventId: input.eventId,
          input: chargeArgs(input),
        }),
      );
      const r = await run.result();
      if (r.status !== 'confirmed' || !r.chargeId)
        throw new Error(`retrysafe charge ${input.eventId} ended ${r.status}`);
      return { chargeId: r.chargeId };
    },
    async renewal(input: PeerRenewalInput) {
      const run = counted(await next().startRenewal(input));
      const r = (await run.result()) as RenewalResult;
      if (r.status !== 'renewed') throw new Error(`retrysafe renewal ${input.eventId} ended ${r.status}`);
      return { reservationId: r.reservationId!, chargeId: r.chargeId!, shipmentId: r.shipmentId! };
    },
  };
}

export function bareActivitySystem(stack: Stack, taskQueue: string) {
  return {
    name: 'bare Temporal activity',
    async charge(input: PeerChargeInput) {
      const r = await stack.client.workflow.execute(baselineChargeWorkflow, {
        workflowId: `peers:bare:${input.tenant}:${input.eventId}`,
        taskQueue,
        args: [chargeArgs(input)],
      });
      return { chargeId: r.chargeId };
    },
  };
}

/** Both peers, each on the stack's providers, in folders of their own under `workDir`. */
export async function startPeers(stack: Stack, workDir: string, log: (line: string) => void): Promise<PeerSystem[]> {
  const providers = peerProviderUrls(stack.providers);
  const started: PeerSystem[] = [];
  try {
    for (const [name, start] of [
      ['restate', startRestatePeer],
      ['dbos', startDbosPeer],
    ] as const) {
      const dir = path.join(workDir, name);
      await mkdir(dir, { recursive: true });
      log(`  starting the ${name} peer`);
      started.push(await start({ providers, workDir: dir, log: (l) => log(`    ${l}`) }));
    }
    return started;
  } catch (err) {
    await Promise.all(started.map((p) => p.stop()));
    throw err;
  }
}
