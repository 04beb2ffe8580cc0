import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PostgresLedger, SqliteLedger, type ActionLedger } from '../../../ledger';
import { startPostgres, type PostgresServer } from '../postgres';
import { assertProtocol, protocolRunOptions } from './model';

/**
 * Registers the model's tests on both back ends, each asserting the protocol (`assertProtocol`, fast-check) over
 * `defaultRuns` runs unless RETRYSAFE_LEDGER_PROTOCOL_RUNS says; a failure names the seed that replays it.
 */
export function assertLedgerProtocolHolds(defaultRuns: number): void {
  const options = protocolRunOptions(defaultRuns);
  describe('the ledger protocol, as a model', () => {
    let dir: string;
    let postgres: PostgresServer | undefined;
    const opened: ActionLedger[] = [];

    before(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-ledger-protocol-'));
      console.error(`# ledger protocol: ${options.numRuns} runs, seed ${options.seed}`);
    });
    after(async () => {
      await Promise.all(opened.map((l) => l.close()));
      await postgres?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('holds on the SQLite ledger', async () => {
      const ledger = new SqliteLedger(path.join(dir, 'ledger.sqlite'));
      opened.push(ledger);
      await ledger.migrate();
      const { ms } = await assertProtocol('sqlite', ledger, options);
      console.error(`# sqlite: ${options.numRuns} runs in ${Math.round(ms)} ms`);
    });

    it('holds on the PostgreSQL ledger', async () => {
      postgres = await startPostgres();
      const ledger = new PostgresLedger({ connectionString: await postgres.createDatabase('protocol') });
      opened.push(ledger);
      await ledger.migrate();
      const { ms } = await assertProtocol('postgres', ledger, options);
      console.error(`# postgres: ${options.numRuns} runs in ${Math.round(ms)} ms`);
    });
  });
}
