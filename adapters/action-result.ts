import type { ActionSnapshot } from '../messages/action';

/**
 * What an agent is told about an action, whichever framework it runs in (MCP, the AI SDK): its status, key and
 * outcome, and in one sentence what happens next. Statuses that are not outcomes are results, not errors, so a
 * model is not invited to retry them under another event.
 */
export interface ActionResult {
  [field: string]: unknown;
  status: string;
  key: string;
  requestHash: string;
  summary: string;
  providerRef?: string;
  record?: unknown;
  error?: { code: string; message: string };
  webUiUrl?: string;
  next: string;
}

/**
 * A refusal before anything was claimed or sent (a changed request, invalid input, an unknown tool), or, with
 * `next`, a failure to answer that may have come after the claim: then the caller asks again with the same event.
 */
export interface RefusalResult {
  [field: string]: unknown;
  /** `reason`: the refusal's one-word why, when it names one (`card-number`, `too-deep`…). */
  error: { code: string; message: string; reason?: string };
  next?: string;
}

const NEXT: Record<string, string> = {
  confirmed: 'Done. Calling again for this event returns this outcome.',
  failed: 'It did not happen and will not be retried for this event. A changed request needs another event.',
  compensating: 'It happened and is being undone by its compensation.',
  compensated: 'It happened and was undone.',
  unknown:
    'The provider may or may not have done it; retrysafe is finding out by lookups and provider events and will not send it blindly again. Call again later for the outcome; do not retry under another event.',
  needs_review:
    'A person must decide whether it happened or may proceed; nothing more is sent until they do. Call again later for the outcome.',
  awaiting_confirmation:
    'A person must approve this exact request first (signed, through the approval service); you cannot approve it. Call again later for the outcome.',
  planned: 'Accepted and about to run. Call again for the outcome.',
  dispatching: 'In progress at the provider. Call again for the outcome.',
};

/** What an agent is told of an action: its status, key, provider reference, Web UI link and the `next` sentence. */
export function actionResult(snap: ActionSnapshot, webUiUrl?: string): ActionResult {
  return {
    status: snap.status,
    key: snap.key,
    requestHash: snap.requestHash,
    summary: snap.summary,
    ...(snap.providerRef ? { providerRef: snap.providerRef } : {}),
    ...(snap.record !== undefined && snap.record !== null ? { record: snap.record } : {}),
    ...(snap.error ? { error: snap.error } : {}),
    ...(webUiUrl ? { webUiUrl } : {}),
    next: NEXT[snap.status] ?? 'Call again for the outcome.',
  };
}

/** What an agent is told of a refused call: nothing was claimed, with the error code, message and reason if any. */
export function refusalResult(code: string, message: string, reason?: string): RefusalResult {
  return { error: { code, message, ...(reason ? { reason } : {}) } };
}
