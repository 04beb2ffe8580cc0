import { spawn } from 'node:child_process';
import path from 'node:path';
import type { Stack } from '../../scripts/lib/stack';

const ROOT = path.resolve(__dirname, '..', '..');

export interface ScriptResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs one of the project's scripts (a path from the repository root) in its own process, to its end. */
export async function runScript(script: string, args: string[], env: NodeJS.ProcessEnv): Promise<ScriptResult> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, script), ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, stdout, stderr };
}

/** This process's environment without Temporal or retrysafe settings, so none leak in from the shell. */
export function cleanEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] =>
        entry[1] !== undefined && !entry[0].startsWith('TEMPORAL_') && !entry[0].startsWith('RETRYSAFE_'),
    ),
  );
}

/**
 * Runs the ops CLI as an operator does: its own process, finding the server through the standard
 * Temporal environment. Only the variables given reach it: no token or profile leaks in from the shell.
 */
export async function runOpsProcess(
  stack: Stack,
  args: string[],
  env: Record<string, string> = {},
): Promise<ScriptResult> {
  return runScript(path.join('cli', 'main.ts'), ['ops', ...args], {
    ...cleanEnv(),
    TEMPORAL_ADDRESS: stack.server.address,
    TEMPORAL_NAMESPACE: stack.server.namespace,
    // ops reads each action's record from the ledger the stack's workers keep.
    RETRYSAFE_LEDGER: stack.workerEnv.RETRYSAFE_LEDGER,
    ...env,
  });
}
