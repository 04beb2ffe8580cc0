import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { openSqliteDatabase, preparedOnce, type SqliteStatement } from '../../ledger/sqlite-driver';

describe('SQLite statements', () => {
  it('are prepared once per SQL text and database, and still answer with fresh values', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-statements-'));
    try {
      const db = openSqliteDatabase(path.join(dir, 'ledger.sqlite'), { busyTimeoutMs: 1000 });
      db.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER)');
      const insert = 'INSERT INTO t (k, v) VALUES (?, ?)';
      assert.equal(db.prepare(insert), db.prepare(insert), 'the same statement for the same text');
      db.immediate(() => db.prepare(insert).run('a', 1));
      db.immediate(() => db.prepare(insert).run('b', 2));
      const select = 'SELECT v FROM t WHERE k = ?';
      assert.deepEqual(db.prepare(select).get('a'), { v: 1 });
      assert.deepEqual(db.prepare(select).get('b'), { v: 2 });
      db.close();
      // A second database prepares its own.
      const other = openSqliteDatabase(path.join(dir, 'ledger.sqlite'), { busyTimeoutMs: 1000 });
      assert.deepEqual(other.prepare(select).get('b'), { v: 2 });
      other.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('keep at most the limit, starting afresh past it', () => {
    const prepared: string[] = [];
    const prepare = preparedOnce((sql) => {
      prepared.push(sql);
      return { sql } as unknown as SqliteStatement;
    }, 2);
    prepare('a');
    prepare('b');
    prepare('a');
    assert.deepEqual(prepared, ['a', 'b']);
    prepare('c');
    prepare('a');
    assert.deepEqual(prepared, ['a', 'b', 'c', 'a']);
  });
});
