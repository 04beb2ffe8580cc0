/**
 * `npm start`: the embedded default. What `retrysafe dev` runs (Temporal dev server with SQLite in .data/ and its
 * Web UI, the approval service with its page, a local demo operator and signing key the worker trusts, payload
 * keys and the ledger), plus the sandbox providers, a worker, then the renewal crash demo. Stays up until Ctrl-C
 * so the Web UI can be explored and actions approved.
 *   npm start -- --once          exit after the demo
 *   npm start -- --once --json   print the outcome as one JSON object on the last line
 *   npm start -- --event ID      use another renewal event ID (default renewal-2026-08-28-01)
 *   npm start -- --approvals-port N   the approval service's port (default 4180; 0 for any free port)
 *   npm start -- --metrics-port N     the worker's Prometheus metrics (default 9464; 0 for any free port; none)
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startStack } from './lib/stack';
import { DEMO_RENEWAL, runRenewalDemo } from './demo/renewal-crash';
import { DEMO_DB_FILE } from './lib/demo-data';
import { DEFAULT_METRICS_PORT, startDevStack, type DevStack } from '../cli/dev/dev-stack';
import { DEMO_OPERATOR } from '../cli/dev/local-operator';
import { writeStackFiles } from '../cli/dev/stack-file';
import { DEFAULT_APPROVAL_URL } from '../cli/ops/signatures';
import { RetrysafeError, runWorkflowId } from 'retrysafe';

/** The approval service's port unless --approvals-port says otherwise; `ops` looks there by default. */
const DEFAULT_APPROVAL_PORT = Number(new URL(DEFAULT_APPROVAL_URL).port);

class UsageError extends Error {}

const USAGE = `usage: npm start -- [--once] [--json] [--event ID] [--port N] [--ui-port N] [--approvals-port N] [--metrics-port N] [--db-file PATH]

  --once              exit after the demo: 0 when exactly one charge was made and the mismatch was refused
  --json              end with one JSON object (providerCharges, chargeId, mismatchRejected, links…)
  --event ID          another renewal event (default ${DEMO_RENEWAL.eventId})
  --port N            Temporal gRPC port (default 7233; 0: any free port)
  --ui-port N         Web UI port (default 8233; 0: any free port)
  --approvals-port N  approval service and page (default ${DEFAULT_APPROVAL_PORT}; 0: any free port)
  --metrics-port N    the worker's Prometheus metrics (default ${DEFAULT_METRICS_PORT}; 0: any free port; none: off)
  --db-file PATH      the dev server's SQLite file (default ${DEMO_DB_FILE})
`;

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
        'db-file': { type: 'string', default: DEMO_DB_FILE },
        'approvals-port': { type: 'string', default: String(DEFAULT_APPROVAL_PORT) },
        'metrics-port': { type: 'string', default: String(DEFAULT_METRICS_PORT) },
      },
      strict: true,
    }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const port = Number(values.port);
  const uiPort = Number(values['ui-port']);
  const approvalsPort = Number(values['approvals-port']);
  for (const [name, raw, v] of [
    ['--port', values.port, port],
    ['--ui-port', values['ui-port'], uiPort],
    ['--approvals-port', values['approvals-port'], approvalsPort],
  ] as const) {
    if (!/^\d+$/.test(raw) || v > 65535)
      throw new UsageError(`${name} must be a port number from 0 to 65535, got ${JSON.stringify(raw)}`);
  }
  const rawMetrics = values['metrics-port'];
  if (rawMetrics !== 'none' && (!/^\d+$/.test(rawMetrics) || Number(rawMetrics) > 65535)) {
    throw new UsageError(
      `--metrics-port must be a port number from 0 to 65535, or none, got ${JSON.stringify(rawMetrics)}`,
    );
  }
  const metricsPort = rawMetrics === 'none' ? null : Number(rawMetrics);
  if (values.event !== undefined) {
    try {
      runWorkflowId(DEMO_RENEWAL.tenant, values.event);
    } catch (err) {
      if (err instanceof RetrysafeError) throw new UsageError(`--event: ${err.message.replace(/^eventId /, '')}`);
      throw err;
    }
  }
  return { ...values, port, uiPort, approvalsPort, metricsPort };
}

