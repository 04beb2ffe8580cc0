import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';

import type { MetricCounter, MetricGauge, MetricHistogram, MetricMeter, MetricTags } from '@temporalio/common';
import { SqliteLedger } from '../../ledger';
import { waitUntil } from '../support/wait';
import { createRetrysafeMetrics, label, type RetrysafeMetrics } from '../../metrics/instruments';
import {
  DEFAULT_ESCALATION_WINDOW_SECONDS,
  ledgerGaugeSetter,
  parseEscalationWindows,
  pollLedgerGauges,
} from '../../metrics/ledger-gauges';
import { ConfigError, parseWorkerConfig } from '../../workers/config';
import { startTracingFromEnv } from '../../tracing/tracing-from-env';

/** A meter that remembers every value recorded, by metric name and labels. */
function recordingMeter() {
  const values = new Map<string, number[]>();
  const key = (name: string, tags: MetricTags = {}) =>
    `${name}${JSON.stringify(Object.fromEntries(Object.entries(tags).sort()))}`;
  const push = (name: string, value: number, tags?: MetricTags) => {
    const k = key(name, tags);
    values.set(k, [...(values.get(k) ?? []), value]);
  };
  const instrument = (name: string) =>
    ({
      name,
      add: (v: number, tags?: MetricTags) => push(name, v, tags),
      record: (v: number, tags?: MetricTags) => push(name, v, tags),
      set: (v: number, tags?: MetricTags) => push(name, v, tags),
    }) as unknown as MetricCounter & MetricHistogram & MetricGauge;
  const meter = {
    createCounter: instrument,
    createHistogram: instrument,
    createGauge: instrument,
    withTags: () => meter,
  } as unknown as MetricMeter;
  return {
    meter,
    /** The values recorded under `name` with exactly these labels. */
    get: (name: string, tags: MetricTags) => values.get(key(name, tags)) ?? [],
    /** Every label set recorded, as JSON, for checks that no label carries payload. */
    keys: () => [...values.keys()],
  };
}

const T0 = Date.parse('2026-08-28T09:00:00.000Z');

