/**
 * Workflow interceptors that carry a trace through a workflow without making spans in it: the trace context a
 * workflow was started or first claimed with (Temporal's `_tracer-data` header, written by the OpenTelemetry client
 * and activity interceptors) goes on every activity, local activity, child workflow and signal it sends (the worker
 * makes a span only for the local activity that sends, the run's act; the others are the engine's bookkeeping). The
 * executor's activity span, and the provider request under it, are then children of the claim's span, in one trace,
 * at the cost of copying one header. Temporal's own workflow interceptors (`startTracing({ workflowSpans: true })`)
 * add a span for each workflow, update, signal and activity scheduled, exported through a sink: more to see, and
 * about ×1.2 the latency per action in `npm run bench` (docs/observability.md).
 *
 * A workflow module (it runs in the workflow sandbox): it reads and copies the header's payload as it is, and imports
 * no OpenTelemetry code.
 */
import type { Headers, Payload } from '@temporalio/common';
import type { WorkflowInterceptors } from '@temporalio/workflow';

/** The header Temporal's OpenTelemetry interceptors keep a trace context in. */
export const TRACE_HEADER = '_tracer-data';

export const interceptors = (): WorkflowInterceptors => {
  let carried: Payload | undefined;
  const remember = (headers: Headers) => {
    carried ??= headers[TRACE_HEADER];
  };
  const carry = (headers: Headers): Headers =>
    carried === undefined || headers[TRACE_HEADER] !== undefined ? headers : { ...headers, [TRACE_HEADER]: carried };
  return {
    inbound: [
      {
        execute: (input, next) => {
          remember(input.headers);
          return next(input);
        },
        handleUpdate: (input, next) => {
          remember(input.headers);
          return next(input);
        },
        handleSignal: (input, next) => {
          remember(input.headers);
          return next(input);
        },
      },
    ],
    outbound: [
      {
        scheduleActivity: (input, next) => next({ ...input, headers: carry(input.headers) }),
        // The run's act is a local activity that sends to the provider: its request belongs to the run's trace.
        scheduleLocalActivity: (input, next) => next({ ...input, headers: carry(input.headers) }),
        startChildWorkflowExecution: (input, next) => next({ ...input, headers: carry(input.headers) }),
        signalWorkflow: (input, next) => next({ ...input, headers: carry(input.headers) }),
      },
    ],
  };
};
