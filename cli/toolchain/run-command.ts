import { spawn } from 'node:child_process';

export interface CommandResult {
  stdout: string;
  stderr: string;
}

/**
 * Runs `command` without a shell and resolves with its output when it exits 0. Otherwise it rejects with an error
 * naming the command, its exit code or signal and the last lines it wrote to stderr (output is kept to 1 MiB).
 */
export function runCommand(
  command: string,
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: options.env, cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => (stdout = (stdout + chunk).slice(-1024 * 1024)));
    child.stderr.on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-1024 * 1024)));
    child.on('error', (err: NodeJS.ErrnoException) => {
      const hint = err.code === 'ENOENT' ? ' (not installed, or not on PATH)' : '';
      reject(new Error(`could not run ${command}: ${err.message}${hint}`));
    });
    child.on('close', (code, signal) => {
      if (code === 0) return resolve({ stdout, stderr });
      const lastLines = stderr.trim().split('\n').slice(-5).join('\n');
      reject(new Error(`${command} ${args.slice(0, 2).join(' ')} failed (${signal ?? `exit ${code}`}): ${lastLines}`));
    });
  });
}
