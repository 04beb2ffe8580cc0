/**
 * What a command gets from the entry point: the environment, an output sink and a lazily connected
 * client. Commands never touch process.* themselves, so unit tests run them against a fake client.
 */
import type { RetrysafeClient } from '../../client';
import type { SignatureSource } from './signatures';
import type { ActionLedger } from '../../ledger';
import { EXIT, OpsError } from './errors';

/** The part of RetrysafeClient the ops commands use. */
export type OpsClient = Pick<
  RetrysafeClient,
  'listActions' | 'getAction' | 'resolveAction' | 'approveAction' | 'listWaitingRuns'
>;

export interface OpsContext {
  env: NodeJS.ProcessEnv;
  /** Writes one block of output to stdout (a newline is appended). */
  out(text: string): void;
  /** Warnings that must not mix into --json output. */
  warn(text: string): void;
  now(): Date;
  /** Connects on first use; commands that fail validation or authentication never connect. */
  client(): Promise<OpsClient>;
  /** Where decisions get signed (the approval service); the CLI holds no key. */
  signatures: SignatureSource;
  /** The durable ledger the workers write, opened on first use; undefined when none is configured. */
  ledger(): Promise<ActionLedger | undefined>;
}

export interface OpsCommand {
  name: string;
  /** One line for the command list. */
  summary: string;
  /** The full `--help` text. */
  usage: string;
  run(argv: readonly string[], ctx: OpsContext): Promise<void>;
}

/** The ledger the workers write, or a usage error saying how to name it. */
export async function requireLedger(ctx: OpsContext): Promise<ActionLedger> {
  const ledger = await ctx.ledger();
  if (!ledger) {
    throw new OpsError(
      'no ledger: set RETRYSAFE_LEDGER (sqlite:<file> or postgres://…) to the one the workers write',
      EXIT.usage,
    );
  }
  return ledger;
}
