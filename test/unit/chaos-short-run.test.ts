import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CRASH_MODES } from '../../scripts/chaos/types';
import { BASELINE_RUN, baselineModes, SHORT_RUN, shortRunModes } from '../support/short-chaos-run';

/** The first seed after `from` whose short run draws every crash mode: what to put in SHORT_RUN when this fails. */
function nextSeedDrawingEveryMode(from: number): number | undefined {
  for (let seed = from + 1; seed < from + 20_000; seed++) {
    if (new Set(shortRunModes(seed)).size === CRASH_MODES.length) return seed;
  }
  return undefined;
}

describe("the short chaos run's seed (npm run test:long)", () => {
  it('draws every crash mode in its twelve iterations', () => {
    const drawn = new Set(shortRunModes());
    const missing = CRASH_MODES.filter((m) => !drawn.has(m));
    // The next seed is searched for only when this fails: the search plans thousands of runs (about 20 s).
    if (missing.length > 0)
      assert.fail(
        `seed ${SHORT_RUN.seed} no longer draws ${missing.join(', ')}; seed ${nextSeedDrawingEveryMode(SHORT_RUN.seed)} does (test/support/short-chaos-run.ts)`,
      );
    assert.equal(drawn.size, CRASH_MODES.length);
  });

  it('puts an after-commit and a gateway-error renewal at the baseline comparison indices', () => {
    assert.deepEqual(baselineModes(), BASELINE_RUN.modes, `indices ${BASELINE_RUN.indices.join(', ')}`);
  });
});
