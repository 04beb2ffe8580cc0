import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { ActionFilter, ActionListing } from '../../client';
import { RetrysafeError } from '../../policies/errors';
import { runOps } from '../../scripts/ops/cli';
import type { OpsClient, OpsContext } from '../../scripts/ops/context';
import { addOperator } from '../../scripts/ops/operator-auth';
import type { ActionSnapshot, OperatorResolution } from '../../messages/action';

const KEY = 'send-email:v1:acme:evt-1';
const NOW = new Date('2026-08-28T12:00:00Z');

function snapshot(extra: Partial<ActionSnapshot> = {}): ActionSnapshot {
  return {
    key: KEY,
    operation: 'send-email',
    tenant: 'acme',
    status: 'needs_review',
    requestHash: 'a'.repeat(64),
    owner: 'client:application',
    claimants: ['client:application'],
    summary: 'email "s" to a***@example.com',
    sends: 1,
    dispatches: 1,
    checks: [],
    audit: [{ at: NOW.toISOString(), from: null, to: 'planned', reason: 'intent persisted' }],
    ...extra,
  };
}

/** A stand-in for RetrysafeClient that records what reached "Temporal". */
class FakeClient implements OpsClient {
  listed: ActionFilter[] = [];
  resolutions: Array<{ key: string; resolution: OperatorResolution }> = [];
  actions = new Map<string, ActionSnapshot>([[KEY, snapshot()]]);
  listings: ActionListing[] = [];
  refuseWith?: Error;
  neverAnswer = false;
  waiting: Array<{ workflowId: string; waitingOn: string; status: string }> = [];

  async listWaitingRuns(): Promise<Array<{ workflowId: string; waitingOn: string; status: string }>> {
    return this.waiting;
  }

  async listActions(filter: ActionFilter = {}): Promise<ActionListing[]> {
    this.listed.push(filter);
    return this.listings;
  }
  async getAction(key: string): Promise<ActionSnapshot | undefined> {
    return this.actions.get(key);
  }
  async resolveAction(key: string, resolution: OperatorResolution): Promise<ActionSnapshot> {
    this.resolutions.push({ key, resolution });
    if (this.neverAnswer) return new Promise<never>(() => undefined);
    if (this.refuseWith) throw this.refuseWith;
    const current = this.actions.get(key)!;
    const next = snapshot({
      status: 'confirmed',
      providerRef: resolution.providerRef,
      audit: [
        ...current.audit,
        {
          at: NOW.toISOString(),
          from: current.status,
          to: 'confirmed',
          reason: `operator: ${resolution.reason}`,
          by: resolution.operator,
        },
      ],
    });
    this.actions.set(key, next);
    return next;
  }
}

