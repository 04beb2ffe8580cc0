/**
 * `npm start`: the embedded default. Temporal dev server (SQLite in .data/, Web UI), the sandbox
 * providers, a worker, then the renewal crash demo. Stays up until Ctrl-C so the Web UI can be explored.
 *   npm start -- --once          exit after the demo
 *   npm start -- --once --json   print the outcome as one JSON object on the last line
 *   npm start -- --event ID      use another renewal event ID (default renewal-2026-08-28-01)
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startStack } from './lib/stack';
import { DEMO_RENEWAL, runRenewalDemo } from './demo/renewal-crash';
import { DEFAULT_DB_FILE } from './lib/dev-server';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      once: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      event: { type: 'string' },
      port: { type: 'string', default: '7233' },
      'ui-port': { type: 'string', default: '8233' },
      'db-file': { type: 'string', default: DEFAULT_DB_FILE },
    },
    strict: true,
  });
  const port = Number(values.port);
  const uiPort = Number(values['ui-port']);
  for (const [name, v] of [['--port', port], ['--ui-port', uiPort]] as const) {
    if (!Number.isInteger(v) || v < 0 || v > 65535) throw new Error(`${name} must be a port number, got ${JSON.stringify(v)}`);
  }
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
  for (const [kind, p] of Object.entries(stack.providers)) if (typeof p === 'object') say(`sandbox ${kind} provider: ${p.url}`);

  const input = values.event ? { ...DEMO_RENEWAL, eventId: values.event } : DEMO_RENEWAL;
  const outcome = await runRenewalDemo(stack, input, (line) => say(`  ${line}`));
  say('');
  say(`action ${outcome.actionKey}: ${outcome.status}, charge ${outcome.chargeId ?? '-'}, ${outcome.providerCharges} charge(s) at the provider`);
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
