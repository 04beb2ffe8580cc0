import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  DEFAULT_CLUSTER_CONCURRENCY,
  DEFAULT_CONCURRENCY,
  DEFAULT_CRASHES,
  formatIndexes,
  parseChaosArgs,
} from '../../scripts/chaos/args';
import { DEFAULT_RESTART_RATE } from '../../scripts/chaos/plan';
import { UsageError } from '../../cli/ops/errors';

function refuses(argv: string[], argument: string, detail?: RegExp): void {
  assert.throws(
    () => parseChaosArgs(argv),
    (err: unknown) => {
      assert.ok(err instanceof UsageError, `expected a UsageError, got ${String(err)}`);
      assert.ok(err.message.startsWith(`${argument}:`), `message should name ${argument}: ${err.message}`);
      if (detail) assert.match(err.message, detail);
      return true;
    },
  );
}

describe('chaos arguments', () => {
  it('defaults to 100 crashes over every scenario, 4 at a time, a fresh seed', () => {
    const args = parseChaosArgs([]);
    assert.equal(args.crashes, DEFAULT_CRASHES);
    assert.equal(args.concurrency, DEFAULT_CONCURRENCY);
    assert.deepEqual(args.scenario, [
      'renewal',
      'unknown-lookup',
      'email-no-key',
      'saga-compensation',
      'approval',
      'multi-agent',
    ]);
    assert.equal(args.seed, undefined);
    assert.equal(args['restart-rate'], undefined, 'the run picks it: the dev server restarts, the cluster does not');
    assert.equal(args.target, 'dev-server');
    assert.equal(args.baseline, false);
    assert.equal(args.json, false);
    assert.equal(args.minutes, undefined);
  });

  it('takes the cluster as target, and a restart rate for either', () => {
    const onCluster = parseChaosArgs(['--target', 'cluster']);
    assert.equal(onCluster.target, 'cluster');
    assert.equal(onCluster.concurrency, DEFAULT_CLUSTER_CONCURRENCY, 'kills take turns: fewer in flight');
    assert.equal(parseChaosArgs(['--target', 'cluster', '--concurrency', '4']).concurrency, 4);
    refuses(['--target', 'cluster', '--restart-rate', '0.1'], '--restart-rate', /kills one of its services/);
    assert.equal(
      parseChaosArgs(['--restart-rate', String(DEFAULT_RESTART_RATE)])['restart-rate'],
      DEFAULT_RESTART_RATE,
    );
    refuses(['--target', 'kubernetes'], '--target', /dev-server or cluster/);
  });

  it('takes the real-server scenarios by name; a ledger is no longer optional (no --ledger, no --without-ledger)', () => {
    assert.deepEqual(parseChaosArgs(['--scenario', 'orders-database,stripe-key-only']).scenario, [
      'orders-database',
      'stripe-key-only',
    ]);
    assert.throws(() => parseChaosArgs(['--without-ledger']), /without-ledger/);
    assert.throws(() => parseChaosArgs(['--ledger']), /ledger/);
  });

  it('takes a time budget in whole minutes', () => {
    assert.equal(parseChaosArgs(['--minutes', '90']).minutes, 90);
    refuses(['--minutes', '1.5'], '--minutes', /whole number of minutes/);
    refuses(['--minutes', '0'], '--minutes', /at least 1/);
  });

  it('takes repeated and comma-separated scenarios and iteration indexes', () => {
    const args = parseChaosArgs([
      '--scenario',
      'renewal',
      '--scenario=unknown-lookup,email-no-key',
      '--scenario',
      'renewal',
      '--only',
      '3,7',
      '--only',
      '12',
      '--seed',
      '4294967295',
      '--baseline',
      '--json',
    ]);
    assert.deepEqual(args.scenario, ['renewal', 'unknown-lookup', 'email-no-key']);
    assert.deepEqual(args.only, [3, 7, 12]);
    assert.equal(args.seed, 4294967295);
    assert.equal(args.baseline, true);
  });

  it('takes ranges of iteration indexes, so a long run can be split across runs of the same seed', () => {
    assert.deepEqual(parseChaosArgs(['--only', '998-1000,3,999']).only, [998, 999, 1000, 3]);
    assert.equal(parseChaosArgs(['--only', '0-499']).only?.length, 500);
    refuses(['--only', '9-3'], '--only', /"9-3" is not a range/);
    refuses(['--only', '3-'], '--only', /"3-"/);
    assert.equal(formatIndexes([0, 1, 2, 3, 7, 9, 10, 12, 13, 14]), '0-3,7,9,10,12-14');
    assert.equal(formatIndexes([]), '');
    assert.deepEqual(parseChaosArgs(['--only', formatIndexes([5, 6, 7, 8, 20, 21])]).only, [5, 6, 7, 8, 20, 21]);
  });

  it('names the argument in every refusal', () => {
    refuses(['--crashes', 'many'], '--crashes', /whole number/);
    refuses(['--crashes', '0'], '--crashes', /at least 1/);
    refuses(['--seed', '-1'], '--seed');
    refuses(['--seed', '4294967296'], '--seed', /at most/);
    refuses(['--concurrency', '64'], '--concurrency', /at most/);
    refuses(['--restart-rate', '1.5'], '--restart-rate', /probability/);
    refuses(['--only', '3,x'], '--only', /"x"/);
    refuses(['--crashes'], '--crashes', /needs a value/);
    refuses(['--crash', '3'], '--crash', /unknown option/);
    refuses(['--scenario', 'renewl'], '--scenario', /unknown scenario "renewl"; available: renewal/);
  });
});
