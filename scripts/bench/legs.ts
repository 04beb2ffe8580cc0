import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import type { ExampleClient } from '../../examples/client';
import type { BareChargeInput } from '../../examples/activities/bare-charge';
import type { RenewalResult } from '../../examples/workflows/renewal';
import {
  baselineChargeWorkflow,
  baselineChildChargeWorkflow,
  baselineLocalChargeWorkflow,
  baselineResumeSignal,
  baselineResumeUpdate,
  baselineSignalWorkflow,
  baselineUpdateWorkflow,
  baselineWaitingQuery,
  retrysafeChargeWorkflow,
} from '../../examples/workflows/baseline';
import type { Approver } from '../chaos/approvals';
import { waitForActionStatus } from '../chaos/observe';
import { renewalInputFor } from '../chaos/scenario-renewal';
import type { Measured } from './compare';
import {
  DEFAULT_AUTO_APPROVE_BELOW_CENTS,
  OUTCOME_STATUSES,
  RetrysafeClient,
  actionKeyForStep,
  runWorkflowId,
} from 'retrysafe';
import type { ActionLedger } from 'retrysafe/worker';
import { exampleRegistry } from '../../examples/tools';
import { SA_STATUS } from '../../policies/search-attributes';

/**
 * The benchmark's legs, in pairs where a pair exists: a bare Temporal operation and its retrysafe
 * counterpart, each timed from the client's call to the answer it waits for.
 *   action   baselineChargeWorkflow (one activity)      vs retrysafeChargeWorkflow (one act(): claim, policy, dispatch)
 *   action-vs-fastest  baselineLocalChargeWorkflow (the charge as one local activity, started eagerly by a client on
 *            the in-process worker's connection: Temporal's fastest hand-written shape) vs the retrysafe action started
 *            the same way (RetrysafeClient's `eagerStart`, the plugin on the in-process workers)
 *   action-eager-vs-bare  baselineChargeWorkflow vs that eager retrysafe action: what an agent service with its own
 *            worker gets against a hand-written activity workflow
 *   action-vs-two-workflows  baselineChildChargeWorkflow (a child workflow running the activity) vs the same
 *            retrysafe action: what is left once the second workflow per action is paid for on both sides
 *   signal   signal → result of a waiting workflow      vs signed approval → action resumed (update returns); the
 *            approved charge then runs to its outcome, untimed, before that slot's next approval
 *   update   an update with a validator → its answer    vs the same signed approval: what retrysafe adds to the
 *            bare shape of an approval (the signal pair's gap holds the update's own cost too)
 *   renewal  (no bare counterpart) reserve → charge → ship as three actions, for scale
 */
export interface BenchContext {
  client: Client;
  retrysafe: ExampleClient;
  taskQueue: string;
  approver: Approver;
  /** A task queue whose workers keep the ledger and export metrics and traces, for what observing costs. */
  observedTaskQueue?: string;
  /** What those workers export. */
  observe?: 'metrics' | 'traces' | 'both';
  /**
   * Workers running in the bench's own process and a client on each one's connection, which eager start needs: the
   * server hands a workflow's first task back in the answer to its start, to a worker beside that client.
   */
  eager?: { clients: Client[]; taskQueue: string; ledger: ActionLedger };
}

export type Pair = 'action' | 'signal' | 'update';

/** Ratios the report prints: retrysafe leg ÷ bare leg, by leg id. */
export const COMPARISONS = [
  { name: 'action', bare: 'bare-activity', retrysafe: 'retrysafe-action' },
  // Against Temporal's fastest hand-written shape, whose workers run in the bench process and keep no ledger.
  { name: 'action-vs-fastest', bare: 'bare-local-eager', retrysafe: 'retrysafe-action-eager', measures: 'shape' },
  { name: 'action-eager-vs-bare', bare: 'bare-activity', retrysafe: 'retrysafe-action-eager', measures: 'shape' },
  { name: 'action-vs-two-workflows', bare: 'bare-child-activity', retrysafe: 'retrysafe-action' },
  { name: 'signal', bare: 'bare-signal', retrysafe: 'retrysafe-confirmation' },
  { name: 'update', bare: 'bare-update', retrysafe: 'retrysafe-confirmation' },
  // The same action on ledger workers without and with metrics (scraped every second) and traces exported.
  {
    name: 'observability',
    bare: 'retrysafe-action',
    retrysafe: 'retrysafe-action-observed',
    measures: 'observability',
  },
] as const satisfies ReadonlyArray<{ name: string; bare: string; retrysafe: string; measures?: Measured }>;

