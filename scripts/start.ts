/**
 * `npm start`: the embedded default. Temporal dev server (SQLite in .data/, Web UI), the sandbox
 * providers, a worker, the approval service with its page, then the renewal crash demo. Stays up until
 * Ctrl-C so the Web UI can be explored and actions approved. On first start it creates a local demo
 * operator and approval signing key in .data/ (scripts/lib/demo-operator.ts), which the worker trusts.
 *   npm start -- --once          exit after the demo
 *   npm start -- --once --json   print the outcome as one JSON object on the last line
 *   npm start -- --event ID      use another renewal event ID (default renewal-2026-08-28-01)
 *   npm start -- --approvals-port N   the approval service's port (default 4180; 0 for any free port)
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runWorkflowId } from '../policies/action-key';
import { RetrysafeError } from '../policies/errors';
import { startStack } from './lib/stack';
import { DEMO_RENEWAL, runRenewalDemo } from './demo/renewal-crash';
import { DEFAULT_DB_FILE } from './lib/dev-server';
import { startApprovalServer, type ApprovalServer } from './lib/approval-http';
import { createApprovalSigner, loadOperatorsFile } from './lib/approval-signer';
import { DEMO_OPERATOR, ensureDemoOperator } from './lib/demo-operator';
import { writeRunningStack } from './lib/running-stack';
import { LOCAL_LEDGER_FILE_NAME, LOCAL_PAYLOAD_KEYS_FILE_NAME } from './lib/local-payload-keys';
import { payloadCodecFromEnv, payloadKeysFileEnv } from '../codec/codec-config';

/**
 * The Web UI's origin as `npm start` prints it. Only that one: the session cookie belongs to 127.0.0.1, so a
 * Web UI opened as localhost would be another site and get no cookie sent anyway.
 */
function webUiOrigins(uiUrl: string): string[] {
  return [new URL(uiUrl).origin];
}
import { APPROVAL_URL_ENV, DEFAULT_APPROVAL_URL } from './ops/signatures';

/** The approval service's port unless --approvals-port says otherwise; `ops` looks there by default. */
const DEFAULT_APPROVAL_PORT = Number(new URL(DEFAULT_APPROVAL_URL).port);

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
        'approvals-port': { type: 'string', default: String(DEFAULT_APPROVAL_PORT) },
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
  if (values.event !== undefined) {
    try {
      runWorkflowId(DEMO_RENEWAL.tenant, values.event);
    } catch (err) {
      if (err instanceof RetrysafeError) throw new UsageError(`--event: ${err.message.replace(/^eventId /, '')}`);
      throw err;
    }
  }
  return { ...values, port, uiPort, approvalsPort };
}

