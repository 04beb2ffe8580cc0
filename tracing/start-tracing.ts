/**
 * Tracing for a retrysafe process, on OpenTelemetry and Temporal's interceptors: one trace from the application's
 * claim (or the agent's tool call) through the run, the action workflow, the executor and the provider request.
 *
 *   const tracing = startTracing({ serviceName: 'billing-worker', spanProcessor: new BatchSpanProcessor(exporter) });
 *   const client = new Client({ connection, plugins: [tracing.plugin] });
 *   Worker.create({ …, plugins: [tracing.plugin, retrysafePlugin({ tools })] });
 *
 * `startTracing` registers the global tracer provider, the W3C trace-context propagator and an AsyncLocalStorage
 * context manager (what makes a span started in an activity the parent of the ones inside it), and returns a plugin
 * with Temporal's client and activity interceptors and workflow interceptors that carry the trace context through
 * (tracing/trace-propagation-plugin.ts); with `workflowSpans`, Temporal's OpenTelemetryPlugin, which also makes
 * spans in the workflows and exports them through a sink. Put it before retrysafePlugin: the engine's own client (the one that claims
 * actions from a run) takes the worker's client interceptors as they are when retrysafePlugin runs.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ClientPlugin } from '@temporalio/client';
import { OpenTelemetryPlugin } from '@temporalio/interceptors-opentelemetry';
import type { WorkerPlugin } from '@temporalio/worker';
import { tracePropagationPlugin } from './trace-propagation-plugin';

/** Where a process's spans go, and what they say of it. */
export interface TracingOptions {
  /** Where spans go: a BatchSpanProcessor over your exporter (SimpleSpanProcessor in tests). */
  spanProcessor: SpanProcessor;
  /** `service.name` of the spans; default `retrysafe`. */
  serviceName?: string;
  /** More resource attributes (deployment, version…). */
  resourceAttributes?: Record<string, string>;
  /**
   * Spans for each workflow, update, signal and activity scheduled too (Temporal's workflow interceptors, exported
   * through a sink). Off by default: the workflows only carry the trace context, and the trace goes from the client's
   * call to the activities and provider requests; with it, an action took about ×1.2 as long in `npm run bench`.
   */
  workflowSpans?: boolean;
}

/** What startTracing set up: the plugin for clients and workers, and how to flush and stop. */
export interface Tracing {
  /** For `new Client({ plugins })` and `Worker.create({ plugins })`, before retrysafePlugin. */
  plugin: ClientPlugin & WorkerPlugin;
  provider: BasicTracerProvider;
  /** Exports what is buffered. */
  flush(): Promise<void>;
  /** Flushes, then unregisters the globals. */
  shutdown(): Promise<void>;
}

/** Registers OpenTelemetry's globals for this process (see the module comment) and returns Temporal's plugin. */
export function startTracing(options: TracingOptions): Tracing {
  const resource = new Resource({
    'service.name': options.serviceName ?? 'retrysafe',
    ...(options.resourceAttributes ?? {}),
  });
  const provider = new BasicTracerProvider({ resource, spanProcessors: [options.spanProcessor] });
  provider.register({
    propagator: new W3CTraceContextPropagator(),
    contextManager: new AsyncLocalStorageContextManager().enable(),
  });
  return {
    plugin: options.workflowSpans
      ? new OpenTelemetryPlugin({ resource, spanProcessor: options.spanProcessor })
      : tracePropagationPlugin(),
    provider,
    flush: () => provider.forceFlush(),
    shutdown: async () => {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
