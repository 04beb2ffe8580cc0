import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { startSandboxProviders, type ProviderKind, type SandboxProvider } from '../../examples/sandbox-providers/spawn';
import { PROVIDER_KINDS } from '../../examples/sandbox-providers/types';
import { sandboxUrlsToEnv } from '../../examples/sandbox-env';
import { exampleRegistry } from '../../examples/tools';
import { ExampleClient } from '../../examples/client';
import { startDevServer } from '../../cli/dev/dev-server';
import { startCluster, type TemporalCluster } from './temporal-cluster';
import { spawnWorker, type SpawnWorkerOptions, type WorkerProcess } from './worker-process';
import { writeWorkflowBundle } from './workflow-bundle';
import { DEFAULT_TASK_QUEUE } from 'retrysafe';
import {
  type ActionLedger,
  createWebhookRouter,
  dataConverterFromEnv,
  generatePayloadKeysFile,
  ledgerChoiceFromEnv,
  openLedger,
  startWebhookServer,
} from 'retrysafe/worker';
import { PAYLOAD_KEYS_ENV, PAYLOAD_KEYS_FILE_ENV, payloadKeysFileEnv } from '../../codec/codec-config';
import { closeConnection } from './close-connection';

/** Which Temporal a stack runs on: the CLI's dev server (SQLite, one process) or the real server as a cluster. */
export const STACK_TEMPORAL_TARGETS = ['dev-server', 'cluster'] as const;
export type StackTemporalTarget = (typeof STACK_TEMPORAL_TARGETS)[number];
/** Sets the default target of every stack this process starts (`npm run test:cluster` sets it to `cluster`). */
export const STACK_TEMPORAL_ENV = 'RETRYSAFE_STACK_TEMPORAL';

/** The Temporal server a stack runs on, whichever target it is. */
export interface StackServer {
  /** gRPC frontend, `127.0.0.1:<port>`. */
  address: string;
  namespace: string;
  /** Web UI base URL; undefined when headless or on the cluster. */
  uiUrl?: string;
  /** The dev server's SQLite file; undefined on the cluster (its state is in PostgreSQL). */
  dbFile?: string;
  stop(): Promise<void>;
  /** Stops and starts the server again on the same state and ports; a rolling restart of every service on the cluster. */
  restart(): Promise<void>;
}

/**
 * Everything retrysafe needs on one machine, as real processes: Temporal (the dev server on SQLite, or the real
 * server's services on PostgreSQL), the sandbox providers, and worker processes that can be SIGKILLed. Shared by
 * `npm start`, the integration tests, the chaos harness and the benchmark.
 */
export interface Stack {
  server: StackServer;
  /** The cluster's services and database, when the stack runs on the cluster (to kill and restart them). */
  cluster?: TemporalCluster;
  providers: Record<ProviderKind, SandboxProvider>;
  connection: Connection;
  client: Client;
  retrysafe: ExampleClient;
  taskQueue: string;
  /** The webhook router's base URL; each provider posts its signed events to `<base>/<kind>`. */
  webhookBaseUrl: string;
  /** The router's signing secrets, by provider: random per stack, one each. */
  webhookSecrets: Record<ProviderKind, string[]>;
  /** What a provider process needs to post signed events to this stack's router (for `configure`). */
  webhookConfig(kind: ProviderKind): { webhookUrl: string; webhookSecret: string };
  /** The stack's handle on the durable ledger (StackOptions.ledger): each action's only record. */
  ledger: ActionLedger;
  /** Environment a worker process needs to join this stack (the payload key setting included). */
  workerEnv: Record<string, string>;
  /** The payload codecs the stack's client and workers use; undefined when payloads are plain. */
  dataConverter?: DataConverter;
  /** The key file the stack's client and workers read, when the stack chose one (`payloadEncryption`). */
  payloadKeysFile?: string;
  startWorker(opts?: Omit<SpawnWorkerOptions, 'env'> & { env?: Record<string, string> }): Promise<WorkerProcess>;
  workers: WorkerProcess[];
  stop(): Promise<void>;
}

