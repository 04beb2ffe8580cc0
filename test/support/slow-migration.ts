/**
 * A child process for the ledger's crash test: opens the ledger named by RETRYSAFE_LEDGER with the code's
 * migrations plus a slow next version (it fills a table, or sleeps, inside its transaction), says `migrating` on
 * stdout, and migrates. The test SIGKILLs it mid-migration.
 */
import {
  LEDGER_MIGRATIONS,
  LEDGER_SCHEMA_VERSION,
  ledgerConfigFromEnv,
  openLedger,
  type LedgerMigration,
} from '../../ledger';

/** A migration after the code's last one, slow enough to be killed in the middle. */
export const SLOW_NEXT: LedgerMigration = {
  version: LEDGER_SCHEMA_VERSION + 1,
  name: 'a slow migration (test)',
  sqlite: [
    'CREATE TABLE slow_test (n INTEGER)',
    'WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 50000000) INSERT INTO slow_test SELECT n FROM c',
  ],
  postgres: ['CREATE TABLE slow_test (n INTEGER)', 'SELECT pg_sleep(4)'],
};

if (require.main === module) {
  const config = ledgerConfigFromEnv(process.env);
  if (!config) throw new Error('RETRYSAFE_LEDGER is not set');
  process.stdout.write('migrating\n');
  void openLedger(config, { migrations: [...LEDGER_MIGRATIONS, SLOW_NEXT] }).then(async (ledger) => {
    process.stdout.write('migrated\n');
    await ledger.close();
  });
}
