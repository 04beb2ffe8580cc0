import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import type { Duration } from '@temporalio/common';
import type { ExecuteInput, ExecuteOutcome } from '../../activities/execute-action';
import { startSandboxProvider, type SandboxProvider } from '../../examples/sandbox-providers/spawn';
import { exampleRegistry } from '../../examples/tools';
import { DISPATCH_HEARTBEAT_TIMEOUT, DISPATCH_RETRY, DISPATCH_START_TO_CLOSE } from '../../policies/timeouts';
import { get, post } from '../providers/provider-http';
import { countForKey } from '../support/ledger';
import {
  DISPATCH_WORKFLOW,
  useTimeSkippingEnv,
  type ContractOverride,
  type DispatchWorkflowArgs,
} from '../support/time-skipping';

/**
 * A charge whose provider committed and whose worker died before it kept the reply, retried 25 hours later
 * (time skipped on the test server) by a successor worker process, against a provider that has forgotten the
 * key by then but kept the charge. The executor must not resend under the old key: it looks the charge up, or,
 * for a contract without a lookup, says unknown. The controls show what a resend would have done.
 *
 * The action workflow's dispatch window is 5 minutes (DISPATCH_SCHEDULE_TO_CLOSE), after which its own
 * reconciliation lookup takes over; so that the executor itself retries 25 hours later, the dispatch here runs
 * in the harness's dispatch workflow with the executor's own timeouts and retries and a 48 h window.
 */

const tools = exampleRegistry();
/** The provider's clock does not skip with the test server's: it forgets keys this soon in real time instead. */
const PROVIDER_KEY_RETENTION_MS = 500;

const DISPATCH_OPTIONS = {
  heartbeatTimeout: DISPATCH_HEARTBEAT_TIMEOUT,
  startToCloseTimeout: DISPATCH_START_TO_CLOSE,
  scheduleToCloseTimeout: '48h',
  retry: DISPATCH_RETRY,
  summary: 'charge, retried across a 25 h outage',
} as const;

