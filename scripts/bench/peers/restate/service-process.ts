import { spawn } from 'node:child_process';
import path from 'node:path';
import { childLog } from '../../../../cli/dev/child-log';

import type { PeerProviderUrls } from '../types';

/** The line service.ts prints on stdout once its endpoint listens. */
export const SERVICE_READY_EVENT = 'restate-service-ready';

export interface ServiceExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** The peer's service (service.ts) in its own OS process, so it can SIGKILL itself like a machine failure. */
export interface ServiceProcess {
  pid: number;
  /** The crash spec it was started with, if any. */
  crashAt: string | undefined;
  exited: Promise<ServiceExit>;
  /** SIGTERM, SIGKILL after a grace period; resolves once the process is gone. */
  stop(): Promise<void>;
}

export interface StartServiceOptions {
  port: number;
  providers: PeerProviderUrls;
  /** RETRYSAFE_CRASH_AT for this process; none when absent, whatever the parent's environment holds. */
  crashAt?: string;
  /** stdout and stderr are appended here. */
  logFile: string;
  readyTimeoutMs?: number;
}

const REPO_ROOT = path.resolve(__dirname, '..', '..', '..', '..');
const SERVICE_ENTRY = path.join(__dirname, 'service.ts');
/** A cold tsx start on a loaded 2-CPU machine takes a few seconds. */
const READY_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 5_000;
const OUTPUT_TAIL_CHARS = 4_000;

export async function startServiceProcess(opts: StartServiceOptions): Promise<ServiceProcess> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    RETRYSAFE_RESTATE_SERVICE_PORT: String(opts.port),
    RETRYSAFE_PEER_PROVIDERS: JSON.stringify(opts.providers),
  };
  delete env.RETRYSAFE_CRASH_AT;
  if (opts.crashAt) env.RETRYSAFE_CRASH_AT = opts.crashAt;
  // cwd is the repository so `--import tsx` resolves from our node_modules; the IPC channel tells the child
  // when this process is gone.
  const child = spawn(process.execPath, ['--import', 'tsx', SERVICE_ENTRY], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const log = childLog(opts.logFile);
  let tail = '';
  let ready = false;
  let onReady: () => void = () => undefined;
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.on('data', (chunk: Buffer) => {
      tail = (tail + chunk.toString()).slice(-OUTPUT_TAIL_CHARS);
      log.write(chunk);
      if (!ready && tail.includes(`"event":"${SERVICE_READY_EVENT}"`)) {
        ready = true;
        onReady();
      }
    });
  }
  child.once('close', () => void log.end());
  const exited = new Promise<ServiceExit>((resolve) =>
    child.once('exit', (code, signal) => {
      resolve({ code, signal });
    }),
  );
  const alive = () => child.exitCode === null && child.signalCode === null;
  const stop = async () => {
    if (alive()) child.kill('SIGTERM');
    const timer = setTimeout(() => alive() && child.kill('SIGKILL'), STOP_GRACE_MS);
    await exited;
    clearTimeout(timer);
  };

  const timeoutMs = opts.readyTimeoutMs ?? READY_TIMEOUT_MS;
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`restate peer service not ready within ${timeoutMs} ms:\n${tail.trim()}`)),
        timeoutMs,
      );
      onReady = () => {
        clearTimeout(timer);
        resolve();
      };
      if (ready) onReady();
      void exited.then(({ code, signal }) => {
        clearTimeout(timer);
        reject(
          new Error(`restate peer service exited (${signal ?? `code ${code}`}) before it was ready:\n${tail.trim()}`),
        );
      });
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return { pid: child.pid!, crashAt: opts.crashAt, exited, stop };
}
