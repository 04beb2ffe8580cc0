/**
 * retrysafe as a Temporal worker plugin (SDK 1.24's `plugins`), for a team that adds it to the worker it already
 * has:
 *
 *   Worker.create({ connection, taskQueue, workflowsPath, activities, plugins: [retrysafePlugin({ tools, ledger })] })
 *
 * It adds the engine's activities beside the team's, the workflow sandbox's preloads to the bundle, the engine's
 * workflows when the worker names none, and a short sticky-queue timeout unless the worker sets its own; and
 * before the worker starts it checks the worker's settings against what its stack declares. The team's workflow
 * module exports the engine's workflows beside its own (`export { actionWorkflowV3 } from 'retrysafe/workflow'`).
 * Plugins are marked experimental in the SDK: createWorker is the same thing as a function.
 */
import { Client } from '@temporalio/client';
import { noopMetricMeter } from '@temporalio/common';
import {
  NativeConnection,
  Runtime,
  type BundlerPlugin,
  type WorkerOptions,
  type WorkerPlugin,
} from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../activities';
import { killAt, type CrashPoint, type CrashSpec } from '../activities/crash-points';
import { offsetLeaseClock } from '../activities/lease-clock';
import type { Planner } from '../activities/planners/planner';
import { checkStackSettings, payloadKeyIdsOf } from '../client/stack-settings';
import type { ActionLedger } from '../ledger';
import type { OperatorScopes } from '../policies/signed-decision';
import type { TenantPolicyConfig } from '../policies/tenant-policy';
import type { AnyTool } from '../policies/tool';
import { createToolRegistry, type ToolRegistry } from '../policies/tool-registry';
import { withEnginePreloads } from './workflow-preload';
import { createRetrysafeMetrics } from '../metrics/instruments';
import { pollLedgerGauges, type EscalationWindows } from '../metrics/ledger-gauges';
import { DEFAULT_SWEEP_EVERY_MS, sweepRowsEvery, type RowSweepDeps } from './row-sweeper';

/**
 * After a SIGKILL, the dead worker's workflow tasks wait out the sticky queue's schedule-to-start timeout before
 * going to the normal queue: 2 s keeps recovery inside seconds.
 */
export const STICKY_QUEUE_SCHEDULE_TO_START_TIMEOUT = '2s';

/** What retrysafePlugin adds to a worker: the tools, and the trust, policies and ledger that guard them. */
export interface RetrysafePluginOptions {
  /** The tools this worker runs: the only place the engine learns of them. A malformed tool stops the worker. */
  tools: readonly AnyTool[] | ToolRegistry;
  /**
   * The durable action ledger (ledger/; `openLedger(ledgerChoiceFromEnv())`), required: each action's row is its only
   * record. Runs act on it, action workflows take it over before they act, and the worker sweeps for rows left by
   * runs that ended (workers/row-sweeper.ts).
   */
  ledger: ActionLedger;
  /** How often the worker sweeps the ledger for rows left by runs that ended; 30 s by default, `false` never. */
  sweepEveryMs?: number | false;
  /** Key id → hex Ed25519 public key of the approval service(s) whose signatures this worker trusts. */
  trustedApprovalKeys?: Record<string, string>;
  /** Operators' tenants and roles, or a reader called on every policy load (the operators file). */
  operatorScopes?: OperatorScopes | (() => Promise<OperatorScopes>);
  tenantPolicies?: TenantPolicyConfig;
  /** The model (or script) agent runs plan with. */
  planner?: Planner;
  /** Crash injection (retrysafe/testing): the worker SIGKILLs itself at these points. */
  crashAt?: CrashSpec[];
  /** Called just before a crash point SIGKILLs the worker. */
  onCrash?: (point: CrashPoint, operation: string) => void;
  /**
   * Fault injection: this worker writes and judges row leases as if its clock ran this many ms ahead (negative:
   * behind), so it takes rows over early or late; every write and send stays fenced by the row's epoch.
   */
  leaseClockOffsetMs?: number;
  /**
   * retrysafe's metrics (metrics/instruments.ts) go to the Temporal Runtime's meter, so they are exported wherever
   * the process's `Runtime.install({ telemetryOptions: { metrics } })` sends Temporal's own, and nowhere when it
   * sends none. With a ledger, the worker also reads it every `ledgerPollMs` for the open-action gauges. `false`
   * records nothing.
   */
  metrics?: false | RetrysafeMetricsOptions;
}

/** How a worker reports the actions still waiting (metrics/ledger-gauges.ts). */
export interface RetrysafeMetricsOptions {
  /** How long an action may stay unresolved before the alert pages, per tenant (`*` for the rest); 24 h by default. */
  escalationWindows?: EscalationWindows;
  /** How often the open-action gauges are read from the ledger; 10 s by default. */
  ledgerPollMs?: number;
}

/**
 * retrysafe as a Temporal worker plugin (see the module comment). Checks the worker's settings against its stack's when
 * the worker is created, throwing StackSettingsMismatch naming the setting.
 */
