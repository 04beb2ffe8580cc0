import { sha256 } from '@noble/hashes/sha256';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils';
import { z } from 'zod';
import { ACTION_STATUSES } from './action-status';
import type { ErrorCode } from './errors';
import { RetrysafeError } from './errors';
import type { ToolRegistry } from './tool-registry';
import { firstIssue } from './zod-issues';
import { canonicalJson, shortHash } from './request-hash';

/**
 * The contract between a run and its planner (a model or a script). A planner only proposes: its output
 * is parsed into a typed decision here, and anything that does not match the schema is recorded as
 * `invalid`, never acted on. Every call is recorded with what is needed to audit it later (model id,
 * prompt hash, tool schema version, raw output, usage), so a resumed or replayed run reuses the decision
 * instead of asking the model again.
 *
 *   facts + history ─▶ prompt (canonical) ─▶ planner ─▶ raw tool call ─▶ parsePlannerOutput
 *        ─▶ act(intent) | stop | ask-human | invalid(field)
 */

/** One HTTP call to a model: 30 s, because completions are slow, yet well inside PLAN_START_TO_CLOSE. */
export const PLANNER_REQUEST_TIMEOUT_MS = 30_000;
// The planner activity's timeout and retry policy live with the other timeouts (policies/timeouts.ts).
export { PLAN_RETRY, PLAN_START_TO_CLOSE } from './timeouts';
/** Raw model output kept in history; longer output is cut, because history is an audit log, not a transcript. */
export const MAX_RAW_OUTPUT_CHARS = 16_000;
/** A rationale is a sentence or two for the reviewer; longer text is cut. */
export const MAX_RATIONALE_CHARS = 2_000;

/** The tool a planner calls when the goal is reached or cannot be reached. */
export const STOP_TOOL = 'stop';
/** The tool a planner calls when a person must decide. */
export const ASK_HUMAN_TOOL = 'ask_human';

const runPart = z.string().trim().min(1).max(200);

/** One earlier step of the run as the planner sees it: the action, its status and provider reference. */
export const PlannerHistoryEntry = z.object({
  key: z.string().min(1),
  operation: z.string().min(1),
  status: z.enum(ACTION_STATUSES),
  providerRef: z.string().optional(),
});
/** One earlier step of the run as the planner sees it: the action, its status and provider reference. */
export type PlannerHistoryEntry = z.infer<typeof PlannerHistoryEntry>;

/** What a planner sees: the run's identity, its goal, facts gathered by reads, and the actions so far. */
export const PlannerFacts = z.object({
  tenant: runPart,
  eventId: runPart,
  goal: z.string().trim().min(1).max(2_000),
  facts: z.record(z.string(), z.unknown()),
  history: z.array(PlannerHistoryEntry),
});
export type PlannerFacts = z.infer<typeof PlannerFacts>;

export const StopArguments = z.strictObject({ reason: z.string().trim().min(1).max(1_000) });
export const AskHumanArguments = z.strictObject({ question: z.string().trim().min(1).max(1_000) });

export const ActDecision = z.object({
  kind: z.literal('act'),
  /** Normalized by the tool's schema (the plan activity holds the worker's registry). */
  intent: z.looseObject({ operation: z.string().min(1) }),
  /**
   * Never filled from model output: step IDs enter action keys, and keys never come from model wording.
   * The workflow assigns step IDs; this field exists for planners that are code.
   */
  stepId: z.string().min(1).optional(),
  /** Text the model sent beside its tool call, for the reviewer. Never parsed for meaning. */
  rationale: z.string().optional(),
});
export const StopDecision = z.object({ kind: z.literal('stop'), reason: z.string() });
export const AskHumanDecision = z.object({ kind: z.literal('ask-human'), question: z.string() });

export const PlannerDecision = z.discriminatedUnion('kind', [ActDecision, StopDecision, AskHumanDecision]);
export type PlannerDecision = z.infer<typeof PlannerDecision>;

