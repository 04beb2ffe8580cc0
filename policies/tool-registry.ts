import { z } from 'zod';
import { findCardNumberField, maskCardNumbersIn, type CardNumberMode } from './card-numbers';
import { RetrysafeError } from './errors';
import { checkJsonShape } from './json-shape';
import { requestHash } from './request-hash';
import {
  DEDUPE_CAPABILITIES,
  RISK_CLASSES,
  withToolDefaults,
  type AnyTool,
  type DryRunDescription,
  type Intent,
  type Json,
  type ToolDescriptor,
} from './tool';
import { allIssues } from './zod-issues';

/**
 * The tools a worker runs, by name. Everything that used to be a table per operation derives from it:
 * intent parsing, the request hash's secret fields, summaries and previews, the dry run, the planner's
 * tool list, the decision-table facts, compensations. Pure: it holds the tools' functions but calls
 * only the pure ones (schemas, summaries, derivations); `execute` and `lookup` run in activities.
 */

export type { Intent } from './tool';

/** Larger intents are refused before they reach history or a provider: they are plans, not documents. */
export const MAX_INTENT_BYTES = 32 * 1024;

/** Tool names become the first segment of action keys, so they follow the key part rules. */
const TOOL_NAME = /^[a-z][a-z0-9-]{0,39}$/;

/**
 * The registered tools, checked when built: parses and hashes intents, and says what each tool declares. Build it with
 * createToolRegistry.
 */
export interface ToolRegistry {
  readonly names: readonly string[];
  /** Whether a tool of this name is registered. */
  has(name: string): boolean;
  /** The tool, or `UnknownOperation` naming the registered ones. */
  get(name: string): AnyTool;
  /**
   * Validates and normalizes raw input into an intent; the error names the field. A card number in any
   * string (policies/card-numbers.ts) is refused, or with `{ cardNumbers: 'mask' }` (a tenant's choice,
   * which the registry cannot know) cut to its last four before the schema sees it, so neither the hash
   * nor anything recorded ever holds it.
   */
  parseIntent(raw: unknown, options?: ParseIntentOptions): Intent;
  /** SHA-256 of the intent's canonical JSON without the tool's secret fields. */
  hash(intent: Intent): string;
  /** What the intent's tool declares (dedupe, risk class, lag, compensation…), without its code. */
  describe(intent: Intent): ToolDescriptor;
  /** The one-line summary of the intent, for the Web UI and the review queue. */
  summarize(intent: Intent): string;
  /** A memo-safe view: secret fields dropped, email addresses masked. */
  preview(intent: Intent): Record<string, unknown>;
  /** What an approver is shown before confirming: target, scope and the exact request. */
  dryRun(intent: Intent): DryRunDescription;
  /** The provider-side reference when it is not the key itself. */
  reference(intent: Intent, key: string): string | undefined;
  /** The undo of a done action as an intent of its compensating tool, or undefined when there is none. */
  compensationFor(intent: Intent, done: { providerRef: string; result?: Json }): Intent | undefined;
}

/** How `parseIntent` treats an intent beyond its schema. */
export interface ParseIntentOptions {
  /** What to do with card numbers in free text; `refuse` when absent. */
  cardNumbers?: CardNumberMode;
}

