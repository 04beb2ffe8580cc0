// Resolves, and installs when missing, the Temporal CLI (dev server), the time-skipping test server, the headless
// chromium of the approval page tests, the PostgreSQL server of the ledger tests, Prometheus for the alert rules, Mailpit (built with Go) and
// localstripe (installed with pip), and Node.js 24 (the consumer test's second Node), so that `npm start` and the tests find them without any tool's own download.
// toxiproxy (built with Go, for the network faults).
// Mailpit's, localstripe's and toxiproxy's tests are skipped, with one line saying why, when the tool cannot be had; with
// RETRYSAFE_REQUIRE_SERVERS=1 (CI) that fails the setup instead.
// Usage: tsx scripts/setup-toolchain.ts [--quiet] [--cluster] [--compose]
// `--cluster` also builds the real Temporal server and its SQL tool (a few minutes the first time, cached after);
// `--compose` a Docker Compose v2+ client, which test/unit/compose.test.ts checks docker-compose.yml with.
import { parseArgs } from 'node:util';

import type { ResolvedTool } from '../cli/toolchain/resolve-temporal';
import { resolveTemporalCli, resolveTestServer } from '../cli/toolchain/resolve-temporal';
import type { ResolvedChromium } from './toolchain/resolve-chromium';
import { resolveChromium } from './toolchain/resolve-chromium';
import { resolveCompose } from './toolchain/resolve-compose';
import type { ResolvedPostgres } from './toolchain/resolve-postgres';
import { resolvePostgres } from './toolchain/resolve-postgres';
import { resolveLocalstripe } from './toolchain/resolve-localstripe';
import { resolveMailpit } from './toolchain/resolve-mailpit';
import { resolveToxiproxy } from './toolchain/resolve-toxiproxy';
import { resolveTemporalServer } from './toolchain/resolve-temporal-server';
import { resolveNodeLts } from './toolchain/resolve-node';
import { resolvePrometheus } from './toolchain/resolve-prometheus';
import { MissingServerError, REQUIRE_SERVERS_ENV, serversRequired } from './lib/required-servers';

function describe(tool: ResolvedTool | ResolvedChromium | ResolvedPostgres): string {
  const origin = [tool.source, tool.version].filter((part) => part !== undefined).join(', ');
  return `${tool.name}: ${tool.path ?? '(fetched by the SDK on first use)'} (${origin})`;
}

/**
 * A server that could not be had: its tests are skipped, and this says so; under RETRYSAFE_REQUIRE_SERVERS=1 (CI)
 * the setup fails instead, so that a run cannot be green with less coverage than it claims.
 */
function unavailable(name: string, tests: string) {
  return (err: unknown): undefined => {
    const why = `${name}: ${(err as Error).message.split('\n')[0]}`;
    if (serversRequired()) throw new MissingServerError(`${why}; ${REQUIRE_SERVERS_ENV}=1 makes that a failure`);
    console.error(`${why}; the ${tests} tests will be skipped (${REQUIRE_SERVERS_ENV}=1 makes this a failure)`);
    return undefined;
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      quiet: { type: 'boolean', default: false },
      cluster: { type: 'boolean', default: false },
      compose: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const quiet = values.quiet === true;
  const log = quiet ? undefined : (msg: string) => console.error(msg);
  // One after the other: the installs would otherwise share pip's cache and the machine's two cores.
  const cli = await resolveTemporalCli({ log });
  const testServer = await resolveTestServer({ log });
  const chromium = await resolveChromium({ log });
  const postgres = await resolvePostgres({ log });
  // Prometheus and promtool (Debian's package, unpacked), for the test of the shipped alert rules.
  const prometheus = await resolvePrometheus({ log });
  // The current LTS beside the machine's Node.js, for the consumer test (test/consumer/): a registry package.
  const nodeLts = await resolveNodeLts(log ? { log } : {});
  const cluster = values.cluster ? await resolveTemporalServer({ log: log ?? (() => undefined) }) : undefined;
  const compose = values.compose ? await resolveCompose({ log }) : undefined;
  // Mailpit (the SMTP example tool's server) is built with Go; without Go its tests say so and the rest runs.
  const mailpit = await resolveMailpit({ log: log ?? (() => undefined) }).catch(unavailable('mailpit', 'Mailpit'));
  // localstripe (the Stripe example tool's server) is installed with pip; without python3 its tests say so.
  const localstripe = await resolveLocalstripe({ log: log ?? (() => undefined) }).catch(
    unavailable('localstripe', 'localstripe'),
  );
  // toxiproxy (network faults between workers and providers, the ledger and Temporal) is built with Go as well.
  const toxiproxy = await resolveToxiproxy({ log: log ?? (() => undefined) }).catch(
    unavailable('toxiproxy', 'network-fault'),
  );
  if (quiet) return;
  // stdout lists the Temporal executables, one line each, as before; the browser's and PostgreSQL's lines go with the log.
  for (const tool of [cli, testServer]) console.log(describe(tool));
  console.error(describe(chromium));
  console.error(describe(postgres));
  console.error(
    `prometheus: ${prometheus.prometheus}, promtool ${prometheus.promtool} (${[prometheus.source, prometheus.version].filter(Boolean).join(', ')})`,
  );
  console.error(
    `node (LTS, consumer test): ${nodeLts.path} (${[nodeLts.source, nodeLts.version].filter(Boolean).join(', ')})`,
  );
  if (cluster) {
    const origin = [cluster.source, cluster.version].filter((part) => part !== undefined).join(', ');
    console.error(`temporal-server: ${cluster.server}, sql tool ${cluster.sqlTool} (${origin})`);
  }
  if (compose) console.error(`docker-compose: ${compose.command.join(' ')} (${compose.source}, ${compose.version})`);
  if (mailpit)
    console.error(`mailpit: ${mailpit.path} (${[mailpit.source, mailpit.version].filter(Boolean).join(', ')})`);
  if (toxiproxy)
    console.error(`toxiproxy: ${toxiproxy.path} (${[toxiproxy.source, toxiproxy.version].filter(Boolean).join(', ')})`);
  if (localstripe) {
    const where = localstripe.sitePackages
      ? `${localstripe.python} with ${localstripe.sitePackages}`
      : localstripe.python;
    console.error(`localstripe: ${where} (${[localstripe.source, localstripe.version].filter(Boolean).join(', ')})`);
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
