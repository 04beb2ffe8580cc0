import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { parseCrashSpecs, type CrashSpec } from '../activities/crash-points';
import { parseOperatorScopes, parseTrustedApprovalKeys, type OperatorScopes } from '../policies/signed-decision';
import { DEFAULT_TASK_QUEUE } from '../messages/action';
import { parseEscalationWindows, type EscalationWindows } from '../metrics/ledger-gauges';
import { TRACING_MODES, type TracingMode } from '../tracing/tracing-mode';
import { invalidConfigError } from '../policies/errors';

export { DEFAULT_TASK_QUEUE };

/**
 * The engine's worker settings, read from the environment at the entry point only, validated, then
 * passed down. Tools read their own settings (provider URLs, credentials) in their own package.
 */

export const WorkerEnv = z.object({
  RETRYSAFE_TASK_QUEUE: z.string().min(1).default(DEFAULT_TASK_QUEUE),
  RETRYSAFE_CRASH_AT: z.string().optional(),
  /** JSON file of per-tenant policy overrides (policies/tenant-policy.ts); the table's defaults without it. */
  RETRYSAFE_POLICY_FILE: z.string().min(1).optional(),
  /** JSON object `{ "<keyId>": "<hex Ed25519 public key>" }` of approval services whose signatures count. */
  RETRYSAFE_APPROVAL_PUBLIC_KEYS: z.string().min(1).optional(),
  /** The same object in a file (what `retrysafe dev` writes); its keys are added to the inline ones. */
  RETRYSAFE_APPROVAL_PUBLIC_KEYS_FILE: z.string().min(1).optional(),
  /** JSON `{ "<operator>": { "tenants": ["acme"], "roles": ["approver"] } }`: who may decide what (inline form). */
  RETRYSAFE_OPERATOR_SCOPES: z.string().min(1).optional(),
  /** The operators file (the approval service's): its entries' tenants and roles are read, digests ignored. */
  RETRYSAFE_OPERATORS_FILE: z.string().min(1).optional(),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error']).default('info'),
  /**
   * `host:port` where the worker serves Prometheus metrics (Temporal's worker metrics and retrysafe's, on one
   * endpoint); none without it. `0.0.0.0:9464` to be scraped from other machines.
   */
  RETRYSAFE_METRICS_ADDRESS: z
    .string()
    .regex(/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, { error: 'must be host:port, for example 127.0.0.1:9464' })
    .optional(),
  /** `tenant=duration,…,*=duration` (s, m, h, d): how long an action may stay unresolved; 24 h by default. */
  RETRYSAFE_ESCALATION_WINDOWS: z.string().optional(),
  /** `otlp`: export traces over OTLP/HTTP (OTEL_EXPORTER_OTLP_* say where; tracing/tracing-from-env.ts); `off` by default. */
  RETRYSAFE_TRACING: z.enum(TRACING_MODES).default('off'),
  /** How often, in ms, the worker reads the ledger for its open-action gauges; 10000 by default. */
  RETRYSAFE_METRICS_POLL_MS: z.coerce.number().int().min(100).max(3_600_000).optional(),
  /**
   * Fault injection: the worker writes and judges row leases as if its clock ran this many ms ahead (negative:
   * behind). Only when a row may be taken over moves; no write or send trusts a clock (activities/lease-clock.ts).
   */
  RETRYSAFE_LEASE_CLOCK_OFFSET_MS: z.coerce.number().int().min(-3_600_000).max(3_600_000).optional(),
});

/** The engine's worker settings, parsed from the environment (see WorkerEnv). */
export interface WorkerConfig {
  taskQueue: string;
  crashAt: CrashSpec[];
  tenantPolicyFile?: string;
  trustedApprovalKeys: Record<string, string>;
  /** Inline operator scopes; the entry point adds those of `operatorsFile`. */
  operatorScopes: OperatorScopes;
  operatorsFile?: string;
  logLevel: z.infer<typeof WorkerEnv>['LOG_LEVEL'];
  /** Where the process serves Prometheus metrics (runWorkerProcess installs the exporter there). */
  metricsAddress?: string;
  escalationWindows?: EscalationWindows;
  ledgerPollMs?: number;
  /** RETRYSAFE_TRACING; runWorkerProcess starts it (tracing/tracing-from-env.ts). */
  tracing?: TracingMode;
  /** RETRYSAFE_LEASE_CLOCK_OFFSET_MS: fault injection only. */
  leaseClockOffsetMs?: number;
}