/** Builds the registry, refusing a malformed tool with its name and the field. */
export function createToolRegistry(tools: readonly AnyTool[]): ToolRegistry {
  const byName = new Map<string, AnyTool>();
  for (const [i, given] of tools.entries()) {
    // A tool written as a plain object gets the same defaults defineTool gives.
    const tool = typeof given === 'object' && given !== null ? withToolDefaults(given) : given;
    checkTool(tool, i);
    if (byName.has(tool.name)) throw toolError(tool.name, 'name', 'is registered twice');
    byName.set(tool.name, tool);
  }
  for (const tool of byName.values()) {
    const undo = tool.compensation?.tool;
    if (undo !== undefined && !byName.has(undo)) {
      throw toolError(tool.name, 'compensation.tool', `names ${JSON.stringify(undo)}, which is not registered`);
    }
  }
  const names = [...byName.keys()];

  const get = (name: string): AnyTool => {
    const tool = typeof name === 'string' ? byName.get(name) : undefined;
    if (!tool) {
      throw new RetrysafeError(
        'UnknownOperation',
        `operation ${JSON.stringify(name)} is not a registered tool; registered: ${names.join(', ') || '(none)'}`,
        { field: 'operation' },
      );
    }
    return tool;
  };
  const inputOf = (intent: Intent) => {
    const { operation: _operation, ...input } = intent;
    return input;
  };
  /** What summaries and dry runs are computed from: the input without its secret fields, so none can show them. */
  const visibleInputOf = (intent: Intent) => {
    const secret = get(intent.operation).secretFields ?? [];
    return Object.fromEntries(Object.entries(inputOf(intent)).filter(([k]) => !secret.includes(k)));
  };

  const registry: ToolRegistry = {
    names,
    has: (name) => byName.has(name),
    get,
    parseIntent(raw, options = {}) {
      if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
        throw new RetrysafeError('InvalidIntent', 'intent must be an object', { field: '(root)' });
      }
      // First, before any reader that recurses (the schema, the size, the scans): depth, breadth, JSON only.
      checkJsonShape(raw);
      const operation = (raw as { operation?: unknown }).operation;
      // Before `get`: its UnknownOperation message quotes the operation.
      if (typeof operation === 'string') refuseCardNumbers(undefined, { operation });
      const tool = get(operation as string);
      checkSize(raw);
      const given = inputOf(raw as Intent);
      const input = options.cardNumbers === 'mask' ? maskCardNumbersIn(given) : given;
      refuseCardNumbers(tool.name, input);
      const parsed = tool.input.safeParse(input);
      if (!parsed.success) {
        const issues = allIssues(parsed.error);
        const { field, message } = issues[0];
        throw new RetrysafeError('InvalidIntent', `${tool.name}: ${field}: ${message}`, {
          field,
          operation: tool.name,
          issues,
        });
      }
      if (typeof parsed.data !== 'object' || parsed.data === null || Array.isArray(parsed.data)) {
        throw toolError(tool.name, 'input', 'must be an object schema');
      }
      const intent = { operation: tool.name, ...(parsed.data as Record<string, unknown>) };
      // The schema's normalization must not assemble one either (it would reach the hash).
      refuseCardNumbers(tool.name, intent);
      return intent;
    },
    hash: (intent) => requestHash(intent, get(intent.operation).secretFields ?? []),
    describe(intent) {
      const tool = get(intent.operation);
      return {
        name: tool.name,
        version: tool.version,
        kind: tool.kind,
        dedupe: tool.dedupe,
        readAfterWriteLagMs: tool.readAfterWriteLagMs,
        ...(tool.keyRetentionMs !== undefined ? { keyRetentionMs: tool.keyRetentionMs } : {}),
        riskClass: tool.riskClassFor ? tool.riskClassFor(inputOf(intent)) : tool.riskClass,
        hasLookup: typeof tool.lookup === 'function',
        ...(tool.longCalls ? { longCalls: true as const } : {}),
        ...(tool.compensation ? { compensationTool: tool.compensation.tool } : {}),
        ...(tool.amountField ? { amountField: tool.amountField } : {}),
        ...(tool.currencyField ? { currencyField: tool.currencyField } : {}),
        limits: { ...(tool.limits ?? {}) },
      };
    },
    summarize: (intent) => get(intent.operation).summarize(visibleInputOf(intent)),
    preview(intent) {
      const secret = get(intent.operation).secretFields ?? [];
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(intent)) {
        if (secret.includes(k)) continue;
        out[k] = typeof v === 'string' && /@/.test(v) ? v.replace(/^(.).*@/s, '$1***@') : v;
      }
      return out;
    },
    dryRun(intent) {
      const tool = get(intent.operation);
      const visible = visibleInputOf(intent);
      return tool.dryRun ? tool.dryRun(visible) : { target: tool.name, scope: tool.summarize(visible) };
    },
    reference(intent, key) {
      const ref = get(intent.operation).reference?.(inputOf(intent), key);
      return ref && ref !== key ? ref : undefined;
    },
    compensationFor(intent, done) {
      const compensation = get(intent.operation).compensation;
      if (!compensation) return undefined;
      const input = compensation.input(inputOf(intent), done);
      return input === undefined ? undefined : registry.parseIntent({ ...input, operation: compensation.tool });
    },
  };
  return registry;
}

