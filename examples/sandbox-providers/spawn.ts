import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { FaultsRequest, InflightStatus, Ledger, ListeningLine, PROVIDER_KINDS, ProviderConfigPatch } from './types';
import type { Fault, ProviderKind } from './types';

export type { Fault, Ledger, ProviderKind } from './types';

/** A sandbox provider running in its own process, with its admin API wrapped. */
export interface SandboxProvider {
  kind: ProviderKind;
  url: string;
  pid: number;
  /** Appends faults (POST /admin/faults); they strike the next matching mutations. */
  setFaults(faults: Fault[]): Promise<void>;
  clearFaults(): Promise<void>;
  configure(cfg: ProviderConfigPatch): Promise<void>;
  ledger(): Promise<Ledger>;
  /** Clears records, requests, faults and dedupe keys; config stays. */
  reset(): Promise<void>;
  /** Polls /admin/inflight until the predicate holds; rejects after timeoutMs (default 5 s). */
  waitForInflight(predicate: (s: InflightStatus) => boolean, timeoutMs?: number): Promise<void>;
  /** SIGTERM, then waits for the process to exit (SIGKILL after 5 s). */
  stop(): Promise<void>;
}

export interface StartOptions {
  port?: number;
  readLagMs?: number;
  webhookUrl?: string;
  webhookDelayMs?: number;
  /** Signs the provider's webhooks (passed in its environment, not on its command line). */
  webhookSecret?: string;
  /**
   * How long the provider remembers an Idempotency-Key after its commit (null: for the process's life, the
   * default); set through the admin config before the provider is handed out. See ProviderConfig.
   */
  keyRetentionMs?: number | null;
  /** Appends the provider's stderr (pino JSON lines) here; otherwise it goes to this process's stderr. */
  logFile?: string;
  /** Defaults to 'info' with a log file and 'warn' without, so test output stays readable. */
  logLevel?: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Default 10 s; raise it on a loaded CI machine, where five cold tsx starts compete for CPU. */
  startTimeoutMs?: number;
}

export interface StartManyOptions extends Omit<StartOptions, 'port' | 'logFile'> {
  /** One `<kind>.log` per provider in this directory. */
  logDir?: string;
}

const REPO_ROOT = path.resolve(__dirname, '..');
const SERVER_ENTRY = path.join(__dirname, 'server.ts');
/** About 1 s per provider on an idle 2-CPU machine; the margin covers cold tsx caches and load. */
const START_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 5_000;
const INFLIGHT_POLL_MS = 10;
/** Enough of a failed provider's stderr to say why in the error message. */
const STDERR_TAIL_CHARS = 4_000;

export async function startSandboxProvider(kind: ProviderKind, opts: StartOptions = {}): Promise<SandboxProvider> {
  const args = ['--import', 'tsx', SERVER_ENTRY, '--kind', kind, '--port', String(opts.port ?? 0)];
  if (opts.readLagMs !== undefined) args.push('--read-lag-ms', String(opts.readLagMs));
  if (opts.webhookUrl !== undefined) args.push('--webhook-url', opts.webhookUrl);
  if (opts.webhookDelayMs !== undefined) args.push('--webhook-delay-ms', String(opts.webhookDelayMs));
  args.push('--log-level', opts.logLevel ?? (opts.logFile ? 'info' : 'warn'));

  // cwd is the repo root so `--import tsx` resolves from our node_modules; the IPC channel lets the
  // provider exit by itself if this process dies without stopping it.
  const env = {
    ...process.env,
    ...(opts.webhookSecret ? { RETRYSAFE_SANDBOX_WEBHOOK_SECRET: opts.webhookSecret } : {}),
  };
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  const logStream = opts.logFile ? createWriteStream(opts.logFile, { flags: 'a' }) : undefined;
  // A log file that fails (its folder removed, the disk full) must not throw in this process: the log is lost.
  logStream?.on('error', () => undefined);
  let stderrTail = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderrTail = (stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
    if (!logStream) process.stderr.write(chunk);
    else if (!logStream.writableEnded && !logStream.destroyed) logStream.write(chunk);
  });
  // 'close': the pipes have delivered their last chunk, which may come after 'exit'.
  child.once('close', () => void logStream?.end());

  let listening: ListeningLine;
  try {
    listening = await waitForListening(child, kind, () => stderrTail, opts.startTimeoutMs ?? START_TIMEOUT_MS);
  } catch (err) {
    await terminate(child);
    throw err;
  }
  const provider = adminClient(kind, listening.url, child);
  if (opts.keyRetentionMs !== undefined) {
    try {
      await provider.configure({ keyRetentionMs: opts.keyRetentionMs });
    } catch (err) {
      await terminate(child);
      throw err;
    }
  }
  return provider;
}