/** Output that did not match the schema. Recorded so the workflow can ask again or go to needs_review. */
export const InvalidDecision = z.object({
  kind: z.literal('invalid'),
  error: z.object({ code: z.string(), field: z.string(), message: z.string() }),
  rawOutput: z.string(),
});
export type InvalidDecision = z.infer<typeof InvalidDecision>;

export const RecordedDecision = z.object({
  decision: z.discriminatedUnion('kind', [ActDecision, StopDecision, AskHumanDecision, InvalidDecision]),
  modelId: z.string(),
  /** SHA-256 (hex) of the canonical prompt: the same facts and system text always hash the same. */
  promptHash: z.string(),
  toolSchemaVersion: z.string(),
  rawOutput: z.string(),
  usage: z.object({ inputTokens: z.number().int().nonnegative(), outputTokens: z.number().int().nonnegative() }),
  /** Which activity attempt asked: `plan/<workflowId>/<activityId>/<attempt>`. */
  plannerCallId: z.string(),
  latencyMs: z.number().nonnegative(),
});
export type RecordedDecision = z.infer<typeof RecordedDecision>;

/** An OpenAI-style function tool. */
export interface ToolSchema {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

const STOP_DESCRIPTION = 'Stop the run: the goal is reached, or it cannot be reached with the actions available.';
const ASK_HUMAN_DESCRIPTION =
  'Hand the decision to a person: facts are missing, contradictory or an outcome is uncertain.';

/**
 * One function tool per registered tool, its parameters the JSON Schema of its zod input (output form:
 * the normalized values the model should send) and its description the tool's own; then `stop` and
 * `ask_human`.
 */
export function toolSchemas(registry: ToolRegistry): ToolSchema[] {
  const tools = registry.names.map((name) => {
    const tool = registry.get(name);
    const { $schema: _ignored, ...json } = z.toJSONSchema(tool.input, {
      io: 'output',
      unrepresentable: 'any',
    }) as Record<string, unknown>;
    const properties = { ...((json.properties as Record<string, unknown> | undefined) ?? {}) };
    delete properties.operation;
    const required = ((json.required as string[] | undefined) ?? []).filter((f) => f !== 'operation');
    return functionTool(name, tool.description, { ...json, properties, required });
  });
  return [
    ...tools,
    functionTool(STOP_TOOL, STOP_DESCRIPTION, jsonSchemaOf(StopArguments)),
    functionTool(ASK_HUMAN_TOOL, ASK_HUMAN_DESCRIPTION, jsonSchemaOf(AskHumanArguments)),
  ];
}

function functionTool(name: string, description: string, parameters: Record<string, unknown>): ToolSchema {
  return { type: 'function', function: { name, description, parameters } };
}

function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _ignored, ...json } = z.toJSONSchema(schema) as Record<string, unknown>;
  return json;
}

/** A short, stable fingerprint of a tool set: the first 12 hex digits of SHA-256 over its canonical JSON. */
export function toolSchemaVersion(tools: readonly ToolSchema[]): string {
  return shortHash(sha256Hex(canonicalJson(tools)));
}

export const PLANNER_SYSTEM_PROMPT = [
  'You plan the next single action of a business run for retrysafe.',
  'Call exactly one tool. Use only the facts given; never invent ids, amounts or addresses.',
  'Amounts are integer minor units (4990 means 49.90). Currencies are three-letter ISO codes.',
  'History lists the actions already taken and their status. Never propose an action whose history status is confirmed.',
  `Call ${STOP_TOOL} when the goal is reached or cannot be reached.`,
  `Call ${ASK_HUMAN_TOOL} when facts are missing or contradictory, or an action's outcome is unknown or needs review.`,
].join('\n');

/** The prompt a planner sends: system and user text, hashed into the decision record. */
export interface PlannerPrompt {
  system: string;
  user: string;
}

/** The prompt for a set of facts. Deterministic: facts are written as canonical JSON (sorted keys, NFC). */
export function buildPlannerPrompt(input: PlannerFacts): PlannerPrompt {
  const { tenant, eventId, goal, facts, history } = input;
  return {
    system: PLANNER_SYSTEM_PROMPT,
    user: `Run facts as canonical JSON:\n${canonicalJson({ tenant, eventId, goal, facts, history })}`,
  };
}

