import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import {
  isActionKey,
  MAX_KEY_LENGTH,
  actionKeyForStep,
  formatActionKey,
  parseActionKey,
  parseRunWorkflowId,
  runWorkflowId,
  type ActionKeyParts,
} from '../../policies/action-key';
import { RetrysafeError } from '../../policies/errors';

const RENEWAL: ActionKeyParts = { operation: 'charge', version: 1, tenant: 'acme', eventId: 'renewal-2026-08-28-01' };

/**
 * Moves this test's clock (Date) a year and a day ahead, instead of sleeping a few milliseconds: a key that took
 * anything from the time, down to the day or the year, would change.
 */
function laterClock(t: TestContext): void {
  const now = Date.now();
  t.mock.timers.enable({ apis: ['Date'], now });
  t.mock.timers.setTime(now + 366 * 24 * 60 * 60 * 1000);
  assert.ok(Date.now() > now, 'the mocked clock moved');
}

function assertRefused(fn: () => unknown, field: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof RetrysafeError, `expected a RetrysafeError, got ${String(err)}`);
    assert.equal(err.code, 'InvalidActionKey');
    assert.equal(err.details.field, field);
    return true;
  });
}

describe('formatActionKey', () => {
  it('joins operation, version, tenant and event into operation:vN:tenant:eventId', () => {
    assert.equal(formatActionKey(RENEWAL), 'charge:v1:acme:renewal-2026-08-28-01');
  });

  it('appends the step ID as a fifth segment when one is given', () => {
    assert.equal(
      formatActionKey({ ...RENEWAL, stepId: 'charge-card' }),
      'charge:v1:acme:renewal-2026-08-28-01:charge-card',
    );
  });

  it('writes the version as vN for versions above 1', () => {
    assert.equal(formatActionKey({ ...RENEWAL, version: 12 }), 'charge:v12:acme:renewal-2026-08-28-01');
  });

  it('accepts letters, digits, dots, underscores and dashes inside parts', () => {
    assert.equal(
      formatActionKey({ operation: 'send-email', version: 3, tenant: 'Acme_EU.2', eventId: 'evt.01_a-b' }),
      'send-email:v3:Acme_EU.2:evt.01_a-b',
    );
  });

  it('gives the same key for the same parts, every time', () => {
    const keys = new Set(Array.from({ length: 50 }, () => formatActionKey({ ...RENEWAL })));
    assert.deepEqual([...keys], ['charge:v1:acme:renewal-2026-08-28-01']);
  });

  it('does not depend on the time it is computed at', (t) => {
    const before = formatActionKey({ ...RENEWAL, stepId: 's1' });
    const runBefore = runWorkflowId('acme', 'renewal-2026-08-28-01');
    laterClock(t);
    assert.equal(formatActionKey({ ...RENEWAL, stepId: 's1' }), before);
    assert.equal(runWorkflowId('acme', 'renewal-2026-08-28-01'), runBefore);
  });

  it('gives different keys to different steps of the same event', () => {
    assert.notEqual(formatActionKey({ ...RENEWAL, stepId: 'a' }), formatActionKey({ ...RENEWAL, stepId: 'b' }));
    assert.notEqual(formatActionKey({ ...RENEWAL, stepId: 'a' }), formatActionKey(RENEWAL));
  });

  for (const field of ['operation', 'tenant', 'eventId', 'stepId'] as const) {
    it(`refuses an empty ${field}, naming it`, () => {
      assertRefused(() => formatActionKey({ ...RENEWAL, [field]: '' }), field);
    });

    it(`refuses a ${field} containing the ':' delimiter, naming it`, () => {
      assertRefused(() => formatActionKey({ ...RENEWAL, [field]: 'a:b' }), field);
    });

    it(`refuses a ${field} containing spaces, naming it`, () => {
      assertRefused(() => formatActionKey({ ...RENEWAL, [field]: 'a b' }), field);
      assertRefused(() => formatActionKey({ ...RENEWAL, [field]: ' ab' }), field);
      assertRefused(() => formatActionKey({ ...RENEWAL, [field]: 'ab\t' }), field);
    });

    it(`refuses unicode look-alikes in ${field}, naming it`, () => {
      // Cyrillic 'а' (U+0430) looks like Latin 'a'; fullwidth colon and fullwidth digits look like ASCII.
      for (const lookAlike of ['\u0430cme', 'a\uff1ab', '\uff11\uff12', 'caf\u00e9', 'zero\u200bwidth']) {
        assertRefused(() => formatActionKey({ ...RENEWAL, [field]: lookAlike }), field);
      }
    });

    it(`refuses a ${field} that starts with punctuation or is longer than 80 characters`, () => {
      assertRefused(() => formatActionKey({ ...RENEWAL, [field]: '-abc' }), field);
      assertRefused(() => formatActionKey({ ...RENEWAL, [field]: '.abc' }), field);
      assertRefused(() => formatActionKey({ ...RENEWAL, [field]: 'x'.repeat(81) }), field);
    });
  }

  it('refuses a part that is not a string', () => {
    assertRefused(() => formatActionKey({ ...RENEWAL, tenant: 42 as unknown as string }), 'tenant');
  });

  it('refuses version 0, negative, fractional, NaN and non-number versions', () => {
    for (const version of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '1' as unknown as number]) {
      assertRefused(() => formatActionKey({ ...RENEWAL, version }), 'version');
    }
  });

  it('refuses versions too large to round-trip through the vN segment', () => {
    assertRefused(() => formatActionKey({ ...RENEWAL, version: 1e21 }), 'version');
    assertRefused(() => formatActionKey({ ...RENEWAL, version: Number.MAX_SAFE_INTEGER + 1 }), 'version');
  });

  it(`refuses a key longer than ${MAX_KEY_LENGTH} characters even when each part is valid`, () => {
    const part = 'x'.repeat(80);
    assertRefused(
      () => formatActionKey({ operation: part, version: 1, tenant: part, eventId: part, stepId: part }),
      'key',
    );
  });

  it(`accepts a key of exactly ${MAX_KEY_LENGTH} characters`, () => {
    // Four 80-character parts would already be 80 + ':v1:' + 80 + ':' + 80 + ':' = 246 characters.
    const operation = 'o'.repeat(80);
    const tenant = 't'.repeat(80);
    const eventId = 'e'.repeat(80);
    const stepId = 's'.repeat(MAX_KEY_LENGTH - 246);
    const key = formatActionKey({ operation, version: 1, tenant, eventId, stepId });
    assert.equal(key.length, MAX_KEY_LENGTH);
    assertRefused(() => formatActionKey({ operation, version: 1, tenant, eventId, stepId: `${stepId}s` }), 'key');
  });

  it('refusals are RetrysafeErrors that say what to fix', () => {
    try {
      formatActionKey({ ...RENEWAL, tenant: 'ac me' });
      assert.fail('expected a refusal');
    } catch (err) {
      assert.ok(err instanceof RetrysafeError);
      assert.ok(err instanceof Error);
      assert.equal(err.retryable, false);
      assert.match(err.message, /tenant/);
      assert.match(err.message, /"ac me"/);
    }
  });
});