export async function startSandboxProviders<K extends ProviderKind = ProviderKind>(
  kinds: readonly K[] = PROVIDER_KINDS as readonly K[],
  opts: StartManyOptions = {},
): Promise<Record<K, SandboxProvider> & { stopAll(): Promise<void> }> {
  const { logDir, ...rest } = opts;
  const started = await Promise.allSettled(
    kinds.map((kind) =>
      startSandboxProvider(kind, { ...rest, ...(logDir ? { logFile: path.join(logDir, `${kind}.log`) } : {}) }),
    ),
  );
  const providers = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const failure = started.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  const stopAll = async () => {
    await Promise.all(providers.map((provider) => provider.stop()));
  };
  if (failure) {
    await stopAll();
    throw failure.reason;
  }
  const byKind: Record<string, SandboxProvider> = Object.fromEntries(providers.map((p) => [p.kind, p]));
  return Object.assign(byKind as Record<K, SandboxProvider>, { stopAll });
}

function waitForListening(
  child: ChildProcess,
  kind: ProviderKind,
  stderrTail: () => string,
  timeoutMs: number,
): Promise<ListeningLine> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const seen: string[] = [];
    const finish = (err: Error | undefined, line?: ListeningLine) => {
      clearTimeout(timer);
      child.off('exit', onExit);
      child.off('error', onError);
      lines.off('line', onLine);
      // Keep draining stdout so a chatty child can never block on a full pipe.
      child.stdout?.resume();
      if (err) reject(err);
      else resolve(line!);
    };
    const describe = () => {
      const tail = stderrTail().trim();
      return `${seen.length ? `\nstdout: ${seen.join('\n')}` : ''}${tail ? `\nstderr:\n${tail}` : ''}`;
    };
    const onLine = (text: string) => {
      seen.push(text);
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        return;
      }
      const parsed = ListeningLine.safeParse(json);
      if (parsed.success) finish(undefined, parsed.data);
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
      finish(
        new Error(`Sandbox provider '${kind}' exited (${signal ?? `code ${code}`}) before listening${describe()}`),
      );
    const onError = (err: Error) =>
      finish(new Error(`Sandbox provider '${kind}' could not be spawned: ${err.message}`));
    const timer = setTimeout(
      () =>
        finish(
          new Error(`Sandbox provider '${kind}' did not print its listening line within ${timeoutMs} ms${describe()}`),
        ),
      timeoutMs,
    );
    lines.on('line', onLine);
    child.once('exit', onExit);
    child.once('error', onError);
  });
}

async function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

function adminClient(kind: ProviderKind, url: string, child: ChildProcess): SandboxProvider {
  async function call(method: string, route: string, body?: unknown): Promise<unknown> {
    const response = await fetch(`${url}${route}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${kind} provider ${method} ${route} answered ${response.status}: ${text}`);
    return JSON.parse(text) as unknown;
  }

  return {
    kind,
    url,
    pid: child.pid ?? -1,
    async setFaults(faults) {
      await call('POST', '/admin/faults', FaultsRequest.parse({ faults }));
    },
    async clearFaults() {
      await call('DELETE', '/admin/faults');
    },
    async configure(cfg) {
      await call('POST', '/admin/config', ProviderConfigPatch.parse(cfg));
    },
    ledger: async () => Ledger.parse(await call('GET', '/admin/ledger')),
    async reset() {
      await call('POST', '/admin/reset');
    },
    async waitForInflight(predicate, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      let last: InflightStatus | undefined;
      while (Date.now() < deadline) {
        last = InflightStatus.parse(await call('GET', '/admin/inflight'));
        if (predicate(last)) return;
        await new Promise((resolve) => setTimeout(resolve, INFLIGHT_POLL_MS));
      }
      throw new Error(
        `${kind} provider: inflight condition not met within ${timeoutMs} ms (last: ${JSON.stringify(last)})`,
      );
    },
    stop: () => terminate(child),
  };
}
