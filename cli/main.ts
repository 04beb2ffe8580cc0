#!/usr/bin/env node
/**
 * The `retrysafe` command: the tools for people, beside a team's own worker.
 *
 *   retrysafe dev         the local stack for your worker: Temporal, the approval service and page, the Web UI
 *   retrysafe ops …       the operator's side: the review queue, one action in full, approve, resolve, alarms
 *   retrysafe mcp …       your tools as an MCP server for agents
 *   retrysafe approvals … the approval service: keys, operators, signing, serving
 *   retrysafe webhooks    the webhook router: providers' signed events, to their actions
 *
 * Bad arguments get one line naming the argument and exit code 2, before anything starts.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { runDev, type DevCommandOptions } from './dev/dev-command';
import { DEFAULT_METRICS_PORT } from './dev/dev-stack';
import { VERSION } from '../client/package-version';

/** Exit codes: 0 ok, 1 failed, 2 bad arguments (nothing started), 3 not authorized (ops). */
const USAGE_EXIT = 2;

function port(name: string, nullable = false) {
  // Commander turns a parser's null into '' (an option without its value): `none` stays a word until the action.
  return (value: string): number | 'none' => {
    if (nullable && value === 'none') return 'none';
    if (!/^\d+$/.test(value) || Number(value) > 65_535) {
      throw new InvalidArgumentError(`must be a port number from 0 to 65535${nullable ? ', or none' : ''}`);
    }
    return Number(value);
  };
}

interface ProgramIo {
  out: (s: string) => void;
  err: (s: string) => void;
}

/** The program, its output and errors sent where `io` says (tests read them). */
export function retrysafeProgram(io: ProgramIo): Command {
  const program = new Command('retrysafe')
    .description('Side effects that are safe to retry, for AI agents and workflows on Temporal.')
    .version(VERSION, '-v, --version')
    .enablePositionalOptions()
    .showSuggestionAfterError(false)
    .exitOverride()
    .configureOutput({ writeOut: io.out, writeErr: io.err, outputError: () => undefined });
  addDevCommand(program, io);
  addInitCommand(program, io);
  addPassThroughCommands(program, io);
  return program;
}

/** `retrysafe dev`: its options parsed here, the stack started by runDev. */
function addDevCommand(program: Command, io: ProgramIo): void {
  program
    .command('dev')
    .description(
      'start the local stack for your own worker (Temporal dev server, approval service and page, codec endpoint, ' +
        'Web UI) and write the settings your worker and client load',
    )
    .addOption(new Option('--dir <path>', 'where the stack keeps its state and settings').default('.retrysafe'))
    .addOption(
      new Option('--port <port>', 'Temporal gRPC port (0: any free port)').argParser(port('--port')).default(7233),
    )
    .addOption(
      new Option('--ui-port <port>', 'Web UI port (0: any free port; none: no Web UI)')
        .argParser(port('--ui-port', true))
        .default(8233),
    )
    .addOption(
      new Option('--approvals-port <port>', 'approval service port (0: any free port)')
        .argParser(port('--approvals-port'))
        .default(4180),
    )
    .addOption(
      new Option('--metrics-port <port>', "the worker's Prometheus metrics port (0: any free port; none: no metrics)")
        .argParser(port('--metrics-port', true))
        .default(DEFAULT_METRICS_PORT),
    )
    .addOption(new Option('--namespace <name>', 'the Temporal namespace').default('default'))
    .addOption(new Option('--task-queue <name>', 'the task queue your worker polls').default('retrysafe'))
    .addOption(new Option('--no-encryption', 'keep payloads in plain JSON (encrypted at rest by default)'))
    .addOption(new Option('--once', 'stop again once everything is up (to check that it starts)'))
    .action(async (options: DevArguments, command: Command) => {
      process.exitCode = await runDev(devOptions(options, command), io);
    });
}

/** What commander hands the dev command: `none` still a word for the ports that take it. */
type DevArguments = Omit<DevCommandOptions, 'uiPort' | 'metricsPort' | 'givenPorts'> & {
  uiPort: number | 'none';
  metricsPort: number | 'none';
};

/** runDev's options: `none` as null, and which port options the person gave (the others may be swapped when taken). */
function devOptions(options: DevArguments, command: Command): DevCommandOptions {
  const none = (p: number | 'none') => (p === 'none' ? null : p);
  const portOptions = {
    port: '--port',
    uiPort: '--ui-port',
    approvalsPort: '--approvals-port',
    metricsPort: '--metrics-port',
  } as const;
  const givenPorts = Object.entries(portOptions)
    .filter(([key]) => command.getOptionValueSource(key) !== 'default')
    .map(([, option]) => option);
  return { ...options, uiPort: none(options.uiPort), metricsPort: none(options.metricsPort), givenPorts };
}