describe('parseActionKey', () => {
  it('reads back the parts of a four-segment key', () => {
    assert.deepEqual(parseActionKey('charge:v1:acme:renewal-2026-08-28-01'), RENEWAL);
  });

  it('reads back the step ID of a five-segment key', () => {
    assert.deepEqual(parseActionKey('charge:v2:acme:renewal-2026-08-28-01:charge-card'), {
      ...RENEWAL,
      version: 2,
      stepId: 'charge-card',
    });
  });

  it('has no stepId property at all when the key has four segments', () => {
    assert.equal(Object.prototype.hasOwnProperty.call(parseActionKey('charge:v1:acme:e1'), 'stepId'), false);
  });

  it('round-trips: format(parse(key)) === key and parse(format(parts)) deep-equals parts', () => {
    const samples: ActionKeyParts[] = [
      RENEWAL,
      { ...RENEWAL, stepId: 'step_1' },
      { operation: 'create-shipment', version: 42, tenant: 'T.1', eventId: 'o-1842' },
      { operation: 'x', version: 1, tenant: 'y', eventId: 'z', stepId: 'w' },
    ];
    for (const parts of samples) {
      const key = formatActionKey(parts);
      assert.deepEqual(parseActionKey(key), parts);
      assert.equal(formatActionKey(parseActionKey(key)), key);
    }
  });

  it('refuses a key with 3 segments', () => {
    assertRefused(() => parseActionKey('charge:v1:acme'), 'key');
  });

  it('refuses a key with 6 segments', () => {
    assertRefused(() => parseActionKey('charge:v1:acme:e1:s1:extra'), 'key');
  });

  it("refuses a version segment that is not vN ('x1', 'v0', 'v01', 'v', 'V1', 'v1.5')", () => {
    for (const version of ['x1', 'v0', 'v01', 'v', 'V1', 'v1.5', 'v-1', '1']) {
      assertRefused(() => parseActionKey(`charge:${version}:acme:e1`), 'version');
    }
  });

  it('refuses a version too large to survive the round trip', () => {
    assertRefused(() => parseActionKey('charge:v99999999999999999999:acme:e1'), 'version');
  });

  it('validates every part with the same rules as formatActionKey', () => {
    assertRefused(() => parseActionKey(':v1:acme:e1'), 'operation');
    assertRefused(() => parseActionKey('charge:v1::e1'), 'tenant');
    assertRefused(() => parseActionKey('charge:v1:acme:'), 'eventId');
    assertRefused(() => parseActionKey('charge:v1:acme:e1:'), 'stepId');
    assertRefused(() => parseActionKey('charge:v1:\u0430cme:e1'), 'tenant');
    assertRefused(() => parseActionKey('charge:v1:acme:e 1'), 'eventId');
  });

  it('refuses an over-long key', () => {
    const part = 'x'.repeat(80);
    assertRefused(() => parseActionKey(`op:v1:${part}:${part}:${part}:${part}`), 'key');
  });

  it('refuses a non-string key', () => {
    assertRefused(() => parseActionKey(undefined as unknown as string), 'key');
    assertRefused(() => parseActionKey(42 as unknown as string), 'key');
  });
});

