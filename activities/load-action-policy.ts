import { parseActionKey } from '../policies/action-key';
import { RetrysafeError } from '../policies/errors';
import type { OperatorScopes } from '../policies/signed-decision';
import type { TenantPolicy, TenantPolicyConfig } from '../policies/tenant-policy';
import { policyForTenant } from '../policies/tenant-policy';
import type { DryRunDescription, ToolDescriptor } from '../policies/tool';
import type { Intent, ToolRegistry } from '../policies/tool-registry';
import { typed } from './prepare-action';

/** The facts that may change while an action waits for a person: re-read before acting on an approval. */
export interface VolatilePolicy {
  tenantPolicy?: TenantPolicy;
  /** Key id → hex Ed25519 public key of the approval service(s) whose signatures this worker trusts. */
  trustedApprovalKeys: Record<string, string>;
  /** Each operator's tenants and roles, from the operators file: what a signed decision may decide. */
  operators: OperatorScopes;
}

export interface ActionPolicy extends VolatilePolicy {
  /** The contract the action runs under, from this worker's registry. */
  tool: ToolDescriptor;
  summary: string;
  preview: Record<string, unknown>;
  dryRun: DryRunDescription;
}

/**
 * The facts an action decides with: its tenant's overrides, the approvers' public keys, and its tool's
 * contract. They come from the worker's configuration and registry, never from the workflow's input,
 * so whoever starts an action cannot bring their own approval key, limits or risk class. The intent is
 * parsed again and its hash and key checked, so a hand-started action with a forged hash, or a key of
 * another tool or version, fails here before anything is sent. The result is recorded in history.
 */
export function createLoadActionPolicy(deps: {
  tools: ToolRegistry;
  tenantPolicies?: TenantPolicyConfig;
  trustedApprovalKeys?: Record<string, string>;
  /** Fixed scopes, or a reader called on every load (the operators file, so a new operator counts at once). */
  operatorScopes?: OperatorScopes | (() => Promise<OperatorScopes>);
}) {
  const volatile = async (tenant: string): Promise<VolatilePolicy> => ({
    ...(deps.tenantPolicies ? { tenantPolicy: policyForTenant(deps.tenantPolicies, tenant) } : {}),
    trustedApprovalKeys: { ...(deps.trustedApprovalKeys ?? {}) },
    operators:
      typeof deps.operatorScopes === 'function' ? await deps.operatorScopes() : { ...(deps.operatorScopes ?? {}) },
  });
  async function loadActionPolicy(input: {
    tenant: string;
    key: string;
    intent: Intent;
    requestHash: string;
  }): Promise<ActionPolicy> {
    const current = await volatile(input.tenant);
    return typed(() => {
      const intent = deps.tools.parseIntent(input.intent);
      const hash = deps.tools.hash(intent);
      if (hash !== input.requestHash) {
        throw new RetrysafeError(
          'IntentMismatch',
          `action ${input.key}: its intent hashes to ${hash.slice(0, 12)}…, not the claimed ${input.requestHash.slice(0, 12)}…`,
          {
            key: input.key,
          },
        );
      }
      const tool = deps.tools.describe(intent);
      const parts = parseActionKey(input.key);
      if (parts.operation !== tool.name || parts.version !== tool.version || parts.tenant !== input.tenant) {
        throw new RetrysafeError(
          'InvalidActionKey',
          `action ${input.key} does not belong to ${tool.name} v${tool.version} of tenant ${input.tenant}`,
          { field: 'key' },
        );
      }
      const preview = deps.tools.preview(intent);
      return {
        ...current,
        tool,
        summary: deps.tools.summarize(intent),
        preview,
        dryRun: deps.tools.dryRun(intent),
      };
    });
  }

  /** Only the volatile facts, for the re-read after an approval: the contract stays the one recorded at the start. */
  async function loadVolatilePolicy(input: { tenant: string }): Promise<VolatilePolicy> {
    return volatile(input.tenant);
  }

  return { loadActionPolicy, loadVolatilePolicy };
}
