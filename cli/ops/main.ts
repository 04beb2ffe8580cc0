/**
 * `retrysafe ops <command>`: the operator's side of retrysafe — the review queue, one action in full,
 * and authorized resolutions. Connects with the standard Temporal environment (client/connect.ts), so the
 * same CLI works against the dev server, a self-hosted cluster or Temporal Cloud; beside a running
 * `retrysafe dev` it finds that stack's settings (cli/dev/stack-file.ts).
 *
 *   retrysafe ops queue                      what needs a person, oldest first
 *   retrysafe ops show KEY                   one action, its checks and audit trail
 *   retrysafe ops resolve KEY --decision confirmed --provider-ref msg_1 --reason "seen in dashboard"
 *   retrysafe ops operators add alice        issue a token (printed once)
 */
import type { Connection } from '@temporalio/client';
import { RetrysafeClient } from '../../client';
import { connectClient, loadConnectConfig } from '../../client/connect';
import { ledgerConfigFromEnv, openLedger, type ActionLedger } from '../../ledger';
import { withStackSettings } from '../dev/stack-file';
import { runOps } from './cli';
import type { OpsClient, OpsContext } from './context';
import { EXIT, OpsError } from './errors';
import { approvalServiceSignatures } from './signatures';

/** `retrysafe ops …`: runs one command line and answers its exit code. */
export async function opsMain(argv: readonly string[]): Promise<number> {
  // The running stack's settings (payload keys, ledger, operators, addresses) count where the environment sets none.
  const { env } = await withStackSettings(process.env);
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

  const code = await runOps(argv, ctx, (line) => void process.stderr.write(`${line}\n`));
  await connection?.close().catch(() => undefined);
  await (await ledger?.catch(() => undefined))?.close().catch(() => undefined);
  return code;
}
