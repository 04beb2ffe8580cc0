/**
 * A latency chart written by hand (no charting dependency): one panel per load level, each an empirical
 * CDF per leg on a logarithmic millisecond axis, with the p50 and p99 of each leg marked.
 */
export interface Series {
  label: string;
  color: string;
  samples: readonly number[];
  /** Dashed for bare Temporal, solid for retrysafe. */
  dashed: boolean;
}

export interface Panel {
  title: string;
  series: Series[];
}

const W = 560;
const H = 360;
const M = { top: 40, right: 20, bottom: 50, left: 56 };
const LEGEND_ROW = 18;
const TICKS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000];

export function latencyChartSvg(title: string, panels: Panel[]): string {
  const all = panels.flatMap((p) => p.series.flatMap((s) => s.samples)).filter((x) => x > 0);
  const lo = Math.max(1, Math.min(...all) * 0.8);
  const hi = Math.max(...all) * 1.2;
  const legendRows = Math.max(...panels.map((p) => p.series.length));
  const height = H + legendRows * LEGEND_ROW + 30;
  const width = W * panels.length;
  const body = panels.map((p, i) => panelSvg(p, i * W, lo, hi)).join('\n');
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${width / 2}" y="20" text-anchor="middle" font-size="15" font-weight="bold">${esc(title)}</text>`,
    body,
    '</svg>',
  ].join('\n');
}

function panelSvg(panel: Panel, x0: number, lo: number, hi: number): string {
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  const x = (ms: number) => x0 + M.left + ((Math.log10(ms) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * pw;
  const y = (q: number) => M.top + (1 - q) * ph;
  const out: string[] = [];
  out.push(
    `<text x="${x0 + W / 2}" y="${M.top - 8}" text-anchor="middle" font-weight="bold">${esc(panel.title)}</text>`,
  );
  out.push(
    `<rect x="${x0 + M.left}" y="${M.top}" width="${pw}" height="${ph}" fill="none" stroke="#999" stroke-width="0.5"/>`,
  );
  for (const t of TICKS.filter((t) => t >= lo && t <= hi)) {
    out.push(`<line x1="${f(x(t))}" y1="${M.top}" x2="${f(x(t))}" y2="${M.top + ph}" stroke="#eee"/>`);
    out.push(
      `<text x="${f(x(t))}" y="${M.top + ph + 16}" text-anchor="middle">${t >= 1000 ? `${t / 1000}s` : `${t}`}</text>`,
    );
  }
  for (const q of [0, 0.25, 0.5, 0.75, 0.95, 1]) {
    out.push(`<line x1="${x0 + M.left}" y1="${f(y(q))}" x2="${x0 + M.left + pw}" y2="${f(y(q))}" stroke="#eee"/>`);
    out.push(`<text x="${x0 + M.left - 6}" y="${f(y(q)) + 4}" text-anchor="end">${Math.round(q * 100)}%</text>`);
  }
  out.push(
    `<text x="${x0 + M.left + pw / 2}" y="${M.top + ph + 34}" text-anchor="middle">latency (ms, log scale)</text>`,
  );
  for (const s of panel.series) {
    const sorted = [...s.samples].filter((v) => v > 0).sort((a, b) => a - b);
    if (!sorted.length) continue;
    const points: string[] = [`${f(x(sorted[0]))},${f(y(0))}`];
    sorted.forEach((v, i) => {
      points.push(`${f(x(v))},${f(y(i / sorted.length))}`, `${f(x(v))},${f(y((i + 1) / sorted.length))}`);
    });
    const dash = s.dashed ? ' stroke-dasharray="6 4"' : '';
    out.push(`<polyline points="${points.join(' ')}" fill="none" stroke="${s.color}" stroke-width="2"${dash}/>`);
    for (const p of [0.5, 0.99]) {
      const v = sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
      out.push(`<circle cx="${f(x(v))}" cy="${f(y(p))}" r="3.5" fill="${s.color}"/>`);
    }
  }
  panel.series.forEach((s, i) => {
    const ly = H + 10 + i * LEGEND_ROW;
    const dash = s.dashed ? ' stroke-dasharray="6 4"' : '';
    out.push(
      `<line x1="${x0 + M.left}" y1="${ly}" x2="${x0 + M.left + 28}" y2="${ly}" stroke="${s.color}" stroke-width="2"${dash}/>`,
    );
    out.push(`<text x="${x0 + M.left + 36}" y="${ly + 4}">${esc(s.label)}</text>`);
  });
  return out.join('\n');
}

const f = (n: number) => n.toFixed(1);
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
