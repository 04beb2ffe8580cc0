/**
 * The few calls the SQLite ledger makes, over whichever driver this Node.js has: its built-in `node:sqlite`
 * (Node 22.13 and later, nothing to install or build), else `better-sqlite3` (any Node, a native module the
 * application installs: `npm install better-sqlite3`, and on npm 11 allow its build script). Both are synchronous,
 * take `?` parameters and return rows as plain objects, so the ledger's SQL is the same over either.
 */
import { createRequire } from 'node:module';

export interface SqliteStatement {
  run(...params: SqliteValue[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  get(...params: SqliteValue[]): unknown;
  all(...params: SqliteValue[]): unknown[];
}

export type SqliteValue = string | number | bigint | null;

export interface SqliteDatabase {
  /** Which driver opened it. */
  readonly driver: 'node:sqlite' | 'better-sqlite3';
  readonly isOpen: boolean;
  exec(sql: string): void;
  prepare(sql: string): SqliteStatement;
  /** Runs `fn` between BEGIN IMMEDIATE and COMMIT (the write lock first, so a second writer waits), or ROLLBACK. */
  immediate<T>(fn: () => T): T;
  close(): void;
}

/** No driver could be loaded: the message says what to install. */
export class SqliteDriverError extends Error {
  override readonly name = 'SqliteDriverError';
}

const load = createRequire(__filename);

/** Opens (creating) `file`, or `:memory:`, with the first driver this process has. */
export function openSqliteDatabase(file: string, options: { busyTimeoutMs: number }): SqliteDatabase {
  const builtIn = loadBuiltIn();
  if (builtIn) return fromNodeSqlite(new builtIn.DatabaseSync(file, { timeout: options.busyTimeoutMs }));
  let BetterSqlite3: new (file: string, options: { timeout: number }) => BetterDatabase;
  try {
    BetterSqlite3 = load('better-sqlite3') as typeof BetterSqlite3;
  } catch (err) {
    throw new SqliteDriverError(
      `the SQLite ledger needs Node.js 22.13 or later (its built-in node:sqlite) or the better-sqlite3 package ` +
        `(npm install better-sqlite3; npm 11 asks you to allow its build script): ${(err as Error).message.split('\n')[0]}`,
    );
  }
  return fromBetterSqlite3(new BetterSqlite3(file, { timeout: options.busyTimeoutMs }));
}

interface NodeSqlite {
  DatabaseSync: new (file: string, options?: { timeout?: number }) => NodeDatabase;
}
interface NodeDatabase {
  readonly isOpen: boolean;
  exec(sql: string): void;
  prepare(sql: string): SqliteStatement;
  close(): void;
}
interface BetterDatabase {
  readonly open: boolean;
  exec(sql: string): void;
  prepare(sql: string): SqliteStatement;
  transaction<T>(fn: () => T): { immediate(): T };
  close(): void;
}

/**
 * node:sqlite, when this Node.js has it unflagged (22.13+, 23.4+). It announces itself with an ExperimentalWarning on
 * some versions; that one warning is held back, since the ledger's use of it is this module's, not the application's.
 */
function loadBuiltIn(): NodeSqlite | undefined {
  const emit = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === 'string' ? warning : warning.message;
    if (/SQLite is an experimental feature/i.test(text)) return;
    return (emit as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    return load('node:sqlite') as NodeSqlite;
  } catch {
    return undefined;
  } finally {
    process.emitWarning = emit;
  }
}

/**
 * Prepares each SQL text once per database: the ledger's statements are a fixed set, and preparing them again for
 * every write was about 0.4 ms of the worker's main thread per action in the bench's profile. Bounded all the same.
 */
export function preparedOnce(prepare: (sql: string) => SqliteStatement, limit = 64): (sql: string) => SqliteStatement {
  const statements = new Map<string, SqliteStatement>();
  return (sql) => {
    let statement = statements.get(sql);
    if (!statement) {
      if (statements.size >= limit) statements.clear();
      statement = prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  };
}

function fromNodeSqlite(db: NodeDatabase): SqliteDatabase {
  return {
    driver: 'node:sqlite',
    get isOpen() {
      return db.isOpen;
    },
    exec: (sql) => db.exec(sql),
    prepare: preparedOnce((sql) => db.prepare(sql)),
    immediate<T>(fn: () => T): T {
      db.exec('BEGIN IMMEDIATE');
      try {
        const result = fn();
        db.exec('COMMIT');
        return result;
      } catch (err) {
        db.exec('ROLLBACK');
        throw err;
      }
    },
    close: () => db.close(),
  };
}

function fromBetterSqlite3(db: BetterDatabase): SqliteDatabase {
  return {
    driver: 'better-sqlite3',
    get isOpen() {
      return db.open;
    },
    exec: (sql) => db.exec(sql),
    prepare: preparedOnce((sql) => db.prepare(sql)),
    immediate: <T>(fn: () => T): T => db.transaction(fn).immediate(),
    close: () => db.close(),
  };
}
