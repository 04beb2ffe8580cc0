import { z } from 'zod';
import { RetrysafeError } from './errors';
import { decisionSchemas, type OperatorScopes } from './signed-decision';
import { firstIssue } from './zod-issues';

/**
 * The operators file: one format, one parser, for every program that reads it. `ops operators add`
 * writes it, the approval service authenticates tokens against it, and workers take each entry's
 * tenants and roles as the scopes a signed decision may use. It holds SHA-256 digests of tokens,
 * never a token.
 *
 *   { "operators": [{ "name": "alice", "tokenSha256": "<hex>", "tenants": ["acme"], "roles": ["approver"],
 *                     "addedAt": "2026-12-01T10:00:00.000Z" }] }
 *
 * Unknown fields are refused (a misspelt `role` must not silently grant nothing), so every field any
 * writer puts in is listed here.
 */

/** Names end up in audit entries and the Web UI; keep them plain. */
export const OperatorName = z.string({ error: 'must be a string' }).regex(/^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/, {
  error: 'must be 1-64 letters, digits, ".", "_", "@" or "-", starting with a letter or digit',
});

export const Operator = z.strictObject({
  name: OperatorName,
  tokenSha256: z
    .string({ error: 'must be a string' })
    .regex(/^[0-9a-fA-F]{64}$/, { error: 'must be the hex SHA-256 of the operator token (64 digits)' })
    .transform((hex) => hex.toLowerCase()),
  /** The tenants this operator acts for, or ["*"]; none when absent, so a new entry can decide nothing yet. */
  tenants: decisionSchemas().OperatorScope.shape.tenants.default([]),
  /** approver, resolver, admin (policies/signed-decision.ts ROLE_FOR says which decision needs which). */
  roles: decisionSchemas().OperatorScope.shape.roles.default([]),
  /** When `ops operators add` last wrote the entry; informational. */
  addedAt: z.iso.datetime({ error: 'must be an ISO-8601 time' }).optional(),
});
export type Operator = z.infer<typeof Operator>;

export const OperatorsFile = z.strictObject({
  operators: z.array(Operator, { error: 'must be a list of { name, tokenSha256, tenants, roles }' }),
});
export type OperatorsFile = z.infer<typeof OperatorsFile>;

/**
 * Validates an operators file's content. Errors are `InvalidIntent` naming the field
 * (`operators.1.tokenSha256: …`). Two entries may not share a name or a token: either would make the
 * person behind a decision ambiguous.
 */
export function parseOperators(raw: unknown): Operator[] {
  const parsed = OperatorsFile.safeParse(raw);
  if (!parsed.success) {
    const { field, message } = firstIssue(parsed.error);
    throw new RetrysafeError('InvalidIntent', `${field}: ${message}`, { field });
  }
  const { operators } = parsed.data;
  operators.forEach((op, i) => {
    if (operators.findIndex((o) => o.name === op.name) !== i) {
      throw new RetrysafeError('InvalidIntent', `operators.${i}.name: ${op.name} is listed twice`, {
        field: `operators.${i}.name`,
      });
    }
    if (operators.findIndex((o) => o.tokenSha256 === op.tokenSha256) !== i) {
      throw new RetrysafeError('InvalidIntent', `operators.${i}.tokenSha256: the same token is already listed`, {
        field: `operators.${i}.tokenSha256`,
      });
    }
  });
  return operators;
}

/** The scopes part of the operators file, as workers trust it (digests stay behind). */
export function operatorScopesOf(operators: readonly Operator[]): OperatorScopes {
  return Object.fromEntries(operators.map((o) => [o.name, { tenants: [...o.tenants], roles: [...o.roles] }]));
}
