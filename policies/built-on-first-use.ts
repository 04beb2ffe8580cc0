import type * as Zod from 'zod';

/**
 * A value built the first time it is asked for, then kept. For zod schemas in modules that workflows import: the
 * workflow sandbox evaluates each module afresh for every workflow, so a schema built at a module's top level is
 * built for every workflow on the worker, whether that workflow ever parses with it or not. Built on first use, it
 * costs only the workflows that need it (once each), and processes outside a workflow still build it once.
 */
export function builtOnFirstUse<T>(build: () => T): () => T {
  let built: { value: T } | undefined;
  return () => (built ??= { value: build() }).value;
}

/**
 * zod, loaded by the first schema built rather than by importing the module that builds it: in a workflow, zod's own
 * modules are evaluated afresh for every workflow that loads them, and a run's happy path parses nothing with zod.
 * Import zod's types with `import type`, and call this inside the builder given to `builtOnFirstUse`.
 */
export function loadZod(): typeof Zod.z {
  // A require, not an import: an import is evaluated with its module, which is what this avoids.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('zod') as typeof Zod).z;
}