/** A worker setting is invalid; the message names the variable. A worker exits 2 on it. */
export const ConfigError = invalidConfigError('ConfigError');

/** Parses and validates the worker settings of `env`; throws ConfigError naming each bad variable. */
export function parseWorkerConfig(env: NodeJS.ProcessEnv): WorkerConfig {
  const parsed = WorkerEnv.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid worker configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  let crashAt: CrashSpec[];
  try {
    crashAt = parseCrashSpecs(e.RETRYSAFE_CRASH_AT);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  let trustedApprovalKeys: Record<string, string> = {};
  if (e.RETRYSAFE_APPROVAL_PUBLIC_KEYS_FILE) {
    const file = e.RETRYSAFE_APPROVAL_PUBLIC_KEYS_FILE;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new ConfigError(`RETRYSAFE_APPROVAL_PUBLIC_KEYS_FILE: cannot read ${file}: ${(err as Error).message}`);
    }
    try {
      trustedApprovalKeys = parseTrustedApprovalKeys(JSON.parse(text));
    } catch (err) {
      throw new ConfigError(`RETRYSAFE_APPROVAL_PUBLIC_KEYS_FILE (${file}): ${(err as Error).message}`);
    }
  }
  if (e.RETRYSAFE_APPROVAL_PUBLIC_KEYS) {
    try {
      trustedApprovalKeys = {
        ...trustedApprovalKeys,
        ...parseTrustedApprovalKeys(JSON.parse(e.RETRYSAFE_APPROVAL_PUBLIC_KEYS)),
      };
    } catch (err) {
      throw new ConfigError(`RETRYSAFE_APPROVAL_PUBLIC_KEYS: ${(err as Error).message}`);
    }
  }
  let operatorScopes: OperatorScopes = {};
  if (e.RETRYSAFE_OPERATOR_SCOPES) {
    try {
      operatorScopes = parseOperatorScopes(JSON.parse(e.RETRYSAFE_OPERATOR_SCOPES));
    } catch (err) {
      throw new ConfigError(`RETRYSAFE_OPERATOR_SCOPES: ${(err as Error).message}`);
    }
  }
  let escalationWindows: EscalationWindows | undefined;
  if (e.RETRYSAFE_ESCALATION_WINDOWS) {
    try {
      escalationWindows = parseEscalationWindows(e.RETRYSAFE_ESCALATION_WINDOWS);
    } catch (err) {
      throw new ConfigError(`RETRYSAFE_ESCALATION_WINDOWS: ${(err as Error).message}`);
    }
  }
  return {
    taskQueue: e.RETRYSAFE_TASK_QUEUE,
    ...(e.RETRYSAFE_METRICS_ADDRESS ? { metricsAddress: e.RETRYSAFE_METRICS_ADDRESS } : {}),
    ...(escalationWindows ? { escalationWindows } : {}),
    ...(e.RETRYSAFE_METRICS_POLL_MS ? { ledgerPollMs: e.RETRYSAFE_METRICS_POLL_MS } : {}),
    ...(e.RETRYSAFE_LEASE_CLOCK_OFFSET_MS ? { leaseClockOffsetMs: e.RETRYSAFE_LEASE_CLOCK_OFFSET_MS } : {}),
    ...(e.RETRYSAFE_TRACING !== 'off' ? { tracing: e.RETRYSAFE_TRACING } : {}),
    operatorScopes,
    ...(e.RETRYSAFE_OPERATORS_FILE ? { operatorsFile: e.RETRYSAFE_OPERATORS_FILE } : {}),
    ...(e.RETRYSAFE_POLICY_FILE ? { tenantPolicyFile: e.RETRYSAFE_POLICY_FILE } : {}),
    trustedApprovalKeys,
    crashAt,
    logLevel: e.LOG_LEVEL,
  };
}