function checkTool(tool: AnyTool, index: number): void {
  const name = typeof tool?.name === 'string' ? tool.name : `#${index}`;
  if (typeof tool !== 'object' || tool === null) throw toolError(name, '(root)', 'must be a tool object (defineTool)');
  if (!TOOL_NAME.test(String(tool.name))) {
    throw toolError(
      name,
      'name',
      'must be lower-case letters, digits and "-", starting with a letter, at most 40 characters',
    );
  }
  if (!Number.isSafeInteger(tool.version) || tool.version < 1)
    throw toolError(name, 'version', 'must be a positive integer');
  if (!(tool.input instanceof z.ZodType)) throw toolError(name, 'input', 'must be a zod schema');
  if (tool.kind !== 'read' && tool.kind !== 'mutation') throw toolError(name, 'kind', 'must be read or mutation');
  if (!(DEDUPE_CAPABILITIES as readonly string[]).includes(tool.dedupe)) {
    throw toolError(name, 'dedupe', `must be one of ${DEDUPE_CAPABILITIES.join(', ')}`);
  }
  if (!(RISK_CLASSES as readonly string[]).includes(tool.riskClass)) {
    throw toolError(name, 'riskClass', `must be one of ${RISK_CLASSES.join(', ')}`);
  }
  if (tool.readAfterWriteLagMs === undefined && typeof tool.lookup === 'function') {
    throw toolError(
      name,
      'readAfterWriteLagMs',
      'is required with a lookup: how long the provider’s reads may lag its writes (0 if they never do), since an ' +
        'empty lookup inside that lag proves nothing',
    );
  }
  if (!Number.isFinite(tool.readAfterWriteLagMs) || tool.readAfterWriteLagMs < 0) {
    throw toolError(name, 'readAfterWriteLagMs', 'must be a non-negative number of milliseconds');
  }
  if (tool.longCalls !== undefined && typeof tool.longCalls !== 'boolean') {
    throw toolError(name, 'longCalls', 'must be true or false');
  }
  if (tool.keyRetentionMs !== undefined && !(tool.keyRetentionMs > 0)) {
    throw toolError(name, 'keyRetentionMs', 'must be a positive number of milliseconds');
  }
  if (typeof tool.execute !== 'function') throw toolError(name, 'execute', 'must be a function');
  if (typeof tool.summarize !== 'function') throw toolError(name, 'summarize', 'must be a function');
  if (tool.dedupe === 'lookup' && typeof tool.lookup !== 'function') {
    throw toolError(name, 'lookup', 'is required when dedupe is lookup');
  }
  if (tool.riskClass === 'money-movement' && !tool.amountField) {
    throw toolError(
      name,
      'amountField',
      'is required for money-movement: the decision table and the spend ceiling read it',
    );
  }
  for (const [field, limit] of Object.entries(tool.limits ?? {})) {
    if (!Number.isFinite(limit?.max)) throw toolError(name, `limits.${field}.max`, 'must be a number');
  }
}

/**
 * Refuses a value holding a card number with `InvalidIntent` naming the field (`description`,
 * `address.line1`); neither the message nor the details repeat any of its digits.
 */
function refuseCardNumbers(tool: string | undefined, value: Record<string, unknown>): void {
  const found = findCardNumberField(value);
  if (!found) return;
  const message = found.inKey
    ? 'a field name looks like a card number (a Luhn-valid run of 13–19 digits); card numbers are not accepted in intents'
    : 'looks like a card number (a Luhn-valid run of 13–19 digits); card numbers are not accepted in intents: ' +
      'remove it, or have the tenant policy mask it (cardNumbersInText: "mask")';
  throw new RetrysafeError('InvalidIntent', `${tool ? `${tool}: ` : ''}${found.field}: ${message}`, {
    field: found.field,
    ...(tool ? { operation: tool } : {}),
    reason: 'card-number',
    issues: [{ field: found.field, message }],
  });
}

function toolError(tool: string, field: string, message: string): RetrysafeError {
  return new RetrysafeError('InvalidTool', `tool ${tool}: ${field} ${message}`, { tool, field });
}

/** Refuses an oversized intent, naming the field that makes it too large (descending while one child alone is). */
function checkSize(raw: object): void {
  const size = jsonBytes(raw);
  if (size === undefined)
    throw new RetrysafeError('InvalidIntent', 'intent is not serializable JSON', { field: '(root)' });
  if (size <= MAX_INTENT_BYTES) return;
  const path: string[] = [];
  let node: unknown = raw;
  for (;;) {
    if (typeof node !== 'object' || node === null) break;
    let biggest: { key: string; value: unknown; bytes: number } | undefined;
    for (const [key, value] of Object.entries(node)) {
      const bytes = jsonBytes(value) ?? 0;
      if (!biggest || bytes > biggest.bytes) biggest = { key, value, bytes };
    }
    if (!biggest || biggest.bytes <= MAX_INTENT_BYTES / 2) break;
    path.push(biggest.key);
    node = biggest.value;
  }
  const field = path.length ? path.join('.') : '(root)';
  throw new RetrysafeError(
    'PayloadTooLarge',
    `intent is ${size} bytes, the limit is ${MAX_INTENT_BYTES}; ${field} is the largest part`,
    {
      field,
      size,
    },
  );
}

function jsonBytes(value: unknown): number | undefined {
  try {
    const s = JSON.stringify(value);
    return s === undefined ? 0 : utf8Length(s);
  } catch {
    return undefined;
  }
}

function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}
