/**
 * Command dispatch and error reporting for the ops CLI, apart from the process wiring in scripts/ops.ts
 * so that tests can run whole command lines against a fake client.
 */
import type { OpsCommand, OpsContext } from './context';
import { EXIT, OpsError, UsageError, type ExitCode } from './errors';
import { alarmsCommand } from './alarms';
import { approveCommand, rejectCommand } from './approve';
import { historyCommand } from './history';
import { operatorsCommand } from './operators';
import { queueCommand } from './queue';
import { resolveCommand } from './resolve';
import { showCommand } from './show';
import { waitingCommand } from './waiting';

export const COMMANDS: readonly OpsCommand[] = [
  queueCommand,
  showCommand,
  approveCommand,
  rejectCommand,
  resolveCommand,
  waitingCommand,
  historyCommand,
  alarmsCommand,
  operatorsCommand,
];

export function generalUsage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'Usage: retrysafe ops <command> [options]',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Run `retrysafe ops <command> --help` for a command’s options.',
    'Connects with the standard Temporal environment: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY,',
    'TEMPORAL_TLS_*, TEMPORAL_PROFILE. Exit codes: 0 ok, 1 failed, 2 bad arguments, 3 not authorized.',
  ].join('\n');
}

/** Runs one command line. Returns the exit code; error lines go to `err`, never to stdout. */
export async function runOps(argv: readonly string[], ctx: OpsContext, err: (line: string) => void): Promise<ExitCode> {
  const [name, ...rest] = argv;
  const command = COMMANDS.find((c) => c.name === name);
  try {
    if (name === undefined) throw new UsageError(`a command is required\n\n${generalUsage()}`);
    if (name === '--help' || name === '-h' || name === 'help') {
      const topic = COMMANDS.find((c) => c.name === rest[0]);
      ctx.out(topic ? topic.usage : generalUsage());
      return EXIT.ok;
    }
    if (!command)
      throw new UsageError(`${name}: unknown command; commands are ${COMMANDS.map((c) => c.name).join(', ')}`);
    await command.run(rest, ctx);
    return EXIT.ok;
  } catch (e) {
    const prefix = command ? `ops ${command.name}: ` : '';
    if (e instanceof OpsError) {
      err(`${prefix}${e.message}`);
      if (e instanceof UsageError && command) err(`see: retrysafe ops ${command.name} --help`);
      return e.exitCode;
    }
    err(`${prefix}${e instanceof Error ? e.message : String(e)}`);
    return EXIT.failed;
  }
}
