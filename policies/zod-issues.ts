import type { z } from 'zod';

/**
 * The one way retrysafe turns a zod failure into words: the first issue's field as a dotted path (an
 * unknown key names the key itself), `(root)` when the value as a whole is wrong, and its message.
 */
export interface FieldIssue {
  field: string;
  message: string;
}

/** The first issue of a zod error with its field path, for a one-line message naming the field. */
export function firstIssue(error: z.ZodError, prefix: readonly (string | number)[] = []): FieldIssue {
  return describeIssue(error.issues[0], prefix);
}

/** Every issue of a zod error, each with its field path. */
export function allIssues(error: z.ZodError, prefix: readonly (string | number)[] = []): FieldIssue[] {
  return error.issues.map((issue) => describeIssue(issue, prefix));
}

export function describeIssue(issue: z.core.$ZodIssue, prefix: readonly (string | number)[] = []): FieldIssue {
  const path = [...prefix, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
  if (issue.code === 'unrecognized_keys') {
    path.push(issue.keys[0]);
    return { field: path.join('.'), message: 'unknown field' };
  }
  // A bad record key (a tenant name, a tool name) says what is wrong with the key, not just "invalid key".
  if (issue.code === 'invalid_key')
    return { field: path.length ? path.join('.') : '(root)', message: issue.issues[0]?.message ?? issue.message };
  return { field: path.length ? path.join('.') : '(root)', message: issue.message };
}