async function main(): Promise<void> {
  let values: ReturnType<typeof parseStartArgs>;
  if (process.argv.slice(2).some((a) => a === '--help' || a === '-h')) {
    process.stdout.write(USAGE);
    return;
  }
  try {
    values = parseStartArgs(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`npm start: ${err.message}\n${USAGE.split('\n')[0]}\n`);
    process.exit(2);
  }
  const { port, uiPort } = values;
  // Progress goes to stderr when --json is given, so stdout's last line is the JSON object.
  const say = (line: string) => (values.json ? process.stderr : process.stdout).write(`${line}\n`);

  // What `retrysafe dev` runs (Temporal, the approval service and page, the local operator, payload keys, the
  // ledger and the settings files), in the data folder beside the database; then the demo's providers and worker.
  const dbFile = path.resolve(values['db-file']);
  const dataDir = path.dirname(dbFile);
  say('starting the Temporal dev server, sandbox providers and workers…');
  let dev: DevStack;
  try {
    dev = await startDevStack({
      dir: dataDir,
      dbFile,
      port,
      uiPort,
      approvalsPort: values.approvalsPort,
      metricsPort: values.metricsPort,
      log: say,
    });
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(1);
  }
  const demo = dev.operator;
  const stack = await startStack({
    existingServer: dev.server,
    log: say,
    workerEnv: dev.env,
    ...(dev.env.RETRYSAFE_PAYLOAD_KEYS_FILE
      ? { payloadEncryption: { keysFile: dev.env.RETRYSAFE_PAYLOAD_KEYS_FILE } }
      : {}),
    ledger: dev.env.RETRYSAFE_LEDGER,
  }).catch(async (err: unknown) => {
    await dev.stop();
    throw err;
  });
  const approvals = dev.approvals;
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    say('stopping…');
    await stack.stop();
    await dev.stop();
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));

  say(`Temporal at ${stack.server.address} (namespace ${stack.server.namespace}), state in ${dbFile}`);
  if (stack.server.uiUrl) say(`Web UI: ${stack.server.uiUrl}`);
  if (dev.metricsUrl) say(`metrics: ${dev.metricsUrl} (the worker's, for Prometheus; Temporal's and retrysafe's)`);
  const providers = Object.fromEntries(
    Object.entries(stack.providers).flatMap(([kind, p]) => (typeof p === 'object' ? [[kind, p.url]] : [])),
  );
  for (const [kind, url] of Object.entries(providers)) say(`sandbox ${kind} provider: ${url}`);
  // The demo scenarios (`npm run demo`) find the providers here too.
  await writeStackFiles(dataDir, { ...dev.stackFile, providers });
  say(`approvals: ${approvals.url} (the page and the signing API)`);
  say(
    `demo operator "${DEMO_OPERATOR}" (every tenant; approver, resolver, admin)` +
      `${demo.created.length ? `, created now with ${demo.created.join(' and ')}` : ''}:`,
  );
  say(`  its token is in ${path.relative(process.cwd(), demo.tokenFile)}; sign in to the page with it`);
  say('  the ops CLI finds this stack and uses it by default: npm run ops -- queue, then npm run ops -- approve KEY');

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
  if (!outcome.actionUrl) {
    say(`  the run acted on the charge's ledger row itself, in its own workflow task (the local activity actOnRecord,`);
    say(`  named by the key); no action workflow was needed. retrysafe ops show ${outcome.actionKey} reads it.`);
  }
  // A first run charges once; a rerun of the same event on the same database attaches and sends nothing
  // (the in-memory sandbox providers start empty, so they hold no charge then).
  const expectedCharges = outcome.alreadyProcessed ? 0 : 1;
  const ok = outcome.providerCharges === expectedCharges && outcome.mismatchRejected && outcome.status === 'renewed';
  if (values.json) process.stdout.write(`${JSON.stringify({ ok, ...outcome })}\n`);
  if (values.once) return stop(ok ? 0 : 1);
  say(
    '\nThe worker keeps running; explore the Web UI, or put an action in front of a person:\n' +
      '  npm run demo -- awaiting-confirmation   (also: needs-review, unknown)\nCtrl-C to stop.',
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