describe('ops commands against a fake client', () => {
  let dir: string;
  let operatorsFile: string;
  let token: string;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ops-cmd-'));
    operatorsFile = path.join(dir, 'operators.json');
    token = (await addOperator(operatorsFile, 'alice')).token;
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function run(argv: string[], opts: { client?: FakeClient; env?: NodeJS.ProcessEnv } = {}) {
    const client = opts.client ?? new FakeClient();
    const out: string[] = [];
    const err: string[] = [];
    let connects = 0;
    const ctx: OpsContext = {
      env: { RETRYSAFE_OPERATORS_FILE: operatorsFile, ...opts.env },
      out: (t) => out.push(t),
      warn: (t) => err.push(t),
      now: () => NOW,
      client: async () => {
        connects++;
        return client;
      },
    };
    const code = await runOps(argv, ctx, (line) => err.push(line));
    return { code, stdout: out.join('\n'), stderr: err.join('\n'), client, connects };
  }

  const confirm = [
    'resolve',
    KEY,
    '--decision',
    'confirmed',
    '--provider-ref',
    'msg_1',
    '--reason',
    'seen in provider dashboard',
  ];

  it('queue asks for the review statuses and prints JSON oldest first', async () => {
    const client = new FakeClient();
    client.listings = [
      {
        key: 'b:v1:acme:e',
        status: 'unknown',
        operation: 'charge',
        tenant: 'acme',
        running: true,
        startTime: new Date(NOW.getTime() - 60_000),
      },
      {
        key: 'a:v1:acme:e',
        status: 'needs_review',
        operation: 'charge',
        tenant: 'acme',
        running: true,
        startTime: new Date(NOW.getTime() - 3_600_000),
      },
    ];
    const r = await run(['queue', '--json', '--tenant', 'acme', '--older-than', '30s'], { client });
    assert.equal(r.code, 0);
    assert.deepEqual(client.listed[0].status, ['unknown', 'needs_review', 'awaiting_confirmation', 'compensating']);
    assert.equal(client.listed[0].tenant, 'acme');
    assert.equal(client.listed[0].olderThanMs, 30_000);
    const rows = JSON.parse(r.stdout) as Array<{ key: string; ageSeconds: number; providerRef: string | null }>;
    assert.deepEqual(
      rows.map((x) => [x.key, x.ageSeconds, x.providerRef]),
      [
        ['a:v1:acme:e', 3600, null],
        ['b:v1:acme:e', 60, null],
      ],
    );
  });

  it('queue applies --limit after sorting, and says how many more there are', async () => {
    const client = new FakeClient();
    client.listings = [3, 1, 2].map((m) => ({
      key: `k${m}:v1:acme:e`,
      status: 'needs_review',
      operation: 'charge',
      tenant: 'acme',
      running: true,
      startTime: new Date(NOW.getTime() - m * 60_000),
    }));
    const r = await run(['queue', '--limit', '1'], { client });
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^k3:v1:acme:e\s+needs_review/m);
    assert.doesNotMatch(r.stdout, /k1:v1/);
    assert.match(
      r.stdout,
      /3 action\(s\) in unknown, needs_review, awaiting_confirmation, compensating, showing the oldest 1/,
    );
  });

  it('show prints the action or exits 1 naming the key', async () => {
    const shown = await run(['show', KEY]);
    assert.equal(shown.code, 0);
    assert.match(shown.stdout, /^status: +needs_review$/m);
    const missing = await run(['show', 'send-email:v1:acme:nope']);
    assert.equal(missing.code, 1);
    assert.equal(missing.stdout, '');
    assert.match(missing.stderr, /no action with key send-email:v1:acme:nope/);
  });

  it('show exits 2 for a malformed key without connecting', async () => {
    const r = await run(['show', 'not a key']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /KEY: /);
    assert.equal(r.connects, 0);
  });

  it('resolve without a token, or with an unknown one, exits 3 and sends nothing', async () => {
    for (const extra of [[], ['--operator-token', 'guess']]) {
      const r = await run([...confirm, ...extra]);
      assert.equal(r.code, 3, r.stderr);
      assert.equal(r.connects, 0);
      assert.deepEqual(r.client.resolutions, []);
    }
  });

  it('resolve records the operator name from the file, whatever the flags say', async () => {
    const r = await run(confirm, { env: { RETRYSAFE_OPERATOR_TOKEN: token } });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.client.resolutions, [
      {
        key: KEY,
        resolution: {
          decision: 'confirmed',
          operator: 'alice',
          reason: 'seen in provider dashboard',
          providerRef: 'msg_1',
        },
      },
    ]);
    assert.match(r.stdout, /needs_review → confirmed \(confirmed by alice: seen in provider dashboard\)/);
    const spoof = await run([...confirm, '--operator', 'mallory'], { env: { RETRYSAFE_OPERATOR_TOKEN: token } });
    assert.equal(spoof.code, 2, 'there is no flag to choose the recorded name');
  });

  it('resolve checks arguments before the token', async () => {
    const r = await run(['resolve', KEY, '--decision', 'confirmed', '--reason', 'seen it']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--provider-ref: is required with --decision confirmed/);
  });

  it('resolve prints a workflow-side refusal and exits 1', async () => {
    const client = new FakeClient();
    client.refuseWith = new WorkflowUpdateFailedError(
      'Workflow Update failed',
      new RetrysafeError(
        'IllegalTransition',
        `action ${KEY} is compensating; only unknown or needs_review actions take a resolution`,
      ).toFailure(),
    );
    client.actions.set(KEY, snapshot({ status: 'compensating' }));
    const r = await run(confirm, { client, env: { RETRYSAFE_OPERATOR_TOKEN: token } });
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /refused the decision \(IllegalTransition\): action .* is compensating; only unknown or needs_review/,
    );
  });

  it('resolve refuses a finished action without sending, and an unknown key with exit 1', async () => {
    const client = new FakeClient();
    client.actions.set(KEY, snapshot({ status: 'failed' }));
    const done = await run(confirm, { client, env: { RETRYSAFE_OPERATOR_TOKEN: token } });
    assert.equal(done.code, 1);
    assert.match(done.stderr, /is failed and finished/);
    assert.deepEqual(client.resolutions, []);
    const missing = await run(
      ['resolve', 'send-email:v1:acme:nope', '--decision', 'failed', '--reason', 'never sent'],
      {
        env: { RETRYSAFE_OPERATOR_TOKEN: token },
      },
    );
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no action with key send-email:v1:acme:nope/);
  });

  it('resolve stops waiting after --wait and says the decision is pending', async () => {
    const client = new FakeClient();
    client.neverAnswer = true;
    const r = await run([...confirm, '--wait', '1s'], { client, env: { RETRYSAFE_OPERATOR_TOKEN: token } });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /accepted the decision but has not applied it within 1s/);
  });

  it('prints help per command on stdout and refuses unknown commands with exit 2', async () => {
    for (const name of ['queue', 'show', 'resolve', 'operators']) {
      const r = await run([name, '--help']);
      assert.equal(r.code, 0);
      assert.match(r.stdout, new RegExp(`^Usage: npm run ops -- ${name}`));
      assert.equal(r.connects, 0);
    }
    const unknown = await run(['approve']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /approve: unknown command/);
  });
  it('lists runs held by an interlock with the status of what they wait for', async () => {
    const client = new FakeClient();
    client.waiting = [{ workflowId: 'run:acme:e1:fulfillment', waitingOn: KEY, status: 'waiting' }];
    const { stdout } = await run(['waiting', '--json'], { client });
    const rows = JSON.parse(stdout) as Array<{ workflowId: string; waitingOn: string; upstreamStatus: string }>;
    assert.deepEqual(
      rows.map((r) => [r.workflowId, r.waitingOn, r.upstreamStatus]),
      [['run:acme:e1:fulfillment', KEY, client.actions.get(KEY)!.status]],
    );
    const table = await run(['waiting'], { client });
    assert.match(table.stdout, /run:acme:e1:fulfillment/);
  });
});
