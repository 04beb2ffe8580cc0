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

/** Starts the stack and prints what a team needs; answers an exit code once it is up (`--once`: once it stopped). */
export async function runDev(
  options: DevCommandOptions,
  io: { out: (s: string) => void; err: (s: string) => void },
): Promise<number> {
  const say = (line: string) => io.out(`${line}\n`);
  const given = new Set(options.givenPorts ?? []);
  // Every port it will print is checked first: a worker must not learn an address that another process holds.
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
    return 1;
  }
  for (const note of plan.notes) io.err(`retrysafe dev: ${note}\n`);
  const nodeMajor = Number(process.versions.node.split('.')[0]);
  if (nodeMajor < 24) {
    io.err(
      `retrysafe dev: Node.js ${process.versions.node}; Node.js 24 is the runtime retrysafe recommends (Node.js 20 ` +
        'is past its end of life since April 2026 and stays supported while that costs nothing)\n',
    );
  }
  say('starting the Temporal dev server and the approval service…');
  let stack: DevStack;
  try {
    stack = await startDevStack({
      dir: options.dir,
      port: plan.ports['--port']!,
      uiPort: plan.ports['--ui-port'],
      approvalsPort: plan.ports['--approvals-port']!,
      metricsPort: plan.ports['--metrics-port'],
      namespace: options.namespace,
      taskQueue: options.taskQueue,
      encryption: options.encryption,
      log: (line) => io.err(`${line}\n`),
    });
  } catch (err) {
    io.err(`retrysafe dev: ${(err as Error).message}\n`);
    return 1;
  }
  const settings = path.relative(process.cwd(), stack.settingsFile) || stack.settingsFile;
  say(
    `Temporal:   ${stack.server.address} (namespace ${options.namespace}, state in ${path.relative(process.cwd(), stack.dir) || '.'})`,
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
  if (options.once) {
    await stack.stop();
    say('stopped (--once)');
    return 0;
  }
  say('Ctrl-C to stop.');
  const stop = () =>
    void stack.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return 0;
}