describe('metric labels', () => {
  it('keep short identifiers and cut anything else to 64 characters of a safe alphabet', () => {
    assert.equal(label('send-email'), 'send-email');
    assert.equal(label('acme.eu:prod_1'), 'acme.eu:prod_1');
    assert.equal(label('alice@example.com 4242'), 'alice_example.com_4242');
    assert.equal(label('x'.repeat(200)).length, 64);
  });

  it('of provider requests carry the tool, the kind and the answer, never more', () => {
    const rec = recordingMeter();
    const metrics = createRetrysafeMetrics(rec.meter);
    metrics.providerRequest('charge', 'send', 'ambiguous', 0.25);
    metrics.providerRequest('charge', 'lookup', 'not-found', 0.01);
    metrics.dispatchSends('charge', 2);
    metrics.executorAttempt('charge');
    metrics.ledgerWrite('claim', 0.002);
    assert.deepEqual(
      rec.get('retrysafe_provider_requests_total', { tool: 'charge', kind: 'send', outcome: 'ambiguous' }),
      [1],
    );
    assert.deepEqual(
      rec.get('retrysafe_provider_request_seconds', { tool: 'charge', kind: 'send', outcome: 'ambiguous' }),
      [0.25],
    );
    assert.deepEqual(
      rec.get('retrysafe_provider_requests_total', { tool: 'charge', kind: 'lookup', outcome: 'not-found' }),
      [1],
    );
    assert.deepEqual(rec.get('retrysafe_action_sends', { tool: 'charge' }), [2]);
    assert.deepEqual(rec.get('retrysafe_executor_attempts_total', { tool: 'charge' }), [1]);
    assert.deepEqual(rec.get('retrysafe_ledger_write_seconds', { op: 'claim' }), [0.002]);
    for (const k of rec.keys()) assert.doesNotMatch(k, /key|amount|to"|recipient/, k);
  });
});

describe('escalation windows', () => {
  it('parse tenant=duration entries in s, m, h and d', () => {
    assert.deepEqual(parseEscalationWindows('acme=4h, globex=30m,*=1d,initech=45s'), {
      acme: 14_400,
      globex: 1_800,
      '*': 86_400,
      initech: 45,
    });
    assert.deepEqual(parseEscalationWindows(''), {});
  });

  it('refuse an entry that does not parse, naming it', () => {
    assert.throws(() => parseEscalationWindows('acme=4h,globex=soon'), /"globex=soon" is not tenant=duration/);
    assert.throws(() => parseEscalationWindows('acme=0s'), /"acme=0s": the window must be longer than 0/);
  });

  it('come from RETRYSAFE_ESCALATION_WINDOWS, and a bad value stops the worker naming the variable', () => {
    assert.deepEqual(parseWorkerConfig({ RETRYSAFE_ESCALATION_WINDOWS: 'acme=2s' }).escalationWindows, { acme: 2 });
    assert.throws(
      () => parseWorkerConfig({ RETRYSAFE_ESCALATION_WINDOWS: 'acme' }),
      (err: Error) => err instanceof ConfigError && /^RETRYSAFE_ESCALATION_WINDOWS: "acme"/.test(err.message),
    );
  });
});

describe('the metrics address', () => {
  it('is host:port', () => {
    assert.equal(parseWorkerConfig({ RETRYSAFE_METRICS_ADDRESS: '127.0.0.1:9464' }).metricsAddress, '127.0.0.1:9464');
    assert.equal(parseWorkerConfig({ RETRYSAFE_METRICS_ADDRESS: '[::1]:9464' }).metricsAddress, '[::1]:9464');
    assert.equal(parseWorkerConfig({}).metricsAddress, undefined);
    assert.throws(
      () => parseWorkerConfig({ RETRYSAFE_METRICS_ADDRESS: 'http://127.0.0.1:9464/metrics' }),
      /RETRYSAFE_METRICS_ADDRESS: must be host:port/,
    );
  });
});

describe('RETRYSAFE_TRACING', () => {
  it('is off by default, otlp when asked, and anything else stops the worker naming the variable', async () => {
    assert.equal(parseWorkerConfig({}).tracing, undefined);
    assert.equal(parseWorkerConfig({ RETRYSAFE_TRACING: 'off' }).tracing, undefined);
    assert.equal(parseWorkerConfig({ RETRYSAFE_TRACING: 'otlp' }).tracing, 'otlp');
    assert.throws(() => parseWorkerConfig({ RETRYSAFE_TRACING: 'jaeger' }), /RETRYSAFE_TRACING: /);
    assert.equal(await startTracingFromEnv('off', {}), undefined);
  });
});

describe('the open-action gauges', () => {
  let tmp: string;
  const ledgers: SqliteLedger[] = [];
  after(async () => {
    for (const l of ledgers) await l.close();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });
  async function ledger() {
    tmp ??= await mkdtemp(path.join(os.tmpdir(), 'retrysafe-gauges-'));
    const l = new SqliteLedger(path.join(tmp, `ledger-${ledgers.length}.db`));
    ledgers.push(l);
    await l.migrate();
    return l;
  }
  const claim = (key: string, minutes: number) => {
    const [operation, version, tenant] = key.split(':');
    return {
      key,
      tenant: tenant!,
      operation: operation!,
      toolVersion: Number(version!.slice(1)),
      requestHash: `hash-${key}`,
      owner: 'test',
      claimedAt: new Date(T0 + minutes * 60_000).toISOString(),
    };
  };
  const move = (key: string, seq: number, status: 'needs_review' | 'confirmed', settled = false) => ({
    key,
    seq,
    status,
    at: new Date(T0 + 60 * 60_000).toISOString(),
    reason: 'test',
    settled,
  });

  it('count the waiting actions and their oldest age from the ledger, and zero a group once it empties', async () => {
    const l = await ledger();
    const rec = recordingMeter();
    const metrics: RetrysafeMetrics = createRetrysafeMetrics(rec.meter);
    let now = T0 + 30 * 60_000;
    const poll = ledgerGaugeSetter({ ledger: l, metrics, escalationWindows: { acme: 7200 }, now: () => now });
    await l.recordClaim(claim('send-email:v1:acme:a', 0));
    await l.recordClaim(claim('send-email:v1:acme:b', 10));
    await l.recordClaim(claim('send-email:v1:globex:c', 20));
    for (const k of ['send-email:v1:acme:a', 'send-email:v1:acme:b', 'send-email:v1:globex:c']) {
      await l.recordStatus(move(k, 1, 'needs_review'));
    }
    await poll();
    const acme = { tool: 'send-email', tenant: 'acme', status: 'needs_review' };
    const globex = { tool: 'send-email', tenant: 'globex', status: 'needs_review' };
    assert.deepEqual(rec.get('retrysafe_actions_open', acme), [2]);
    assert.deepEqual(rec.get('retrysafe_action_oldest_age_seconds', acme), [1800], 'the oldest claimed 30 min ago');
    assert.deepEqual(rec.get('retrysafe_actions_open', globex), [1]);
    assert.deepEqual(rec.get('retrysafe_escalation_window_seconds', { tenant: 'acme' }), [7200]);
    assert.deepEqual(
      rec.get('retrysafe_escalation_window_seconds', { tenant: 'globex' }),
      [DEFAULT_ESCALATION_WINDOW_SECONDS],
      'a tenant without its own window gets the default',
    );
    assert.deepEqual(rec.get('retrysafe_ledger_alarms', { kind: 'audit-conflict' }), [0]);

    // globex's action settles; acme's age grows.
    await l.recordStatus(move('send-email:v1:globex:c', 2, 'confirmed', true));
    await l.raiseAlarm('send-email:v1:acme:a', 'audit-conflict', 'test');
    now += 60_000;
    await poll();
    assert.deepEqual(
      rec.get('retrysafe_actions_open', globex),
      [1, 0],
      'the emptied group is set to 0, not left stale',
    );
    assert.deepEqual(rec.get('retrysafe_action_oldest_age_seconds', globex), [600, 0]);
    assert.deepEqual(rec.get('retrysafe_action_oldest_age_seconds', acme), [1800, 1860]);
    assert.deepEqual(rec.get('retrysafe_ledger_alarms', { kind: 'audit-conflict' }), [0, 1]);
  });

  it('keep polling on their interval, report a failed read and stop when told', async () => {
    const l = await ledger();
    const rec = recordingMeter();
    const errors: string[] = [];
    let failing = false;
    const flaky = Object.create(l) as SqliteLedger;
    flaky.openActionStats = async () => {
      if (failing) throw new Error('database is locked');
      return l.openActionStats();
    };
    const poller = pollLedgerGauges({
      ledger: flaky,
      metrics: createRetrysafeMetrics(rec.meter),
      pollMs: 100,
      onError: (err) => errors.push(err.message),
    });
    const polls = () => rec.get('retrysafe_ledger_alarms', { kind: 'not-holder' }).length;
    await waitUntil('two polls at 100 ms', async () => polls() >= 2, 10_000);
    failing = true;
    await waitUntil('a failed read reported', async () => errors.length >= 1, 10_000);
    await poller.stop();
    assert.ok(errors.length >= 1 && errors.every((e) => e === 'database is locked'), JSON.stringify(errors));
    const after = rec.get('retrysafe_ledger_alarms', { kind: 'not-holder' }).length + errors.length;
    // A fixed wait on purpose: this checks that nothing happens after stop(), and no event can show that. It is two
    // and a half poll intervals (pollMs 100): a poller still running would have read the ledger again.
    const QUIET_AFTER_STOP_MS = 250;
    await new Promise((r) => setTimeout(r, QUIET_AFTER_STOP_MS));
    assert.equal(rec.get('retrysafe_ledger_alarms', { kind: 'not-holder' }).length + errors.length, after, 'stopped');
  });
});
