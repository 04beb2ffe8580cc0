import type { z } from 'zod';
import type { Json } from './json';
import type { ToolOutcome, LookupAnswer } from './tool-outcome';

/**
 * A tool: everything the engine needs to take one kind of action safely, declared once by its author.
 * The engine names no tool; it reads these fields (and, for workflow code, the serializable
 * `ToolDescriptor` derived from them) to decide what a retry may do, who must confirm, what a ceiling
 * counts and how the action is undone.
 *
 *   dedupe  idempotency-key  the provider remembers our key and answers a resend with the original result
 *           lookup           no key, but the effect can be found by a reference; look before resending
 *           none             neither: a possibly-sent attempt is `unknown` until evidence or a human decides
 *           transactional    the effect and its dedupe record commit in one transaction (a row keyed by the
 *                            action key); a resend finds the record or commits both, never one
 */
export type DedupeCapability = 'idempotency-key' | 'lookup' | 'none' | 'transactional';
/** Every dedupe capability a tool may declare. */
export const DEDUPE_CAPABILITIES = [
  'idempotency-key',
  'lookup',
  'none',
  'transactional',
] as const satisfies readonly DedupeCapability[];

/**
 * Rows of the decision table (policies/decision-table.ts). `unclassified` is a tool's default until it says what it
 * is: a person confirms each of its actions.
 */
export type RiskClass =
  | 'read'
  | 'routine-message'
  | 'customer-message'
  | 'money-movement'
  | 'destructive'
  | 'production-change'
  | 'unclassified';

/** Every risk class, in the order of increasing impact: the rows of the decision table. */
export const RISK_CLASSES = [
  'read',
  'routine-message',
  'customer-message',
  'money-movement',
  'destructive',
  'production-change',
  'unclassified',
] as const satisfies readonly RiskClass[];
// Fails to compile when RiskClass gains a class that the list above (and so the table) lacks.
const _everyRiskClassListed: Exclude<RiskClass, (typeof RISK_CLASSES)[number]> extends never ? true : never = true;

export type { Json } from './json';

/** An intent: the normalized request of one action. `operation` names its tool; the rest is the tool's input. */
export type Intent = { operation: string } & Record<string, unknown>;

/** What an implementation is handed on every call. */
export interface ToolContext {
  /** The action key: send it as the idempotency key, reference or dedupe row ID. Never invent another. */
  readonly key: string;
  /** Temporal's attempt number of the executor activity (1 for the first). */
  readonly attempt: number;
  /** Call while a slow request is in flight; the executor already heartbeats on a timer around each call. */
  heartbeat(): void;
  /** Aborted when the activity is cancelled or the worker shuts down; pass it to fetch or the SDK. */
  readonly signal: AbortSignal;
  readonly log: {
    /** Logs with the action's key and attempt attached. */
    info(msg: string, meta?: Record<string, unknown>): void;
    /** Logs a warning with the action's key and attempt attached. */
    warn(msg: string, meta?: Record<string, unknown>): void;
  };
}

/** How a compensating tool's input derives from the original action's input and outcome. */
export interface Compensation<I> {
  /** The name of the registered tool that undoes this one (e.g. `refund` for `charge`). */
  tool: string;
  /** The undo's intent fields (without `operation`), or undefined when there is nothing to undo. */
  input(original: I, done: { providerRef: string; result?: Json }): Record<string, unknown> | undefined;
}

/** What the approver sees beyond the summary: what the action touches and how far it reaches. */
export interface DryRunDescription {
  target: string;
  scope: string;
}

