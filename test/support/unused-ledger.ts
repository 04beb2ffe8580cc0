import type { ActionLedger } from '../../ledger';

/**
 * A ledger for tests of code that must not touch one (the executor's table, with no entry handed to it): every call
 * fails the test, naming the method.
 */
export function unusedLedger(): ActionLedger {
  return new Proxy({ kind: 'sqlite' } as ActionLedger, {
    get(target, prop) {
      if (prop === 'kind') return target.kind;
      if (prop === 'then') return undefined;
      return () => {
        throw new Error(`this test's ledger must not be used, and ${String(prop)} was called`);
      };
    },
  });
}
