/**
 * `npm run ops -- <command>`: the operator's side of retrysafe — the review queue, one action in full,
 * and authorized resolutions. Connects with the standard Temporal environment (workers/connection.ts),
 * so the same CLI works against the dev server, a self-hosted cluster or Temporal Cloud.
 *
 *   npm run ops -- queue                      what needs a person, oldest first
 *   npm run ops -- show KEY                   one action, its checks and audit trail
 *   npm run ops -- resolve KEY --decision confirmed --provider-ref msg_1 --reason "seen in dashboard"
 *   npm run ops -- operators add alice        issue a token (printed once)
 */
import type { Connection } from '@temporalio/client';
import { RetrysafeClient } from '../client';
import { connectClient, loadConnectConfig } from '../workers/connection';
import path from 'node:path';
import { ledgerConfigFromEnv, openLedger, type ActionLedger } from '../ledger';
import { withLocalLedger, withLocalPayloadKeys } from './lib/local-payload-keys';
import { runOps } from './ops/cli';
import { operatorsFilePath } from './ops/operator-auth';
import type { OpsClient, OpsContext } from './ops/context';
import { EXIT, OpsError } from './ops/errors';
import { approvalServiceSignatures } from './ops/signatures';

async function main(): Promise<void> {
  // The payload keys and ledger `npm start` keeps beside the operators file count when none are configured.
  const dataDir = path.dirname(operatorsFilePath(process.env));
  const env = withLocalLedger(withLocalPayloadKeys(process.env, dataDir), dataDir);
  let connection: Connection | undefined;
  let client: Promise<OpsClient> | undefined;
  let ledger: Promise<ActionLedger | undefined> | undefined;
  const openLedgerOnce = () =>
    (ledger ??= (async () => {
      const config = ledgerConfigFromEnv(env);
      return config ? openLedger(config, { migrate: false }) : undefined;
    })());
  const ctx: OpsContext = {
    env,
    out: (text) => void process.stdout.write(`${text}\n`),
    warn: (text) => void process.stderr.write(`${text}\n`),
    now: () => new Date(),
    client: () => (client ??= connect()),
    signatures: approvalServiceSignatures(env),
    ledger: openLedgerOnce,
  };

  async function connect(): Promise<OpsClient> {
    let address = '(unset)';
    try {
      address = loadConnectConfig(env).connectionOptions.address ?? 'localhost:7233';
      const connected = await connectClient(env);
      connection = connected.connection;
      const recorded = await openLedgerOnce();
      return new RetrysafeClient(connected.client, recorded ? { ledger: recorded } : {});
    } catch (err) {
      throw new OpsError(`cannot reach Temporal at ${address}: ${(err as Error).message}`, EXIT.failed);
    }
  }

  const code = await runOps(process.argv.slice(2), ctx, (line) => void process.stderr.write(`${line}\n`));
  await connection?.close().catch(() => undefined);
  await (await ledger?.catch(() => undefined))?.close().catch(() => undefined);
  process.exitCode = code;
  // An update still in flight (resolve --wait ran out) must not keep the process alive; normal runs exit first.
  setTimeout(() => process.exit(code), 2_000).unref();
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(EXIT.failed);
});
