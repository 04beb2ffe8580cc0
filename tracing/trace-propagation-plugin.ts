/**
 * The plugin `startTracing` returns unless workflow spans are asked for: Temporal's OpenTelemetry interceptors for
 * clients (a span per call, its context in the `_tracer-data` header) and activities (a span per attempt, child of
 * the header's context), and retrysafe's workflow interceptors that only carry that header through a workflow
 * (tracing/workflow-trace-propagation.ts). One trace from the claim to the provider request, without spans made in
 * the workflow sandbox and exported through a sink.
 */
import type { ClientInterceptors, ClientOptions, ClientPlugin, WorkflowClientInterceptor } from '@temporalio/client';
import {
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { BundleOptions } from '@temporalio/worker';
import type { BundlerPlugin, ReplayWorkerOptions, WorkerOptions, WorkerPlugin } from '@temporalio/worker';

const WORKFLOW_MODULE = require.resolve('./workflow-trace-propagation');

/** Client and worker interceptors that trace, with the workflows carrying the trace context through. */
/** The local activities that act on a ledger row, and so send to a provider. */
const ACTS = ['actOnRecord', 'prepareAndAct'];

export function tracePropagationPlugin(): ClientPlugin & WorkerPlugin & BundlerPlugin {
  const withClientInterceptor = (interceptors: ClientInterceptors = {}): ClientInterceptors => {
    const workflow = interceptors.workflow ?? [];
    if (!Array.isArray(workflow)) throw new Error('tracing needs the workflow client interceptors as an array');
    return {
      ...interceptors,
      workflow: [...(workflow as WorkflowClientInterceptor[]), new OpenTelemetryWorkflowClientInterceptor()],
    };
  };
  const withWorkflowModule = <O extends WorkerOptions | ReplayWorkerOptions>(options: O): O => {
    const interceptors = options.interceptors ?? {};
    // A prebuilt bundle has its interceptor modules already (configureBundler); a path is bundled with this one.
    const modules = options.workflowBundle
      ? interceptors.workflowModules
      : [...(interceptors.workflowModules ?? []), WORKFLOW_MODULE];
    return { ...options, interceptors: { ...interceptors, ...(modules ? { workflowModules: modules } : {}) } };
  };
  return {
    name: 'retrysafe-trace-propagation',
    configureClient: (options: Omit<ClientOptions, 'plugins'>) => ({
      ...options,
      interceptors: withClientInterceptor(options.interceptors),
    }),
    configureWorker(options: WorkerOptions): WorkerOptions {
      const configured = withWorkflowModule(options);
      const interceptors = configured.interceptors ?? {};
      return {
        ...configured,
        interceptors: {
          ...interceptors,
          // The worker's client (activities', and retrysafe's claims from a run) traces its calls too.
          client: withClientInterceptor(interceptors.client),
          activity: [
            ...(interceptors.activity ?? []),
            // Local activities are the engine's bookkeeping (ledger writes, policy loads): no span each. The run's act
            // is the exception: it sends to the provider, in the run's own workflow task.
            (ctx) =>
              ctx.info.isLocal && !ACTS.includes(ctx.info.activityType)
                ? {}
                : {
                    inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
                    outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
                  },
          ],
        },
      };
    },
    configureReplayWorker: (options: ReplayWorkerOptions) => withWorkflowModule(options),
    configureBundler: (options: BundleOptions) => ({
      ...options,
      workflowInterceptorModules: [...(options.workflowInterceptorModules ?? []), WORKFLOW_MODULE],
    }),
  };
}
