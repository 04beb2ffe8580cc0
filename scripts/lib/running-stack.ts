/**
 * What `npm start` is running, written to the data folder while it runs (and removed when it stops),
 * so that other commands on the same machine (`npm run demo`) find the providers and services without
 * being told their ports.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';

export const RUNNING_STACK_FILE_NAME = 'running-stack.json';

export const RunningStack = z.object({
  pid: z.number().int(),
  temporalAddress: z.string(),
  namespace: z.string(),
  taskQueue: z.string(),
  webUiUrl: z.string().optional(),
  approvalsUrl: z.string(),
  providers: z.record(z.string(), z.string()),
});
export type RunningStack = z.infer<typeof RunningStack>;

export function runningStackFile(dataDir: string): string {
  return path.join(dataDir, RUNNING_STACK_FILE_NAME);
}

export async function writeRunningStack(dataDir: string, stack: RunningStack): Promise<() => Promise<void>> {
  const file = runningStackFile(dataDir);
  await writeFile(file, `${JSON.stringify(stack, null, 2)}\n`, { mode: 0o600 });
  return () => rm(file, { force: true });
}

/** The running stack, or undefined when none is (no file, or its process is gone). */
export async function readRunningStack(dataDir: string): Promise<RunningStack | undefined> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(runningStackFile(dataDir), 'utf8'));
  } catch {
    return undefined;
  }
  const parsed = RunningStack.safeParse(raw);
  if (!parsed.success) return undefined;
  try {
    process.kill(parsed.data.pid, 0);
  } catch {
    return undefined; // left behind by a stack that was killed
  }
  return parsed.data;
}
