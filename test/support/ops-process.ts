import { spawn } from 'node:child_process';
import path from 'node:path';
import type { Stack } from '../../scripts/lib/stack';

const ROOT = path.resolve(__dirname, '..', '..');

/**
 * Runs the ops CLI as an operator does: its own process, finding the server through the standard
 * Temporal environment. Only the variables given reach it: no token or profile leaks in from the shell.
 */
export async function runOpsProcess(
  stack: Stack,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('TEMPORAL_') && !k.startsWith('RETRYSAFE_')),
  );
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts', 'ops.ts'), ...args], {
    cwd: ROOT,
    env: { ...inherited, TEMPORAL_ADDRESS: stack.server.address, TEMPORAL_NAMESPACE: stack.server.namespace, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, stdout, stderr };
}
