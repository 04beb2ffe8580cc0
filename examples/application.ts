/**
 * Application code using retrysafe: claim a charge for a business event and wait for its outcome. Run
 * it against a running stack (`npm start`, then in another shell):
 *   npx tsx examples/application.ts
 * It reads the standard Temporal connection settings and the example tools' provider URLs.
 */
import type { Client } from '@temporalio/client';
import { sandboxUrlsFromEnv } from './sandbox-env';
import { exampleTools, type ChargeIntent, type SandboxUrls } from './tools';
import { RetrysafeClient, connectClient, type ActionSnapshot } from 'retrysafe';
import type { ActionLedger } from 'retrysafe/worker';

export async function chargeForEvent(
  client: Client,
  urls: SandboxUrls,
  eventId: string,
  taskQueue?: string,
  ledger?: ActionLedger,
): Promise<{ first: ActionSnapshot; again: ActionSnapshot }> {
  // The ledger the workers keep: the one given, else the one RETRYSAFE_LEDGER names (closed below).
  const rs = new RetrysafeClient(client, {
    tools: exampleTools(urls),
    ...(taskQueue ? { taskQueue } : {}),
    ...(ledger ? { ledger } : {}),
  });
  try {
    return await claimTwice(rs, eventId);
  } finally {
    await rs.close();
  }
}

async function claimTwice(rs: RetrysafeClient, eventId: string) {
  const charge: ChargeIntent = {
    operation: 'charge',
    amountCents: 1990,
    currency: 'usd',
    customerId: 'cus_acme',
    paymentMethod: 'pm_7',
    merchantReference: 'A-2001',
  };
  // Claimed by tenant + business event: the key is charge:v1:acme:<eventId>, whoever claims it and however often.
  const first = await rs.claimAction({ tenant: 'acme', eventId }, charge, { wait: true });
  // The same request again is the same action: its outcome, not a second charge.
  const again = await rs.claimAction({ tenant: 'acme', eventId }, charge);
  return { first, again };
}

if (require.main === module) {
  void (async () => {
    const { client, connection } = await connectClient();
    try {
      const { first, again } = await chargeForEvent(
        client,
        sandboxUrlsFromEnv(process.env),
        process.argv[2] ?? `app-${Date.now()}`,
      );
      process.stdout.write(
        `${first.key}: ${first.status} ${first.providerRef ?? ''}; claimed again: ${again.status} ${again.providerRef ?? ''}\n`,
      );
    } finally {
      await connection.close();
    }
  })().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
