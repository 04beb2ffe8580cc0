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
