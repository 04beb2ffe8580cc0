/**
 * What a retrysafe worker counts, on the Temporal Runtime's own metric meter: one Prometheus (or OpenTelemetry)
 * endpoint carries Temporal's worker metrics and these side by side. Labels are small closed sets (tool names,
 * tenants, statuses, outcome and reason codes): never an action key, an amount, a recipient or anything else of an
 * action's payload, which would make a series per action and copy payload data into the monitoring system.
 *
 *   retrysafe_actions_open{tool,tenant,status}                 gauge      unsettled actions, read from the ledger
 *   retrysafe_action_oldest_age_seconds{tool,tenant,status}     gauge      since the oldest of them was claimed
 *   retrysafe_action_status_changes_total{tool,tenant,status}   counter    statuses entered, once each (the ledger's)
 *   retrysafe_escalation_window_seconds{tenant}                 gauge      how long an action may stay unresolved
 *   retrysafe_ledger_alarms{kind}                               gauge      ledger writes refused as disagreeing
 *   retrysafe_executor_attempts_total{tool}                     counter    executor activity attempts
 *   retrysafe_provider_requests_total{tool,kind,outcome}        counter    sends and lookups, by their answer
 *   retrysafe_provider_request_seconds{tool,kind,outcome}       histogram  their latency
 *   retrysafe_action_sends{tool}                                histogram  requests sent per dispatch
 *   retrysafe_ledger_write_seconds{op}                          histogram  ledger write latency
 *
 * Status changes are counted where the ledger records them, so each entered status counts once however often its
 * workflow task or local activity ran. The workflows count decisions and ceilings on the workflow's own meter
 * (workflows/workflow-metrics.ts; not during replay, but again when a failed workflow task is retried), with the
 * SDK's namespace, taskQueue and workflowType labels added:
 *
 *   retrysafe_decisions_total{decision,result,reason}           counter    signed decisions applied or refused
 *   retrysafe_ceilings_hit_total{ceiling}                       counter    agent runs paused by a ceiling
 */
import type { MetricCounter, MetricGauge, MetricHistogram, MetricMeter, MetricTags } from '@temporalio/common';

/** Histogram buckets for retrysafe's histograms, for `telemetryOptions.metrics.prometheus.histogramBucketOverrides`. */
export const RETRYSAFE_HISTOGRAM_BUCKETS: Readonly<Record<string, number[]>> = {
  retrysafe_provider_request_seconds: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  retrysafe_ledger_write_seconds: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
  retrysafe_action_sends: [0, 1, 2, 3, 4, 5, 10],
};

/** What a provider request answered, in the executor's words (sends) or the lookup's (lookups). */
export type ProviderRequestOutcome =
  'committed' | 'not-committed' | 'ambiguous' | 'rejected' | 'found' | 'not-found' | 'failed';

/** The instruments retrysafe records on; `noRetrysafeMetrics` records nothing. */
export interface RetrysafeMetrics {
  /** One request to a provider answered (or failed) after `seconds`. */
  providerRequest(tool: string, kind: 'send' | 'lookup', outcome: ProviderRequestOutcome, seconds: number): void;
  /** An executor activity attempt began. */
  executorAttempt(tool: string): void;
  /** A dispatch ended having sent `sends` requests over all its attempts. */
  dispatchSends(tool: string, sends: number): void;
  /** A ledger write took `seconds`. */
  ledgerWrite(op: 'claim' | 'status' | 'takeover', seconds: number): void;
  /** An action entered `status` (counted once: when the ledger recorded the entry, not when a write repeated it). */
  statusChange(tool: string, tenant: string, status: string): void;
  /** The gauges the ledger poller sets. */
  readonly gauges: {
    actionsOpen: MetricGauge;
    oldestAgeSeconds: MetricGauge;
    escalationWindowSeconds: MetricGauge;
    ledgerAlarms: MetricGauge;
  };
}

