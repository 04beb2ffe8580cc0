/**
 * The Temporal Runtime of a worker process: its logs routed into pino (workers/logger.ts) and, when the process
 * serves metrics, one Prometheus endpoint carrying Temporal's worker metrics and retrysafe's (metrics/).
 */
import type { Logger as PinoLogger } from 'pino';
import { Runtime, type LogLevel, type MetricsExporterConfig } from '@temporalio/worker';
import { RETRYSAFE_HISTOGRAM_BUCKETS } from '../metrics/instruments';
import { runtimeLogger } from './logger';
import { invalidConfigError } from '../policies/errors';

/**
 * Temporal's Prometheus exporter at `bindAddress` (`host:port`, served under `/metrics`), with retrysafe's histogram
 * buckets. For a team that installs the Runtime itself: `Runtime.install({ telemetryOptions: { metrics:
 * prometheusMetricsExporter('0.0.0.0:9464') } })`.
 */
export function prometheusMetricsExporter(bindAddress: string): MetricsExporterConfig {
  return { prometheus: { bindAddress, histogramBucketOverrides: { ...RETRYSAFE_HISTOGRAM_BUCKETS } } };
}

/** The metrics endpoint could not be served (the address is taken or not this machine's). */
export const MetricsAddressError = invalidConfigError('MetricsAddressError');

/**
 * Installs the process's Runtime: logs into `logger`, and metrics on `metricsAddress` when given. Call once, before
 * any connection. Throws MetricsAddressError naming RETRYSAFE_METRICS_ADDRESS when the endpoint cannot be bound.
 */
export function installWorkerRuntime(options: { logger: PinoLogger; level?: LogLevel; metricsAddress?: string }): void {
  try {
    Runtime.install({
      logger: runtimeLogger(options.logger, options.level ?? 'INFO'),
      ...(options.metricsAddress
        ? { telemetryOptions: { metrics: prometheusMetricsExporter(options.metricsAddress) } }
        : {}),
    });
  } catch (err) {
    if (!options.metricsAddress) throw err;
    throw new MetricsAddressError(
      `RETRYSAFE_METRICS_ADDRESS: cannot serve metrics on ${options.metricsAddress}: ${(err as Error).message}`,
    );
  }
}
