import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WithStartWorkflowOperation, type WorkflowHandle } from '@temporalio/client';
import type { ExecuteInput, ExecuteOutcome } from '../../activities';
import { createLoadActionPolicy } from '../../activities/load-action-policy';
import { exampleRegistry } from '../../examples/tools';
import {
  claimUpdate,
  dispatchReportSignal,
  settleSignal,
  statusQuery,
  type ActionInput,
  type ActionSnapshot,
  type ClaimAnswer,
  type ClaimRequest,
  type DispatchReport,
} from '../../messages/action';
import { OWNER_REPORT_WINDOW } from '../../policies/timeouts';
import { acmeChargeAction } from '../support/intents';
import { useTimeSkippingEnv } from '../support/time-skipping';

/**
 * The owner sends (workflows/action.ts, ownerDispatch): the action grants its owner's first dispatch once,
 * to the token of the owner's claim, takes the owner's report and nothing else, and takes over by itself
 * when no report comes within OWNER_REPORT_WINDOW. The action workflow runs here against a fake executor,
 * so every dispatch the action makes itself is counted; the reports are sent as the owner's activity sends them.
 */
const tools = exampleRegistry();

const effectInput = (eventId: string): ActionInput => acmeChargeAction(eventId, 1200);

const confirmedReport = (providerRef: string): DispatchReport => ({
  kind: 'outcome',
  outcome: { status: 'confirmed', providerRef, record: { id: providerRef }, via: 'send', sends: 1 },
});

