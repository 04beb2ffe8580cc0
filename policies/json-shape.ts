import { RetrysafeError } from './errors';

/**
 * Limits on the shape of a value that enters an action (an intent, a run's input), checked before anything else
 * walks it. The walk is iterative, so a value nested thousands of levels deep is refused with the same typed error
 * in every process, whatever its stack size or JIT state, instead of a RangeError from whichever recursive reader
 * (the card-number scan, zod, canonical JSON) met it first.
 */

/** Deeper than this, an intent is refused: requests are records of a few levels, not trees. */
export const MAX_JSON_DEPTH = 32;
/** More values than this (every object, array, string, number…) and an intent is refused, before its size is read. */
export const MAX_JSON_NODES = 20_000;

type Segment = string | number;

/** The dotted path of a value (`items.0.note`), `(root)` for the top. */
export function fieldPath(path: readonly Segment[]): string {
  return path.length ? path.join('.') : '(root)';
}

/**
 * Refuses `value` with `InvalidIntent` when it nests deeper than `maxDepth` (naming the deepest path reached), holds
 * more than `maxNodes` values, or holds something JSON cannot carry (a function, a symbol, a bigint, undefined in
 * an array). Objects' own enumerable keys are walked in order, as JSON.stringify does.
 */
export function checkJsonShape(
  value: unknown,
  limits: { maxDepth?: number; maxNodes?: number; what?: string } = {},
): void {
  const maxDepth = limits.maxDepth ?? MAX_JSON_DEPTH;
  const maxNodes = limits.maxNodes ?? MAX_JSON_NODES;
  const what = limits.what ?? 'intent';
  const stack: Array<{ value: unknown; path: Segment[] }> = [{ value, path: [] }];
  let nodes = 0;
  while (stack.length > 0) {
    const { value: v, path } = stack.pop()!;
    if (++nodes > maxNodes) {
      throw new RetrysafeError(
        'InvalidIntent',
        `${what} holds more than ${maxNodes} values; ${fieldPath(path)} is past it`,
        {
          field: fieldPath(path),
          reason: 'too-large',
          maxNodes,
        },
      );
    }
    if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') continue;
    if (typeof v !== 'object') {
      throw new RetrysafeError('InvalidIntent', `${what}: ${fieldPath(path)}: a ${typeof v} is not JSON data`, {
        field: fieldPath(path),
        reason: 'not-json',
      });
    }
    if (path.length >= maxDepth) {
      throw new RetrysafeError(
        'InvalidIntent',
        `${what} nests deeper than ${maxDepth} levels; the deepest field reached is ${abbreviated(path)}`,
        { field: fieldPath(path), reason: 'too-deep', maxDepth },
      );
    }
    const children: Array<[Segment, unknown]> = Array.isArray(v)
      ? v.map((item, i) => [i, item])
      : Object.entries(v as Record<string, unknown>).filter(([, item]) => item !== undefined);
    // Pushed in reverse, so they are visited in order.
    for (let i = children.length - 1; i >= 0; i--) {
      const [segment, child] = children[i];
      if (child === undefined) {
        throw new RetrysafeError(
          'InvalidIntent',
          `${what}: ${fieldPath([...path, segment])}: undefined is not JSON data`,
          {
            field: fieldPath([...path, segment]),
            reason: 'not-json',
          },
        );
      }
      stack.push({ value: child, path: [...path, segment] });
    }
  }
}

/** A long path for a message: its first and last segments, with how many stand between. */
function abbreviated(path: readonly Segment[]): string {
  if (path.length <= 8) return fieldPath(path);
  return `${path.slice(0, 3).join('.')}.…(${path.length - 6} more).${path.slice(-3).join('.')}`;
}
