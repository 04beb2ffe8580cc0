import { ApplicationFailure, Context } from '@temporalio/activity';
import { RetrysafeError } from '../../policies/errors';
import {
  MAX_RAW_OUTPUT_CHARS,
  PlannerFacts,
  buildPlannerPrompt,
  interpretPlannerOutput,
  promptHash,
  toolSchemaVersion,
  toolSchemas,
} from '../../policies/planner-contract';
import type { ToolRegistry } from '../../policies/tool-registry';
import { maskCardNumbersIn } from '../../policies/card-numbers';
import type { RecordedDecision } from '../../policies/planner-contract';
import { shortHash } from '../../policies/request-hash';
import type { Planner, PlannerOutput } from './planner';
import { firstIssue } from '../../policies/zod-issues';

/**
 * The planner call as an activity, so its answer lands in workflow history and a resumed or replayed run
 * reuses it instead of asking the model again.
 *
 *   facts ─▶ prompt (canonical) ─▶ promptHash ─▶ planner.plan ─▶ parse ─▶ RecordedDecision
 *     act | stop | ask-human ─▶ the workflow checks policy, then acts or ends
 *     invalid (schema violated) ─▶ recorded, not thrown: the workflow asks again within its step budget or
 *                                  goes to needs_review
 *     transport failure ─▶ retryable failure (Temporal retries per PLAN_RETRY)
 *     refused (401/403/4xx), bad facts, exhausted script ─▶ non-retryable failure
 */
export interface PlanActivityDeps {
  planner: Planner;
  /** The worker's tools: the planner is offered exactly these, and its proposals are parsed with them. */
  tools: ToolRegistry;
  /** Milliseconds clock for latency; injectable for tests. */
  now?: () => number;
}

/**
 * The `planNextAction` activity over a planner: builds and hashes the prompt, asks the planner, validates its output
 * against the tools and records usage. Its result is history, so replay never asks the model again.
 */
export function createPlanActivity(deps: PlanActivityDeps) {
  const now = deps.now ?? Date.now;
  const tools = toolSchemas(deps.tools);
  const TOOL_SCHEMA_VERSION = toolSchemaVersion(tools);

  return async function planNextAction(input: PlannerFacts): Promise<RecordedDecision> {
    const ctx = Context.current();
    const facts = parseFacts(input);
    const prompt = buildPlannerPrompt(facts);
    const hash = promptHash(prompt);
    const { workflowExecution, activityId, attempt } = ctx.info;
    const plannerCallId = `plan/${workflowExecution?.workflowId ?? '(no-workflow)'}/${activityId}/${attempt}`;

    const started = now();
    let output: PlannerOutput;
    try {
      output = await deps.planner.plan(facts, tools, { prompt, signal: ctx.cancellationSignal });
    } catch (err) {
      if (ctx.cancellationSignal.aborted) await ctx.cancelled;
      throw toFailure(err, deps.planner.modelId);
    }
    const latencyMs = Math.max(0, now() - started);

    const rawOutput = truncate(output.rawOutput);
    const decision = interpretPlannerOutput(output, rawOutput, deps.tools);
    const usage = { inputTokens: tokens(output.usage?.inputTokens), outputTokens: tokens(output.usage?.outputTokens) };
    ctx.log.info('planner decision', {
      tenant: facts.tenant,
      eventId: facts.eventId,
      plannerCallId,
      modelId: deps.planner.modelId,
      promptHash: shortHash(hash),
      toolSchemaVersion: TOOL_SCHEMA_VERSION,
      kind: decision.kind,
      ...(decision.kind === 'act' ? { operation: decision.intent.operation } : {}),
      ...(decision.kind === 'invalid' ? { field: decision.error.field } : {}),
      latencyMs,
      ...usage,
    });
    // What a model wrote is history: a card number it echoed (in its text, a question, a refused
    // proposal) is masked before the decision is recorded. A proposal carrying one was already refused.
    return maskCardNumbersIn({
      decision,
      modelId: deps.planner.modelId,
      promptHash: hash,
      toolSchemaVersion: TOOL_SCHEMA_VERSION,
      rawOutput,
      usage,
      plannerCallId,
      latencyMs,
    });
  };
}

function parseFacts(input: unknown): PlannerFacts {
  const parsed = PlannerFacts.safeParse(input);
  if (parsed.success) return parsed.data;
  const { field, message } = firstIssue(parsed.error);
  throw ApplicationFailure.create({
    type: 'InvalidPlannerFacts',
    message: `planner input: ${field}: ${message}`,
    nonRetryable: true,
    details: [{ field }],
  });
}

/**
 * Typed failures keep their verdict; anything else from a planner (a socket error, a bug in a client
 * library) is treated as transport trouble and retried, because no side effect hangs on a planner call.
 */
function toFailure(err: unknown, modelId: string): ApplicationFailure {
  if (err instanceof ApplicationFailure) return err;
  if (err instanceof RetrysafeError) return err.toFailure();
  const message = err instanceof Error ? err.message : String(err);
  return new RetrysafeError('TransientProviderError', `planner ${modelId} failed: ${message}`, {
    provider: 'planner',
  }).toFailure();
}

function truncate(raw: unknown): string {
  const text = typeof raw === 'string' ? raw : String(raw);
  if (text.length <= MAX_RAW_OUTPUT_CHARS) return text;
  return `${text.slice(0, MAX_RAW_OUTPUT_CHARS)}…[${text.length - MAX_RAW_OUTPUT_CHARS} more characters cut]`;
}

function tokens(n: unknown): number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : 0;
}
