import { RetrysafeError } from './errors';

/**
 * Action keys name one logical side effect, never one attempt: `operation:vN:tenant:eventId[:stepId]`.
 * They are derived only from the run's identity (tenant + business event) and a step ID chosen by the
 * workflow author, so every retry, restart and replay computes the same key. No payload data, time,
 * randomness, attempt number or model wording may enter one.
 */
export const KEY_DELIMITER = ':';
/** Parts are short identifiers; anything else (spaces, delimiters, unicode look-alikes) is refused. */
const PART_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const MAX_PART_LENGTH = 80;
/** Temporal workflow IDs may be far longer, but a key is also sent as a provider's Idempotency-Key header. */
export const MAX_KEY_LENGTH = 255;

/** The parts of an action key `operation:vN:tenant:event[:step]`. */
export interface ActionKeyParts {
  operation: string;
  version: number;
  tenant: string;
  eventId: string;
  stepId?: string;
}

function checkPart(field: keyof ActionKeyParts | 'runWorkflowId', value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new RetrysafeError('InvalidActionKey', `${field} must be a non-empty string`, { field });
  }
  if (value.length > MAX_PART_LENGTH) {
    throw new RetrysafeError('InvalidActionKey', `${field} is longer than ${MAX_PART_LENGTH} characters`, { field });
  }
  if (value.includes(KEY_DELIMITER)) {
    throw new RetrysafeError(
      'InvalidActionKey',
      `${field} must not contain '${KEY_DELIMITER}': ${JSON.stringify(value)}`,
      {
        field,
      },
    );
  }
  if (!PART_PATTERN.test(value)) {
    throw new RetrysafeError(
      'InvalidActionKey',
      `${field} may hold only letters, digits, '.', '_' and '-' (starting with a letter or digit): ${JSON.stringify(value)}`,
      { field },
    );
  }
  return value;
}

/**
 * Joins the parts into a key; throws InvalidActionKey naming the part that is empty, too long or holds the delimiter.
 */
export function formatActionKey(parts: ActionKeyParts): string {
  if (!Number.isSafeInteger(parts.version) || parts.version < 1) {
    throw new RetrysafeError('InvalidActionKey', 'version must be a positive integer', { field: 'version' });
  }
  const segments = [
    checkPart('operation', parts.operation),
    `v${parts.version}`,
    checkPart('tenant', parts.tenant),
    checkPart('eventId', parts.eventId),
  ];
  if (parts.stepId !== undefined) segments.push(checkPart('stepId', parts.stepId));
  const key = segments.join(KEY_DELIMITER);
  if (key.length > MAX_KEY_LENGTH) {
    throw new RetrysafeError('InvalidActionKey', `action key is longer than ${MAX_KEY_LENGTH} characters`, {
      field: 'key',
    });
  }
  return key;
}

/** Splits a key into its parts; throws InvalidActionKey naming what is wrong. */
export function parseActionKey(key: string): ActionKeyParts {
  if (typeof key !== 'string') throw new RetrysafeError('InvalidActionKey', 'key must be a string', { field: 'key' });
  const segments = key.split(KEY_DELIMITER);
  if (segments.length < 4 || segments.length > 5) {
    throw new RetrysafeError(
      'InvalidActionKey',
      `key must look like operation:vN:tenant:eventId[:stepId], got ${JSON.stringify(key)}`,
      { field: 'key' },
    );
  }
  const [operation, version, tenant, eventId, stepId] = segments;
  const match = /^v([1-9][0-9]*)$/.exec(version);
  if (!match)
    throw new RetrysafeError('InvalidActionKey', `version segment must be vN, got ${JSON.stringify(version)}`, {
      field: 'version',
    });
  const parts: ActionKeyParts = {
    operation,
    version: Number(match[1]),
    tenant,
    eventId,
    ...(stepId !== undefined ? { stepId } : {}),
  };
  formatActionKey(parts); // validates every part with the same rules
  return parts;
}

/**
 * Whether `value` is a well-formed action key. Most values asked about are a provider's own references (`ch_…`,
 * `msg_…`): those are answered by their shape, without building the error parseActionKey would throw.
 */
export function isActionKey(value: string): boolean {
  const segments = value.split(KEY_DELIMITER).length;
  if (segments < 4 || segments > 5) return false;
  try {
    parseActionKey(value);
    return true;
  } catch {
    return false;
  }
}

/**
 * The agent run for one business event: `run:<tenant>:<eventId>`, or `run:<tenant>:<eventId>:<agent>` for
 * one of several agents working on the same event. Starting it twice attaches to one run; every agent of
 * the event derives the same action keys, so their proposals converge on one owner per effect.
 */
export function runWorkflowId(tenant: string, eventId: string, agent?: string): string {
  const parts = ['run', checkPart('tenant', tenant), checkPart('eventId', eventId)];
  if (agent !== undefined) parts.push(checkPart('agent' as keyof ActionKeyParts, agent));
  return parts.join(KEY_DELIMITER);
}

/**
 * The tenant, event and agent of a run's workflow ID (`run:tenant:event[:agent]`); throws InvalidActionKey otherwise.
 */
export function parseRunWorkflowId(workflowId: string): { tenant: string; eventId: string; agent?: string } {
  const segments = workflowId.split(KEY_DELIMITER);
  if ((segments.length !== 3 && segments.length !== 4) || segments[0] !== 'run') {
    throw new RetrysafeError(
      'InvalidActionKey',
      `run workflow ID must be run:<tenant>:<eventId>[:<agent>], got ${JSON.stringify(workflowId)}`,
      { field: 'runWorkflowId' },
    );
  }
  const tenant = checkPart('tenant', segments[1]);
  const eventId = checkPart('eventId', segments[2]);
  return segments.length === 4
    ? { tenant, eventId, agent: checkPart('agent' as keyof ActionKeyParts, segments[3]) }
    : { tenant, eventId };
}

/**
 * The key of a step inside a run. The run's workflow ID carries tenant and event; the step ID is the
 * author's name for the step. A step whose operation is the run's only one of its kind may omit it.
 */
export function actionKeyForStep(runId: string, step: { operation: string; version: number; stepId?: string }): string {
  const { tenant, eventId } = parseRunWorkflowId(runId);
  return formatActionKey({ operation: step.operation, version: step.version, tenant, eventId, stepId: step.stepId });
}

/** One key a run gave a step, with the request hash it was given for. */
export interface StepRevision {
  key: string;
  requestHash: string;
}

/**
 * The key a run gives an intent at one of its steps, from the step's earlier revisions: the same request hash keeps
 * its key; a different one is a re-plan, keyed `<step>-r<n>`, which the run may take only once the step's previous
 * action is resolved. The run's workflow code and its act (which derives the key before it takes the row) both use it.
 */
export function keyAtStep(
  runId: string,
  tool: { name: string; version: number },
  step: string,
  revisions: readonly StepRevision[],
  requestHash: string,
): { key: string; revisionOf?: StepRevision; replans?: StepRevision } {
  const same = revisions.find((r) => r.requestHash === requestHash);
  if (same) return { key: same.key, revisionOf: same };
  const stepId = revisions.length === 0 ? step : `${step}-r${revisions.length + 1}`;
  const key = actionKeyForStep(runId, {
    operation: tool.name,
    version: tool.version,
    stepId: stepId === tool.name ? undefined : stepId,
  });
  const previous = revisions[revisions.length - 1];
  return previous ? { key, replans: previous } : { key };
}
