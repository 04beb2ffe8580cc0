/** A Temporal executable or the test browser could not be resolved; `attempts` says what each source answered, in order. */
export class ToolchainError extends Error {
  override readonly name = 'ToolchainError';

  constructor(
    message: string,
    readonly attempts: readonly string[] = [],
  ) {
    super(message);
  }
}

/** What was missing, in a few words for a skip line: the last source tried (the project's own folder), or the message. */
export function missingPiece(err: unknown): string {
  if (err instanceof ToolchainError && err.attempts.length) return err.attempts[err.attempts.length - 1];
  return (err instanceof Error ? err.message : String(err)).split('\n')[0];
}