async function main(): Promise<void> {
  let values: ReturnType<typeof parseStartArgs>;
  try {
    values = parseStartArgs(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(
      `npm start: ${err.message}\nusage: npm start -- [--once] [--json] [--event ID] [--port N] [--ui-port N] [--approvals-port N] [--db-file PATH]\n`,
    );
    process.exit(2);
  }
  const { port, uiPort } = values;
  // Progress goes to stderr when --json is given, so stdout's last line is the JSON object.
  const say = (line: string) => (values.json ? process.stderr : process.stdout).write(`${line}\n`);

  // The demo operator and signing key live next to the database, so a fresh clone can approve at once.
  const dataDir = path.dirname(path.resolve(values['db-file']));
  const demo = await ensureDemoOperator(dataDir);
  say('starting the Temporal dev server, sandbox providers and workers…');
  const stack = await startStack({
    dbFile: path.resolve(values['db-file']),
    port,
    uiPort,
    log: say,
    workerEnv: demo.workerEnv,
    // Payloads are encrypted at rest with a key kept beside the database (made on first start); the Web UI
    // decodes them through the approval service's codec endpoint, for a signed-in operator only.
    payloadEncryption: { keysFile: path.join(dataDir, LOCAL_PAYLOAD_KEYS_FILE_NAME) },
    // The durable ledger beside the database: keys stay protected after their workflows are gone.
    ledger: `sqlite:${path.join(dataDir, LOCAL_LEDGER_FILE_NAME)}`,
    ...(values.approvalsPort !== 0 ? { uiCodecEndpoint: `http://127.0.0.1:${values.approvalsPort}/codec` } : {}),
  });
  // The Web UI decodes through the approval service's /codec, for a signed-in operator only.
  const codec = stack.payloadKeysFile ? payloadCodecFromEnv(payloadKeysFileEnv(stack.payloadKeysFile)) : undefined;
  let approvals: ApprovalServer;
  try {
    approvals = await startApprovalServer(
      createApprovalSigner({
        privateKeyHex: demo.signingKey.privateKey,
        keyId: demo.signingKey.keyId,
        operators: await loadOperatorsFile(demo.operatorsFile),
        // `ops operators add` while this runs counts at once: the service re-reads the file when it changes.
        operatorsFile: demo.operatorsFile,
        onReloadError: (message) => process.stderr.write(`approval service: ${message}\n`),
      }),
      {
        port: values.approvalsPort,
        ...(codec && stack.server.uiUrl ? { codec: { codec, allowedOrigins: webUiOrigins(stack.server.uiUrl) } } : {}),
        temporal: {
          client: stack.client,
          namespace: stack.server.namespace,
          ...(stack.server.uiUrl ? { webUiUrl: stack.server.uiUrl } : {}),
        },
      },
    );
  } catch (err) {
    process.stderr.write(
      `cannot start the approval service on port ${values.approvalsPort}: ${(err as Error).message}\n` +
        'another one may be running; pass --approvals-port 0 for any free port\n',
    );
    await stack.stop();
    process.exit(1);
  }
  const running: { forget?: () => Promise<void> } = {};
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    say('stopping…');
    await running.forget?.().catch(() => undefined);
    await approvals.close().catch(() => undefined);
    await stack.stop();
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));

  say(`Temporal at ${stack.server.address} (namespace ${stack.server.namespace}), state in ${stack.server.dbFile}`);
  if (stack.server.uiUrl) say(`Web UI: ${stack.server.uiUrl}`);
  for (const [kind, p] of Object.entries(stack.providers))
    if (typeof p === 'object') say(`sandbox ${kind} provider: ${p.url}`);
  running.forget = await writeRunningStack(dataDir, {
    pid: process.pid,
    temporalAddress: stack.server.address,
    namespace: stack.server.namespace,
    taskQueue: stack.taskQueue,
    ...(stack.server.uiUrl ? { webUiUrl: stack.server.uiUrl } : {}),
    approvalsUrl: approvals.url,
    providers: Object.fromEntries(
      Object.entries(stack.providers).flatMap(([kind, p]) => (typeof p === 'object' ? [[kind, p.url]] : [])),
    ),
  });
  say(`approvals: ${approvals.url} (the page and the signing API)`);
  say(
    `demo operator "${DEMO_OPERATOR}" (every tenant; approver, resolver, admin)` +
      `${demo.created.length ? `, created now with ${demo.created.join(' and ')}` : ''}:`,
  );
  say(`  its token is in ${path.relative(process.cwd(), demo.tokenFile)}; sign in to the page with it`);
  const urlEnv = approvals.url === DEFAULT_APPROVAL_URL ? '' : `${APPROVAL_URL_ENV}=${approvals.url} `;
  say(`  the ops CLI uses it by default: ${urlEnv}npm run ops -- queue, then ${urlEnv}npm run ops -- approve KEY`);

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
  say(
    '\nThe worker keeps running; explore the Web UI, or put an action in front of a person:\n' +
      '  npm run demo -- awaiting-confirmation   (also: needs-review, unknown)\nCtrl-C to stop.',
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