describe('the owner sends its first dispatch (time-skipping)', () => {
  const harness = useTimeSkippingEnv();
  const dispatched: ExecuteInput[] = [];
  let lookupFinds: string | undefined;

  /** Holds the policy load of the action whose key it names, until released. */
  let policyGate: { key: string; open: Promise<void> } | undefined;

  function worker(taskQueue: string) {
    const policy = createLoadActionPolicy({ tools });
    return harness.worker(taskQueue, {
      ...policy,
      async loadActionPolicy(input: Parameters<typeof policy.loadActionPolicy>[0]) {
        if (policyGate?.key === input.key) await policyGate.open;
        return policy.loadActionPolicy(input);
      },
      async executeAction(input: ExecuteInput): Promise<ExecuteOutcome> {
        dispatched.push(input);
        return { status: 'confirmed', providerRef: 'ch_by_action', record: {}, via: 'send', sends: 1 };
      },
      async lookupAction() {
        return lookupFinds
          ? { found: true, providerRef: lookupFinds, record: {}, detail: `found ${lookupFinds}` }
          : { found: false, detail: 'not found' };
      },
    });
  }

  async function claim(input: ActionInput, taskQueue: string, req: ClaimRequest): Promise<ClaimAnswer> {
    return harness.env.client.workflow.executeUpdateWithStart(claimUpdate, {
      args: [req],
      startWorkflowOperation: new WithStartWorkflowOperation('actionWorkflow', {
        workflowId: input.key,
        taskQueue,
        args: [input],
        workflowIdConflictPolicy: 'USE_EXISTING',
      }),
    });
  }

  const reasons = (s: ActionSnapshot) => s.audit.map((a) => a.reason);
  const dispatchesOf = (key: string) => dispatched.filter((d) => d.key === key);

  it(
    'grants the send once, to the owner and its token; ignores other reports; applies the owner report',
    { timeout: 120_000 },
    async () => {
      const taskQueue = 'owner-sends-granted';
      const input = effectInput('owner-sends-granted');
      const w = await worker(taskQueue);
      await w.runUntil(async () => {
        const ownerClaim = (token: string, attempt: number) =>
          claim(input, taskQueue, {
            requestHash: input.requestHash,
            claimant: input.owner,
            send: { token, attempt },
          });
        const first = await ownerClaim('token-a', 1);
        assert.equal(first.sendGranted, true, JSON.stringify(first));
        assert.equal(first.firstGrant, true, 'nothing was granted before: the attempt sends as the first');
        assert.equal(first.status, 'dispatching');
        assert.equal(first.dispatcher, input.owner);
        // A retried attempt of the same activity carries the same token and is granted again, as a retry.
        const retried = await ownerClaim('token-a', 2);
        assert.equal(retried.sendGranted, true);
        assert.equal(retried.firstGrant, false, 'attempt 1 was told to send: attempt 2 follows the retry rules');
        // The older attempt, held up and claiming late, is not: only the newest attempt of a token sends.
        const stale = await ownerClaim('token-a', 1);
        assert.equal(stale.sendGranted, undefined);
        // Another activity of the owner (another token), or another claimant, is not either.
        const second = await ownerClaim('token-b', 1);
        assert.equal(second.sendGranted, undefined);
        const other = await claim(input, taskQueue, {
          requestHash: input.requestHash,
          claimant: 'run:acme:another-agent',
          send: { token: 'token-c' },
        });
        assert.equal(other.sendGranted, undefined);

        const handle: WorkflowHandle = harness.env.client.workflow.getHandle(input.key);
        await handle.signal(dispatchReportSignal, { token: 'token-z', report: confirmedReport('ch_forged') });
        await handle.signal(dispatchReportSignal, { token: 'token-b', report: confirmedReport('ch_other') });
        await handle.signal(dispatchReportSignal, {
          token: 'token-a',
          report: { kind: 'outcome', outcome: { status: 'confirmed', via: 'send', sends: 1 } } as never,
        });
        await handle.signal(dispatchReportSignal, { token: 'token-a', report: confirmedReport('ch_owner') });
        await harness.env.sleep('1s');
        const applied = (await handle.query(statusQuery)) as ActionSnapshot;
        assert.equal(applied.status, 'confirmed', JSON.stringify(applied.audit));
        assert.equal(applied.providerRef, 'ch_owner');
        assert.equal(applied.sends, 1);
        assert.equal(applied.dispatcher, undefined, 'the grant ended with the report');
        assert.ok(
          reasons(applied).some((r) => /ignored: it carries a token no claim of the owner carried/.test(r)),
          reasons(applied).join('\n'),
        );
        assert.ok(reasons(applied).some((r) => /ignored: it carries another token than the grant/.test(r)));
        assert.ok(reasons(applied).some((r) => /ignored: a confirmed outcome needs a providerRef/.test(r)));
        // The owner's other activity said it sent: not applied, but kept for a person to see.
        assert.ok(
          applied.checks.some(
            (c) =>
              c.kind === 'evidence' && !c.trustworthy && /says confirmed: provider send: ch_other/.test(c.detail ?? ''),
          ),
          JSON.stringify(applied.checks),
        );
        // A report after the grant ended changes nothing either.
        await handle.signal(dispatchReportSignal, { token: 'token-a', report: confirmedReport('ch_late') });
        await handle.signal(settleSignal, { by: input.owner, state: 'kept' });
        const final = (await handle.result()) as ActionSnapshot;
        assert.equal(final.status, 'confirmed');
        assert.equal(final.providerRef, 'ch_owner');
        assert.ok(
          reasons(final).some((r) => /ignored: no dispatch is granted to the owner now/.test(r)),
          reasons(final).join('\n'),
        );
        assert.equal(dispatchesOf(input.key).length, 0, 'the action never dispatched itself');
      });
    },
  );

  it(
    'takes over when the owner does not report within the window: unknown, a lookup, then its own resend',
    { timeout: 120_000 },
    async () => {
      const taskQueue = 'owner-sends-silent';
      const input = effectInput('owner-sends-silent');
      lookupFinds = undefined;
      const w = await worker(taskQueue);
      await w.runUntil(async () => {
        const granted = await claim(input, taskQueue, {
          requestHash: input.requestHash,
          claimant: input.owner,
          send: { token: 'token-silent', attempt: 1 },
        });
        assert.equal(granted.sendGranted, true);
        const handle: WorkflowHandle = harness.env.client.workflow.getHandle(input.key);
        assert.equal(OWNER_REPORT_WINDOW, '6m', 'this test skips past a 6 minute window');
        await harness.env.sleep('5m');
        const waiting = (await handle.query(statusQuery)) as ActionSnapshot;
        assert.equal(waiting.status, 'dispatching', 'inside the window the action waits for the owner');
        assert.equal(dispatchesOf(input.key).length, 0);

        await harness.env.sleep('2m');
        // Too late: the action has taken over, and a report now is ignored.
        await handle.signal(dispatchReportSignal, { token: 'token-silent', report: confirmedReport('ch_late') });
        await harness.env.sleep('1m');
        await handle.signal(settleSignal, { by: input.owner, state: 'kept' });
        const final = (await handle.result()) as ActionSnapshot;
        assert.equal(final.status, 'confirmed', JSON.stringify(final.audit));
        assert.equal(final.providerRef, 'ch_by_action');
        assert.deepEqual(
          final.audit.filter((a) => a.from !== a.to).map((a) => a.to),
          ['planned', 'dispatching', 'unknown', 'dispatching', 'confirmed'],
        );
        assert.ok(
          reasons(final).some((r) => /did not report its dispatch within 6m/.test(r)),
          reasons(final).join('\n'),
        );
        assert.ok(
          final.checks.some((c) => c.kind === 'lookup' && !c.found),
          'absence was looked up before a resend',
        );
        assert.ok(
          final.checks.some(
            (c) => c.kind === 'evidence' && c.found && !c.trustworthy && /ch_late/.test(c.detail ?? ''),
          ),
          'the late report is kept as untrusted evidence',
        );
        const own = dispatchesOf(input.key);
        assert.equal(own.length, 1, 'one resend, by the action');
        assert.equal(own[0].mode, 'maybe-sent', 'the owner may have sent: the resend follows the retry rules');
      });
    },
  );

  it(
    'sends itself, as a first dispatch, when the owner gave up before it was granted the send',
    { timeout: 120_000 },
    async () => {
      const taskQueue = 'owner-sends-withdrawn';
      const input = effectInput('owner-sends-withdrawn');
      let release!: () => void;
      policyGate = { key: input.key, open: new Promise<void>((r) => (release = r)) };
      const w = await worker(taskQueue);
      await w.runUntil(async () => {
        // The claim waits while the policy load is held; a short workflow-task timeout lets the signal in meanwhile.
        const answer = harness.env.client.workflow.executeUpdateWithStart(claimUpdate, {
          args: [{ requestHash: input.requestHash, claimant: input.owner, send: { token: 'token-gone', attempt: 1 } }],
          startWorkflowOperation: new WithStartWorkflowOperation('actionWorkflow', {
            workflowId: input.key,
            taskQueue,
            args: [input],
            workflowIdConflictPolicy: 'USE_EXISTING',
            workflowTaskTimeout: '2s',
          }),
        });
        const handle: WorkflowHandle = harness.realTimeClient.workflow.getHandle(input.key);
        for (
          let i = 0;
          i < 50 &&
          !(await handle.describe().then(
            () => true,
            () => false,
          ));
          i++
        ) {
          await new Promise((r) => setTimeout(r, 100));
        }
        await handle.signal(dispatchReportSignal, {
          token: 'token-gone',
          report: { kind: 'no-verdict', message: 'schedule-to-close passed', sends: 0 },
        });
        // Long enough for a workflow task to take the signal while the policy load is still held.
        await new Promise((r) => setTimeout(r, 4_000));
        release();
        const answered = await answer;
        assert.equal(answered.sendGranted, undefined, JSON.stringify(answered));
        await handle.signal(settleSignal, { by: input.owner, state: 'kept' });
        const final = (await handle.result()) as ActionSnapshot;
        assert.equal(final.status, 'confirmed', JSON.stringify(final.audit));
        assert.equal(final.providerRef, 'ch_by_action');
        assert.ok(
          reasons(final).some((r) => /the owner gave up before it was granted the send/.test(r)),
          reasons(final).join('\n'),
        );
        const own = dispatchesOf(input.key);
        assert.equal(own.length, 1);
        assert.equal(own[0].mode, 'first', 'no grant was ever answered: nothing can have been sent');
      });
    },
  );

  it(
    'waits for the policy before answering the owner: a charge that needs confirmation is not granted',
    {
      timeout: 120_000,
    },
    async () => {
      const taskQueue = 'owner-sends-confirm';
      const base = effectInput('owner-sends-confirm');
      const intent = tools.parseIntent({ ...base.intent, amountCents: 7500 });
      const input = { ...base, intent, requestHash: tools.hash(intent) };
      const w = await worker(taskQueue);
      await w.runUntil(async () => {
        const answer = await claim(input, taskQueue, {
          requestHash: input.requestHash,
          claimant: input.owner,
          send: { token: 'token-confirm' },
        });
        assert.equal(answer.status, 'awaiting_confirmation');
        assert.equal(answer.sendGranted, undefined);
        await harness.env.client.workflow.getHandle(input.key).terminate('test over');
      });
    },
  );
});