/** A tool as the engine runs it: every field filled in (defineTool fills in the defaults of ToolSpec). */
export interface ToolDefinition<Name extends string = string, S extends z.ZodType = z.ZodType> {
  /** The operation name: the first segment of the action key and the `operation` field of an intent. */
  name: Name;
  /** The key's semantic version; bump it when the meaning of the input changes. */
  version: number;
  /** One sentence the planner is shown for this tool. */
  description: string;
  /** The intent fields without `operation`, normalizing as it parses (trim, lower-case, NFC). */
  input: S;
  kind: 'read' | 'mutation';
  dedupe: DedupeCapability;
  /** How long the provider's read API may lag behind a committed write; an empty lookup inside it proves nothing. */
  readAfterWriteLagMs: number;
  /** How long the provider remembers an idempotency key, when it forgets; absent when it keeps keys for good. */
  keyRetentionMs?: number;
  /**
   * The provider's calls may take longer than about 2 s (a report, an export, a model call): a run then acts on this
   * tool in an activity with heartbeats instead of a local activity in its own workflow task (docs/tools.md, "Long
   * calls"). Default false.
   */
  longCalls?: boolean;
  riskClass: RiskClass;
  /** Refines the risk class per intent (a pre-approved template is routine, free text is not). */
  riskClassFor?(input: z.output<S>): RiskClass;
  /**
   * The field that carries an amount in minor units: the decision table, spend ceiling and per-action limits read it.
   */
  amountField?: string;
  currencyField?: string;
  /** Per-action limits on numeric fields of the input; a breach sends the action to a person. */
  limits?: Record<string, { max: number }>;
  /**
   * Top-level input fields that never enter the request hash, the memo preview, the summary or the dry run:
   * `summarize` and `dryRun` are handed the input without them.
   */
  secretFields?: readonly string[];
  /** One line for the Web UI and the ops CLI. */
  summarize(input: z.output<S>): string;
  /** Target and reach for the dry run; the summary stands in when absent. */
  dryRun?(input: z.output<S>): DryRunDescription;
  /** The business reference the provider knows the action by, when it is not the key (webhooks route by it). */
  reference?(input: z.output<S>, key: string): string;
  compensation?: Compensation<z.output<S>>;
  /** Performs the effect once, sending `ctx.key`; answers with one of the four outcomes (tool-outcome.ts). */
  execute(input: z.output<S>, ctx: ToolContext): Promise<ToolOutcome>;
  /**
   * Finds a committed effect by key or reference; required for `lookup`, optional otherwise. Throw when it cannot tell.
   */
  lookup?(input: z.output<S>, ctx: ToolContext): Promise<LookupAnswer>;
}

/** Any tool, as the registry holds it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = ToolDefinition<string, any>;

/** The intent a tool takes: its input plus `operation` naming it. */
export type IntentOf<T extends AnyTool> = { operation: T['name'] } & z.input<T['input']>;

/**
 * What a tool's author writes: its name, its input, its dedupe capability (what decides whether a retry is safe:
 * never defaulted) and how it performs the effect; everything else has a default that is safe:
 *   version 1 · kind `mutation` · riskClass `unclassified` (a person confirms each action until the tool declares
 *   its class) · readAfterWriteLagMs 0, but required when the tool has a lookup (an empty lookup inside the lag
 *   would be taken for absence) · summarize: the tool's name · description: a sentence naming it.
 */
export type ToolSpec<Name extends string = string, S extends z.ZodType = z.ZodType> = Omit<
  ToolDefinition<Name, S>,
  DefaultedField
> &
  Partial<Pick<ToolDefinition<Name, S>, DefaultedField>>;

/** The fields of a tool definition that {@link defineTool} fills in when the author leaves them out. */
export type DefaultedField = 'version' | 'description' | 'kind' | 'readAfterWriteLagMs' | 'riskClass' | 'summarize';

/**
 * Declares a tool, filling in the defaults of {@link ToolSpec}. The value is checked when the registry is built
 * (createToolRegistry), which reports every problem with the tool's name and the field.
 */
export function defineTool<const Name extends string, S extends z.ZodType>(
  spec: ToolSpec<Name, S>,
): ToolDefinition<Name, S> {
  return withToolDefaults(spec);
}

/** A tool with its defaults filled in; a field the author left out where no default is safe stays missing. */
export function withToolDefaults<Name extends string, S extends z.ZodType>(
  spec: ToolSpec<Name, S>,
): ToolDefinition<Name, S> {
  const name = spec.name;
  return {
    version: 1,
    description: `Performs ${name}.`,
    kind: 'mutation',
    riskClass: 'unclassified',
    summarize: () => name,
    ...spec,
    // With a lookup the lag decides what an empty answer proves: it stays the author's to state.
    readAfterWriteLagMs: spec.readAfterWriteLagMs ?? (spec.lookup ? (undefined as unknown as number) : 0),
  };
}

/**
 * The part of a tool that workflow code acts on: plain data, recorded in history by the local activity
 * that reads it from the worker's registry. A running action keeps the contract it was claimed under.
 */
export interface ToolDescriptor {
  name: string;
  version: number;
  kind: 'read' | 'mutation';
  dedupe: DedupeCapability;
  readAfterWriteLagMs: number;
  keyRetentionMs?: number;
  /** The class for this intent (after riskClassFor). */
  riskClass: RiskClass;
  hasLookup: boolean;
  /** The run acts on this tool as an activity with heartbeats, not in its own workflow task. */
  longCalls?: true;
  compensationTool?: string;
  amountField?: string;
  currencyField?: string;
  limits: Record<string, { max: number }>;
}
