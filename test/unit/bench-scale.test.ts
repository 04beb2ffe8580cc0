import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseScaleArgs } from '../../scripts/bench/scale/args';
import { drift, growthOf } from '../../scripts/bench/scale/growth';
import { UsageError } from '../../cli/ops/errors';

describe('bench:scale: how a cost grows with size', () => {
  it('fits the exponent of cost ≈ size^b: flat, linear, quadratic', () => {
    const sizes = [100, 300, 1000, 3000];
    assert.equal(growthOf(sizes.map((size) => ({ size, cost: 42 })))?.exponent, 0);
    const linear = growthOf(sizes.map((size) => ({ size, cost: 3 * size })));
    assert.deepEqual(linear, { exponent: 1, superlinear: false });
    const quadratic = growthOf(sizes.map((size) => ({ size, cost: size * size })));
    assert.deepEqual(quadratic, { exponent: 2, superlinear: true });
  });

  it('flags only what grows past the threshold, and needs two sizes', () => {
    const grown = (b: number) =>
      growthOf([
        { size: 10, cost: 10 },
        { size: 100, cost: 10 * 10 ** b },
      ]);
    assert.deepEqual(grown(1.1), { exponent: 1.1, superlinear: false });
    assert.deepEqual(grown(1.3), { exponent: 1.3, superlinear: true });
    assert.equal(growthOf([{ size: 10, cost: 1 }]), undefined);
    assert.equal(
      growthOf([
        { size: 10, cost: 1 },
        { size: 10, cost: 2 },
      ]),
      undefined,
      'one size twice is not a trend',
    );
    assert.equal(
      growthOf([
        { size: 0, cost: 5 },
        { size: 10, cost: 0 },
      ]),
      undefined,
      'zeros have no logarithm',
    );
  });

  it('compares the first and last ten values of a series', () => {
    const flat = Array.from({ length: 100 }, () => 250);
    assert.deepEqual(drift(flat), { first: 250, last: 250, ratio: 1 });
    const rising = Array.from({ length: 100 }, (_, i) => 100 + 10 * i);
    const d = drift(rising)!;
    assert.equal(d.first, 145);
    assert.equal(d.last, 1045);
    assert.equal(d.ratio, 7.21);
    assert.equal(drift(flat.slice(0, 15)), undefined, 'fewer than two tens');
  });

  it('parses its arguments, naming the flag that is wrong', () => {
    const args = parseScaleArgs([]);
    assert.equal(args['long-run'], 100);
    assert.deepEqual(args.concurrent, [100, 300, 1000]);
    assert.equal(args.queue, 10_000);
    assert.deepEqual(parseScaleArgs(['--concurrent', '10,20', '--queue', '0']).concurrent, [10, 20]);
    assert.throws(
      () => parseScaleArgs(['--concurrent', '10;20']),
      (e: unknown) => e instanceof UsageError && /concurrent/.test(e.message),
    );
    assert.throws(
      () => parseScaleArgs(['--long-run', '-1']),
      (e: unknown) => e instanceof UsageError && /long-run/.test(e.message),
    );
  });
});
