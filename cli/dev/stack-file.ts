/**
 * How the tools for people find a stack on any ports. A stack (`retrysafe dev`, or the repository's demo)
 * writes into its folder:
 *   dev.env     the settings a team's worker and client load (`node --env-file=.retrysafe/dev.env …`), kept when it
 *               stops: they name files and a ledger that outlive it
 *   stack.json  the same settings and the addresses of its services, while it runs (removed when it stops)
 * `retrysafe ops`, `mcp` and `approvals` read the running stack's settings from there for anything the environment
 * does not set itself: the environment always wins.
 */
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';

export const STACK_FILE_NAME = 'stack.json';
export const SETTINGS_FILE_NAME = 'dev.env';
/** Names the stack folder outright; otherwise it is looked for from the working directory up. */
export const STACK_DIR_ENV = 'RETRYSAFE_DIR';
/** The folders a stack keeps its state in: `retrysafe dev`'s default, and the repository's demo's. */
export const STACK_DIR_NAMES = ['.retrysafe', '.data'] as const;

/** What stack.json holds: the running stack's pid, start time, settings and URLs, for the tools that look for it. */
export const StackFile = z.object({
  pid: z.number().int(),
  startedAt: z.string(),
  /** The settings, as the environment variables that carry them. */
  env: z.record(z.string(), z.string()),
  webUiUrl: z.string().optional(),
  approvalsUrl: z.string().optional(),
  /** The sandbox providers the repository's demo runs beside it, by kind. */
  providers: z.record(z.string(), z.string()).optional(),
});
/** A running stack as stack.json describes it. */
export type StackFile = z.infer<typeof StackFile>;

/** Writes the stack's settings (dev.env) and its running-stack file; the function returned removes the latter. */
export async function writeStackFiles(dir: string, stack: StackFile): Promise<() => Promise<void>> {
  const lines = [
    `# Written by retrysafe at ${stack.startedAt}: what a worker and a client of this stack need.`,
    `# Load it: node --env-file=${path.relative(process.cwd(), path.join(dir, SETTINGS_FILE_NAME)) || SETTINGS_FILE_NAME} …`,
    ...Object.entries(stack.env).map(([name, value]) => `${name}=${dotenvValue(value)}`),
  ];
  await writeFile(path.join(dir, SETTINGS_FILE_NAME), `${lines.join('\n')}\n`, { mode: 0o600 });
  const file = path.join(dir, STACK_FILE_NAME);
  await writeFile(file, `${JSON.stringify(stack, null, 2)}\n`, { mode: 0o600 });
  return () => rm(file, { force: true });
}

/** A value as Node's --env-file reads it: quoted when it holds anything but plain characters. */
function dotenvValue(value: string): string {
  return /^[A-Za-z0-9_./:@,+-]*$/.test(value) ? value : `'${value.replace(/'/g, '')}'`;
}

/** The running stack of `dir`, or undefined when none runs there (no file, or its process is gone). */
export async function readStackFile(dir: string): Promise<StackFile | undefined> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(path.join(dir, STACK_FILE_NAME), 'utf8'));
  } catch {
    return undefined;
  }
  const parsed = StackFile.safeParse(raw);
  if (!parsed.success) return undefined;
  try {
    process.kill(parsed.data.pid, 0);
  } catch {
    return undefined; // left behind by a stack that was killed
  }
  return parsed.data;
}

/**
 * The stack folder commands use: RETRYSAFE_DIR when set; else the folder of RETRYSAFE_OPERATORS_FILE (a stack keeps
 * its operators there); else the nearest folder, from `cwd` up, with a running stack in it; else the nearest one
 * that exists; else `.retrysafe` in `cwd`.
 */
export async function findStackDir(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Promise<string> {
  if (env[STACK_DIR_ENV]) return path.resolve(cwd, env[STACK_DIR_ENV]);
  if (env.RETRYSAFE_OPERATORS_FILE) return path.dirname(path.resolve(cwd, env.RETRYSAFE_OPERATORS_FILE));
  let existing: string | undefined;
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    for (const name of STACK_DIR_NAMES) {
      const candidate = path.join(dir, name);
      if (!existsSync(candidate)) continue;
      if (await readStackFile(candidate)) return candidate;
      existing ??= candidate;
    }
    if (path.dirname(dir) === dir) break;
  }
  return existing ?? path.join(path.resolve(cwd), STACK_DIR_NAMES[0]);
}

/**
 * The environment of a command run beside a stack: the running stack's settings wherever the environment does not
 * set them, and the stack folder's files (payload keys, ledger, operators) when they exist there. Also says which
 * folder it used.
 */
export async function withStackSettings(
  env: NodeJS.ProcessEnv = process.env,
  cwd = process.cwd(),
): Promise<{ env: NodeJS.ProcessEnv; dir: string; stack?: StackFile }> {
  const dir = await findStackDir(env, cwd);
  const stack = await readStackFile(dir);
  const fromFiles: Record<string, string> = {};
  const file = (name: string) => {
    const p = path.join(dir, name);
    return existsSync(p) ? p : undefined;
  };
  const keys = file('payload-keys.json');
  if (keys) fromFiles.RETRYSAFE_PAYLOAD_KEYS_FILE = keys;
  const ledger = file('ledger.sqlite');
  if (ledger) fromFiles.RETRYSAFE_LEDGER = `sqlite:${ledger}`;
  const operators = file('operators.json');
  if (operators) fromFiles.RETRYSAFE_OPERATORS_FILE = operators;
  const merged: NodeJS.ProcessEnv = { ...fromFiles, ...(stack?.env ?? {}) };
  // Inline payload keys in the environment replace the file, as they would for a worker.
  if (env.RETRYSAFE_PAYLOAD_KEYS) delete merged.RETRYSAFE_PAYLOAD_KEYS_FILE;
  for (const [name, value] of Object.entries(env)) if (value !== undefined) merged[name] = value;
  return { env: merged, dir, ...(stack ? { stack } : {}) };
}
