import { assertLedgerProtocolHolds } from '../support/ledger-protocol/suite';

/**
 * The ledger protocol, checked as a model by fast-check on both back ends (test/support/ledger-protocol/model.ts):
 * run acts, action workflows and sweepers, interleaved step by step and killed between any two of their writes, never
 * send twice to a key-less provider and leave a row that says what the provider holds. A few hundred runs here;
 * `npm run test:long` runs 10,000 (RETRYSAFE_LEDGER_PROTOCOL_RUNS), and a failure prints the seed that replays it.
 */
assertLedgerProtocolHolds(200);
