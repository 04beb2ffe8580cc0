import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';

import {
  LEDGER_ENV_VAR,
  LedgerConfigError,
  LedgerError,
  ledgerChoiceFromEnv,
  ledgerConfigFromEnv,
  redact,
} from '../../ledger';
import { retrysafePlugin } from '../../workers/plugin';

describe('ledgerConfigFromEnv (RETRYSAFE_LEDGER)', () => {
  const cwd = '/srv/app';
  const from = (value: string | undefined) =>
    ledgerConfigFromEnv(value === undefined ? {} : { [LEDGER_ENV_VAR]: value }, cwd);

  it('unset or empty means no ledger, for a reader', () => {
    assert.equal(from(undefined), undefined);
    assert.equal(from(''), undefined);
    assert.equal(from('   '), undefined);
  });

  it('sqlite:<path> is relative to the working directory, or absolute', () => {
    assert.deepEqual(from('sqlite:.data/ledger.sqlite'), {
      kind: 'sqlite',
      path: path.join(cwd, '.data', 'ledger.sqlite'),
    });
    assert.deepEqual(from('sqlite:/var/lib/retrysafe/ledger.db'), {
      kind: 'sqlite',
      path: '/var/lib/retrysafe/ledger.db',
    });
    assert.deepEqual(from('sqlite::memory:'), { kind: 'sqlite', path: ':memory:' });
  });

  it('postgres:// and postgresql:// URLs are passed on whole', () => {
    for (const url of [
      'postgres://app:pw@db.internal:5432/retrysafe',
      'postgresql://app@127.0.0.1/ledger?sslmode=require',
    ]) {
      assert.deepEqual(from(url), { kind: 'postgres', connectionString: url });
    }
  });

  it('a bad value is a LedgerConfigError naming the variable and never the password', () => {
    for (const value of [
      'mysql://app:s3cret@db/ledger',
      'postgres://app:s3cret@',
      'postgres://app:s3@cret@:99999/x',
      'postgres:/app:s3cret@db/ledger',
      'sqlite:',
      'sqlite://app:s3cret@host/file',
      'ledger.sqlite',
      'host=db password=s3cret',
    ]) {
      assert.throws(
        () => from(value),
        (err: unknown) => {
          assert.ok(err instanceof LedgerConfigError, value);
          assert.ok(err instanceof LedgerError);
          assert.equal(err.code, 'InvalidConfig');
          assert.match(err.message, /RETRYSAFE_LEDGER=/);
          assert.doesNotMatch(err.message, /s3|cret/, `${value} → ${err.message}`);
          return true;
        },
      );
    }
  });

  it('redact masks userinfo passwords and password= parameters, keeping the user name', () => {
    assert.equal(redact('postgres://app:pw@db:5432/x'), 'postgres://app:***@db:5432/x');
    assert.equal(redact('postgres://app@db/x'), 'postgres://app@db/x');
    assert.equal(redact('postgres://db/x?user=app&password=pw'), 'postgres://db/x?user=app&password=***');
  });
});

describe('a worker and a client need their ledger: none is refused', () => {
  const cwd = '/srv/app';
  const choice = (value: string | undefined) =>
    ledgerChoiceFromEnv(value === undefined ? {} : { [LEDGER_ENV_VAR]: value }, cwd);

  it('refuses unset or empty, naming the variable and both choices', () => {
    for (const value of [undefined, '', '  ']) {
      assert.throws(
        () => choice(value),
        (err: unknown) =>
          err instanceof LedgerConfigError &&
          err.message.startsWith('RETRYSAFE_LEDGER: not set') &&
          /RETRYSAFE_LEDGER=sqlite:<file> .*RETRYSAFE_LEDGER=postgres:\/\//.test(err.message),
      );
    }
  });

  it("refuses none, 0.2's choice, saying what to set instead, for workers and readers alike", () => {
    for (const read of [choice, (v: string) => ledgerConfigFromEnv({ [LEDGER_ENV_VAR]: v }, cwd)]) {
      assert.throws(
        () => read('none'),
        (err: unknown) =>
          err instanceof LedgerConfigError &&
          /^RETRYSAFE_LEDGER: none is no longer accepted/.test(err.message) &&
          /sqlite:<file>.*postgres:\/\//.test(err.message),
      );
    }
  });

  it('takes a SQLite file and PostgreSQL', () => {
    assert.deepEqual(choice('sqlite:.data/l.sqlite'), { kind: 'sqlite', path: path.resolve(cwd, '.data/l.sqlite') });
    assert.deepEqual(choice('postgres://app@db:5432/x'), {
      kind: 'postgres',
      connectionString: 'postgres://app@db:5432/x',
    });
    assert.throws(() => choice('mysql://db/x'), LedgerConfigError);
  });

  it("retrysafePlugin without a ledger, or with 0.2's 'none', stops at once, saying what to pass", () => {
    for (const ledger of [undefined, 'none']) {
      assert.throws(
        () => retrysafePlugin({ tools: [], ledger } as unknown as Parameters<typeof retrysafePlugin>[0]),
        /`ledger` must be an ActionLedger \(openLedger\(ledgerChoiceFromEnv\(\)\)\), not (undefined|none).*RETRYSAFE_LEDGER=sqlite:<file>/,
      );
    }
  });
});
