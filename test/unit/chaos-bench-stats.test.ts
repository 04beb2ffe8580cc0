import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { percentile, ratios, runLoad, summarize } from '../../scripts/bench/stats';
import { latencyChartSvg } from '../../scripts/bench/svg';

describe('benchmark statistics (used by npm run bench next to the chaos harness)', () => {
  it('reports nearest-rank percentiles, so every value was observed', () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    assert.equal(percentile(sorted, 50), 50);
    assert.equal(percentile(sorted, 95), 95);
    assert.equal(percentile(sorted, 99), 99);
    assert.equal(percentile([7], 99), 7);
    const s = summarize([30, 10, 20], 1_500);
    assert.deepEqual([s.n, s.p50, s.min, s.max, s.mean, s.throughputPerSec], [3, 20, 10, 30, 20, 2]);
  });

  it('divides retrysafe by bare: above 1 is slower, throughput below 1 is fewer per second', () => {
    const bare = summarize([10, 10, 10, 10], 40);
    const rs = summarize([30, 30, 30, 30], 120);
    assert.deepEqual(ratios(rs, bare), { p50: 3, p95: 3, p99: 3, throughput: 0.33 });
  });

  it('never runs more operations at once than asked, and runs each exactly once', async () => {
    let inFlight = 0;
    let peak = 0;
    const seen: number[] = [];
    const { samples } = await runLoad(25, 4, async (i) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      seen.push(i);
      await new Promise((r) => setTimeout(r, 2));
      inFlight--;
      return i;
    });
    assert.equal(peak, 4);
    assert.deepEqual(
      [...seen].sort((a, b) => a - b),
      Array.from({ length: 25 }, (_, i) => i),
    );
    assert.deepEqual(
      samples,
      Array.from({ length: 25 }, (_, i) => i),
    );
  });

  it('draws one CDF per leg and panel, with escaped labels', () => {
    const svg = latencyChartSvg('a <title>', [
      { title: 'sequential', series: [{ label: 'bare & co', color: '#000', samples: [5, 10, 20], dashed: true }] },
      { title: 'concurrency 10', series: [{ label: 'retrysafe', color: '#f00', samples: [50, 100], dashed: false }] },
    ]);
    assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    assert.equal(svg.match(/<polyline/g)?.length, 2);
    assert.match(svg, /a &lt;title&gt;/);
    assert.match(svg, /bare &amp; co/);
    assert.ok(svg.trimEnd().endsWith('</svg>'));
  });
});
