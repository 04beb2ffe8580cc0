/**
 * `npm start`: the embedded default. Temporal dev server (SQLite in .data/, Web UI), the sandbox
 * providers, a worker, then the renewal crash demo. Stays up until Ctrl-C so the Web UI can be explored.
 *   npm start -- --once          exit after the demo
 *   npm start -- --once --json   print the outcome as one JSON object on the last line
 *   npm start -- --event ID      use another renewal event ID (default renewal-2026-08-28-01)
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runWorkflowId } from '../policies/action-key';
import { RetrysafeError } from '../policies/errors';
import { startStack } from './lib/stack';
import { DEMO_RENEWAL, runRenewalDemo } from './demo/renewal-crash';
import { DEFAULT_DB_FILE } from './lib/dev-server';

class UsageError extends Error {}

/** Every argument is checked before anything starts: a bad one costs no server, no provider, no worker. */
function parseStartArgs(argv: string[]) {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        once: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        event: { type: 'string' },
        port: { type: 'string', default: '7233' },
        'ui-port': { type: 'string', default: '8233' },
        'db-file': { type: 'string', default: DEFAULT_DB_FILE },
      },
      strict: true,
    }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const port = Number(values.port);
  const uiPort = Number(values['ui-port']);
  for (const [name, raw, v] of [
    ['--port', values.port, port],
    ['--ui-port', values['ui-port'], uiPort],
  ] as const) {
    if (!/^\d+$/.test(raw) || v > 65535)
      throw new UsageError(`${name} must be a port number from 0 to 65535, got ${JSON.stringify(raw)}`);
  }
  if (values.event !== undefined) {
    try {
      runWorkflowId(DEMO_RENEWAL.tenant, values.event);
    } catch (err) {
      if (err instanceof RetrysafeError) throw new UsageError(`--event: ${err.message.replace(/^eventId /, '')}`);
      throw err;
    }
  }
  return { ...values, port, uiPort };
}

async function main(): Promise<void> {
  let values: ReturnType<typeof parseStartArgs>;
  try {
    values = parseStartArgs(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(
      `npm start: ${err.message}\nusage: npm start -- [--once] [--json] [--event ID] [--port N] [--ui-port N] [--db-file PATH]\n`,
    );
    process.exit(2);
  }
  const { port, uiPort } = values;
  // Progress goes to stderr when --json is given, so stdout's last line is the JSON object.
  const say = (line: string) => (values.json ? process.stderr : process.stdout).write(`${line}\n`);

  say('starting the Temporal dev server, sandbox providers and workers…');
  const stack = await startStack({ dbFile: path.resolve(values['db-file']), port, uiPort, log: say });
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    say('stopping…');
    await stack.stop();
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));

  say(`Temporal at ${stack.server.address} (namespace ${stack.server.namespace}), state in ${stack.server.dbFile}`);
  if (stack.server.uiUrl) say(`Web UI: ${stack.server.uiUrl}`);
  for (const [kind, p] of Object.entries(stack.providers))
    if (typeof p === 'object') say(`sandbox ${kind} provider: ${p.url}`);

  const input = values.event ? { ...DEMO_RENEWAL, eventId: values.event } : DEMO_RENEWAL;
  let outcome: Awaited<ReturnType<typeof runRenewalDemo>>;
  try {
    outcome = await runRenewalDemo(stack, input, (line) => say(`  ${line}`));
  } catch (err) {
    // A failed demo takes the whole stack down with it: no worker, provider or server is left behind.
    process.stderr.write(`the demo failed: ${err instanceof Error ? err.message : String(err)}\n`);
    return stop(1);
  }
  say('');
  say(
    `action ${outcome.actionKey}: ${outcome.status}, charge ${outcome.chargeId ?? '-'}, ${outcome.providerCharges} charge(s) at the provider`,
  );
  if (outcome.actionUrl) say(`  action in the Web UI: ${outcome.actionUrl}`);
  if (outcome.runUrl) say(`  run in the Web UI:    ${outcome.runUrl}`);
  // A first run charges once; a rerun of the same event on the same database attaches and sends nothing
  // (the in-memory sandbox providers start empty, so they hold no charge then).
  const expectedCharges = outcome.alreadyProcessed ? 0 : 1;
  const ok = outcome.providerCharges === expectedCharges && outcome.mismatchRejected && outcome.status === 'renewed';
  if (values.json) process.stdout.write(`${JSON.stringify({ ok, ...outcome })}\n`);
  if (values.once) return stop(ok ? 0 : 1);
  say('\nThe worker keeps running; explore the Web UI. Ctrl-C to stop.');
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
