/**
 * The ops CLI's exit codes, one per kind of failure, so scripts around it can tell a typo from a
 * refused login from an action that is not there.
 */
export const EXIT = {
  ok: 0,
  /** The request was well formed but could not be carried out (no such action, refused by the action, no server). */
  failed: 1,
  /** Bad arguments: nothing was sent. */
  usage: 2,
  /** Missing or unknown operator token: nothing was sent. */
  unauthorized: 3,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error the CLI reports as one line on stderr and turns into its exit code. */
export class OpsError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
  ) {
    super(message);
    this.name = 'OpsError';
  }
}

/** A bad argument. The message starts with the argument's name (`--status: …`, `KEY: …`). */
export class UsageError extends OpsError {
  constructor(message: string) {
    super(message, EXIT.usage);
    this.name = 'UsageError';
  }
}

export class UnauthorizedError extends OpsError {
  constructor(message: string) {
    super(message, EXIT.unauthorized);
    this.name = 'UnauthorizedError';
  }
}
