/**
 * What `retrysafe dev` runs for a team's own worker (and the repository's demo): everything but the worker.
 *
 *   the Temporal dev server ─ SQLite in <dir>/temporal.sqlite, retrysafe's search attributes, its Web UI
 *   the approval service   ─ the signing key, a local operator and its token, the approval page, the codec endpoint
 *   the stack's state      ─ payload keys, the ledger, operators, all in <dir>, made on first start and kept
 *   its metrics            ─ the address its worker serves Prometheus metrics on (RETRYSAFE_METRICS_ADDRESS)
 *   its settings           ─ declared in the namespace's data (workers and clients check theirs against them) and
 *                            written to <dir>/dev.env and <dir>/stack.json (how the tools for people find it)
 *
 * Ports default to Temporal's and the approval service's usual ones; 0 takes any free port.
 */
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { declareStackSettings } from '../../client/stack-settings';
import type { AesGcmPayloadCodec } from '../../codec/aes-gcm-codec';
import { generatePayloadKeysFile, payloadCodecFromEnv, payloadKeysFileEnv } from '../../codec/codec-config';
import { ledgerConfigFromEnv, openLedger } from '../../ledger';
import { DEFAULT_TASK_QUEUE } from '../../messages/action';
import { startApprovalServer, type ApprovalServer } from '../approvals/approval-http';
import { createApprovalSigner, loadOperatorsFile } from '../approvals/approval-signer';
import { startDevServer, type DevServer } from './dev-server';
import { getFreePort } from './free-port';
import { ensureDemoOperator, type DemoOperator } from './local-operator';
import { writeStackFiles, type StackFile } from './stack-file';
import { writeFile } from 'node:fs/promises';

/** Where a dev stack keeps its state, its ports, namespace and task queue, and whether payloads are encrypted. */
export interface DevStackOptions {
  /** The stack's folder: state and settings; default `.retrysafe` in the working directory. */
  dir?: string;
  /** The dev server's SQLite file; default `<dir>/temporal.sqlite`. */
  dbFile?: string;
  /** Temporal's gRPC port; default 7233, 0 for any free port. */
  port?: number;
  /** The Web UI's port; default 8233, 0 for any free port, null for none. */
  uiPort?: number | null;
  /** The approval service's port; default 4180, 0 for any free port. */
  approvalsPort?: number;
  /**
   * Where the stack's worker serves Prometheus metrics (RETRYSAFE_METRICS_ADDRESS on 127.0.0.1): a port, 0 for any
   * free port; none when absent or null (`retrysafe dev` defaults to 9464).
   */
  metricsPort?: number | null;
  namespace?: string;
  taskQueue?: string;
  /** Encrypt payloads at rest with a key kept in the folder (default true). */
  encryption?: boolean;
  /** Where the Temporal CLI is installed when none is found; default `.retrysafe/tools` (`.tools` in this repo). */
  toolsDir?: string;
  /** More settings to write into dev.env and stack.json (the demo's provider URLs). */
  extraEnv?: Record<string, string>;
  /** Where progress lines go; nothing is printed without it. */
  log?: (line: string) => void;
}

/** A running dev stack: its servers, its operator, the settings its workers and clients load, and how to stop it. */
export interface DevStack {
  dir: string;
  server: DevServer;
  approvals: ApprovalServer;
  client: Client;
  /** The local operator (every tenant, every role) and its token file. */
  operator: DemoOperator;
  /** What a worker and a client of this stack need, as environment variables (also in `settingsFile`). */
  env: Record<string, string>;
  settingsFile: string;
  /** The worker's metrics endpoint (`http://127.0.0.1:<port>/metrics`), when the stack has one. */
  metricsUrl?: string;
  /** What stack.json holds while it runs (write it again with writeStackFiles to add to it). */
  stackFile: StackFile;
  /** Stops the approval service and the dev server and removes stack.json; the state in `dir` is kept. Idempotent. */
  stop(): Promise<void>;
}

export const DEFAULT_APPROVALS_PORT = 4180;
/** The port `retrysafe dev` gives the worker's metrics endpoint: the OpenTelemetry Prometheus default. */
export const DEFAULT_METRICS_PORT = 9464;
export const LOCAL_PAYLOAD_KEYS_FILE_NAME = 'payload-keys.json';
export const LOCAL_LEDGER_FILE_NAME = 'ledger.sqlite';
export const APPROVAL_PUBLIC_KEYS_FILE_NAME = 'approval-public-keys.json';