export function retrysafePlugin(options: RetrysafePluginOptions): WorkerPlugin & BundlerPlugin {
  const ledger = options.ledger as ActionLedger | string | undefined;
  if (ledger === undefined || typeof ledger === 'string') {
    throw new TypeError(
      `retrysafePlugin: \`ledger\` must be an ActionLedger (openLedger(ledgerChoiceFromEnv())), not ${String(ledger)}: ` +
        "each action's ledger row is its only record. RETRYSAFE_LEDGER=sqlite:<file> for workers on one machine, " +
        'postgres://user@host:port/database for several',
    );
  }
  const tools =
    'parseIntent' in options.tools ? options.tools : createToolRegistry(options.tools as readonly AnyTool[]);
  // The Runtime's meter is a no-op unless the process installed a metrics exporter: then nothing is counted.
  const meter = () => (options.metrics === false ? noopMetricMeter : Runtime.instance().metricMeter);
  let metrics: ReturnType<typeof createRetrysafeMetrics> | undefined;
  let sweeper: RowSweepDeps | undefined;
  return {
    name: 'retrysafe',
    async configureWorker(worker: WorkerOptions): Promise<WorkerOptions> {
      const connection = worker.connection ?? (await NativeConnection.connect());
      const namespace = worker.namespace ?? 'default';
      const trustedApprovalKeys = options.trustedApprovalKeys ?? {};
      // Before anything polls: a worker that cannot read the stack's payloads, trusts none of its approval keys or
      // lacks the ledger it keeps says so now, naming the setting (StackSettingsMismatch).
      await checkStackSettings(connection.workflowService, namespace, {
        role: 'worker',
        payloadKeyIds: payloadKeyIdsOf(worker.dataConverter),
        approvalKeyIds: Object.keys(trustedApprovalKeys),
        ledger: ledger.kind,
      });
      // NativeConnection is a ConnectionLike: the claim activity's client shares the worker's connection, and the
      // client interceptors given to the worker so far (OpenTelemetryPlugin's: a run's claim continues its trace).
      const client = new Client({
        connection,
        namespace,
        ...(worker.dataConverter ? { dataConverter: worker.dataConverter } : {}),
        ...(worker.interceptors?.client ? { interceptors: worker.interceptors.client } : {}),
      });
      const deps: ActivityDeps = {
        client,
        taskQueue: worker.taskQueue!,
        tools,
        crash: killAt(options.crashAt ?? [], options.onCrash),
        ...(options.leaseClockOffsetMs ? { leaseClock: offsetLeaseClock(options.leaseClockOffsetMs) } : {}),
        trustedApprovalKeys,
        ...(options.tenantPolicies ? { tenantPolicies: options.tenantPolicies } : {}),
        ...(options.operatorScopes ? { operatorScopes: options.operatorScopes } : {}),
        ...(options.planner ? { planner: options.planner } : {}),
        ledger,
      };
      if (meter() !== noopMetricMeter) deps.metrics = metrics = createRetrysafeMetrics(meter());
      sweeper = { ledger, client, taskQueue: worker.taskQueue!, tools };
      const namesWorkflows = worker.workflowsPath !== undefined || worker.workflowBundle !== undefined;
      return {
        stickyQueueScheduleToStartTimeout: STICKY_QUEUE_SCHEDULE_TO_START_TIMEOUT,
        ...worker,
        connection,
        namespace,
        ...(namesWorkflows ? {} : { workflowsPath: require.resolve('../workflows') }),
        ...(worker.workflowBundle ? {} : { bundlerOptions: withEnginePreloads(worker.bundlerOptions) }),
        activities: { ...(worker.activities ?? {}), ...createActivities(deps) },
      };
    },
    async runWorker(worker, next) {
      const logger = Runtime.instance().logger;
      const settings = options.metrics || {};
      const gauges =
        metrics && ledger
          ? pollLedgerGauges({
              ledger,
              metrics,
              ...(settings.escalationWindows ? { escalationWindows: settings.escalationWindows } : {}),
              ...(settings.ledgerPollMs ? { pollMs: settings.ledgerPollMs } : {}),
              onError: (err) => logger.warn('ledger gauges: the ledger could not be read', { error: err.message }),
            })
          : undefined;
      const sweeps =
        sweeper && options.sweepEveryMs !== false
          ? sweepRowsEvery({
              ...sweeper,
              everyMs: options.sweepEveryMs ?? DEFAULT_SWEEP_EVERY_MS,
              onSweep: (sweep) => {
                if (sweep.failed.length + sweep.handedOver.length + sweep.abandoned.length === 0) return;
                logger.warn('ledger sweep: rows left by runs that ended', { ...sweep });
              },
              onError: (err) => logger.warn('ledger sweep failed; the next one tries again', { error: err.message }),
            })
          : undefined;
      try {
        return await next(worker);
      } finally {
        await gauges?.stop();
        await sweeps?.stop();
      }
    },
    // For a bundle built ahead of time with bundleWorkflowCode({ plugins: [retrysafePlugin(…)] }).
    configureBundler: (bundle) => ({ ...bundle, ...withEnginePreloads(bundle) }),
  };
}
