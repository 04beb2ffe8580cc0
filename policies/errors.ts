import { ApplicationFailure } from '@temporalio/common';

/**
 * The closed set of failures retrysafe raises. Each maps to an `ApplicationFailure` whose `type` is the
 * code, so clients and workflows can branch on it across the wire. `retryable` says whether Temporal's
 * retry policy may try again; everything else is final for the attempt that raised it.
 */
export const ERROR_CODES = {
  /** The same action key was claimed with another request hash. Never answered with the old result. */
  IntentMismatch: { retryable: false },
  /** An intent failed its schema; `field` names the first offending field. */
  InvalidIntent: { retryable: false },
  /** An action key or one of its parts is malformed. */
  InvalidActionKey: { retryable: false },
  /** A value cannot be hashed canonically (undefined, NaN, a Date, a function, …). */
  UnhashableValue: { retryable: false },
  /** The serialized intent exceeds the payload limit. */
  PayloadTooLarge: { retryable: false },
  /** The operation names no registered tool. */
  UnknownOperation: { retryable: false },
  /** A tool definition is malformed; the worker refuses to start with it. */
  InvalidTool: { retryable: false },
  /** The provider refused the request on business grounds (card declined, out of stock). */
  BusinessRejected: { retryable: false },
  /** The provider refused our credentials or the request's authority. */
  AuthorizationRejected: { retryable: false },
  /** The provider answered that the request itself is invalid. */
  ProviderValidationRejected: { retryable: false },
  /** Connection reset, 429, 5xx or a timeout: the request may be retried under the contract's rules. */
  TransientProviderError: { retryable: true },
  /** The provider may or may not have committed and nothing may be resent; reconcile or ask a human. */
  OutcomeUnknown: { retryable: false },
  /** A status change not allowed by the effect status machine. A bug, never retried. */
  IllegalTransition: { retryable: false },
  /** A per-action limit or run ceiling was reached; the run waits in needs_review. */
  CeilingReached: { retryable: false },
  /** A human approval was unsigned, forged, for another action or hash, or expired. */
  DecisionRejected: { retryable: false },
  /**
   * The tenant's policy changed while the action waited for its approval: it now needs a person to review it, and
   * the executor sent nothing with the approval.
   */
  PolicyChanged: { retryable: false },
  /**
   * A setting, a configuration or key file, or an address that a process cannot start with; the message names the
   * variable or the file. A worker process exits 2 on it, before anything connects.
   */
  InvalidConfig: { retryable: false },
} as const;

/** The code of a RetrysafeError: the failure type of the ApplicationFailure it travels as. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** A typed retrysafe error. `details` carries structured context (field names, keys, hashes). */
export class RetrysafeError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = code;
  }

  /** Why, in one word, when the refusal names it (`expired`, `bad-signature`, `missing-role`, `card-number`…). */
  get reason(): string | undefined {
    return typeof this.details.reason === 'string' ? this.details.reason : undefined;
  }

  get retryable(): boolean {
    return ERROR_CODES[this.code].retryable;
  }

  /** The Temporal form of this error; its `type` is the code and `nonRetryable` follows the table. */
  toFailure(): ApplicationFailure {
    return ApplicationFailure.create({
      type: this.code,
      message: this.message,
      nonRetryable: !this.retryable,
      details: [this.details],
    });
  }
}

/**
 * Whether `err` is a RetrysafeError, of `code` when one is given: `isRetrysafeError(err, 'IntentMismatch')` narrows
 * `err.code` to that code. A failure that arrived over the wire (an ApplicationFailure in a chain) is not one:
 * `errorCodeOf` reads its code.
 */
export function isRetrysafeError<C extends ErrorCode = ErrorCode>(
  err: unknown,
  code?: C,
): err is RetrysafeError & { readonly code: C } {
  return err instanceof RetrysafeError && (code === undefined || err.code === code);
}

/**
 * An `InvalidConfig` error under the name the module that throws it has always given it (`SetupError`,
 * `ConfigError`, …), so logs and `instanceof` inside the engine read as before; the package exports none of these
 * names, only RetrysafeError and isRetrysafeError.
 */
export function invalidConfigError(name: string) {
  return class extends RetrysafeError {
    constructor(message: string, details: Record<string, unknown> = {}) {
      super('InvalidConfig', message, details);
      this.name = name;
    }
  };
}

/** Whether a string is one of retrysafe's error codes. */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(ERROR_CODES, value);
}

/**
 * Finds the retrysafe error code in a failure chain as it arrives at a client or workflow
 * (ApplicationFailure nested in ActivityFailure, ChildWorkflowFailure or WorkflowUpdateFailedError).
 */
export function errorCodeOf(err: unknown): ErrorCode | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 8; depth++) {
    const candidate = e as { type?: unknown; code?: unknown; cause?: unknown };
    if (isErrorCode(candidate.type)) return candidate.type;
    if (e instanceof RetrysafeError) return e.code;
    e = candidate.cause;
  }
  return undefined;
}

/**
 * The structured details of the first retrysafe error in a failure chain (RetrysafeError.details, or
 * the first detail of its ApplicationFailure form), e.g. `{ reason: 'unknown-key' }` of a refusal.
 */
export function errorDetailsOf(err: unknown): Record<string, unknown> | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 8; depth++) {
    if (e instanceof RetrysafeError) return e.details;
    const candidate = e as { type?: unknown; details?: unknown; cause?: unknown };
    if (isErrorCode(candidate.type)) {
      const first = Array.isArray(candidate.details) ? (candidate.details[0] as unknown) : undefined;
      return typeof first === 'object' && first !== null ? (first as Record<string, unknown>) : {};
    }
    e = candidate.cause;
  }
  return undefined;
}