/**
 * Starts the dev server, the approval service and the stack's state in `opts.dir` (see the module comment), declares
 * its settings and writes them to dev.env and stack.json. Throws, having stopped what it started, when a part fails.
 */
export async function startDevStack(opts: DevStackOptions = {}): Promise<DevStack> {
  const log = opts.log ?? (() => undefined);
  const dir = path.resolve(opts.dir ?? '.retrysafe');
  const namespace = opts.namespace ?? 'default';
  const state = await prepareStackState(dir, opts.encryption !== false);
  const ports = await choosePorts(opts);
  const server = await startStackDevServer(opts, { dir, namespace, state, ports, log });
  // Stopped in the reverse order of their start: the last one started is the first one in the list.
  const cleanups: Array<() => Promise<unknown>> = [() => server.stop()];
  const stopAll = async () => {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  };
  try {
    const connection = await Connection.connect({ address: server.address });
    cleanups.unshift(() => connection.close());
    const codec = state.keysFile ? payloadCodecFromEnv(payloadKeysFileEnv(state.keysFile)) : undefined;
    const client = new Client({
      connection,
      namespace,
      ...(codec ? { dataConverter: { payloadCodecs: [codec] } } : {}),
    });
    const approvals = await startStackApprovals(state.operator, ports.approvalsPort, {
      server,
      client,
      namespace,
      codec,
      log,
    });
    cleanups.unshift(() => approvals.close());

    // Declared where every worker and client of this stack reads them: one that disagrees says so at start.
    await declareStackSettings(connection.workflowService, namespace, {
      ...(codec ? { payloadKeyIds: codec.keyIds.known } : {}),
      approvalKeyIds: [state.operator.signingKey.keyId],
      ledger: 'sqlite',
    });
    const env = stackEnv(state, { server, approvals, namespace, ports, opts });
    const stackFile: StackFile = {
      pid: process.pid,
      startedAt: new Date().toISOString(),
      env,
      ...(server.uiUrl ? { webUiUrl: server.uiUrl } : {}),
      approvalsUrl: approvals.url,
    };
    cleanups.unshift(await writeStackFiles(dir, stackFile));
    let stopped: Promise<void> | undefined;
    return {
      dir,
      server,
      approvals,
      client,
      operator: state.operator,
      env,
      settingsFile: path.join(dir, 'dev.env'),
      ...(ports.metricsAddress ? { metricsUrl: `http://${ports.metricsAddress}/metrics` } : {}),
      stackFile,
      stop: () => (stopped ??= stopAll()),
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/** The stack's state in its folder: the operator and its keys, the payload keys, the ledger. */
interface StackState {
  operator: DemoOperator;
  publicKeysFile: string;
  /** The payload keys file; absent when payloads stay plain. */
  keysFile?: string;
  ledgerUrl: string;
}

/** Makes the stack's state in `dir` on its first start and keeps it on the next ones. */
async function prepareStackState(dir: string, encryption: boolean): Promise<StackState> {
  const operator = await ensureDemoOperator(dir);
  const publicKeysFile = path.join(dir, APPROVAL_PUBLIC_KEYS_FILE_NAME);
  await writeFile(
    publicKeysFile,
    `${JSON.stringify({ [operator.signingKey.keyId]: operator.signingKey.publicKey }, null, 2)}\n`,
  );
  const keysFile = encryption
    ? (await generatePayloadKeysFile(path.join(dir, LOCAL_PAYLOAD_KEYS_FILE_NAME))).path
    : undefined;
  const ledgerUrl = `sqlite:${path.join(dir, LOCAL_LEDGER_FILE_NAME)}`;
  // Made (or migrated) now, so that the tools for people can read it before any worker has started.
  await (await openLedger(ledgerConfigFromEnv({ RETRYSAFE_LEDGER: ledgerUrl })!)).close();
  return { operator, publicKeysFile, ...(keysFile ? { keysFile } : {}), ledgerUrl };
}

interface StackPorts {
  approvalsPort: number;
  uiPort: number | null;
  /** `127.0.0.1:<port>` where the worker serves its metrics; absent for none. */
  metricsAddress?: string;
}

/**
 * The ports known before the dev server starts: the Web UI decodes payloads through the approval service's /codec,
 * so that address is needed first. 0 takes a free port now.
 */
async function choosePorts(opts: DevStackOptions): Promise<StackPorts> {
  const approvalsPort = opts.approvalsPort === 0 ? await getFreePort() : (opts.approvalsPort ?? DEFAULT_APPROVALS_PORT);
  const uiPort = opts.uiPort === undefined ? 8233 : opts.uiPort;
  const metricsPort = opts.metricsPort === 0 ? await getFreePort() : opts.metricsPort;
  const metricsAddress = metricsPort === undefined || metricsPort === null ? undefined : `127.0.0.1:${metricsPort}`;
  return { approvalsPort, uiPort, ...(metricsAddress ? { metricsAddress } : {}) };
}

/** The Temporal dev server with its SQLite file in the stack's folder; its Web UI decodes through /codec. */
function startStackDevServer(
  opts: DevStackOptions,
  stack: { dir: string; namespace: string; state: StackState; ports: StackPorts; log: (line: string) => void },
): Promise<DevServer> {
  const { dir, namespace, state, ports, log } = stack;
  return startDevServer({
    dbFile: opts.dbFile ?? path.join(dir, 'temporal.sqlite'),
    port: opts.port ?? 7233,
    uiPort: ports.uiPort,
    namespace,
    ...(opts.toolsDir ? { toolsDir: opts.toolsDir } : {}),
    ...(state.keysFile && ports.uiPort !== null
      ? { uiCodecEndpoint: `http://127.0.0.1:${ports.approvalsPort}/codec` }
      : {}),
    log,
  });
}

/** The approval service for the local operator, with the approval page and, when payloads are encrypted, /codec. */
async function startStackApprovals(
  operator: DemoOperator,
  port: number,
  stack: {
    server: DevServer;
    client: Client;
    namespace: string;
    codec: AesGcmPayloadCodec | undefined;
    log: (line: string) => void;
  },
): Promise<ApprovalServer> {
  const { server, client, namespace, codec, log } = stack;
  const operators = await loadOperatorsFile(operator.operatorsFile);
  return startApprovalServer(
    createApprovalSigner({
      privateKeyHex: operator.signingKey.privateKey,
      keyId: operator.signingKey.keyId,
      operators,
      // An operator added while it runs counts at once: the service re-reads the file when it changes.
      operatorsFile: operator.operatorsFile,
      onReloadError: (message) => log(`approval service: ${message}`),
    }),
    {
      port,
      // The session cookie belongs to 127.0.0.1, so the Web UI's origin is that one only.
      ...(codec && server.uiUrl ? { codec: { codec, allowedOrigins: [new URL(server.uiUrl).origin] } } : {}),
      temporal: { client, namespace, ...(server.uiUrl ? { webUiUrl: server.uiUrl } : {}) },
    },
  ).catch((err: unknown) => {
    throw new Error(
      `cannot start the approval service on port ${port}: ${(err as Error).message}; another stack may be ` +
        'running: pass --approvals-port 0 for any free port',
    );
  });
}

/** What a worker and a client of this stack need, as environment variables. */
function stackEnv(
  state: StackState,
  stack: { server: DevServer; approvals: ApprovalServer; namespace: string; ports: StackPorts; opts: DevStackOptions },
): Record<string, string> {
  const { server, approvals, namespace, ports, opts } = stack;
  return {
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: namespace,
    RETRYSAFE_TASK_QUEUE: opts.taskQueue ?? DEFAULT_TASK_QUEUE,
    ...(state.keysFile ? { RETRYSAFE_PAYLOAD_KEYS_FILE: state.keysFile } : {}),
    RETRYSAFE_APPROVAL_PUBLIC_KEYS_FILE: state.publicKeysFile,
    RETRYSAFE_OPERATORS_FILE: state.operator.operatorsFile,
    RETRYSAFE_LEDGER: state.ledgerUrl,
    RETRYSAFE_APPROVAL_URL: approvals.url,
    ...(ports.metricsAddress ? { RETRYSAFE_METRICS_ADDRESS: ports.metricsAddress } : {}),
    ...(server.uiUrl ? { RETRYSAFE_WEB_UI_URL: server.uiUrl } : {}),
    ...(opts.extraEnv ?? {}),
  };
}
