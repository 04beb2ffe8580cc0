/**
 * `retrysafe/tracing`: one OpenTelemetry trace from an application's claim (or an agent's tool call) through the run,
 * the action workflow, the executor and the provider request, which carries the W3C `traceparent` header. Built on
 * Temporal's `@temporalio/interceptors-opentelemetry` and OpenTelemetry's SDK, optional peer dependencies of this
 * package that the application installs when it traces. A worker started by `workerMain` traces with
 * `RETRYSAFE_TRACING=otlp` and OpenTelemetry's standard `OTEL_EXPORTER_OTLP_*` variables.
 *
 * @packageDocumentation
 */
export { startTracing } from '../tracing/start-tracing';
export type { Tracing, TracingOptions } from '../tracing/start-tracing';
export { startTracingFromEnv, TRACING_ENV_VAR, TRACING_MODES } from '../tracing/tracing-from-env';
export type { TracingMode } from '../tracing/tracing-from-env';
export { withProviderSpan } from '../tracing/provider-span';