export interface Leg {
  id: string;
  label: string;
  side: 'bare' | 'retrysafe';
  pair?: Pair;
  /** Untimed preparation of one operation; resolves to the timed part, which returns its latency in ms. */
  prepare(name: string): Promise<() => Promise<number>>;
  /** Runs on the workers that keep the ledger and export metrics and traces (BenchContext.observedTaskQueue). */
  observedWorkers?: boolean;
  /** The workflows one operation ran, by the name it was prepared under: their histories say where its time went. */
  workflows?(name: string): Array<{ role: string; workflowId: string; optional?: boolean }>;
  /** Runs on the workers in the bench process (BenchContext.eager). */
  inBenchProcess?: boolean;
  /** For a leg that asks for eager starts: how many it asked for and how many the server started eagerly. */
  eagerStarts?: EagerStarts;
}

export interface EagerStarts {
  requested: number;
  eager: number;
}

/** Thrown when a leg that asks for eager starts got none: it would be timing another shape than it names. */
export function assertEager(id: string, starts: EagerStarts): void {
  if (starts.requested > 0 && starts.eager === 0) {
    throw new Error(
      `${id}: none of ${starts.requested} starts was eager (the server refused requestEagerStart or no worker in ` +
        'this process polls the task queue): the leg would time a plain start',
    );
  }
}

/** What the observed workers export, in words. */
export function observedWhat(observe: BenchContext['observe'] = 'both'): string {
  return observe === 'both' ? 'metrics and traces' : observe;
}

/** Thrown by a leg's preparation when the code it measures does not exist (yet) in workflows/. */
export class LegUnavailable extends Error {
  override name = 'LegUnavailable';
}

/** The decision table sends money movements at or above this to a signed confirmation. */
const CONFIRMED_AMOUNT_CENTS = DEFAULT_AUTO_APPROVE_BELOW_CENTS;
/** Below the confirmation threshold: the action legs measure the automatic path. */
const AUTOMATIC_AMOUNT_CENTS = DEFAULT_AUTO_APPROVE_BELOW_CENTS - 10;
const SETUP_TIMEOUT_MS = 30_000;
/** How often an approved charge's status is read while the bench waits for it (untimed). */
const SETTLE_POLL_MS = 10;
/** Where an approved charge stops short of `confirmed`: an outcome, or a wait for a person. */
const NOT_CONFIRMED: ReadonlySet<string> = new Set([...OUTCOME_STATUSES, 'needs_review', 'unknown']);

/**
 * Waits until an approved charge is `confirmed`, reading the status the action workflow keeps in its search attributes
 * through `describe`: the server answers from the workflow's state, so the bench's wait writes nothing into the
 * history the bench then counts, and puts no task on the worker. Any other end, or none in time, stops the bench.
 */
async function chargeSettled(client: Client, key: string): Promise<void> {
  const handle = client.workflow.getHandle(key);
  const deadline = Date.now() + SETUP_TIMEOUT_MS;
  let status: string | undefined;
  while (Date.now() < deadline) {
    status = (await handle.describe()).typedSearchAttributes.get(SA_STATUS);
    if (status === 'confirmed') return;
    if (status && NOT_CONFIRMED.has(status)) break;
    await sleep(SETTLE_POLL_MS);
  }
  throw new Error(`the approved charge ${key} ended ${status ?? 'with no status'}, not confirmed`);
}

const chargeFor = (name: string, amountCents = AUTOMATIC_AMOUNT_CENTS): BareChargeInput => ({
  amountCents,
  currency: 'usd',
  customerId: 'cus_bench',
  paymentMethod: 'pm_bench',
  merchantReference: `B-${name}`,
});

/** One operation past this is stuck (a workflow type no worker registers, a worker gone), not slow. */
const OPERATION_TIMEOUT_MS = 60_000;

const timed = async (fn: () => Promise<void>): Promise<number> => {
  const t0 = performance.now();
  const stuck = AbortSignal.timeout(OPERATION_TIMEOUT_MS);
  await Promise.race([
    fn(),
    new Promise<never>((_, reject) =>
      stuck.addEventListener('abort', () =>
        reject(new Error(`an operation did not finish within ${OPERATION_TIMEOUT_MS / 1000} s; see the worker logs`)),
      ),
    ),
  ]);
  return performance.now() - t0;
};

/** The in-process workers' clients, each worker in turn through the client on its connection. */
function eagerClients(ctx: BenchContext) {
  let turn = 0;
  return () => {
    const eager = ctx.eager;
    if (!eager?.clients.length) throw new LegUnavailable('no workers in the bench process to start eagerly on');
    return { eager, client: eager.clients[turn++ % eager.clients.length] };
  };
}

/**
 * The bare charge as one local activity, started with requestEagerStart on the in-process workers' client: counted,
 * start by start, in `eagerStarts`.
 */
