import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRng, deriveSeed, mulberry32 } from '../../scripts/chaos/prng';

describe('chaos PRNG', () => {
  it('replays the same sequence for the same seed', () => {
    const a = mulberry32(42);
    const b = mulberry32(42);
    const first = Array.from({ length: 5 }, () => a());
    assert.deepEqual(
      Array.from({ length: 5 }, () => b()),
      first,
    );
    assert.ok(first.every((x) => x >= 0 && x < 1));
    assert.notDeepEqual(Array.from({ length: 5 }, mulberry32(43)), first);
  });

  it('keeps each iteration stream independent of the others and of the seed/index arithmetic', () => {
    assert.equal(deriveSeed(7, 3), deriveSeed(7, 3));
    // XOR-style mixing would make (seed 7, index 0) and (seed 1, index 6) collide.
    assert.notEqual(deriveSeed(7, 0), deriveSeed(1, 6));
    const seen = new Set(Array.from({ length: 1000 }, (_, i) => deriveSeed(20260828, i)));
    assert.equal(seen.size, 1000);
  });

  it('draws integers inside their bounds, both ends included, and follows weights', () => {
    const rng = createRng(1);
    const ints = Array.from({ length: 2000 }, () => rng.int(3, 5));
    assert.deepEqual([...new Set(ints)].sort(), [3, 4, 5]);
    const picks = Array.from({ length: 2000 }, () =>
      rng.weighted([
        ['rare', 1],
        ['common', 9],
      ] as const),
    );
    const rare = picks.filter((p) => p === 'rare').length;
    assert.ok(rare > 100 && rare < 330, `rare drawn ${rare} times in 2000 at weight 0.1`);
    assert.throws(() => rng.pick([]), /empty/);
  });
});
