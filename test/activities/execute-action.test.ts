import { LOST_ANSWER, type RequestLogEntry } from '../../policies/provider-requests';
import { unusedLedger } from '../support/unused-ledger';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createExecuteAction, type ExecuteOutcome } from '../../activities/execute-action';
import { errorCodeOf } from '../../policies/errors';
import type { DedupeCapability } from '../../policies/tool';
import {
  absent,
  ambiguous,
  committed,
  found,
  notCommitted,
  type LookupAnswer,
  type ToolOutcome,
} from '../../policies/tool-outcome';
import { scriptedTool } from '../support/scripted-tool';
import { z } from 'zod';
import { defineTool } from '../../policies/tool';
import { createToolRegistry } from '../../policies/tool-registry';

/**
 * The executor's attempt-aware table, for every dedupe capability, with scripted tools in the SDK's mock
 * activity context: what is executed, looked up or left unknown is counted on the tool itself.
 */
function scripted(opts: {
  dedupe: DedupeCapability;
  kind?: 'read' | 'mutation';
  lagMs?: number;
  outcomes: Array<ToolOutcome | Error>;
  lookups?: LookupAnswer[];
}) {
  const { tools, intent, calls } = scriptedTool({ ...opts, name: 'ping' });
  const clock = { now: 1_000_000 };
  const run = (
    attempt: number,
    mode: 'first' | 'maybe-sent' | 'operator-cleared' = 'first',
    requestHash = tools.hash(intent),
    heartbeatDetails?: unknown,
    scheduledAgoMs = 0,
  ): Promise<ExecuteOutcome> => {
    const execute = createExecuteAction({
      ledger: unusedLedger(),
      tools,
      crash: () => undefined,
      sleep: async (ms) => {
        clock.now += ms;
      },
      random: () => 0.5,
      now: () => clock.now,
    });
    const env = new MockActivityEnvironment({
      attempt,
      currentAttemptScheduledTimestampMs: clock.now - scheduledAgoMs,
      ...(heartbeatDetails !== undefined ? { heartbeatDetails } : {}),
    });
    return env.run(execute, { key: 'ping:v1:acme:e-1', intent, requestHash, mode });
  };
  return { run, calls };
}

/** The outcome with its requests' times dropped (they come from the test clock). */
function withoutTimes(out: ExecuteOutcome): Omit<ExecuteOutcome, 'requests'> & {
  requests?: Array<Omit<RequestLogEntry, 'at'>>;
} {
  return { ...out, ...(out.requests ? { requests: out.requests.map(({ at: _at, ...r }) => r) } : {}) };
}