function localEagerLeg(ctx: BenchContext): Leg {
  const eagerStarts: EagerStarts = { requested: 0, eager: 0 };
  const nextClient = eagerClients(ctx);
  return {
    id: 'bare-local-eager',
    label: 'bare local activity, eager start (baselineLocalChargeWorkflow)',
    side: 'bare',
    pair: 'action',
    inBenchProcess: true,
    eagerStarts,
    prepare: async (name) => {
      const { eager, client } = nextClient();
      return () =>
        timed(async () => {
          const handle = await client.workflow.start(baselineLocalChargeWorkflow, {
            workflowId: `bench:local-eager:${name}`,
            taskQueue: eager.taskQueue,
            args: [chargeFor(name)],
            requestEagerStart: true,
          });
          eagerStarts.requested++;
          if (handle.eagerlyStarted) eagerStarts.eager++;
          await handle.result();
        });
    },
    workflows: (name) => [{ role: 'workflow', workflowId: `bench:local-eager:${name}` }],
  };
}

/**
 * The retrysafe action started as an agent service with its own worker starts it: RetrysafeClient with `eagerStart`
 * on the in-process workers' connections, the run's act in its first workflow task. Counted like the bare leg.
 */
function retrysafeEagerLeg(ctx: BenchContext): Leg {
  const eagerStarts: EagerStarts = { requested: 0, eager: 0 };
  const nextClient = eagerClients(ctx);
  return {
    id: 'retrysafe-action-eager',
    label: 'retrysafe action, eager start (RetrysafeClient eagerStart, plugin on the in-process workers)',
    side: 'retrysafe',
    inBenchProcess: true,
    eagerStarts,
    prepare: async (name) => {
      const { eager, client } = nextClient();
      const retrysafe = new RetrysafeClient(client, {
        taskQueue: eager.taskQueue,
        tools: exampleRegistry(),
        ledger: eager.ledger,
        eagerStart: true,
      });
      const eventId = `${name}-eager`;
      return () =>
        timed(async () => {
          const run = await retrysafe.startRun(retrysafeChargeWorkflow, {
            tenant: 'bench',
            eventId,
            input: chargeFor(eventId),
          });
          eagerStarts.requested++;
          if (run.eagerlyStarted) eagerStarts.eager++;
          const r = await run.result();
          if (r.status !== 'confirmed') throw new Error(`retrysafe action ${eventId} ended ${r.status}`);
        });
    },
    workflows: (name) => {
      const run = runWorkflowId('bench', `${name}-eager`);
      return [
        { role: 'run', workflowId: run },
        { role: 'action', workflowId: actionKeyForStep(run, { operation: 'charge', version: 1 }), optional: true },
      ];
    },
  };
}

