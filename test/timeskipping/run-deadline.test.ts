import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runWorkflowId } from '../../policies/action-key';
import type { PlannerFacts, RecordedDecision } from '../../policies/planner-contract';
import { agentRunStatusQuery, raiseCeilingUpdate, resumeRunUpdate } from '../../messages/run';
import type { AgentRunInput, AgentRunResult } from '../../workflows/agent-run';
import { createLoadActionPolicy } from '../../activities/load-action-policy';
import { exampleRegistry } from '../../examples/tools';
import { decisionKit, TEST_OPERATORS } from '../support/decisions';
import { useTimeSkippingEnv } from '../support/time-skipping';

/**
 * A run parked on a person's answer outlives its deadline: when the operator resumes it, the deadline
 * trips before the model is asked again, and only raising the deadline lets the planner take its turn.
 */

const HOUR_MS = 60 * 60 * 1000;
const QUESTION = 'The customer asked for a refund to a different card. Which card should I use?';

function recorded(decision: RecordedDecision['decision'], call: number): RecordedDecision {
  return {
    decision,
    modelId: 'scripted-planner',
    promptHash: `prompt-${call}`.padEnd(64, '0'),
    toolSchemaVersion: 'v1',
    rawOutput: JSON.stringify(decision),
    usage: { inputTokens: 100, outputTokens: 20 },
    plannerCallId: `plan/test/${call}/1`,
    latencyMs: 5,
  };
}

/** Decisions are signed at the test server's time, which is what the workflow's clock reads. */
let serverNowMs = 0;
const kit = decisionKit(() => serverNowMs);

describe('an agent run past its deadline (time-skipping)', () => {
  const harness = useTimeSkippingEnv();
  const plannerCalls: PlannerFacts[] = [];

  function worker(taskQueue: string) {
    return harness.worker(taskQueue, {
      ...createLoadActionPolicy({
        tools: exampleRegistry(),
        trustedApprovalKeys: kit.trustedKeys,
        operatorScopes: TEST_OPERATORS,
      }),
      async planNextAction(facts: PlannerFacts): Promise<RecordedDecision> {
        plannerCalls.push(facts);
        const call = plannerCalls.length;
        return call === 1
          ? recorded({ kind: 'ask-human', question: QUESTION }, call)
          : recorded({ kind: 'stop', reason: 'the operator answered; nothing left to do' }, call);
      },
    });
  }

  it(
    'pauses at the deadline after an operator resumes a run that waited 2 h, and plans again only once the deadline is raised',
    { timeout: 120_000 },
    async () => {
      const taskQueue = 'run-deadline';
      const input: AgentRunInput = {
        tenant: 'acme',
        eventId: 'deadline-after-question',
        goal: 'Handle the customer refund request',
        facts: { orderId: 'A-1842' },
        ceilings: { deadlineMs: HOUR_MS },
      };
      const workflowId = runWorkflowId(input.tenant, input.eventId);
      assert.equal(workflowId, 'run:acme:deadline-after-question');
      const w = await worker(taskQueue);
      await w.runUntil(async () => {
        const handle = await harness.env.client.workflow.start('agentRunWorkflowV3', {
          workflowId,
          taskQueue,
          args: [input],
        });
        await harness.env.sleep('1m');
        let status = await handle.query(agentRunStatusQuery);
        assert.equal(status.stage, 'needs_review');
        assert.match(status.pausedFor ?? '', /the planner asks/);
        assert.ok(status.pausedFor?.includes(QUESTION), status.pausedFor);
        assert.equal(plannerCalls.length, 1);

        // The question waits two hours for an answer: the run's one-hour deadline passes meanwhile.
        await harness.env.sleep('2h');
        serverNowMs = await harness.env.currentTimeMs();
        // Only a signed decision by an admin of this tenant resumes the run.
        await assert.rejects(
          handle.executeUpdate(resumeRunUpdate, { args: [{ operator: 'alice', reason: 'unsigned' } as never] }),
        );
        await assert.rejects(
          handle.executeUpdate(resumeRunUpdate, {
            args: [kit.sign('resume', workflowId, { params: { reason: 'not mine to decide' } }, { operator: 'gabe' })],
          }),
        );
        const resumed = await handle.executeUpdate(resumeRunUpdate, {
          args: [kit.sign('resume', workflowId, { params: { reason: 'use the card on file' } })],
        });
        assert.equal(resumed, 'resumed');
        await harness.env.sleep('1m');
        status = await handle.query(agentRunStatusQuery);
        assert.equal(status.stage, 'needs_review', JSON.stringify(status));
        assert.match(status.pausedFor ?? '', /deadline/, status.pausedFor);
        assert.equal(plannerCalls.length, 1, 'the model gets no extra turn past the deadline');
        assert.equal(status.usage.steps, 1);
        assert.equal(status.ceilings.deadlineMs, HOUR_MS);

        serverNowMs = await harness.env.currentTimeMs();
        const raised = await handle.executeUpdate(raiseCeilingUpdate, {
          args: [
            kit.sign('raise-ceiling', workflowId, {
              params: { ceiling: 'deadline', newLimit: 24 * HOUR_MS, reason: 'the customer answered late' },
            }),
          ],
        });
        assert.equal(raised.deadlineMs, 24 * HOUR_MS);
        const result = (await handle.result()) as AgentRunResult;
        assert.equal(result.status, 'done', JSON.stringify(result));
        assert.equal(plannerCalls.length, 2, 'one more planner call after the raise, which stops');
        assert.deepEqual(
          result.decisions.map((d) => d.kind),
          ['ask-human', 'stop'],
        );
        assert.equal(result.usage.steps, 2);
        assert.deepEqual(result.actions, []);
      });
    },
  );
});
