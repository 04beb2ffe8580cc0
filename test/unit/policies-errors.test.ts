import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ActivityFailure, ApplicationFailure, ChildWorkflowFailure, RetryState } from '@temporalio/common';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import {
  ERROR_CODES,
  RetrysafeError,
  errorCodeOf,
  isErrorCode,
  isRetrysafeError,
  type ErrorCode,
} from '../../policies/errors';
import { SetupError } from '../../workers/run-worker';
import { StackSettingsMismatch } from '../../client/stack-settings';

const ALL_CODES: ErrorCode[] = [
  'IntentMismatch',
  'InvalidIntent',
  'InvalidActionKey',
  'UnhashableValue',
  'PayloadTooLarge',
  'UnknownOperation',
  'InvalidTool',
  'BusinessRejected',
  'AuthorizationRejected',
  'ProviderValidationRejected',
  'TransientProviderError',
  'OutcomeUnknown',
  'IllegalTransition',
  'CeilingReached',
  'DecisionRejected',
  'PolicyChanged',
  'InvalidConfig',
];

function activityFailure(cause: Error): ActivityFailure {
  return new ActivityFailure(
    'activity failed',
    'dispatchEffect',
    '1',
    RetryState.NON_RETRYABLE_FAILURE,
    'worker-1',
    cause,
  );
}

describe('ERROR_CODES', () => {
  it('is the closed set of documented codes', () => {
    assert.deepEqual(Object.keys(ERROR_CODES).sort(), [...ALL_CODES].sort());
  });

  it('marks only TransientProviderError as retryable', () => {
    const retryable = (Object.keys(ERROR_CODES) as ErrorCode[]).filter((c) => ERROR_CODES[c].retryable);
    assert.deepEqual(retryable, ['TransientProviderError']);
  });

  it('classifies rejections as non-retryable and transient provider errors as retryable', () => {
    const table: Array<[ErrorCode, boolean]> = [
      ['BusinessRejected', false],
      ['InvalidIntent', false],
      ['IntentMismatch', false],
      ['AuthorizationRejected', false],
      ['ProviderValidationRejected', false],
      ['OutcomeUnknown', false],
      ['DecisionRejected', false],
      ['CeilingReached', false],
      ['IllegalTransition', false],
      ['InvalidTool', false],
      ['TransientProviderError', true],
    ];
    for (const [code, retryable] of table) {
      const err = new RetrysafeError(code, 'x');
      assert.equal(err.retryable, retryable, code);
      assert.equal(err.toFailure().nonRetryable, !retryable, code);
    }
  });

  it('isErrorCode accepts the codes and nothing else, including inherited property names', () => {
    for (const code of ALL_CODES) assert.equal(isErrorCode(code), true, code);
    for (const other of [
      'intentMismatch',
      'Error',
      '',
      'toString',
      'constructor',
      '__proto__',
      'hasOwnProperty',
      1,
      null,
      undefined,
    ]) {
      assert.equal(isErrorCode(other), false, String(other));
    }
  });
});

describe('RetrysafeError', () => {
  it('is an Error carrying its code as name, its message and its details', () => {
    const err = new RetrysafeError('IntentMismatch', 'another hash', { key: 'charge:v1:acme:e1' });
    assert.ok(err instanceof Error);
    assert.equal(err.code, 'IntentMismatch');
    assert.equal(err.name, 'IntentMismatch');
    assert.equal(err.message, 'another hash');
    assert.deepEqual(err.details, { key: 'charge:v1:acme:e1' });
  });

  it('defaults details to an empty object', () => {
    assert.deepEqual(new RetrysafeError('InvalidIntent', 'x').details, {});
  });

  for (const code of ALL_CODES) {
    it(`toFailure() for ${code} is an ApplicationFailure with type ${code} and nonRetryable = !retryable`, () => {
      const details = { field: 'amountCents', key: 'charge:v1:acme:e1' };
      const failure = new RetrysafeError(code, `boom ${code}`, details).toFailure();
      assert.ok(failure instanceof ApplicationFailure);
      assert.equal(failure.type, code);
      assert.equal(failure.message, `boom ${code}`);
      assert.equal(failure.nonRetryable, !ERROR_CODES[code].retryable);
      assert.deepEqual(failure.details, [details]);
    });
  }
});

