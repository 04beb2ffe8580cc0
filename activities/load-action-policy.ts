import type { TenantPolicy, TenantPolicyConfig } from '../policies/tenant-policy';
import { policyForTenant } from '../policies/tenant-policy';

export interface ActionPolicy {
  tenantPolicy?: TenantPolicy;
  /** Key id → hex Ed25519 public key of the approval service(s) whose signatures this worker trusts. */
  trustedApprovalKeys: Record<string, string>;
}

/**
 * The volatile policy facts an action needs: its tenant's overrides and the approvers' public keys. They
 * come from the worker's configuration, never from the workflow's input, so a caller that starts an
 * action cannot bring its own approval key or its own limits. The result is recorded in history.
 */
export function createLoadActionPolicy(deps: { tenantPolicies?: TenantPolicyConfig; trustedApprovalKeys?: Record<string, string> }) {
  return async function loadActionPolicy(input: { tenant: string }): Promise<ActionPolicy> {
    return {
      ...(deps.tenantPolicies ? { tenantPolicy: policyForTenant(deps.tenantPolicies, input.tenant) } : {}),
      trustedApprovalKeys: { ...(deps.trustedApprovalKeys ?? {}) },
    };
  };
}
