/**
 * Tracing for a worker process from its environment: `RETRYSAFE_TRACING=otlp` exports spans over OTLP/HTTP to where
 * OpenTelemetry's standard variables say (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`,
 * `OTEL_EXPORTER_OTLP_HEADERS`…; http://localhost:4318 by default), as `OTEL_SERVICE_NAME` (`retrysafe-worker` by
 * default). The OpenTelemetry packages are optional peers, loaded only then; a missing one is named.
 */
import type { Tracing } from './start-tracing';

import { TRACING_ENV_VAR, type TracingMode } from './tracing-mode';
import { invalidConfigError } from '../policies/errors';

export { TRACING_ENV_VAR, TRACING_MODES, type TracingMode } from './tracing-mode';

/** The packages `otlp` loads, for the message when one is missing. */
const OTLP_PACKAGES = [
  '@temporalio/interceptors-opentelemetry',
  '@opentelemetry/sdk-trace-base',
  '@opentelemetry/resources',
  '@opentelemetry/core',
  '@opentelemetry/context-async-hooks',
  '@opentelemetry/exporter-trace-otlp-http',
];

/** A tracing setting that cannot be honoured; the message names the variable or the package. */
export const TracingConfigError = invalidConfigError('TracingConfigError');

/** Starts tracing as `mode` says (undefined for `off`), spans batched and exported over OTLP/HTTP. */
export async function startTracingFromEnv(mode: TracingMode, env: NodeJS.ProcessEnv): Promise<Tracing | undefined> {
  if (mode === 'off') return undefined;
  let modules;
  try {
    modules = await Promise.all([
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/sdk-trace-base'),
      import('./start-tracing'),
    ]);
  } catch (err) {
    throw new TracingConfigError(
      `${TRACING_ENV_VAR}=otlp needs the OpenTelemetry packages: npm install ${OTLP_PACKAGES.join(' ')} ` +
        `(${(err as Error).message.split('\n')[0]})`,
    );
  }
  const [{ OTLPTraceExporter }, { BatchSpanProcessor }, { startTracing }] = modules;
  return startTracing({
    serviceName: env.OTEL_SERVICE_NAME ?? 'retrysafe-worker',
    spanProcessor: new BatchSpanProcessor(new OTLPTraceExporter()),
  });
}
