import { assertLedgerProtocolHolds } from '../support/ledger-protocol/suite';

/** The ledger protocol's model (test/integration/ledger-protocol.test.ts) at 10,000 runs on each back end. */
assertLedgerProtocolHolds(10_000);
