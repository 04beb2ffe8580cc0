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
