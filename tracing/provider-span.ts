/**
 * One span per request to a provider, child of the executor activity's span (Temporal's OpenTelemetry interceptors
 * make that one), active while the request is made: the HTTP transport puts its context in the `traceparent` header
 * (transport/http.ts), so the provider's own traces join the action's. Through `@opentelemetry/api` alone,
 * which does nothing until the process installs an OpenTelemetry SDK (tracing/start-tracing.ts).
 *
 * Attributes are the tool, the kind of request and the answer, as in the metrics: never the action key's payload, an
 * amount or a recipient.
 */
import { SpanStatusCode, trace, type Span } from '@opentelemetry/api';

const tracer = () => trace.getTracer('retrysafe');

/** Runs `request` inside a `retrysafe.provider.<kind>` span; `outcomeOf` names its answer (committed, found…). */
export async function withProviderSpan<T>(
  tool: string,
  kind: 'send' | 'lookup',
  request: () => Promise<T>,
  outcomeOf: (result: T) => string,
): Promise<T> {
  return tracer().startActiveSpan(
    `retrysafe.provider.${kind}`,
    { attributes: { 'retrysafe.tool': tool, 'retrysafe.request_kind': kind } },
    async (span: Span) => {
      try {
        const result = await request();
        const outcome = outcomeOf(result);
        span.setAttribute('retrysafe.outcome', outcome);
        if (outcome === 'ambiguous' || outcome === 'rejected')
          span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
        return result;
      } catch (err) {
        span.setAttribute('retrysafe.outcome', 'failed');
        span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
        throw err;
      } finally {
        span.end();
      }
    },
  );
}