describe('a maybe-sent charge past its provider key horizon (time-skipping, real processes)', () => {
  const harness = useTimeSkippingEnv({ exampleWorkflows: false });
  let payments: SandboxProvider;

  before(async () => {
    payments = await startSandboxProvider('payments', { keyRetentionMs: PROVIDER_KEY_RETENTION_MS });
  });
  after(async () => {
    await payments?.stop();
  });

  /**
   * Worker 1 (its own process) sends the charge and SIGKILLs itself once the provider has committed; `gap` of
   * test-server time passes with no worker; worker 2 (another process, clock on the test server's) runs the
   * next attempt. Returns the executor's outcome and what the provider holds for the key.
   */
  async function crashThenRetry(opts: {
    name: string;
    gap?: Duration;
    contracts?: Record<string, ContractOverride>;
    providerKeyRetentionMs: number | null;
  }) {
    await payments.reset();
    await payments.configure({ keyRetentionMs: opts.providerKeyRetentionMs, readLagMs: 0 });
    const key = `charge:v1:acme:${opts.name}`;
    const intent = tools.parseIntent({
      operation: 'charge',
      amountCents: 4990,
      currency: 'usd',
      customerId: 'cus_acme',
      paymentMethod: 'pm_card_visa',
      merchantReference: opts.name,
    });
    const input: ExecuteInput = { key, intent, requestHash: tools.hash(intent), mode: 'first' };
    const taskQueue = `key-horizon-${opts.name}`;
    const workerOptions = {
      taskQueue,
      sandboxUrls: { payments: payments.url },
      ...(opts.contracts ? { contracts: opts.contracts } : {}),
    };
    const dispatcher = await harness.dispatcher(taskQueue);
    return dispatcher.runUntil(async () => {
      const first = await harness.activityWorker({
        ...workerOptions,
        name: 'worker-1',
        crashAt: 'after-commit:charge',
      });
      // The test server skips no time while an activity task waits for a worker (it expects one to come), so the
      // 25 h go by in the retry's backoff: the dead attempt is noticed after the heartbeat timeout as ever, and
      // the next attempt is scheduled a day later.
      const options = opts.gap
        ? { ...DISPATCH_OPTIONS, retry: { ...DISPATCH_RETRY, initialInterval: opts.gap, maximumInterval: opts.gap } }
        : DISPATCH_OPTIONS;
      const args: DispatchWorkflowArgs = ['executeAction', [input], options];
      const startedAt = await harness.env.currentTimeMs();
      await harness.env.client.workflow.start(DISPATCH_WORKFLOW, { workflowId: key, taskQueue, args });
      assert.equal((await first.exited).signal, 'SIGKILL', 'worker 1 died at its crash point');
      const beforeRetry = countForKey(await payments.ledger(), key);
      assert.deepEqual([beforeRetry.records, beforeRetry.committed], [1, 1], 'the provider committed the charge');

      if (opts.gap) await harness.env.sleep(opts.gap);
      const gapMs = (await harness.env.currentTimeMs()) - startedAt;
      if (opts.providerKeyRetentionMs !== null) {
        // Let the provider's real-time retention run out, standing for the 24 h it has had by now.
        const committedAt = Date.parse((await payments.ledger()).requests[0].at);
        await delay(Math.max(0, committedAt + opts.providerKeyRetentionMs + 50 - Date.now()));
      }
      const second = await harness.activityWorker({ ...workerOptions, name: 'worker-2' });
      try {
        // Not the environment's client: it would skip time while worker 2's attempt works, timing out its heartbeats.
        const out = (await harness.realTimeClient.workflow.getHandle(key).result()) as ExecuteOutcome;
        const ledger = await payments.ledger();
        return { out, gapMs, key, provider: countForKey(ledger, key), ledger };
      } finally {
        await second.stop();
      }
    });
  }

  it('forgets a key after its retention but keeps the charge, which a lookup by key still finds', async () => {
    await payments.reset();
    await payments.configure({ keyRetentionMs: PROVIDER_KEY_RETENTION_MS });
    const body = {
      amountCents: 100,
      currency: 'usd',
      customerId: 'cus_1',
      paymentMethod: 'pm_card_visa',
      merchantReference: 'forgetful-1',
    };
    const first = await post(payments.url, '/v1/charges', body, { key: 'forgetful-key' });
    const replay = await post(payments.url, '/v1/charges', body, { key: 'forgetful-key' });
    assert.deepEqual([first.status, replay.status], [201, 200], 'remembered inside the retention');
    await delay(PROVIDER_KEY_RETENTION_MS + 50);
    const afterIt = await post(payments.url, '/v1/charges', body, { key: 'forgetful-key' });
    assert.equal(afterIt.status, 201, 'past the retention the same key is a new charge');
    assert.notEqual((afterIt.body as { id: string }).id, (first.body as { id: string }).id);
    const listed = await get(payments.url, '/v1/charges?idempotencyKey=forgetful-key');
    assert.equal((listed.body as { data: unknown[] }).data.length, 2, 'both charges stay listed under the key');
    await payments.configure({ keyRetentionMs: null });
    const kept = await post(payments.url, '/v1/charges', body, { key: 'kept-key' });
    await delay(PROVIDER_KEY_RETENTION_MS + 50);
    const keptLater = await post(payments.url, '/v1/charges', body, { key: 'kept-key' });
    assert.deepEqual([kept.status, keptLater.status], [201, 200], 'null keeps keys for good again');
  });

  it(
    'looks the charge up 25 h later instead of resending under a forgotten key: one charge, confirmed by the lookup',
    { timeout: 120_000 },
    async () => {
      const r = await crashThenRetry({
        name: 'horizon-lookup',
        gap: '25h',
        providerKeyRetentionMs: PROVIDER_KEY_RETENTION_MS,
      });
      assert.ok(r.gapMs >= 25 * 3_600_000, `the retry came ${r.gapMs} ms of test-server time later`);
      assert.equal(r.out.status, 'confirmed', JSON.stringify(r.out));
      assert.equal(r.out.status === 'confirmed' && r.out.via, 'lookup');
      assert.equal(r.out.status === 'confirmed' && r.out.providerRef, r.ledger.records.charges[0]?.id);
      assert.deepEqual(
        [r.provider.records, r.provider.requests, r.provider.committed, r.provider.replayed],
        [1, 1, 1, 0],
        'one charge from one request: nothing was resent',
      );
      assert.equal(r.out.sends, 1, 'the dead attempt’s request, counted from its heartbeat');
      assert.deepEqual(
        r.out.requests?.map((q) => [q.kind, q.attempt]),
        [
          ['send', 1],
          ['lookup', 2],
        ],
      );
    },
  );

  it(
    'control: a contract that declares no key retention resends under the forgotten key, and the provider charges twice',
    { timeout: 120_000 },
    async () => {
      const r = await crashThenRetry({
        name: 'horizon-undeclared',
        gap: '25h',
        contracts: { charge: { keyRetentionMs: null } },
        providerKeyRetentionMs: PROVIDER_KEY_RETENTION_MS,
      });
      assert.equal(r.out.status === 'confirmed' && r.out.via, 'send', 'a new charge, not a replay');
      assert.deepEqual([r.provider.records, r.provider.committed, r.provider.replayed], [2, 2, 0], 'two charges');
      assert.equal(r.out.sends, 2);
    },
  );

  it(
    'control: a contract without a lookup ends unknown 25 h later, with no second send and one charge',
    { timeout: 120_000 },
    async () => {
      const r = await crashThenRetry({
        name: 'horizon-no-lookup',
        gap: '25h',
        contracts: { charge: { lookup: false } },
        providerKeyRetentionMs: PROVIDER_KEY_RETENTION_MS,
      });
      assert.equal(r.out.status, 'unknown', JSON.stringify(r.out));
      assert.match(r.out.status === 'unknown' ? r.out.reason : '', /keeps keys for 24\.0 h.*no lookup/);
      assert.deepEqual([r.provider.records, r.provider.requests], [1, 1], 'nothing was sent again');
      assert.equal(r.out.sends, 1);
    },
  );

  it(
    'inside the horizon (a retry seconds later, the provider remembers) resends under the key and gets the original',
    { timeout: 120_000 },
    async () => {
      const r = await crashThenRetry({ name: 'horizon-inside', providerKeyRetentionMs: null });
      assert.ok(r.gapMs < 60_000, `the retry came ${r.gapMs} ms later`);
      assert.equal(r.out.status === 'confirmed' && r.out.via, 'replay');
      assert.deepEqual([r.provider.records, r.provider.committed, r.provider.replayed], [1, 1, 1]);
      assert.deepEqual(
        r.out.requests?.map((q) => q.kind),
        ['send', 'send'],
        'no lookup inside the horizon',
      );
    },
  );
});
