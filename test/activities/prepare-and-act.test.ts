import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ActOnRecordInput, ActOnRecordResult } from '../../activities/act-on-record';
import { createPrepareAction } from '../../activities/prepare-action';
import { createPrepareAndAct, type PrepareAndActInput } from '../../activities/prepare-and-act';
import { exampleTools } from '../../examples/tools';
import { actionKeyForStep, keyAtStep, type StepRevision } from '../../policies/action-key';
import { createToolRegistry } from '../../policies/tool-registry';

const unused = 'http://127.0.0.1:9';
const urls = { payments: unused, email: unused, tickets: unused, inventory: unused, shipping: unused };
const RUN = 'run:acme:evt-42';
const charge = (amountCents: number) => ({
  operation: 'charge',
  amountCents,
  currency: 'usd',
  customerId: 'cus_1',
  paymentMethod: 'pm_1',
  merchantReference: 'A-42',
});

/** prepareAndAct over the example tools (charge optionally declaring long calls), with a recorded act. */
function subject(options: { longCalls?: boolean } = {}) {
  const tools = createToolRegistry(
    exampleTools(urls).map((t) => (t.name === 'charge' && options.longCalls ? { ...t, longCalls: true } : t)),
  );
  const acts: ActOnRecordInput[] = [];
  const verdict: ActOnRecordResult = { handOver: 'recorded by the test' };
  const prepareAndAct = createPrepareAndAct({
    prepareAction: createPrepareAction({ tools }).prepareAction,
    actOnRecord: async (input) => {
      acts.push(input);
      return verdict;
    },
  });
  const input = (over: Partial<PrepareAndActInput> = {}): PrepareAndActInput => ({
    intent: charge(4990),
    tenant: 'acme',
    runId: RUN,
    revisions: { charge: [] },
    owner: RUN,
    token: 'token-1',
    generation: 5,
    ...over,
  });
  return { prepareAndAct, acts, verdict, input, tools };
}

describe('prepareAndAct: a run prepares and acts in one local activity', () => {
  it("acts with the key the run derives from the step, and hands the act the normalized intent and the run's token", async () => {
    const { prepareAndAct, acts, verdict, input, tools } = subject();
    const result = await prepareAndAct(input());
    const expectedKey = actionKeyForStep(RUN, { operation: 'charge', version: 1 });
    assert.deepEqual(result.acted, { key: expectedKey, verdict });
    assert.equal(result.deferred, undefined);
    assert.equal(acts.length, 1);
    const normalized = tools.parseIntent(charge(4990));
    assert.deepEqual(acts[0], {
      action: {
        key: expectedKey,
        intent: normalized,
        requestHash: tools.hash(normalized),
        tenant: 'acme',
        owner: RUN,
      },
      token: 'token-1',
      generation: 5,
    });
    assert.equal(result.prepared.requestHash, tools.hash(normalized));
  });

  it('keeps the key of a revision with the same request hash, and names a step the run chose', async () => {
    const { prepareAndAct, input, tools } = subject();
    const hash = tools.hash(tools.parseIntent(charge(4990)));
    const again = await prepareAndAct(
      input({ revisions: { charge: [{ key: 'charge:v1:acme:evt-42', requestHash: hash }] } }),
    );
    assert.equal(again.acted?.key, 'charge:v1:acme:evt-42');
    const stepped = await prepareAndAct(input({ step: 'upgrade', revisions: { upgrade: [] } }));
    assert.equal(stepped.acted?.key, actionKeyForStep(RUN, { operation: 'charge', version: 1, stepId: 'upgrade' }));
  });

  it('prepares without acting for a re-plan, a tool with long calls, and a step the run did not expect', async () => {
    const cases: Array<[ReturnType<typeof subject>, Partial<PrepareAndActInput>, string]> = [
      [
        subject(),
        { revisions: { charge: [{ key: 'charge:v1:acme:evt-42', requestHash: 'f'.repeat(64) }] } },
        're-plan',
      ],
      [subject({ longCalls: true }), {}, 'long-calls'],
      [subject(), { revisions: { refund: [] } }, 'another-step'],
    ];
    for (const [{ prepareAndAct, acts, input }, over, why] of cases) {
      const result = await prepareAndAct(input(over));
      assert.equal(result.deferred, why);
      assert.equal(result.acted, undefined, why);
      assert.equal(acts.length, 0, `${why}: nothing acted`);
      assert.equal(result.prepared.tool.name, 'charge');
    }
  });

  it('refuses a bad intent naming its field, before any act', async () => {
    const { prepareAndAct, acts, input } = subject();
    await assert.rejects(prepareAndAct(input({ intent: { ...charge(4990), amountCents: -1 } })), /amountCents/);
    assert.equal(acts.length, 0);
  });

  it('derives the same keys as the run does (keyAtStep): revisions r2, r3 after re-plans', () => {
    const at = (revisions: StepRevision[], hash: string) =>
      keyAtStep(RUN, { name: 'charge', version: 1 }, 'charge', revisions, hash);
    const r1 = at([], 'a');
    const r2 = at([{ key: r1.key, requestHash: 'a' }], 'b');
    const both = [
      { key: r1.key, requestHash: 'a' },
      { key: r2.key, requestHash: 'b' },
    ];
    assert.equal(r1.key, 'charge:v1:acme:evt-42');
    assert.equal(r2.key, 'charge:v1:acme:evt-42:charge-r2');
    assert.deepEqual(r2.replans, { key: r1.key, requestHash: 'a' });
    assert.equal(at(both, 'c').key, 'charge:v1:acme:evt-42:charge-r3');
    assert.deepEqual(at(both, 'a').revisionOf, { key: r1.key, requestHash: 'a' });
  });
});