export interface StackOptions {
  /**
   * The Temporal to run on; default what RETRYSAFE_STACK_TEMPORAL says, else `dev-server`. `cluster` starts the real
   * server (scripts/lib/temporal-cluster.ts) in a throw-away folder; it has no Web UI and takes no `dbFile` or ports.
   */
  temporal?: StackTemporalTarget;
  /** Persistent SQLite file; a temporary one when absent (tests). */
  dbFile?: string;
  /**
   * A Temporal server already running (`npm start`'s, from the dev stack): the stack runs on it and leaves it
   * running when it stops.
   */
  existingServer?: StackServer;
  port?: number;
  uiPort?: number | null;
  taskQueue?: string;
  providerKinds?: ProviderKind[];
  readLagMs?: number;
  log?: (msg: string) => void;
  /** Another worker module and its workflows (tests that bring their own tools); the example worker when absent. */
  worker?: { entry: string; workflowsPath: string };
  /** Added to every worker's environment (approval keys, operator scopes, tenant policies). */
  workerEnv?: Record<string, string>;
  /**
   * Payload encryption at rest (codec/, docs/payload-encryption.md). The stack's own client, its webhook router and
   * every worker it spawns always use the same setting:
   * - absent: what the environment says (RETRYSAFE_PAYLOAD_KEYS_FILE / RETRYSAFE_PAYLOAD_KEYS of this process and
   *   `workerEnv`, which spawned workers inherit anyway); plain payloads when neither is set. Plain is the default
   *   for tests on purpose: recorded replay histories, history-inspecting tests and helper processes that are
   *   given only TEMPORAL_ADDRESS keep working unchanged.
   * - `{ keysFile }`: that key file, created with one fresh key (mode 0600) when it does not exist yet.
   * - `{}`: a fresh key file in the stack's temporary folder, gone with it; refused with `dbFile`, whose data would
   *   be unreadable on the next start.
   * - `false`: plain payloads, even when the environment names keys.
   */
  payloadEncryption?: false | { keysFile?: string };
  /** More dynamic config for the dev server (ignored on the cluster target). */
  devServerDynamicConfig?: Record<string, number | string | boolean>;
  /** The codec server the Web UI decodes through (`--ui-codec-endpoint`, e.g. `http://127.0.0.1:4180/codec`). */
  uiCodecEndpoint?: string;
  /**
   * The durable action ledger, as RETRYSAFE_LEDGER spells it (`sqlite:<file>` or `postgres://…`): every worker
   * the stack spawns writes it, and the stack's client claims and reads through it. By default a SQLite file in a
   * throw-away folder.
   */
  ledger?: string;
  /**
   * On the cluster target: the ledger lives in a database of the cluster's own PostgreSQL (so a kill of that server
   * hits the ledger too), instead of `ledger`.
   */
  ledgerOnClusterPostgres?: boolean;
}