export function benchLegs(ctx: BenchContext): Leg[] {
  const { client, taskQueue } = ctx;
  /**
   * One charge run started as application code starts it, through RetrysafeClient (which sets the run's search
   * attributes at its start), on `retrysafe`'s queue: run:bench:<eventId>.
   */
  const chargeRun = async (retrysafe: RetrysafeClient, eventId: string) => {
    const run = await retrysafe.startRun(retrysafeChargeWorkflow, {
      tenant: 'bench',
      eventId,
      input: chargeFor(eventId),
    });
    const r = await run.result();
    if (r.status !== 'confirmed') throw new Error(`retrysafe action ${eventId} ended ${r.status}`);
  };
  /** The retrysafe action leg on another queue's workers (`suffix` keeps its workflow IDs apart). */
  const actionOnQueue =
    (queue: string | undefined, suffix: string, unavailable: string) =>
    async (name: string): Promise<() => Promise<number>> => {
      if (!queue) throw new LegUnavailable(unavailable);
      const retrysafe = new RetrysafeClient(client, { taskQueue: queue, tools: exampleRegistry() });
      return () => timed(() => chargeRun(retrysafe, `${name}-${suffix}`));
    };
  /** Starts a baseline workflow that waits for its signal or update; resolves once its query says it waits. */
  const startWaiting = async (workflow: typeof baselineSignalWorkflow, workflowId: string) => {
    const handle = await client.workflow.start(workflow, { workflowId, taskQueue });
    const deadline = Date.now() + SETUP_TIMEOUT_MS;
    while (!(await handle.query(baselineWaitingQuery))) {
      if (Date.now() > deadline) throw new Error(`${workflowId} never started waiting`);
      await sleep(20);
    }
    return handle;
  };
  /** The run and, when one started, its action workflow: what one action cost the server. */
  const actionWorkflows = (name: string) => {
    const run = runWorkflowId('bench', name);
    return [
      { role: 'run', workflowId: run },
      { role: 'action', workflowId: actionKeyForStep(run, { operation: 'charge', version: 1 }), optional: true },
    ];
  };
  return [
    {
      id: 'bare-activity',
      label: 'bare activity (baselineChargeWorkflow)',
      side: 'bare',
      pair: 'action',
      prepare: async (name) => () =>
        timed(async () => {
          await client.workflow.execute(baselineChargeWorkflow, {
            workflowId: `bench:bare:${name}`,
            taskQueue,
            args: [chargeFor(name)],
          });
        }),
      workflows: (name) => [{ role: 'workflow', workflowId: `bench:bare:${name}` }],
    },
    localEagerLeg(ctx),
    {
      id: 'bare-child-activity',
      label: 'bare two workflows (child runs the activity)',
      side: 'bare',
      prepare: async (name) => () =>
        timed(async () => {
          await client.workflow.execute(baselineChildChargeWorkflow, {
            workflowId: `bench:child:${name}`,
            taskQueue,
            args: [chargeFor(name)],
          });
        }),
      workflows: (name) => [
        { role: 'parent', workflowId: `bench:child:${name}` },
        { role: 'child', workflowId: `bench:child:${name}:charge` },
      ],
    },
    {
      id: 'retrysafe-action',
      label: 'retrysafe action (one act(charge), the ledger row its record)',
      side: 'retrysafe',
      pair: 'action',
      prepare: async (name) => () => timed(() => chargeRun(ctx.retrysafe, name)),
      workflows: actionWorkflows,
    },
    retrysafeEagerLeg(ctx),
    {
      id: 'retrysafe-action-observed',
      label: `retrysafe action, workers exporting ${observedWhat(ctx.observe)}`,
      side: 'retrysafe',
      observedWorkers: true,
      prepare: actionOnQueue(ctx.observedTaskQueue, 'observed', 'no observed workers in this run'),
    },
    {
      id: 'retrysafe-renewal',
      label: 'retrysafe renewal run (3 actions)',
      side: 'retrysafe',
      prepare: async (name) => () =>
        timed(async () => {
          const run = await ctx.retrysafe.startRenewal(renewalInputFor({ tenant: 'bench', eventId: name }));
          const r = (await run.result()) as RenewalResult;
          if (r.status !== 'renewed') throw new Error(`renewal ${name} ended ${r.status}`);
        }),
    },
    {
      id: 'bare-signal',
      label: 'bare signal → waiting workflow resumes',
      side: 'bare',
      pair: 'signal',
      async prepare(name) {
        const handle = await startWaiting(baselineSignalWorkflow, `bench:signal:${name}`);
        return () =>
          timed(async () => {
            await handle.signal(baselineResumeSignal, { sentAtMs: Date.now() });
            await handle.result();
          });
      },
      workflows: (name) => [{ role: 'workflow', workflowId: `bench:signal:${name}` }],
    },
    {
      id: 'bare-update',
      label: 'bare update (validated) → waiting workflow resumes, answers',
      side: 'bare',
      pair: 'update',
      async prepare(name) {
        const handle = await startWaiting(baselineUpdateWorkflow, `bench:update:${name}`);
        return () =>
          timed(async () => {
            const answer = await handle.executeUpdate(baselineResumeUpdate, { args: [{ sentAtMs: Date.now() }] });
            if (!answer.resumed) throw new Error(`${handle.workflowId} answered ${JSON.stringify(answer)}`);
          });
      },
      workflows: (name) => [{ role: 'workflow', workflowId: `bench:update:${name}` }],
    },
    {
      id: 'retrysafe-confirmation',
      label: 'retrysafe confirmation (signed approval → resumed)',
      side: 'retrysafe',
      pair: 'signal',
      async prepare(name) {
        const snap = await ctx.retrysafe.claimAction(
          { tenant: 'bench', eventId: name },
          { operation: 'charge', ...chargeFor(name, CONFIRMED_AMOUNT_CENTS) },
        );
        const state = await waitForActionStatus(
          client,
          snap.key,
          ['awaiting_confirmation', 'dispatching', 'confirmed', 'failed', 'needs_review'],
          AbortSignal.timeout(SETUP_TIMEOUT_MS),
        );
        if (state?.status !== 'awaiting_confirmation') {
          throw new LegUnavailable(
            `a ${CONFIRMED_AMOUNT_CENTS}-cent charge went to ${state?.status ?? 'nothing'} instead of awaiting_confirmation: ` +
              'no confirmation path in workflows/',
          );
        }
        return async () => {
          const ms = await timed(async () => {
            const outcome = await ctx.approver.approve(client, snap.key, snap.requestHash);
            if (outcome.decision !== 'approve') throw new Error(`approval of ${snap.key} answered ${outcome.decision}`);
          });
          // Untimed: the approved charge runs to its outcome before this slot times its next approval. The bare
          // signal's workflow does nothing after its signal; without this, each sequential approval would also pay
          // for the previous one's charge, settle and completion running beside it.
          await chargeSettled(client, snap.key);
          return ms;
        };
      },
      workflows: (name) => [
        {
          role: 'action',
          workflowId: actionKeyForStep(runWorkflowId('bench', name), { operation: 'charge', version: 1 }),
        },
      ],
    },
  ];
}
