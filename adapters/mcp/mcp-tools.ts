import type { RetrysafeClient } from '../../client';
import { toolSchemas } from '../../policies/planner-contract';
import type { RiskClass } from '../../policies/tool';
import type { ToolRegistry } from '../../policies/tool-registry';
import { refusalResult } from '../action-result';
import { claimForAgent } from '../agent-claim';

/**
 * What an MCP client sees of retrysafe: one MCP tool per registered tool, whose arguments are the tool's input
 * plus the business event it acts on. The event (and an optional step) make the action key, so a model that calls
 * the same tool again for the same event, after a lost reply or in a new turn with a new tool-call ID, gets the
 * same action and its outcome, never a second effect. Nothing here can approve or resolve an action: those are
 * signed decisions of people (the approval service), and no MCP tool carries one.
 */

/** The argument that names the business event (an order, an invoice, a ticket): required on every tool. */
export const EVENT_ARGUMENT = 'eventId';
/** The optional argument that tells apart two uses of one tool for one event (`refund:first`, `refund:rest`). */
export const STEP_ARGUMENT = 'step';

/** An MCP tool listing (the protocol's `Tool`), as `tools/list` answers it. */
export interface McpToolListing {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, unknown>; required: string[] } & Record<string, unknown>;
  annotations: {
    title: string;
    readOnlyHint: boolean;
    destructiveHint: boolean;
    idempotentHint: boolean;
    openWorldHint: boolean;
  };
}

/**
 * Risk classes whose effects change or remove what exists (MCP's `destructiveHint`); the others only add. A tool
 * that names no class (`unclassified`) is assumed to, until it says otherwise.
 */
const DESTRUCTIVE: readonly RiskClass[] = ['money-movement', 'destructive', 'production-change', 'unclassified'];

/** The registry's tools as MCP tools. A tool whose input has its own `eventId` or `step` field is refused here. */
export function mcpToolListings(registry: ToolRegistry): McpToolListing[] {
  return toolSchemas(registry)
    .filter((schema) => registry.has(schema.function.name))
    .map(({ function: fn }) => {
      const tool = registry.get(fn.name);
      const properties = (fn.parameters.properties ?? {}) as Record<string, unknown>;
      for (const reserved of [EVENT_ARGUMENT, STEP_ARGUMENT]) {
        if (reserved in properties) {
          throw new Error(
            `tool ${fn.name}: its input has a field named ${reserved}, which the MCP server needs for the action key; rename the field`,
          );
        }
      }
      const title = fn.name;
      return {
        name: fn.name,
        title,
        description:
          `${tool.description} Pass the business event this call is for as ${EVENT_ARGUMENT}: calling again for the same ` +
          'event returns the first call’s outcome and never repeats the effect; a changed request for it is refused.',
        inputSchema: {
          ...fn.parameters,
          type: 'object',
          properties: {
            [EVENT_ARGUMENT]: {
              type: 'string',
              minLength: 1,
              description: 'The business event this call acts on, e.g. inv-2026-0042 (an order, invoice or ticket ID)',
            },
            [STEP_ARGUMENT]: {
              type: 'string',
              minLength: 1,
              description:
                'Only when one event needs this tool more than once: a name for this use, e.g. second-refund',
            },
            ...properties,
          },
          required: [EVENT_ARGUMENT, ...((fn.parameters.required as string[] | undefined) ?? [])],
        },
        annotations: {
          title,
          readOnlyHint: tool.kind === 'read',
          destructiveHint: tool.kind !== 'read' && DESTRUCTIVE.includes(tool.riskClass),
          // True by construction: the key is derived from the arguments, not from the call.
          idempotentHint: true,
          openWorldHint: true,
        },
      };
    });
}

/** The protocol's tool result, as this adapter fills it. */
export interface McpToolResult {
  [field: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent: Record<string, unknown>;
  isError?: boolean;
}

/** What an MCP tool call needs: the client to claim with, the tools, and who calls for which tenant. */
export interface McpCallDeps {
  retrysafe: RetrysafeClient;
  registry: ToolRegistry;
  /** The tenant every call acts for: the server's (stdio) or the caller's token's (HTTP), never an argument. */
  tenant: string;
  /** The agent that calls, as the action's audit names it (`mcp:<agent>`). */
  claimant: string;
  /** How long a call waits for the outcome before it answers with the status as it stands. */
  waitMs: number;
  /** The Web UI page of an action, when the server knows the UI's address. */
  webUiUrl?: (key: string) => string | undefined;
}

/**
 * One `tools/call`: claims the action for (tenant, event, step) with the arguments as its intent and answers with
 * the action's state. Statuses that are not outcomes (unknown, needs_review, awaiting_confirmation, still
 * dispatching) are results, not errors, with what happens next in words, so a model does not retry them under
 * another event; a refusal (a changed request, invalid input) is an error result naming the field or the key.
 */
export async function callRetrysafeTool(deps: McpCallDeps, name: string, args: Record<string, unknown>) {
  if (!deps.registry.has(name)) {
    return errorResult({
      code: 'UnknownOperation',
      message: `no tool named ${name}; the tools are ${deps.registry.names.join(', ')}`,
    });
  }
  const { [EVENT_ARGUMENT]: eventId, [STEP_ARGUMENT]: step, ...input } = args;
  if (typeof eventId !== 'string' || eventId.trim() === '') {
    return errorResult({
      code: 'InvalidIntent',
      message: `${EVENT_ARGUMENT}: required, the business event this call is for`,
    });
  }
  if (step !== undefined && (typeof step !== 'string' || step.trim() === '')) {
    return errorResult({ code: 'InvalidIntent', message: `${STEP_ARGUMENT}: a non-empty string when given` });
  }
  const result = await claimForAgent(
    'mcp',
    { ...deps, eventId, ...(step !== undefined ? { step: step as string } : {}) },
    name,
    input,
  );
  if (!('status' in result)) return errorResult(result.error, result.next);
  return {
    content: [{ type: 'text', text: JSON.stringify(result) }],
    structuredContent: result,
    ...(result.status === 'failed' ? { isError: true } : {}),
  };
}

function errorResult(error: { code: string; message: string; reason?: string }, next?: string): McpToolResult {
  const { code, message, reason } = error;
  const structured = { ...refusalResult(code, message, reason), ...(next ? { next } : {}) };
  return {
    content: [{ type: 'text', text: `${code}${reason ? ` (${reason})` : ''}: ${message}${next ? ` ${next}` : ''}` }],
    structuredContent: structured,
    isError: true,
  };
}