/** The instruments on `meter` (`Runtime.instance().metricMeter` in a worker process). */
export function createRetrysafeMetrics(meter: MetricMeter): RetrysafeMetrics {
  const counter = (name: string, description: string): MetricCounter =>
    meter.createCounter(name, undefined, description);
  const histogram = (name: string, unit: string | undefined, description: string): MetricHistogram =>
    meter.createHistogram(name, 'float', unit, description);
  const gauge = (name: string, valueType: 'int' | 'float', description: string): MetricGauge =>
    meter.createGauge(name, valueType, undefined, description);

  const requests = counter('retrysafe_provider_requests_total', 'Requests to providers (sends and lookups), by answer');
  const requestSeconds = histogram(
    'retrysafe_provider_request_seconds',
    's',
    'Latency of requests to providers, by tool, kind and answer',
  );
  const attempts = counter('retrysafe_executor_attempts_total', 'Executor activity attempts, by tool');
  const sends = histogram('retrysafe_action_sends', undefined, 'Requests sent to the provider per dispatch, by tool');
  const statusChanges = counter(
    'retrysafe_action_status_changes_total',
    'Action statuses entered, by tool, tenant and status (once each, as the ledger records them)',
  );
  const ledgerSeconds = histogram('retrysafe_ledger_write_seconds', 's', 'Latency of ledger writes, by operation');
  return {
    providerRequest: (tool, kind, outcome, seconds) => {
      const tags = { tool: label(tool), kind, outcome: label(outcome) };
      requests.add(1, tags);
      requestSeconds.record(Math.max(0, seconds), tags);
    },
    executorAttempt: (tool) => attempts.add(1, { tool: label(tool) }),
    dispatchSends: (tool, n) => sends.record(n, { tool: label(tool) }),
    ledgerWrite: (op, seconds) => ledgerSeconds.record(Math.max(0, seconds), { op }),
    statusChange: (tool, tenant, status) =>
      statusChanges.add(1, { tool: label(tool), tenant: label(tenant), status: label(status) }),
    gauges: {
      actionsOpen: gauge(
        'retrysafe_actions_open',
        'int',
        'Unsettled actions in the ledger, by tool, tenant and status',
      ),
      oldestAgeSeconds: gauge(
        'retrysafe_action_oldest_age_seconds',
        'float',
        'Seconds since the oldest unsettled action in each status was claimed, by tool, tenant and status',
      ),
      escalationWindowSeconds: gauge(
        'retrysafe_escalation_window_seconds',
        'float',
        'How long an action of the tenant may stay unresolved before someone is paged',
      ),
      ledgerAlarms: gauge(
        'retrysafe_ledger_alarms',
        'int',
        'Ledger writes refused because they disagreed with the row',
      ),
    },
  };
}

const noop = { add() {}, record() {}, set() {} } as unknown as MetricCounter & MetricHistogram & MetricGauge;

/** Records nothing: for activities built without a worker's meter (unit tests, replay). */
export const noRetrysafeMetrics: RetrysafeMetrics = {
  providerRequest: () => undefined,
  executorAttempt: () => undefined,
  dispatchSends: () => undefined,
  ledgerWrite: () => undefined,
  statusChange: () => undefined,
  gauges: { actionsOpen: noop, oldestAgeSeconds: noop, escalationWindowSeconds: noop, ledgerAlarms: noop },
};

/**
 * A label value as it is exported: tool names, tenants and statuses are short identifiers already; anything longer
 * or odder is cut to 64 characters of `[A-Za-z0-9_.:-]`, so that a bad value cannot carry payload into a label.
 */
export function label(value: string): string {
  return value.replace(/[^A-Za-z0-9_.:-]/g, '_').slice(0, 64);
}

/** Seconds elapsed since `startMs` by `now`. */
export function secondsSince(startMs: number, now: () => number = Date.now): number {
  return (now() - startMs) / 1000;
}

export type { MetricTags };
