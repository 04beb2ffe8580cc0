// npm run providers: the five sandbox providers on free loopback ports, until Ctrl-C, for a worker you run
// yourself (on `npm run cluster`, or any Temporal). Prints the RETRYSAFE_*_URL settings the example worker reads:
//   eval "$(npm run --silent providers | head -1)"   in scripts; or copy the export line by hand.
import { startSandboxProviders } from '../examples/sandbox-providers/spawn';
import { sandboxUrlsToEnv } from '../examples/sandbox-env';

async function main(): Promise<void> {
  if (process.argv.slice(2).some((arg) => arg === '-h' || arg === '--help')) {
    console.log('usage: npm run providers   (starts payments, email, tickets, inventory and shipping until Ctrl-C)');
    return;
  }
  const providers = await startSandboxProviders();
  const env = sandboxUrlsToEnv({
    payments: providers.payments.url,
    email: providers.email.url,
    tickets: providers.tickets.url,
    inventory: providers.inventory.url,
    shipping: providers.shipping.url,
  });
  // stdout: one line a shell can eval; the rest goes to stderr.
  console.log(
    `export ${Object.entries(env)
      .map(([name, value]) => `${name}=${value}`)
      .join(' ')}`,
  );
  console.error('sandbox providers up; give the line above to `npm run worker`. Ctrl-C to stop.');
  const stop = () => {
    void providers.stopAll().then(() => process.exit(0));
  };
  process.once('SIGINT', stop).once('SIGTERM', stop);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