export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  const log = opts.log ?? (() => undefined);
  const target = stackTemporalTarget(opts);
  const tmp = opts.dbFile || opts.existingServer ? undefined : await mkdtemp(path.join(os.tmpdir(), 'retrysafe-'));
  const cleanups: Array<() => Promise<unknown>> = [];
  try {
    const keys = await payloadKeysFor(opts, tmp);
    // Started together; when one fails, the others that came up are stopped before the error is thrown.
    const [serverResult, providersResult, bundleResult] = await Promise.allSettled([
      opts.existingServer
        ? Promise.resolve({ ...opts.existingServer, stop: async () => undefined })
        : target === 'cluster'
          ? startCluster({ log })
          : startDevServer({
              dbFile: opts.dbFile ?? path.join(tmp!, 'temporal.sqlite'),
              port: opts.port ?? 0,
              uiPort: opts.uiPort === undefined ? null : opts.uiPort,
              ...(opts.uiCodecEndpoint !== undefined ? { uiCodecEndpoint: opts.uiCodecEndpoint } : {}),
              ...(opts.devServerDynamicConfig ? { dynamicConfig: opts.devServerDynamicConfig } : {}),
              log,
            }),
      startSandboxProviders(opts.providerKinds, { readLagMs: opts.readLagMs, startTimeoutMs: 30_000 }),
      writeWorkflowBundle(tmp ? path.join(tmp, 'bundle') : undefined, opts.worker?.workflowsPath),
    ]);
    if (serverResult.status === 'fulfilled') cleanups.push(() => serverResult.value.stop());
    if (providersResult.status === 'fulfilled') cleanups.push(() => providersResult.value.stopAll());
    const server = settledValue(serverResult);
    const providers = settledValue(providersResult);
    const bundle = settledValue(bundleResult);
    const connection = await Connection.connect({ address: server.address });
    cleanups.unshift(() => closeConnection(connection));
    const client = new Client({
      connection,
      namespace: server.namespace,
      ...(keys.dataConverter ? { dataConverter: keys.dataConverter } : {}),
    });
    // Random signing secrets per run, configured on both sides: each provider signs, the router verifies.
    const webhookSecrets = Object.fromEntries(
      PROVIDER_KINDS.map((kind) => [kind, [`whsec_${randomBytes(24).toString('hex')}`]]),
    ) as Record<ProviderKind, string[]>;
    const taskQueue = opts.taskQueue ?? DEFAULT_TASK_QUEUE;
    let ledgerSpec =
      opts.ledgerOnClusterPostgres && target === 'cluster'
        ? await (server as TemporalCluster).postgres.createDatabase('retrysafe_ledger')
        : opts.ledger;
    const ledgerDir = ledgerSpec === undefined ? await mkdtemp(path.join(os.tmpdir(), 'retrysafe-ledger-')) : undefined;
    if (ledgerDir) ledgerSpec = `sqlite:${path.join(ledgerDir, 'ledger.sqlite')}`;
    const ledger = await openLedger(ledgerChoiceFromEnv({ RETRYSAFE_LEDGER: ledgerSpec }));
    cleanups.push(() => ledger.close());
    // Clients this process builds without a ledger of their own read the stack's, as a deployment's share its
    // RETRYSAFE_LEDGER with the workers (a test file runs in a process of its own).
    process.env.RETRYSAFE_LEDGER ??= ledgerSpec;
    if (ledgerDir) cleanups.push(() => rm(ledgerDir, { recursive: true, force: true }));
    // The router reads the workers' ledger: an event for an action without a workflow waits for its row.
    const webhooks = await startWebhookServer(createWebhookRouter({ client, secrets: webhookSecrets, ledger }));
    cleanups.unshift(() => webhooks.close());
    const webhookConfig = (kind: ProviderKind) => ({
      webhookUrl: webhooks.urlFor(kind),
      webhookSecret: webhookSecrets[kind][0],
    });
    await Promise.all(
      Object.values(providers)
        .filter((p): p is SandboxProvider => typeof p === 'object')
        .map((p) => p.configure(webhookConfig(p.kind))),
    );
    const urls = Object.fromEntries(
      (['payments', 'email', 'tickets', 'inventory', 'shipping'] as const).map((k) => [
        k,
        providers[k]?.url ?? 'http://127.0.0.1:9',
      ]),
    ) as Record<ProviderKind, string>;
    const workerEnv = {
      TEMPORAL_ADDRESS: server.address,
      TEMPORAL_NAMESPACE: server.namespace,
      RETRYSAFE_TASK_QUEUE: taskQueue,
      RETRYSAFE_WORKFLOW_BUNDLE: bundle,
      ...(opts.workerEnv ?? {}),
      ...keys.workerEnv,
      RETRYSAFE_LEDGER: ledgerSpec!,
      ...sandboxUrlsToEnv(urls),
    };
    const workers: WorkerProcess[] = [];
    const stack: Stack = {
      server,
      ...(target === 'cluster' ? { cluster: server as TemporalCluster } : {}),
      providers,
      connection,
      client,
      retrysafe: new ExampleClient(client, { taskQueue, tools: exampleRegistry(urls), ledger }),
      ledger,
      taskQueue,
      webhookBaseUrl: webhooks.url,
      webhookSecrets,
      webhookConfig,
      workerEnv,
      ...(keys.dataConverter ? { dataConverter: keys.dataConverter } : {}),
      ...(keys.file ? { payloadKeysFile: keys.file } : {}),
      workers,
      async startWorker(w = {}) {
        const worker = await spawnWorker({
          ...(opts.worker ? { entry: opts.worker.entry } : {}),
          ...w,
          env: { ...workerEnv, ...(w.env ?? {}) },
          name: w.name ?? `worker-${workers.length + 1}`,
        });
        workers.push(worker);
        return worker;
      },
      async stop() {
        await Promise.all(workers.map((w) => w.kill('SIGKILL')));
        for (const cleanup of cleanups) await cleanup().catch(() => undefined);
        if (tmp) await rm(tmp, { recursive: true, force: true });
      },
    };
    return stack;
  } catch (err) {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
    if (tmp) await rm(tmp, { recursive: true, force: true });
    throw err;
  }
}

