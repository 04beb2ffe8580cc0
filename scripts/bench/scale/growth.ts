/**
 * How a cost grows with size, from measured points: the exponent b of cost ≈ a·size^b, fitted by least squares
 * on logarithms. b ≈ 1 is linear, b ≈ 0 flat; the report flags anything past SUPERLINEAR_EXPONENT.
 */
export const SUPERLINEAR_EXPONENT = 1.2;

export interface GrowthPoint {
  size: number;
  cost: number;
}

export interface Growth {
  exponent: number;
  superlinear: boolean;
}

export function growthOf(points: readonly GrowthPoint[], threshold = SUPERLINEAR_EXPONENT): Growth | undefined {
  const usable = points.filter((p) => p.size > 0 && p.cost > 0);
  if (new Set(usable.map((p) => p.size)).size < 2) return undefined;
  const xs = usable.map((p) => Math.log(p.size));
  const ys = usable.map((p) => Math.log(p.cost));
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  const sxy = xs.reduce((s, x, i) => s + (x - mx) * (ys[i] - my), 0);
  const sxx = xs.reduce((s, x) => s + (x - mx) ** 2, 0);
  const exponent = Math.round((sxy / sxx) * 100) / 100;
  return { exponent, superlinear: exponent > threshold };
}

/** Mean of the first and of the last `n` values, and last ÷ first: does the hundredth cost more than the first? */
export function drift(values: readonly number[], n = 10): { first: number; last: number; ratio: number } | undefined {
  if (values.length < 2 * n) return undefined;
  const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const first = Math.round(mean(values.slice(0, n)) * 10) / 10;
  const last = Math.round(mean(values.slice(-n)) * 10) / 10;
  return { first, last, ratio: Math.round((last / first) * 100) / 100 };
}