/** SHA-256 (hex) of the canonical JSON of the prompt's messages. */
export function promptHash(prompt: PlannerPrompt): string {
  return sha256Hex(canonicalJson({ system: prompt.system, user: prompt.user }));
}

function sha256Hex(text: string): string {
  return bytesToHex(sha256(utf8ToBytes(text)));
}

/** A planner's answer before interpretation: a tool call (name + JSON arguments) and/or text. */
export interface PlannerOutputParts {
  toolName?: string;
  arguments?: string;
  text?: string;
}

/** Error codes that mean "the output did not match the schema": recorded as `invalid`, never acted on. */
export const INVALID_OUTPUT_CODES: readonly ErrorCode[] = ['InvalidIntent', 'UnknownOperation', 'PayloadTooLarge'];

/**
 * Turns a tool call into a typed decision. Throws a `RetrysafeError` (`InvalidIntent`, `UnknownOperation`
 * or `PayloadTooLarge`) whose `details.field` names what was wrong: `toolName`, `arguments`, or a field
 * of the intent such as `amountCents` or `address.country`.
 */
export function parsePlannerOutput(raw: PlannerOutputParts, registry: ToolRegistry): PlannerDecision {
  const toolName = raw.toolName?.trim();
  if (!toolName) {
    const said = raw.text?.trim() ? 'answered in text without calling a tool' : 'returned neither a tool call nor text';
    throw invalid('toolName', `the planner ${said}; one tool call is required`);
  }
  const args = parseArguments(raw.arguments);
  const rationale = raw.text?.trim() ? raw.text.trim().slice(0, MAX_RATIONALE_CHARS) : undefined;

  if (toolName === STOP_TOOL) return { kind: 'stop', reason: parseSpecial(toolName, StopArguments, args).reason };
  if (toolName === ASK_HUMAN_TOOL) {
    return { kind: 'ask-human', question: parseSpecial(toolName, AskHumanArguments, args).question };
  }
  if (!registry.has(toolName)) {
    throw new RetrysafeError(
      'UnknownOperation',
      `tool ${JSON.stringify(toolName)} is not one of ${[...registry.names, STOP_TOOL, ASK_HUMAN_TOOL].join(', ')}`,
      { field: 'toolName', toolName },
    );
  }
  // The tool name is the operation; a model that also writes one must not contradict it.
  if ('operation' in args && args.operation !== toolName) {
    throw invalid('operation', `tool ${toolName} was called with operation ${JSON.stringify(args.operation)}`);
  }
  const intent = registry.parseIntent({ ...args, operation: toolName });
  return rationale ? { kind: 'act', intent, rationale } : { kind: 'act', intent };
}

/** Like `parsePlannerOutput`, but schema violations become an `invalid` decision instead of an exception. */
export function interpretPlannerOutput(
  raw: PlannerOutputParts,
  rawOutput: string,
  registry: ToolRegistry,
): PlannerDecision | InvalidDecision {
  try {
    return parsePlannerOutput(raw, registry);
  } catch (err) {
    if (err instanceof RetrysafeError && INVALID_OUTPUT_CODES.includes(err.code)) {
      const field = typeof err.details.field === 'string' ? err.details.field : '(root)';
      return { kind: 'invalid', error: { code: err.code, field, message: err.message }, rawOutput };
    }
    throw err;
  }
}

function parseArguments(text: string | undefined): Record<string, unknown> {
  if (text === undefined || text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw invalid('arguments', `tool arguments are not valid JSON: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid('arguments', 'tool arguments must be a JSON object');
  }
  return value as Record<string, unknown>;
}

function parseSpecial<T extends z.ZodType>(toolName: string, schema: T, args: unknown): z.infer<T> {
  const parsed = schema.safeParse(args);
  if (parsed.success) return parsed.data;
  const { field, message } = firstIssue(parsed.error);
  throw invalid(field, `${toolName}: ${field}: ${message}`);
}

function invalid(field: string, message: string): RetrysafeError {
  return new RetrysafeError('InvalidIntent', message, { field });
}
