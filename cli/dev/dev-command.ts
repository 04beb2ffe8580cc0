/**
 * `retrysafe dev`: the local stack for a team's own worker (dev-stack.ts), what it prints, and how it stops.
 */
import path from 'node:path';
import { startDevStack, type DevStack } from './dev-stack';
import { DEMO_OPERATOR } from './local-operator';
import { planPorts, type PortOption } from './port-plan';

export interface DevCommandOptions {
  dir: string;
  port: number;
  uiPort: number | null;
  approvalsPort: number;
  /** The worker's metrics port; null for none. */
  metricsPort: number | null;
  namespace: string;
  taskQueue: string;
  encryption: boolean;
  once?: boolean;
  /** The port options the person gave on the command line; the others are defaults, swapped when taken. */
  givenPorts?: readonly PortOption[];
}

interface DevIo {
  out: (s: string) => void;
  err: (s: string) => void;
}

/** Starts the stack and prints what a team needs; answers an exit code once it is up (`--once`: once it stopped). */
export async function runDev(options: DevCommandOptions, io: DevIo): Promise<number> {
  const say = (line: string) => io.out(`${line}\n`);
  const ports = await checkPorts(options, io);
  if (!ports) return 1;
  warnAboutOldNode(io);
  say('starting the Temporal dev server and the approval service…');
  let stack: DevStack;
  try {
    stack = await startDevStack({
      dir: options.dir,
      port: ports['--port']!,
      uiPort: ports['--ui-port'],
      approvalsPort: ports['--approvals-port']!,
      metricsPort: ports['--metrics-port'],
      namespace: options.namespace,
      taskQueue: options.taskQueue,
      encryption: options.encryption,
      log: (line) => io.err(`${line}\n`),
    });
  } catch (err) {
    io.err(`retrysafe dev: ${(err as Error).message}\n`);
    return 1;
  }
  printStack(stack, options.namespace, say);
  if (options.once) {
    await stack.stop();
    say('stopped (--once)');
    return 0;
  }
  say('Ctrl-C to stop.');
  stopOnSignal(stack);
  return 0;
}

/**
 * Every port it will print is checked first: a worker must not learn an address that another process holds. Answers
 * the ports to start on (defaults that were taken swapped, said on stderr), or undefined once it said why it cannot.
 */
async function checkPorts(
  options: DevCommandOptions,
  io: DevIo,
): Promise<Record<PortOption, number | null> | undefined> {
  const given = new Set(options.givenPorts ?? []);
  const plan = await planPorts(
    (
      [
        ['--port', options.port],
        ['--ui-port', options.uiPort],
        ['--approvals-port', options.approvalsPort],
        ['--metrics-port', options.metricsPort],
      ] as const
    ).map(([option, port]) => ({ option, port, given: given.has(option) })),
  );
  if (!plan.ok) {
    io.err(`retrysafe dev: ${plan.message}\n`);
    return undefined;
  }
  for (const note of plan.notes) io.err(`retrysafe dev: ${note}\n`);
  return plan.ports;
}

function warnAboutOldNode(io: DevIo): void {
  const nodeMajor = Number(process.versions.node.split('.')[0]);
  if (nodeMajor >= 24) return;
  io.err(
    `retrysafe dev: Node.js ${process.versions.node}; Node.js 24 is the runtime retrysafe recommends (Node.js 20 ` +
      'is past its end of life since April 2026 and stays supported while that costs nothing)\n',
  );
}

/** Where each part of the stack listens, and the settings a team's worker and client load. */
function printStack(stack: DevStack, namespace: string, say: (line: string) => void): void {
  const settings = path.relative(process.cwd(), stack.settingsFile) || stack.settingsFile;
  say(
    `Temporal:   ${stack.server.address} (namespace ${namespace}, state in ${path.relative(process.cwd(), stack.dir) || '.'})`,
  );
  if (stack.server.uiUrl) say(`Web UI:     ${stack.server.uiUrl}`);
  say(
    `approvals:  ${stack.approvals.url}/sign-in (operator "${DEMO_OPERATOR}", token in ${path.relative(process.cwd(), stack.operator.tokenFile)})`,
  );
  if (stack.metricsUrl)
    say(`metrics:    ${stack.metricsUrl} (served by your worker while it runs; Prometheus scrapes it)`);
  say('');
  say(`Your worker and client need these settings; they are in ${settings}:`);
  for (const [name, value] of Object.entries(stack.env)) say(`  ${name}=${value}`);
  say('');
  say(`  node --env-file=${settings} dist/worker.js      (Node.js 24 recommended; 20.6+ reads the file itself)`);
  say('  retrysafe ops queue                              (finds this stack on its own)');
  say('');
}

/** Ctrl-C (or SIGTERM) stops the stack and exits: 0 when it stopped cleanly, 1 when it did not. */
function stopOnSignal(stack: DevStack): void {
  const stop = () =>
    void stack.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
