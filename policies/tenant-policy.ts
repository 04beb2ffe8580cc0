import type { z } from 'zod';
import { CARD_NUMBER_MODES, type CardNumberMode } from './card-numbers';
import { builtOnFirstUse, loadZod } from './built-on-first-use';
import { ceilingSchemas } from './ceilings';
import { RetrysafeError } from './errors';
import { RISK_CLASSES } from './tool';
import { allIssues } from './zod-issues';

/**
 * Per-tenant overrides of the decision table's thresholds and of the run ceilings, loaded once from a
 * JSON file at worker start (workers/tenant-policy-file.ts) and passed down as data. Precedence, field
 * by field: the tenant's entry, then `default`, then the built-in defaults. A tenant's
 * `confirmRiskClasses` replaces the default's list rather than adding to it, so each entry reads whole.
 *
 *   {
 *     "default": { "autoApproveBelowCents": 2500 },
 *     "tenants": {
 *       "acme": { "autoApproveBelowCents": 10000, "confirmRiskClasses": ["routine-message"],
 *                 "ceilings": { "maxSteps": 80, "perAction": { "byTool": { "refund": 20000 } } } }
 *     }
 *   }
 */

/** 5 000 cents: small enough that a wrong automatic charge or refund is cheap to undo. */
export const DEFAULT_AUTO_APPROVE_BELOW_CENTS = 5_000;
/** 100 000 cents: above this a single approval click is not enough scrutiny; a person handles it. */
export const DEFAULT_HUMAN_ONLY_ABOVE_CENTS = 100_000;

/** Tenant names follow the action key's part rules, since a tenant is one segment of every key. */
const TENANT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$/;

/** The schemas of a tenant's policy and of the policy file, built on first use (built-on-first-use.ts). */
function buildTenantPolicySchemas() {
  const z = loadZod();
  const nonNegativeInt = z
    .number({ error: 'must be a non-negative integer' })
    .int({ error: 'must be a non-negative integer' })
    .min(0, { error: 'must be a non-negative integer' });

  const TenantPolicy = z.strictObject({
    /** Money movements below this many minor units run automatically. */
    autoApproveBelowCents: nonNegativeInt.optional(),
    /** Money movements above this many minor units are for a person only. */
    humanOnlyAboveCents: nonNegativeInt.optional(),
    /** Risk classes that need confirmation even where the table would run them automatically. */
    confirmRiskClasses: z
      .array(z.enum(RISK_CLASSES, { error: `must be one of ${RISK_CLASSES.join(', ')}` }), {
        error: 'must be a list of risk classes',
      })
      .optional(),
    ceilings: ceilingSchemas().RunCeilingOverrides.optional(),
    /**
     * A card number in an intent's free text (policies/card-numbers.ts): `refuse` the intent (the default),
     * or `mask` it to `•••• 1234` before it is hashed, so neither the request hash nor the history holds it.
     */
    cardNumbersInText: z
      .enum(CARD_NUMBER_MODES, { error: `must be one of ${CARD_NUMBER_MODES.join(', ')}` })
      .optional(),
  });

  const TenantPolicyConfig = z.strictObject({
    default: TenantPolicy.optional(),
    tenants: z
      .record(
        z.string().regex(TENANT_NAME, {
          error: 'tenant name must be letters, digits, ".", "_" or "-", starting with a letter or digit',
        }),
        TenantPolicy,
      )
      .default({}),
  });
  return { TenantPolicy, TenantPolicyConfig };
}

/** The schemas of this module: one tenant's policy, and the policy file of all tenants. */
export const tenantPolicySchemas = builtOnFirstUse(buildTenantPolicySchemas);
type TenantPolicySchemas = ReturnType<typeof tenantPolicySchemas>;

/** One tenant's overrides of the decision table's thresholds and of the run ceilings. */
export type TenantPolicy = z.infer<TenantPolicySchemas['TenantPolicy']>;
/** A tenant policy file: `default`, and an entry per tenant. */
export type TenantPolicyConfig = z.infer<TenantPolicySchemas['TenantPolicyConfig']>;

/**
 * Validates a tenant policy file's content. Throws `InvalidIntent` whose message lists every problem as
 * `field.path: what is wrong` (e.g. `tenants.acme.autoApproveBelowCents: must be a non-negative integer`),
 * including thresholds that contradict each other once a tenant's entry is merged over `default`.
 */
export function parseTenantPolicyConfig(raw: unknown): TenantPolicyConfig {
  const parsed = tenantPolicySchemas().TenantPolicyConfig.safeParse(raw);
  if (!parsed.success) throw configError(allIssues(parsed.error));
  const config = parsed.data;

  const problems: Array<{ field: string; message: string }> = [];
  const check = (path: string, entry: TenantPolicy, merged: TenantPolicy) => {
    const auto = merged.autoApproveBelowCents ?? DEFAULT_AUTO_APPROVE_BELOW_CENTS;
    const humanOnly = merged.humanOnlyAboveCents ?? DEFAULT_HUMAN_ONLY_ABOVE_CENTS;
    if (auto <= humanOnly) return;
    // Blame the field this entry set; with both set here, the automatic limit is the one that overreaches.
    const field = entry.autoApproveBelowCents !== undefined ? 'autoApproveBelowCents' : 'humanOnlyAboveCents';
    problems.push({
      field: `${path}.${field}`,
      message: `autoApproveBelowCents (${auto}) must not be above humanOnlyAboveCents (${humanOnly})`,
    });
  };
  if (config.default) check('default', config.default, config.default);
  for (const [tenant, entry] of Object.entries(config.tenants)) {
    check(`tenants.${tenant}`, entry, merge(config.default, entry));
  }
  if (problems.length) throw configError(problems);
  return config;
}

/** The effective policy of one tenant: its entry over `default`. An unknown tenant gets `default` (or nothing). */
export function policyForTenant(config: TenantPolicyConfig, tenant: string): TenantPolicy {
  const entry = Object.prototype.hasOwnProperty.call(config.tenants, tenant) ? config.tenants[tenant] : undefined;
  return merge(config.default, entry);
}

/** How intents of `tenant` treat card numbers in free text: its policy's choice, `refuse` without one. */
export function cardNumberModeFor(config: TenantPolicyConfig | undefined, tenant: string | undefined): CardNumberMode {
  if (!config || tenant === undefined) return 'refuse';
  return policyForTenant(config, tenant).cardNumbersInText ?? 'refuse';
}

function merge(base: TenantPolicy | undefined, over: TenantPolicy | undefined): TenantPolicy {
  const out: TenantPolicy = { ...definedOnly(base ?? {}), ...definedOnly(over ?? {}) };
  const ceilings = { ...base?.ceilings, ...definedOnly(over?.ceilings ?? {}) };
  const perAction = { ...base?.ceilings?.perAction, ...definedOnly(over?.ceilings?.perAction ?? {}) };
  // Per-tool limits merge tool by tool: a tenant that sets the refund limit keeps the default's charge limit.
  const byTool = { ...base?.ceilings?.perAction?.byTool, ...over?.ceilings?.perAction?.byTool };
  if (Object.keys(byTool).length) perAction.byTool = byTool;
  if (Object.keys(perAction).length) ceilings.perAction = perAction;
  if (Object.keys(ceilings).length) out.ceilings = ceilings;
  else delete out.ceilings;
  return out;
}

function definedOnly<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

function configError(problems: Array<{ field: string; message: string }>): RetrysafeError {
  const lines = problems.map((p) => `${p.field}: ${p.message}`);
  return new RetrysafeError('InvalidIntent', lines.join('; '), { field: problems[0].field, problems });
}
