import assert from 'node:assert/strict';
import { unusedLedger } from '../support/unused-ledger';
import { describe, it } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createExecuteAction, keyHorizonMs, type ExecuteOutcome } from '../../activities/execute-action';
import type { DedupeCapability } from '../../policies/tool';
import { absent, ambiguous, committed, found, type LookupAnswer, type ToolOutcome } from '../../policies/tool-outcome';
import { scriptedTool } from '../support/scripted-tool';

/**
 * The executor's key-horizon rows: a maybe-sent attempt of a tool whose provider forgets keys after
 * `keyRetentionMs` resends under the key only while the provider is bound to remember it; past that it looks
 * up where the contract has a lookup, and is unknown otherwise. Scripted tools in the SDK's mock activity
 * context; what is executed or looked up is counted on the tool.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** When the dispatch's first attempt was scheduled (and sent). */
const T0 = Date.parse('2026-12-01T10:00:00.000Z');

function keyed(opts: {
  dedupe?: DedupeCapability;
  keyRetentionMs?: number;
  lagMs?: number;
  outcomes: ToolOutcome[];
  lookups?: LookupAnswer[];
}) {
  const { tools, intent, calls } = scriptedTool({ ...opts, name: 'pay', dedupe: opts.dedupe ?? 'idempotency-key' });
  const sleeps: number[] = [];

  /**
   * Attempt `attempt` of a dispatch first scheduled at `scheduledAt`, scheduled itself at `attemptScheduledAt`
   * (default: now) and run when this worker's clock reads `now`; the dead attempt 1 heartbeated its send.
   */
  function run(at: {
    now: number;
    attempt?: number;
    scheduledAt?: number;
    attemptScheduledAt?: number;
    mode?: 'first' | 'maybe-sent';
  }): Promise<ExecuteOutcome> {
    const clock = { now: at.now };
    const attempt = at.attempt ?? 2;
    const scheduledAt = at.scheduledAt ?? T0;
    const execute = createExecuteAction({
      ledger: unusedLedger(),
      tools,
      crash: () => undefined,
      sleep: async (ms) => {
        sleeps.push(ms);
        clock.now += ms;
      },
      random: () => 0.5,
      now: () => clock.now,
    });
    const env = new MockActivityEnvironment({
      attempt,
      scheduledTimestampMs: scheduledAt,
      currentAttemptScheduledTimestampMs: at.attemptScheduledAt ?? at.now,
      ...(attempt > 1
        ? {
            heartbeatDetails: {
              requests: [{ kind: 'send', attempt: 1, at: new Date(scheduledAt).toISOString(), answer: 'pending' }],
              sends: 1,
            },
          }
        : {}),
    });
    return env.run(execute, {
      key: 'pay:v1:acme:e-1',
      intent,
      requestHash: tools.hash(intent),
      mode: at.mode ?? 'first',
    });
  }
  return { run, calls, sleeps };
}

const viaOf = (out: ExecuteOutcome) => (out.status === 'confirmed' ? out.via : out.status);

