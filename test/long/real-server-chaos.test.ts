import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { runChaos } from '../../scripts/chaos/run';
import { startStack, type Stack } from '../../scripts/lib/stack';
import { resolveLocalstripe } from '../../scripts/toolchain/resolve-localstripe';
import { resolveMailpit } from '../../scripts/toolchain/resolve-mailpit';
import { skipWithout } from '../../scripts/lib/required-servers';

/**
 * The chaos harness on the three real servers, as `npm run chaos -- --scenario orders-database …` runs it: two
 * iterations of each scenario with the bare baseline beside them, effects counted in PostgreSQL's rows, Mailpit's
 * messages and localstripe's charges. Seed 2 gives every scenario an after-commit crash, and draws a before-send, a
 * random-time kill and a dev-server restart in the last batch. stripe-key-only is the wrong contract on purpose: the
 * harness must report its duplicate.
 */
const SEED = 2;
const SCENARIOS = ['orders-database', 'smtp-mail', 'stripe-charge', 'stripe-key-only'];
const CRASHES = 8;

const missing = Promise.all([
  resolveMailpit({ build: false }).then(
    () => undefined,
    () => 'Mailpit',
  ),
  resolveLocalstripe({ install: false }).then(
    () => undefined,
    () => 'localstripe',
  ),
]).then((found) => found.filter(Boolean));

describe('chaos on the real servers (PostgreSQL, Mailpit, localstripe) with the bare baseline', async () => {
  const absent = await missing;
  const skip = skipWithout(
    absent.length ? `${absent.join(' and ')} not here: npm run setup:toolchain installs them` : false,
  );
  let stack: Stack;
  before(async () => {
    if (!skip) stack = await startStack();
  });
  after(async () => {
    await stack?.stop();
  });

  it(
    'finds no duplicate and nothing lost for retrysafe, and the duplicates of the baseline and of the wrong contract',
    { skip },
    async () => {
      const progress: string[] = [];
      const report = await runChaos({
        crashes: CRASHES,
        seed: SEED,
        scenarios: SCENARIOS,
        concurrency: 2,
        baseline: true,
        stack,
        log: (line) => progress.push(line),
      });
      const why = `\n${progress.join('\n')}`;
      const retrysafe = report.retrysafe.scenarios;
      assert.equal(report.retrysafe.totals.crashes, CRASHES, `one SIGKILL per iteration${why}`);
      assert.equal(report.retrysafe.totals.missedPoints, 0, why);
      // The seed's restart (in iteration 7's batch), once for each variant.
      assert.equal(report.serverRestarts, 2, `the seed's dev-server restarts${why}`);
      for (const name of ['orders-database', 'smtp-mail', 'stripe-charge']) {
        const c = retrysafe[name];
        assert.equal(c.iterations, 2, `${name}${why}`);
        assert.deepEqual(
          { duplicates: c.duplicates, lost: c.lost, unexplained: c.unexplained, actual: c.actualEffects },
          { duplicates: 0, lost: 0, unexplained: 0, actual: 2 },
          `${name}${why}`,
        );
      }
      // The key-only contract on a server that ignores keys: the after-commit crash (iteration 7) charged again, once
      // per resend under the key (a retry after the seed's dev-server restart, in the same batch, may resend again).
      const keyOnly = report.iterations.find((r) => r.variant === 'retrysafe' && r.plan.index === 7)!;
      assert.equal(keyOnly.scenario, 'stripe-key-only');
      assert.equal(keyOnly.plan.crash.mode, 'after-commit');
      assert.ok(keyOnly.tally.duplicates >= 1, why);
      assert.ok(
        report.failures.some((f) => f.index === 7 && /duplicate/.test(f.reasons.join(' '))),
        why,
      );
      // The baseline, same plans: every after-commit crash made at least a second effect, in each of the four
      // scenarios (a retry after the seed's dev-server restart may make a third: its key is fresh every attempt).
      const baselineAfterCommit = report.iterations.filter(
        (r) => r.variant === 'baseline' && r.plan.crash.mode === 'after-commit',
      );
      assert.deepEqual(
        [...new Set(baselineAfterCommit.map((r) => r.scenario))].sort(),
        [...SCENARIOS].sort(),
        'an after-commit crash in every scenario',
      );
      for (const r of baselineAfterCommit) assert.ok(r.tally.duplicates >= 1, `${r.scenario} #${r.plan.index}${why}`);
    },
  );
});
