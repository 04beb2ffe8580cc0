import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { startSandboxProviders, type ProviderKind, type SandboxProvider } from '../../examples/sandbox-providers/spawn';
import { PROVIDER_KINDS } from '../../examples/sandbox-providers/types';
import { sandboxUrlsToEnv } from '../../examples/sandbox-env';
import { exampleRegistry } from '../../examples/tools';
import { DEFAULT_TASK_QUEUE } from '../../workers/config';
import { ExampleClient } from '../../examples/client';
import { createWebhookRouter, startWebhookServer } from '../../workers/webhook-router';
import { startDevServer, type DevServer } from './dev-server';
import { spawnWorker, type SpawnWorkerOptions, type WorkerProcess } from './worker-process';
import { writeWorkflowBundle } from './workflow-bundle';

/**
 * Everything retrysafe needs on one machine, as real processes: the Temporal dev server (SQLite), the
 * sandbox providers, and worker processes that can be SIGKILLed. Shared by `npm start`, the
 * integration tests, the chaos harness and the benchmark.
 */
export interface Stack {
  server: DevServer;
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
  /** Environment a worker process needs to join this stack. */
  workerEnv: Record<string, string>;
  startWorker(opts?: Omit<SpawnWorkerOptions, 'env'> & { env?: Record<string, string> }): Promise<WorkerProcess>;
  workers: WorkerProcess[];
  stop(): Promise<void>;
}

export interface StackOptions {
  /** Persistent SQLite file (npm start); a temporary one when absent (tests). */
  dbFile?: string;
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
}

export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  const log = opts.log ?? (() => undefined);
  const tmp = opts.dbFile ? undefined : await mkdtemp(path.join(os.tmpdir(), 'retrysafe-'));
  const cleanups: Array<() => Promise<unknown>> = [];
  try {
    const [server, providers, bundle] = await Promise.all([
      startDevServer({
        dbFile: opts.dbFile ?? path.join(tmp!, 'temporal.sqlite'),
        port: opts.port ?? 0,
        uiPort: opts.uiPort === undefined ? null : opts.uiPort,
        log,
      }),
      startSandboxProviders(opts.providerKinds, { readLagMs: opts.readLagMs, startTimeoutMs: 30_000 }),
      writeWorkflowBundle(tmp ? path.join(tmp, 'bundle') : undefined, opts.worker?.workflowsPath),
    ]);
    cleanups.push(
      () => server.stop(),
      () => providers.stopAll(),
    );
    const connection = await Connection.connect({ address: server.address });
    cleanups.unshift(() => connection.close());
    const client = new Client({ connection, namespace: server.namespace });
    // Random signing secrets per run, configured on both sides: each provider signs, the router verifies.
    const webhookSecrets = Object.fromEntries(
      PROVIDER_KINDS.map((kind) => [kind, [`whsec_${randomBytes(24).toString('hex')}`]]),
    ) as Record<ProviderKind, string[]>;
    const webhooks = await startWebhookServer(createWebhookRouter({ client, secrets: webhookSecrets }));
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
    const taskQueue = opts.taskQueue ?? DEFAULT_TASK_QUEUE;
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
      ...sandboxUrlsToEnv(urls),
    };
    const workers: WorkerProcess[] = [];
    const stack: Stack = {
      server,
      providers,
      connection,
      client,
      retrysafe: new ExampleClient(client, { taskQueue, tools: exampleRegistry(urls) }),
      taskQueue,
      webhookBaseUrl: webhooks.url,
      webhookSecrets,
      webhookConfig,
      workerEnv,
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