function addInitCommand(program: Command, io: ProgramIo): void {
  program
    .command('init')
    .description(
      'scaffold a working project here: a tool with a fake provider, a worker with the plugin, a client, a tsconfig ' +
        'and package scripts',
    )
    .addOption(new Option('--dir <path>', 'the project folder').default('.'))
    .addOption(new Option('--force', 'overwrite the files it writes when they exist'))
    .action(async (options: { dir: string; force?: boolean }) => {
      const { runInit } = await import('./init/init-command');
      process.exitCode = await runInit(options, io);
    });
}

/** The commands that read their own arguments (ops, mcp, approvals, webhooks), each loaded only when it runs. */
function addPassThroughCommands(program: Command, io: ProgramIo): void {
  const passThrough = (name: string, description: string, run: (argv: string[]) => Promise<number>) =>
    program
      .command(name)
      .description(description)
      .helpOption(false)
      .allowUnknownOption()
      .allowExcessArguments()
      .passThroughOptions()
      .argument('[arguments...]', `see \`retrysafe ${name} --help\``)
      .action(async (args: string[]) => {
        process.exitCode = await run(args);
      });
  passThrough(
    'ops',
    'the operator’s side: queue, show, approve, reject, resolve, waiting, history, alarms, operators',
    async (a) => {
      const { opsMain } = await import('./ops/main');
      const code = await opsMain(a);
      // An update still in flight (resolve --wait ran out) must not keep the process alive; normal runs exit first.
      setTimeout(() => process.exit(code), 2_000).unref();
      return code;
    },
  );
  passThrough('mcp', 'your tools as an MCP server for agents: stdio, http, add-agent', async (a) => {
    // The help needs no MCP SDK: someone deciding whether to install it reads it first.
    const { mcpHelp } = await import('./mcp-usage');
    const help = mcpHelp(a);
    if (help !== undefined) {
      io.out(`${help}\n`);
      return 0;
    }
    const mcp = await withOptionalPeer('@modelcontextprotocol/sdk', 'retrysafe mcp', () => import('./mcp'), io);
    return mcp ? mcp.mcpMain(a) : USAGE_EXIT;
  });
  passThrough('approvals', 'the approval service: keygen, new-operator, sign, serve', async (a) => {
    const { approvalsMain } = await import('./approvals/approval-service');
    return approvalsMain(a);
  });
  passThrough('webhooks', "the webhook router: your providers' signed events, to their actions", async (a) => {
    const { webhooksMain } = await import('./webhooks/webhooks-command');
    return webhooksMain(a);
  });
}

/**
 * Loads a command whose dependency is an optional peer of the package; when the team has not installed it, says
 * which package to install, in one line, instead of a stack trace.
 */
async function withOptionalPeer<T>(
  peer: string,
  command: string,
  load: () => Promise<T>,
  io: { err: (s: string) => void },
): Promise<T | undefined> {
  try {
    return await load();
  } catch (err) {
    const e = err as { code?: string; message?: string };
    if (e.code !== 'MODULE_NOT_FOUND' || !e.message?.includes(`'${peer}`)) throw err;
    io.err(`retrysafe: ${command} needs the ${peer} package: npm install ${peer}\n`);
    return undefined;
  }
}

/** Commander's refusal as one line that starts with the argument it names. */
function oneLine(err: CommanderError): string {
  const invalid = /^error: option '(--[a-z-]+)[^']*' argument '([^']*)' is invalid\.\s*(.*)$/s.exec(err.message);
  if (invalid) return `${invalid[1]}: ${invalid[3]}, got ${JSON.stringify(invalid[2])}`;
  return err.message.replace(/^error: /, '');
}

/** Runs the command line; answers the exit code (the long-running commands answer once they are up). */
export async function main(argv = process.argv.slice(2)): Promise<number> {
  const program = retrysafeProgram({
    out: (s) => void process.stdout.write(s),
    err: (s) => void process.stderr.write(s),
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    // --help and --version end here too, with exit code 0.
    if (err.exitCode === 0) return 0;
    process.stderr.write(`retrysafe: ${oneLine(err)}\nsee: retrysafe --help\n`);
    return USAGE_EXIT;
  }
}

if (require.main === module) {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
