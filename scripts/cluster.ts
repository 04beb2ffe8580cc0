// npm run cluster: the real Temporal server as a multi-service cluster on PostgreSQL, on this machine, until Ctrl-C.
// Usage: npm run cluster [-- --namespace NAME] [--no-build] [--log-level LEVEL]
import { parseArgs } from 'node:util';

import { HISTORY_SHARDS, NAMESPACE_RETENTION_HOURS, TEMPORAL_SERVER_VERSION } from './lib/cluster-config';
import { startCluster } from './lib/temporal-cluster';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      namespace: { type: 'string', default: 'default' },
      'no-build': { type: 'boolean', default: false },
      'log-level': { type: 'string', default: 'warn' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log('usage: npm run cluster [-- --namespace NAME] [--no-build] [--log-level debug|info|warn|error]');
    return;
  }
  const say = (msg: string) => console.error(msg);
  // Ctrl-C while starting: exit at once; the watchdogs of whatever already runs stop it and delete its folders.
  const interruptedWhileStarting = () => {
    say('interrupted while starting: what was started is stopped and its folders deleted');
    process.exit(130);
  };
  process.once('SIGINT', interruptedWhileStarting).once('SIGTERM', interruptedWhileStarting);
  say(`starting Temporal ${TEMPORAL_SERVER_VERSION}: PostgreSQL, then frontend, history, matching and worker…`);
  const cluster = await startCluster({
    namespace: values.namespace,
    build: !values['no-build'],
    logLevel: values['log-level'],
    log: say,
  });
  // Workers of a cluster keep the action ledger in PostgreSQL (one for every host): a database of the cluster's own.
  const ledgerUrl = await cluster.postgres.createDatabase('retrysafe_ledger');
  const pids = (['frontend', 'history', 'matching', 'worker'] as const)
    .map((service) => `${service} ${cluster.pid(service)}`)
    .join(', ');
  say('');
  const version = cluster.binaries.version ?? `from ${cluster.binaries.source}, version not checked`;
  say(`Temporal cluster ready in ${(cluster.startupMs / 1000).toFixed(1)} s (server ${version}).`);
  say(`  services (pid): ${pids}; ${HISTORY_SHARDS} history shards`);
  say(`  PostgreSQL ${cluster.postgres.url} (pid ${cluster.postgres.pid}), data ${cluster.postgres.dataDir}`);
  say(
    `  namespace ${cluster.namespace}: ${NAMESPACE_RETENTION_HOURS / 24} days retention, retrysafe's search attributes`,
  );
  say(`  service logs: ${cluster.dataDir}/logs/`);
  say('');
  say('Point a worker, the ops CLI or your application at it with the standard environment configuration, and the');
  say("action ledger in the cluster's PostgreSQL:");
  say(
    `  export TEMPORAL_ADDRESS=${cluster.address} TEMPORAL_NAMESPACE=${cluster.namespace} RETRYSAFE_LEDGER=${ledgerUrl}`,
  );
  say('For the example worker, start the sandbox providers in another shell and export the line they print:');
  say('  npm run providers            # prints export RETRYSAFE_PAYMENTS_URL=… (one line)');
  say('  npm run worker               # with both exports in its shell');
  say('');
  say('Everything is thrown away on exit. Ctrl-C to stop.');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    say(`${signal}: stopping the cluster…`);
    await cluster.stop();
    say('stopped');
    process.exit(0);
  };
  process.removeListener('SIGINT', interruptedWhileStarting).removeListener('SIGTERM', interruptedWhileStarting);
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
