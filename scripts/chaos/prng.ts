/**
 * A small seeded PRNG (mulberry32) and the few draws the harness needs. Every random choice of a chaos
 * run comes from here, derived from the printed seed, so the same seed replays the same plan.
 */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [min, max], both included. */
  int(min: number, max: number): number;
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** Picks by weight; weights need not sum to 1. */
  weighted<T>(items: ReadonlyArray<readonly [T, number]>): T;
}

export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function createRng(seed: number): Rng {
  const next = mulberry32(seed);
  const rng: Rng = {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    pick: (items) => {
      if (items.length === 0) throw new Error('pick from an empty list');
      return items[Math.floor(next() * items.length)];
    },
    weighted: (items) => {
      const total = items.reduce((sum, [, w]) => sum + w, 0);
      let r = next() * total;
      for (const [item, w] of items) {
        r -= w;
        if (r < 0) return item;
      }
      return items[items.length - 1][0];
    },
  };
  return rng;
}

/**
 * An independent stream per (seed, stream index): iteration 17's plan does not depend on how many numbers
 * iterations 0-16 drew, so `--only 17` replays exactly what iteration 17 did in the full run.
 */
export function deriveSeed(seed: number, ...path: number[]): number {
  let h = mix32(seed >>> 0);
  for (const part of path) h = mix32(h ^ mix32((part >>> 0) + 0x632be5ab));
  return h;
}

/** A 32-bit finalizer (murmur3's): every input bit affects every output bit. */
function mix32(x: number): number {
  let h = (x + 0x9e3779b9) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** A fresh seed for runs started without --seed; printed so the run can be replayed. */
export function randomSeed(): number {
  return Math.floor(Math.random() * 0x1_0000_0000) >>> 0;
}