describe('the executor decides what a retry may do', () => {
  it('executes once on a first attempt and confirms; a provider 200 is a send, not a replay', async () => {
    const t = scripted({ dedupe: 'none', outcomes: [committed('msg-1')] });
    const out = await t.run(1);
    assert.deepEqual(withoutTimes(out), {
      status: 'confirmed',
      providerRef: 'msg-1',
      record: null,
      via: 'send',
      sends: 1,
      requests: [{ kind: 'send', attempt: 1, answer: 'committed msg-1' }],
    });
  });

  it('counts a request of a dead attempt from its heartbeat, so sends says what the provider received', async () => {
    const t = scripted({ dedupe: 'idempotency-key', outcomes: [committed('ch-1', null, true)] });
    // What attempt 1 heartbeated just before it died: its request was in flight.
    const lastHeartbeat = {
      requests: [{ kind: 'send', attempt: 1, at: '2026-12-01T10:00:00.000Z', answer: 'pending' }],
      sends: 1,
    };
    const out = await t.run(2, 'first', undefined, lastHeartbeat);
    assert.equal(out.sends, 2, 'the dead attempt’s request and this one');
    assert.deepEqual(
      withoutTimes(out).requests?.map((r) => [r.attempt, r.answer]),
      [
        [1, LOST_ANSWER],
        [2, 'committed ch-1 (the original, replayed for the same key)'],
      ],
    );
  });

  it('keeps the request log in a heartbeat the tool sends itself, so the next attempt still counts the send', async () => {
    const tools = createToolRegistry([
      defineTool({
        name: 'slow-post',
        version: 1,
        description: 'A slow post.',
        input: z.strictObject({ n: z.number() }),
        kind: 'mutation',
        dedupe: 'none',
        readAfterWriteLagMs: 0,
        riskClass: 'routine-message',
        summarize: () => 'slow post',
        async execute(_i, ctx) {
          // A tool reporting progress while its provider works, as the ToolContext invites.
          ctx.heartbeat();
          return committed('p-1');
        },
      }),
    ]);
    const intent = tools.parseIntent({ operation: 'slow-post', n: 1 });
    const env = new MockActivityEnvironment({ attempt: 1 });
    const beats: unknown[] = [];
    env.on('heartbeat', (details: unknown) => beats.push(details));
    const execute = createExecuteAction({ ledger: unusedLedger(), tools, crash: () => undefined });
    await env.run(execute, {
      key: 'slow-post:v1:acme:e-1',
      intent,
      requestHash: tools.hash(intent),
      mode: 'first' as const,
    });
    // The tool's heartbeat is the one sent while its request is in flight: what a dead attempt leaves behind.
    const toolBeat = beats[1] as { sends?: number; requests?: Array<{ kind: string; attempt: number }> } | undefined;
    assert.equal(toolBeat?.sends, 1, `the tool's heartbeat carried the request log: ${JSON.stringify(beats)}`);
    assert.deepEqual(
      toolBeat?.requests?.map((r) => [r.kind, r.attempt]),
      [['send', 1]],
    );
  });

  it('leaves a key-less, lookup-less action unknown after a dead attempt, executing nothing', async () => {
    const t = scripted({ dedupe: 'none', outcomes: [] });
    const out = await t.run(2);
    assert.equal(out.status, 'unknown');
    assert.equal(t.calls.execute, 0);
  });

  it('re-executes a read after a dead attempt, since it has nothing to duplicate', async () => {
    const t = scripted({ dedupe: 'none', kind: 'read', outcomes: [committed('r-1')] });
    assert.equal((await t.run(2)).status, 'confirmed');
    assert.equal(t.calls.execute, 1);
  });

  it('resends under the same key after a dead attempt for idempotency-key and transactional tools', async () => {
    for (const dedupe of ['idempotency-key', 'transactional'] as const) {
      const t = scripted({ dedupe, outcomes: [committed('ch-1', null, true)] });
      const out = await t.run(2);
      assert.equal(out.status === 'confirmed' && out.via, 'replay', dedupe);
    }
  });

  it('waits out the read lag when a lookup is empty, then finds the effect without executing', async () => {
    const t = scripted({ dedupe: 'lookup', lagMs: 3_000, outcomes: [], lookups: [absent(), found('tk-1')] });
    const out = await t.run(2);
    assert.deepEqual(withoutTimes(out), {
      status: 'confirmed',
      providerRef: 'tk-1',
      record: null,
      via: 'lookup',
      sends: 0,
      requests: [
        { kind: 'lookup', attempt: 2, answer: 'not found' },
        { kind: 'lookup', attempt: 2, answer: 'found tk-1' },
      ],
    });
    assert.equal(t.calls.lookup, 2);
  });

  it('counts the read lag from the attempt’s start, not its scheduling: an attempt the server gave up on may send', async () => {
    // Attempt 2 was scheduled 5 s ago, when the server timed out attempt 1 (its heartbeats lost in a restart); attempt
    // 1 lived on and its request committed just before attempt 2 started, so the first lookup is inside the lag.
    const t = scripted({
      dedupe: 'lookup',
      lagMs: 3_000,
      outcomes: [committed('tk-dup')],
      lookups: [absent(), found('tk-1')],
    });
    const out = await t.run(2, 'first', undefined, undefined, 5_000);
    assert.equal(out.status === 'confirmed' && out.providerRef, 'tk-1');
    assert.equal(t.calls.execute, 0, 'nothing sent again: the empty lookup was inside the lag');
    assert.equal(t.calls.lookup, 2);
  });

  it('executes after a lookup proves absence once the lag has passed', async () => {
    const t = scripted({ dedupe: 'lookup', lagMs: 0, outcomes: [committed('tk-2')], lookups: [absent()] });
    const out = await t.run(2);
    assert.equal(out.status === 'confirmed' && out.providerRef, 'tk-2');
    assert.equal(t.calls.execute, 1);
  });

  it('retries not-committed answers and refused connections, then confirms once', async () => {
    const refused = Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
    const t = scripted({ dedupe: 'none', outcomes: [notCommitted('HTTP 503'), refused, committed('m-3')] });
    const out = await t.run(1);
    assert.equal(out.status === 'confirmed' && out.sends, 3);
  });

  it('turns an ambiguous answer on a key-less tool into unknown instead of a second send', async () => {
    const t = scripted({ dedupe: 'none', outcomes: [ambiguous('socket hang up')] });
    const out = await t.run(1);
    assert.equal(out.status, 'unknown');
    assert.equal(t.calls.execute, 1);
  });

  it('maps an SDK error carrying statusCode 402 to a final BusinessRejected', async () => {
    const declined = Object.assign(new Error('Your card was declined.'), { statusCode: 402 });
    const t = scripted({ dedupe: 'idempotency-key', outcomes: [declined] });
    await assert.rejects(
      t.run(1),
      (err: unknown) =>
        errorCodeOf(err) === 'BusinessRejected' && (err as { nonRetryable?: boolean }).nonRetryable === true,
    );
  });

  it('refuses an intent whose hash is not the claimed one, before executing', async () => {
    const t = scripted({ dedupe: 'idempotency-key', outcomes: [] });
    await assert.rejects(t.run(1, 'first', 'f'.repeat(64)), (err: unknown) => errorCodeOf(err) === 'IntentMismatch');
    assert.equal(t.calls.execute, 0);
  });
});