function settledValue<T>(result: PromiseSettledResult<T>): T {
  if (result.status === 'rejected') throw result.reason;
  return result.value;
}

/** The target asked for, or the environment's, checked against what the target can do. */
function stackTemporalTarget(opts: StackOptions): StackTemporalTarget {
  const fromEnv = process.env[STACK_TEMPORAL_ENV];
  const target = opts.temporal ?? (fromEnv === undefined || fromEnv === '' ? 'dev-server' : fromEnv);
  if (!(STACK_TEMPORAL_TARGETS as readonly string[]).includes(target)) {
    throw new Error(
      `startStack: ${STACK_TEMPORAL_ENV}=${target} is not a Temporal target; use ${STACK_TEMPORAL_TARGETS.join(' or ')}`,
    );
  }
  if (target === 'cluster') {
    const unsupported: string[] = (['dbFile', 'port', 'uiCodecEndpoint'] as const).filter((f) => opts[f] !== undefined);
    if (opts.uiPort !== undefined && opts.uiPort !== null) unsupported.push('uiPort');
    if (unsupported.length > 0) {
      throw new Error(
        `startStack: the cluster target takes no ${unsupported.join(', ')} (it runs in a throw-away folder)`,
      );
    }
  }
  return target as StackTemporalTarget;
}

/** The stack's payload key setting: the data converter for its client, and what its workers' environment needs. */
async function payloadKeysFor(
  opts: StackOptions,
  tmp: string | undefined,
): Promise<{ dataConverter?: DataConverter; workerEnv: Record<string, string>; file?: string }> {
  const setting = opts.payloadEncryption;
  if (setting === undefined) {
    const dataConverter = dataConverterFromEnv({ ...process.env, ...(opts.workerEnv ?? {}) });
    return { ...(dataConverter ? { dataConverter } : {}), workerEnv: {} };
  }
  if (setting === false) return { workerEnv: { [PAYLOAD_KEYS_FILE_ENV]: '', [PAYLOAD_KEYS_ENV]: '' } };
  if (setting.keysFile === undefined && tmp === undefined) {
    throw new Error(
      'startStack: payloadEncryption needs a keysFile with a persistent dbFile; a temporary key would leave the ' +
        'database unreadable on the next start',
    );
  }
  const { path: file } = await generatePayloadKeysFile(setting.keysFile ?? path.join(tmp!, 'payload-keys.json'));
  const workerEnv = payloadKeysFileEnv(file);
  return { dataConverter: dataConverterFromEnv(workerEnv)!, workerEnv, file };
}