describe('errorCodeOf', () => {
  it('reads the code of a RetrysafeError', () => {
    assert.equal(errorCodeOf(new RetrysafeError('CeilingReached', 'x')), 'CeilingReached');
  });

  it('reads the type of its ApplicationFailure form', () => {
    assert.equal(errorCodeOf(new RetrysafeError('BusinessRejected', 'declined').toFailure()), 'BusinessRejected');
  });

  it('finds the code inside an ActivityFailure', () => {
    const err = activityFailure(new RetrysafeError('IntentMismatch', 'x').toFailure());
    assert.equal(errorCodeOf(err), 'IntentMismatch');
  });

  it('finds the code inside a ChildWorkflowFailure wrapping an ActivityFailure', () => {
    const inner = activityFailure(
      ApplicationFailure.create({ type: 'BusinessRejected', message: 'declined', nonRetryable: true }),
    );
    const err = new ChildWorkflowFailure(
      'default',
      { workflowId: 'charge:v1:acme:e1', runId: 'r' },
      'actionWorkflowV3',
      RetryState.NON_RETRYABLE_FAILURE,
      inner,
    );
    assert.equal(errorCodeOf(err), 'BusinessRejected');
  });

  it('finds the code inside a WorkflowUpdateFailedError', () => {
    const err = new WorkflowUpdateFailedError('update failed', new RetrysafeError('IntentMismatch', 'x').toFailure());
    assert.equal(errorCodeOf(err), 'IntentMismatch');
  });

  it('finds the code through plain objects shaped like a failure chain', () => {
    assert.equal(errorCodeOf({ cause: { cause: { type: 'IntentMismatch' } } }), 'IntentMismatch');
  });

  it('finds a RetrysafeError set as the cause of another error', () => {
    const err = new Error('wrapper', { cause: new RetrysafeError('DecisionRejected', 'expired') });
    assert.equal(errorCodeOf(err), 'DecisionRejected');
  });

  it('returns the outermost code when several are chained', () => {
    const inner = new RetrysafeError('IntentMismatch', 'x').toFailure();
    const outer = ApplicationFailure.create({ type: 'CeilingReached', message: 'stop', cause: inner });
    assert.equal(errorCodeOf(outer), 'CeilingReached');
  });

  it('skips failure types that are not retrysafe codes and keeps looking down the chain', () => {
    const inner = new RetrysafeError('OutcomeUnknown', 'x').toFailure();
    const outer = ApplicationFailure.create({ type: 'SomeOtherError', message: 'y', cause: inner });
    assert.equal(errorCodeOf(outer), 'OutcomeUnknown');
  });

  it('returns undefined for unrelated errors and values', () => {
    assert.equal(errorCodeOf(new Error('boom')), undefined);
    assert.equal(errorCodeOf(new TypeError('boom')), undefined);
    assert.equal(errorCodeOf(ApplicationFailure.create({ type: 'Other', message: 'x' })), undefined);
    assert.equal(errorCodeOf(activityFailure(new Error('boom'))), undefined);
    assert.equal(errorCodeOf({ type: 'toString' }), undefined);
    assert.equal(errorCodeOf({ code: 'ECONNRESET' }), undefined);
    assert.equal(errorCodeOf(undefined), undefined);
    assert.equal(errorCodeOf(null), undefined);
    assert.equal(errorCodeOf('IntentMismatch'), undefined);
  });

  it('stops on a cyclic cause chain', () => {
    const a: { cause?: unknown } = {};
    const b: { cause?: unknown } = { cause: a };
    a.cause = b;
    assert.equal(errorCodeOf(a), undefined);
  });
});

describe('isRetrysafeError', () => {
  it('tells a RetrysafeError, of one code when asked, from anything else', () => {
    const err: unknown = new RetrysafeError('IntentMismatch', 'another request under the key', { key: 'k' });
    assert.equal(isRetrysafeError(err), true);
    assert.equal(isRetrysafeError(err, 'IntentMismatch'), true);
    assert.equal(isRetrysafeError(err, 'InvalidIntent'), false);
    assert.equal(isRetrysafeError(new Error('plain')), false);
    assert.equal(isRetrysafeError(ApplicationFailure.create({ type: 'IntentMismatch' })), false);
    if (isRetrysafeError(err, 'IntentMismatch')) {
      const code: 'IntentMismatch' = err.code;
      assert.equal(code, 'IntentMismatch');
      assert.deepEqual(err.details, { key: 'k' });
    }
  });

  it('answers for the settings errors a worker exits 2 on, which keep their names and messages', () => {
    const setup = new SetupError('CHAT_URL must be set');
    assert.equal(isRetrysafeError(setup, 'InvalidConfig'), true);
    assert.equal(setup.name, 'SetupError');
    assert.equal(setup.message, 'CHAT_URL must be set');
    assert.equal(setup.toFailure().type, 'InvalidConfig');
    assert.equal(setup.toFailure().nonRetryable, true);
    const mismatch = new StackSettingsMismatch('payload keys', 'the stack encrypts payloads; this worker does not');
    assert.equal(isRetrysafeError(mismatch, 'InvalidConfig'), true);
    assert.equal(mismatch.setting, 'payload keys');
    assert.equal(mismatch.name, 'StackSettingsMismatch');
  });
});
