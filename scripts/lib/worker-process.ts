import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { childLog } from '../../cli/dev/child-log';
import { spawnInOwnSession } from './own-session';

const ROOT = path.resolve(__dirname, '..', '..');

/** A worker running in its own OS process, so tests and chaos runs can SIGKILL it like a machine failure. */
export interface WorkerProcess {
  pid: number;
  name: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Kill with SIGKILL (default) and wait for the exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** SIGTERM: the worker drains and exits. */
  stop(): Promise<void>;
  /** Everything the process wrote so far (stdout + stderr), for diagnostics. */
  output(): string;
  alive(): boolean;
}

export interface SpawnWorkerOptions {
  env: Record<string, string>;
  name?: string;
  /** Crash points, e.g. `after-commit:charge`; see activities/crash-points.ts. */
  crashAt?: string;
  logFile?: string;
  readyTimeoutMs?: number;
  /** The worker's entry point, relative to the repository root; the example worker when absent. */
  entry?: string;
}

export async function spawnWorker(opts: SpawnWorkerOptions): Promise<WorkerProcess> {
  const name = opts.name ?? 'worker';
  // In a session of its own, so that a worker paused by the chaos harness is never hung up by the kernel when the
  // shell that started the run exits (own-session.ts).
  const child: ChildProcess = spawnInOwnSession(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, opts.entry ?? path.join('examples', 'worker.ts'))],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        ...opts.env,
        ...(opts.crashAt ? { RETRYSAFE_CRASH_AT: opts.crashAt } : {}),
        LOG_LEVEL: opts.env.LOG_LEVEL ?? 'warn',
        // With the IPC channel below: the worker stops when this process is gone (workers/run-worker.ts).
        RETRYSAFE_EXIT_WITH_PARENT: '1',
      },
      // The IPC channel only tells the worker when this process is gone (workers/run-worker.ts stops then).
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    },
  );
  // Nor does the channel keep this process alive: the pipes and the caller's stop() decide that, as before.
  child.channel?.unref();
  let output = '';
  const file = opts.logFile ? childLog(opts.logFile) : undefined;
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    if (output.length > 200_000) output = output.slice(-100_000);
    file?.write(chunk);
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  // 'close' comes once the pipes have delivered their last chunk, which may be after 'exit'.
  child.once('close', () => void file?.end());
  let alive = true;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      alive = false;
      resolve({ code, signal });
    }),
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} was not ready within ${opts.readyTimeoutMs ?? 60_000} ms:\n${output.slice(-4000)}`));
    }, opts.readyTimeoutMs ?? 60_000);
    const onData = () => {
      if (output.includes('"event":"worker-ready"')) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited before it was ready (code ${code}, signal ${signal}):\n${output.slice(-4000)}`));
    });
  });
  return {
    pid: child.pid!,
    name,
    exited,
    output: () => output,
    alive: () => alive,
    async kill(signal: NodeJS.Signals = 'SIGKILL') {
      if (alive) child.kill(signal);
      await exited;
    },
    async stop() {
      if (alive) child.kill('SIGTERM');
      const timer = setTimeout(() => alive && child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
