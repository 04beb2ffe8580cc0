/**
 * Compile-time equality of two types, for interfaces written out beside the zod schema that parses to them: the
 * public type reads as a plain interface, and a change to either side that makes them differ breaks the build.
 *
 *   export type _Checked = [Expect<Same<RunUsage, z.output<RunUsageSchema>>>];
 */
export type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

/** Compiles only when given `true`. */
export type Expect<T extends true> = T;
