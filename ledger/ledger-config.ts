import path from 'node:path';

import type { ActionLedger } from './action-ledger';
import { LedgerConfigError, LedgerSchemaError } from './action-ledger';
import type { LedgerMigration } from './migrations';
import { LEDGER_MIGRATIONS } from './migrations';
import { PostgresLedger } from './postgres-ledger';
import { SqliteLedger } from './sqlite-ledger';

/**
 * Where the durable ledger lives, from one environment variable:
 *
 *   RETRYSAFE_LEDGER=sqlite:.data/ledger.sqlite          a SQLite file, relative to the working directory
 *   RETRYSAFE_LEDGER=sqlite:/var/lib/retrysafe/ledger.db an absolute path
 *   RETRYSAFE_LEDGER=postgres://user:pass@host:5432/db   PostgreSQL (also postgresql://)
 *
 * The ledger row is each action's only record: a worker and a client need one (ledgerChoiceFromEnv); readers that
 * can do without, such as `retrysafe ops` commands that only ask Temporal, take unset or empty as none
 * (ledgerConfigFromEnv). `none`, which 0.2 accepted, is refused with what to set instead.
 */

export const LEDGER_ENV_VAR = 'RETRYSAFE_LEDGER';

/** Which ledger to open: a SQLite file or a PostgreSQL database. */
export type LedgerConfig =
  | { kind: 'sqlite'; /** absolute, or `:memory:` */ path: string }
  | { kind: 'postgres'; connectionString: string; poolSize?: number };

/**
 * Reads `RETRYSAFE_LEDGER` (`sqlite:PATH`, relative to `cwd`, or `postgres://…`); undefined when unset. Throws
 * LedgerConfigError naming the variable on a bad value.
 */
export function ledgerConfigFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): LedgerConfig | undefined {
  const raw = env[LEDGER_ENV_VAR];
  if (raw === undefined || raw.trim() === '') return undefined;
  const value = raw.trim();
  if (value === 'none') {
    throw new LedgerConfigError(
      `${LEDGER_ENV_VAR}: none is no longer accepted: since 0.3 the ledger row is every action's only record. ` +
        `${SET_ONE_OF} (docs/upgrading.md)`,
    );
  }
  const bad = (why: string) =>
    new LedgerConfigError(
      `${LEDGER_ENV_VAR}=${redact(value)} ${why}; expected sqlite:<path> or postgres://user@host:port/database`,
    );

  if (value.startsWith('sqlite:')) {
    const file = value.slice('sqlite:'.length);
    if (file === '') throw bad('names no file');
    if (file.startsWith('//')) throw bad('looks like a URL; write sqlite:<path>, e.g. sqlite:.data/ledger.sqlite');
    return { kind: 'sqlite', path: file === ':memory:' ? file : path.resolve(cwd, file) };
  }
  if (/^postgres(ql)?:\/\//i.test(value)) {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw bad('is not a valid URL');
    }
    if (url.hostname === '' && !url.searchParams.has('host')) throw bad('names no host');
    return { kind: 'postgres', connectionString: value };
  }
  throw bad('has an unknown scheme');
}

const SET_ONE_OF =
  `Set ${LEDGER_ENV_VAR}=sqlite:<file> for workers on one machine (retrysafe dev writes .retrysafe/dev.env with ` +
  `one), or ${LEDGER_ENV_VAR}=postgres://user@host:port/database for workers on several`;

/**
 * The ledger a worker or client must be given: a SQLite file (workers on one machine) or PostgreSQL (workers on
 * several). Unset, empty or `none` throws LedgerConfigError naming the setting and both choices; a bad value throws
 * as ledgerConfigFromEnv does.
 */
export function ledgerChoiceFromEnv(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): LedgerConfig {
  const config = ledgerConfigFromEnv(env, cwd);
  if (!config) {
    throw new LedgerConfigError(
      `${LEDGER_ENV_VAR}: not set, and every action's record is its ledger row. ${SET_ONE_OF}`,
    );
  }
  return config;
}

/** `value` with any password masked: what stands between the user name and the last `@`, and `password=` parameters. */
export function redact(value: string): string {
  return value
    .replace(/^([a-z][a-z0-9+.-]*:\/*)(.*)@/i, (_all, scheme: string, userinfo: string) => {
      const colon = userinfo.indexOf(':');
      return `${scheme}${colon === -1 ? userinfo : `${userinfo.slice(0, colon)}:***`}@`;
    })
    .replace(/([?&;\s]password=)[^&;\s]*/gi, '$1***');
}

/** Options for `openLedger`. */
export interface OpenLedgerOptions {
  /** The schema to migrate to (tests); default the code's. */
  migrations?: readonly LedgerMigration[];
  /**
   * false: leave the schema alone (a reader such as the ops CLI) and only check it: a version other than the code's
   * is a LedgerSchemaError naming both. Default true: apply the missing migrations (a worker).
   */
  migrate?: boolean;
}

/** Opens the configured ledger and brings its schema up to date (or checks it); closes it again when that fails. */
export async function openLedger(config: LedgerConfig, options: OpenLedgerOptions = {}): Promise<ActionLedger> {
  const migrations = options.migrations ?? LEDGER_MIGRATIONS;
  const ledger =
    config.kind === 'sqlite'
      ? new SqliteLedger(config.path, { migrations })
      : new PostgresLedger({
          connectionString: config.connectionString,
          ...(config.poolSize !== undefined ? { poolSize: config.poolSize } : {}),
          migrations,
        });
  try {
    if (options.migrate === false) {
      const version = await ledger.schemaVersion();
      const codeVersion = migrations.length;
      if (version !== codeVersion) throw new LedgerSchemaError(version, codeVersion);
    } else {
      await ledger.migrate();
    }
  } catch (err) {
    await ledger.close().catch(() => undefined);
    throw err;
  }
  return ledger;
}

/** Options for `openLedgerForReading`. */
export interface ReadLedgerOptions {
  /** How long to wait for a worker to create or migrate the schema; default 120 s. */
  waitMs?: number;
  /** How often to look again meanwhile; default 1 s. */
  pollMs?: number;
  /** Told each time the schema is still older than the code's. */
  onWaiting?: (err: LedgerSchemaError) => void;
}

/**
 * Opens a ledger that other processes migrate, for a reader that must never change its schema: the webhook router,
 * which faces the internet and may run under a database role that can only read. While the schema is older than the
 * code's (the workers have not started, or not yet migrated) it looks again; a newer schema fails at once, and so
 * does a wait that runs out, with the schema error and how long it waited.
 */
export async function openLedgerForReading(
  config: LedgerConfig,
  options: ReadLedgerOptions = {},
): Promise<ActionLedger> {
  const waitMs = options.waitMs ?? 120_000;
  const pollMs = options.pollMs ?? 1_000;
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      return await openLedger(config, { migrate: false });
    } catch (err) {
      if (!(err instanceof LedgerSchemaError) || err.databaseVersion > err.codeVersion) throw err;
      if (Date.now() + pollMs > deadline) {
        throw new Error(`${err.message}; waited ${waitMs / 1000} s for a worker to migrate it`, {
          cause: err,
        });
      }
      options.onWaiting?.(err);
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  }
}