describe('the executor honours the provider key horizon', () => {
  it('inside the horizon resends under the same key and takes the replay, with no lookup', async () => {
    const t = keyed({ keyRetentionMs: DAY, outcomes: [committed('ch-1', null, true)], lookups: [] });
    const out = await t.run({ now: T0 + 10_000 });
    assert.equal(viaOf(out), 'replay');
    assert.deepEqual(t.calls, { execute: 1, lookup: 0 });
    assert.equal(out.sends, 2, 'the dead attempt’s send and this one');
  });

  it('past the horizon with a lookup looks up and confirms what it finds, sending nothing', async () => {
    const t = keyed({ keyRetentionMs: DAY, outcomes: [], lookups: [found('ch-1')] });
    const out = await t.run({ now: T0 + 25 * HOUR });
    assert.equal(viaOf(out), 'lookup');
    assert.equal(out.status === 'confirmed' && out.providerRef, 'ch-1');
    assert.deepEqual(t.calls, { execute: 0, lookup: 1 });
    assert.equal(out.sends, 1);
  });

  it('past the horizon, an empty lookup inside the read lag is waited out; absent then, it sends', async () => {
    const t = keyed({
      keyRetentionMs: DAY,
      lagMs: 2_000,
      outcomes: [committed('ch-1')],
      lookups: [absent(), absent()],
    });
    const now = T0 + 25 * HOUR;
    // This attempt was scheduled just now: a send of the dead attempt could still be hidden by the lag.
    const out = await t.run({ now, attemptScheduledAt: now });
    assert.equal(viaOf(out), 'send');
    assert.deepEqual(t.calls, { execute: 1, lookup: 2 });
    assert.deepEqual(t.sleeps, [2_000], 'waited out the read-after-write lag before trusting the empty answer');
    assert.deepEqual(
      out.requests?.map((r) => [r.kind, r.attempt]),
      [
        ['send', 1],
        ['lookup', 2],
        ['lookup', 2],
        ['send', 2],
      ],
    );
  });

  it('past the horizon without a lookup is unknown and sends nothing', async () => {
    const t = keyed({ keyRetentionMs: DAY, outcomes: [] });
    const out = await t.run({ now: T0 + 25 * HOUR });
    assert.equal(out.status, 'unknown');
    assert.match(
      out.status === 'unknown' ? out.reason : '',
      /keeps keys for 24\.0 h and the first request may have gone 25\.0 h ago .*no lookup/,
    );
    assert.deepEqual(t.calls, { execute: 0, lookup: 0 });
    assert.equal(out.sends, 1);
  });

  it('counts from the first attempt’s scheduling, not from the attempt now running', async () => {
    // Attempt 2 was scheduled 25 h after the first (a long retry backoff); the horizon is the first send's.
    const t = keyed({ keyRetentionMs: DAY, outcomes: [], lookups: [found('ch-1')] });
    const out = await t.run({ now: T0 + 25 * HOUR, attemptScheduledAt: T0 + 25 * HOUR });
    assert.equal(viaOf(out), 'lookup');
  });

  it('takes Temporal’s clock when it is ahead of this worker’s, so a lagging worker clock cannot hide the gap', async () => {
    const t = keyed({ keyRetentionMs: DAY, outcomes: [], lookups: [found('ch-1')] });
    const out = await t.run({ now: T0 + 10_000, attemptScheduledAt: T0 + 25 * HOUR });
    assert.equal(viaOf(out), 'lookup');
  });

  it('treats the key as possibly forgotten from its retention less the margin (a tenth, at most an hour)', async () => {
    assert.equal(keyHorizonMs(T0, DAY), T0 + 23 * HOUR);
    assert.equal(keyHorizonMs(T0, 10_000), T0 + 9_000);
    const inside = keyed({ keyRetentionMs: DAY, outcomes: [committed('ch-1', null, true)], lookups: [] });
    assert.equal(viaOf(await inside.run({ now: T0 + 23 * HOUR - 1 })), 'replay');
    const margin = keyed({ keyRetentionMs: DAY, outcomes: [], lookups: [found('ch-1')] });
    assert.equal(viaOf(await margin.run({ now: T0 + 23 * HOUR + 30 * 60_000 })), 'lookup');
  });

  it('looks up again before resending when its own send past the horizon was ambiguous', async () => {
    const t = keyed({
      keyRetentionMs: DAY,
      lagMs: 1_000,
      outcomes: [ambiguous('socket hang up')],
      // Empty inside the lag (counted from this attempt's start), empty past it, then found after the ambiguous send.
      lookups: [absent(), absent(), found('ch-2')],
    });
    const out = await t.run({ now: T0 + 25 * HOUR, attemptScheduledAt: T0 + 25 * HOUR - 5_000 });
    assert.equal(viaOf(out), 'lookup');
    assert.equal(out.status === 'confirmed' && out.providerRef, 'ch-2');
    assert.deepEqual(t.calls, { execute: 1, lookup: 3 });
  });

  it('a first attempt sends, and a redispatch counts from its own first attempt (earlier ones were proven absent)', async () => {
    const first = keyed({ keyRetentionMs: DAY, outcomes: [committed('ch-1')] });
    assert.equal(viaOf(await first.run({ now: T0, attempt: 1 })), 'send');
    const redispatch = keyed({ keyRetentionMs: DAY, outcomes: [committed('ch-1')], lookups: [] });
    const out = await redispatch.run({ now: T0 + 1_000, attempt: 1, mode: 'maybe-sent' });
    assert.equal(viaOf(out), 'send');
    assert.deepEqual(redispatch.calls, { execute: 1, lookup: 0 });
  });

  it('leaves tools without a declared retention, and lookup tools, as they were', async () => {
    const forever = keyed({ outcomes: [committed('ch-1', null, true)], lookups: [] });
    assert.equal(viaOf(await forever.run({ now: T0 + 400 * DAY })), 'replay');
    const transactional = keyed({
      dedupe: 'transactional',
      keyRetentionMs: DAY,
      outcomes: [],
      lookups: [found('row-1')],
    });
    assert.equal(viaOf(await transactional.run({ now: T0 + 25 * HOUR })), 'lookup', 'a pruned dedupe row counts too');
    const lookupTool = keyed({
      dedupe: 'lookup',
      keyRetentionMs: DAY,
      outcomes: [committed('tk-1')],
      lookups: [absent()],
    });
    assert.equal(viaOf(await lookupTool.run({ now: T0 + 25 * HOUR })), 'send');
  });
});
