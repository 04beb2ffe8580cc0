/**
 * Where the ops CLI gets its signatures: the approval service (`retrysafe approvals serve`), which holds
 * the signing key and signs only for the operator the token belongs to, within that operator's tenants
 * and roles. The CLI never holds a key, so nothing it runs can pass as a person's decision on its own.
 */
import { decisionSchemas, type SignedDecision } from '../../policies/signed-decision';
import { firstIssue } from '../../policies/zod-issues';
import { EXIT, OpsError, UnauthorizedError } from './errors';

export const APPROVAL_URL_ENV = 'RETRYSAFE_APPROVAL_URL';
/** Where `retrysafe approvals serve` listens unless told otherwise. */
export const DEFAULT_APPROVAL_URL = 'http://127.0.0.1:4180';

export interface SignatureSource {
  /**
   * A signed decision for `request` ({ decision, key, requestHash?, params? }), as the operator of `token`.
   * `local`: the token is a local stack's own operator token, which may go to the default local service URL.
   */
  sign(token: string, request: Record<string, unknown>, options?: { local?: boolean }): Promise<SignedDecision>;
}

export function approvalServiceSignatures(env: NodeJS.ProcessEnv): SignatureSource {
  return {
    async sign(token, request, options = {}) {
      const configured = env[APPROVAL_URL_ENV];
      if (!configured && !options.local) {
        // A real token goes only where it is told to: on a shared host anyone could listen on the default port.
        throw new OpsError(
          `${APPROVAL_URL_ENV} is not set: decisions are signed by the approval service (retrysafe approvals serve ` +
            `prints its URL; \`retrysafe dev\` sets it); the default ${DEFAULT_APPROVAL_URL} is used only with the ` +
            'local operator token of a stack in this folder',
          EXIT.usage,
        );
      }
      const base = configured || DEFAULT_APPROVAL_URL;
      let res: Response;
      try {
        res = await fetch(new URL('/decisions', base), {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(request),
          signal: AbortSignal.timeout(10_000),
        });
      } catch (err) {
        const hint = env[APPROVAL_URL_ENV]
          ? ''
          : ` (${APPROVAL_URL_ENV} is not set, so the default, where \`retrysafe approvals serve\` listens)`;
        throw new OpsError(
          `cannot reach the approval service at ${base}${hint}: ${(err as Error).message}`,
          EXIT.failed,
        );
      }
      const body = (await res.json().catch(() => ({}))) as { message?: string };
      if (res.status === 401)
        throw new UnauthorizedError(`the approval service refused the token: ${body.message ?? ''}`);
      if (res.status !== 200) {
        throw new OpsError(
          `the approval service refused to sign (${res.status}): ${body.message ?? 'no detail'}`,
          EXIT.failed,
        );
      }
      const parsed = decisionSchemas().SignedDecision.safeParse(body);
      if (!parsed.success) {
        const { field, message } = firstIssue(parsed.error);
        throw new OpsError(
          `the approval service answered something that is not a signed decision: ${field}: ${message}`,
          EXIT.failed,
        );
      }
      return parsed.data;
    },
  };
}
