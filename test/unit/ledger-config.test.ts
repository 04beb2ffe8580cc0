import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';

import { LEDGER_ENV_VAR, LedgerConfigError, LedgerError, ledgerConfigFromEnv, redact } from '../../ledger';

describe('ledgerConfigFromEnv (RETRYSAFE_LEDGER)', () => {
  const cwd = '/srv/app';
  const from = (value: string | undefined) =>
    ledgerConfigFromEnv(value === undefined ? {} : { [LEDGER_ENV_VAR]: value }, cwd);

  it('unset or empty means no ledger', () => {
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
