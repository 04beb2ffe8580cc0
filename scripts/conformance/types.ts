import type { AnyTool, DedupeCapability } from 'retrysafe';

/**
 * The vocabulary of the conformance check (`npm run conformance`). A subject is one example tool with the provider
 * it talks to: it starts that provider in a throw-away place, builds the tool the way its worker does, and knows how
 * to count the tool's effects at the provider from the provider's own records (rows, messages, charges), never from
 * the tool's answer. The probes (probes.ts) then hold what the provider does against what the tool declares.
 */
export interface ConformanceSubject {
  /** The tool's name, as `--tool` takes it. */
  tool: string;
  /** The provider in a few words ("sandbox payments", "PostgreSQL 15"). */
  provider: string;
  /**
   * Starts the provider; throws a SubjectUnavailable when a piece it needs cannot be had on this machine. `contract`
   * is `--contract`'s: a tool that comes in one variant per contract (stripe-charge) is built in that one.
   */
  start(log: (line: string) => void, contract?: DedupeCapability): Promise<SubjectSession>;
}

/** A request for a probe: the tool's input, as the engine would hand it over. */
export interface ProbeInput {
  input: Record<string, unknown>;
  /**
   * True when the input was built past the tool's schema on purpose (a provider-side validation error cannot be
   * provoked with an input the schema admits); the table says so.
   */
  pastSchema?: boolean;
}

export interface SubjectSession {
  /** The tool as its worker builds it, pointed at the started provider. */
  tool: AnyTool;
  /** The provider's exact version or build, for the table's heading. */
  providerVersion?: string;
  /** The tool sends the action key as an idempotency key, so a second effect for one key means the provider ignored it. */
  sendsKey?: boolean;
  /** A valid input no earlier probe used (`tag` is unique per call); may create what it needs first (a charge to refund). */
  sample(tag: string): Promise<ProbeInput>;
  /** The effects at the provider of the request `sample(tag)` built, counted from the provider's own records. */
  effects(tag: string, input: Record<string, unknown>): Promise<number>;
  /** An input the provider refuses for business reasons (a declined card); absent when it has no such refusal. */
  declined?(tag: string): Promise<ProbeInput>;
  /** An input the provider refuses as invalid; absent when every input the tool's schema admits is accepted. */
  invalid?(tag: string): Promise<ProbeInput>;
  /** Stops and starts the provider on the same data: a key must survive it when the tool keeps keys for good. */
  restart?(): Promise<void>;
  stop(): Promise<void>;
}

/** Thrown by `start` when the provider cannot run here: the check says so in one line and goes on with the others. */
export class SubjectUnavailable extends Error {
  override name = 'SubjectUnavailable';
}

export type Verdict = 'ok' | 'fail' | 'n/a';

/** One line of a tool's table: what the tool declares, what the provider did, and whether they agree. */
export interface ConformanceRow {
  check: string;
  declared: string;
  observed: string;
  verdict: Verdict;
}

export interface ToolReport {
  tool: string;
  provider: string;
  /** The contract the probes held the provider to (the declared one, or `--contract`'s). */
  dedupe: string;
  /** The contract the tool declares, when the provider could be started. */
  declaredDedupe?: string;
  /** Set when the provider could not be started here; there are no rows then. */
  unavailable?: string;
  rows: ConformanceRow[];
  durationMs: number;
}
