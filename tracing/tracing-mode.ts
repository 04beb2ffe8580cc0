/**
 * RETRYSAFE_TRACING's values, apart from the code that starts tracing (tracing/tracing-from-env.ts), so that the
 * worker's settings name no OpenTelemetry package: those are optional peers, loaded only when tracing is on.
 */

/** The variable that turns a worker process's tracing on. */
export const TRACING_ENV_VAR = 'RETRYSAFE_TRACING';

/** What RETRYSAFE_TRACING may say. */
export const TRACING_MODES = ['off', 'otlp'] as const;

/** `off`, or `otlp`: spans exported over OTLP/HTTP. */
export type TracingMode = (typeof TRACING_MODES)[number];