describe('run workflow IDs', () => {
  it('are run:<tenant>:<eventId>', () => {
    assert.equal(runWorkflowId('acme', 'renewal-2026-08-28-01'), 'run:acme:renewal-2026-08-28-01');
  });

  it('round-trip through parseRunWorkflowId', () => {
    const id = runWorkflowId('acme', 'renewal-2026-08-28-01');
    assert.deepEqual(parseRunWorkflowId(id), { tenant: 'acme', eventId: 'renewal-2026-08-28-01' });
  });

  it('refuse tenants and event IDs that are not valid key parts, naming the part', () => {
    assertRefused(() => runWorkflowId('', 'e1'), 'tenant');
    assertRefused(() => runWorkflowId('a:b', 'e1'), 'tenant');
    assertRefused(() => runWorkflowId('acme', 'e 1'), 'eventId');
    assertRefused(() => runWorkflowId('acme', '\u0435vent'), 'eventId');
  });

  it('parseRunWorkflowId refuses IDs that are not run:<tenant>:<eventId>[:<agent>]', () => {
    for (const id of ['run:acme', 'run:acme:e1:agent:extra', 'walk:acme:e1', 'charge:v1:acme:e1', '', 'RUN:acme:e1']) {
      assertRefused(() => parseRunWorkflowId(id), 'runWorkflowId');
    }
  });

  it('gives every agent of one event the same tenant and event, so their keys converge', () => {
    assert.equal(runWorkflowId('acme', 'e1', 'billing'), 'run:acme:e1:billing');
    assert.deepEqual(parseRunWorkflowId('run:acme:e1:billing'), { tenant: 'acme', eventId: 'e1', agent: 'billing' });
    assert.equal(
      actionKeyForStep('run:acme:e1:billing', { operation: 'charge', version: 1 }),
      actionKeyForStep('run:acme:e1', { operation: 'charge', version: 1 }),
    );
    assertRefused(() => parseRunWorkflowId('run:acme:e1:bad agent'), 'agent');
  });

  it('parseRunWorkflowId names the bad part of a well-shaped ID', () => {
    assertRefused(() => parseRunWorkflowId('run::e1'), 'tenant');
    assertRefused(() => parseRunWorkflowId('run:acme:'), 'eventId');
    assertRefused(() => parseRunWorkflowId('run:acme:e 1'), 'eventId');
  });
});

describe('actionKeyForStep', () => {
  it('derives the action key from the run workflow ID', () => {
    assert.equal(
      actionKeyForStep('run:acme:renewal-2026-08-28-01', { operation: 'charge', version: 1 }),
      'charge:v1:acme:renewal-2026-08-28-01',
    );
  });

  it('appends the step ID when the step has one', () => {
    assert.equal(
      actionKeyForStep('run:acme:renewal-2026-08-28-01', { operation: 'send-email', version: 2, stepId: 'receipt' }),
      'send-email:v2:acme:renewal-2026-08-28-01:receipt',
    );
  });

  it('agrees with formatActionKey over the parsed run ID', () => {
    const runId = runWorkflowId('acme', 'renewal-2026-08-28-01');
    assert.equal(
      actionKeyForStep(runId, { operation: 'charge', version: 1, stepId: 's' }),
      formatActionKey({ ...RENEWAL, stepId: 's' }),
    );
  });

  it('gives the same key when called again later', (t) => {
    const first = actionKeyForStep('run:acme:e1', { operation: 'reserve', version: 1, stepId: 'r' });
    laterClock(t);
    assert.equal(actionKeyForStep('run:acme:e1', { operation: 'reserve', version: 1, stepId: 'r' }), first);
  });

  it('refuses a workflow ID that is not a run ID', () => {
    assertRefused(() => actionKeyForStep('charge:v1:acme:e1', { operation: 'charge', version: 1 }), 'runWorkflowId');
  });

  it('refuses a malformed operation, version or step ID', () => {
    assertRefused(() => actionKeyForStep('run:acme:e1', { operation: 'charge card', version: 1 }), 'operation');
    assertRefused(() => actionKeyForStep('run:acme:e1', { operation: 'charge', version: 0 }), 'version');
    assertRefused(() => actionKeyForStep('run:acme:e1', { operation: 'charge', version: 1, stepId: 'a:b' }), 'stepId');
  });
});

describe('isActionKey', () => {
  it('answers true for keys with and without a step, false for anything else', () => {
    assert.equal(isActionKey('charge:v1:acme:renewal-1'), true);
    assert.equal(isActionKey('charge:v1:acme:renewal-1:step-2'), true);
    // A provider's own references, and values shaped like keys but not well formed.
    for (const value of [
      'ch_123',
      'msg_1',
      '',
      'a:b:c',
      'charge:1:acme:renewal-1',
      'charge:v1:acme:a:b:c',
      'charge:v1::e',
    ]) {
      assert.equal(isActionKey(value), false, value);
    }
  });
});
