import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';

import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';

import { ExampleClient } from '../../examples/client';
import { exampleRegistry } from '../../examples/tools';
import { startStack, type Stack } from '../../scripts/lib/stack';
import { startTracing, type Tracing } from '../../tracing/start-tracing';
import { retrysafePlugin } from '../../workers/plugin';
import { ticketIntent } from '../support/intents';
import { renewalInput, uniqueEvent } from '../support/renewal-input';
import { waitForStatus, waitUntil } from '../support/wait';

/**
 * One claim, one trace: a client and a worker with the tracing of tracing/start-tracing.ts (Temporal's interceptors,
 * OpenTelemetry's SDK with an in-memory exporter) against a real dev server and the sandbox tickets provider in its
 * own process. Every span of the claim is in one trace whose root is the client's call; the provider request's span
 * descends from it through the action workflow and the executor activity; and the provider received a `traceparent`
 * naming that trace and that span.
 */

let spans = new InMemorySpanExporter();
let tracing: Tracing;
let stack: Stack;
let nativeConnection: NativeConnection;
let clientConnection: Connection;
let worker: Worker;
let running: Promise<void>;
let retrysafe: ExampleClient;
let tools: ReturnType<typeof exampleRegistry>;
const taskQueue = `tracing-${process.pid}`;

/**
 * Claims a ticket through `rs` and checks its trace: one provider request span, chained up to the client's call with
 * every parent exported; nothing of the claim outside that trace; the provider's traceparent naming that span.
 * Returns the chain, provider request first.
 */
async function claimTraced(rs: ExampleClient, eventPrefix: string): Promise<ReadableSpan[]> {
  spans.reset();
  const eventId = uniqueEvent(eventPrefix);
  // A ticket: no approval, no compensation, so its workflow ends once it is confirmed (and its spans with it).
  const intent = ticketIntent(eventId);
  const claimed = await rs.claimAction({ tenant: 'acme', eventId }, intent);
  await waitForStatus(rs, claimed.key, 'confirmed', { timeoutMs: 30_000 });
  // Workflow spans (workflowSpans) leave through a sink as its tasks complete: wait for the last one.
  await rs.client.workflow.getHandle(claimed.key).result();
  await tracing.flush();

  const all = spans.getFinishedSpans();
  const send = all.filter((s) => s.name === 'retrysafe.provider.send');
  assert.equal(send.length, 1, `one provider request span, among ${all.map((s) => s.name).join(', ')}`);
  const providerSpan = send[0]!;
  assert.equal(providerSpan.attributes['retrysafe.tool'], 'create-ticket');
  assert.equal(providerSpan.attributes['retrysafe.outcome'], 'committed');
  const traceId = providerSpan.spanContext().traceId;

  // Up from the provider request to the root: every parent is a span of this trace that was exported. (Span ids
  // are only unique within a trace: a workflow makes its spans' ids from its deterministic random numbers.)
  const id = (traceOf: string, spanId: string) => `${traceOf}/${spanId}`;
  const byId = new Map(all.map((s) => [id(s.spanContext().traceId, s.spanContext().spanId), s]));
  const chain: ReadableSpan[] = [providerSpan];
  for (let s = providerSpan; s.parentSpanId !== undefined;) {
    const parent = byId.get(id(traceId, s.parentSpanId));
    assert.ok(parent, `the parent ${s.parentSpanId} of ${s.name} was exported (chain: ${names(chain)})`);
    chain.push(parent);
    s = parent;
  }
  assert.equal(
    chain.at(-1)!.name,
    'UpdateWithStartWorkflow:retrysafe.claim',
    `the root is the client's call (${names(chain)})`,
  );
  assert.ok(
    chain.some((s) => isExecutor(s.name, 'RunActivity')),
    `the executor's activity is on the way (${names(chain)})`,
  );
  // Everything the claim set off is in its trace. The test's own status reads (queries, describes) have theirs, and
  // so has the provider's webhook, which the webhook router (another process, not traced here) delivers.
  const reads = /^(QueryWorkflow|HandleQuery|DescribeWorkflow|HandleSignal:retrysafe\.providerEvent)/;
  const strays = all.filter((s) => !reads.test(s.name) && s.spanContext().traceId !== traceId);
  assert.deepEqual(
    strays.map((s) => s.name),
    [],
    'no span of the claim outside its trace',
  );

  // The provider got the request span's context in W3C form.
  const requests = (await stack.providers.tickets.ledger()).requests.filter((r) => r.reference === intent.externalRef);
  assert.equal(requests.length, 1, 'one request to the provider');
  assert.equal(requests[0]!.traceparent, `00-${traceId}-${providerSpan.spanContext().spanId}-01`);
  return chain;
}

/**
 * The executor's span: `executeAction`.
 */
function isExecutor(name: string, kind: 'RunActivity' | 'StartActivity'): boolean {
  return name === `${kind}:executeAction`;
}

describe('tracing an action from the client to the provider', () => {
  before(async () => {
    tracing = startTracing({ serviceName: 'retrysafe-test', spanProcessor: new SimpleSpanProcessor(spans) });
    stack = await startStack({ providerKinds: ['tickets', 'payments', 'inventory', 'shipping'] });
    nativeConnection = await NativeConnection.connect({ address: stack.server.address });
    tools = exampleRegistry({
      tickets: stack.providers.tickets.url,
      payments: stack.providers.payments.url,
      inventory: stack.providers.inventory.url,
      shipping: stack.providers.shipping.url,
    });
    worker = await Worker.create({
      connection: nativeConnection,
      namespace: stack.server.namespace,
      taskQueue,
      workflowsPath: require.resolve('../../examples/workflows'),
      // Tracing first: retrysafe's own client (a run's claims) takes the worker's client interceptors.
      plugins: [tracing.plugin, retrysafePlugin({ tools, ledger: stack.ledger })],
    });
    running = worker.run();
    clientConnection = await Connection.connect({ address: stack.server.address });
    const client = new Client({
      connection: clientConnection,
      namespace: stack.server.namespace,
      plugins: [tracing.plugin],
    });
    retrysafe = new ExampleClient(client, { taskQueue, tools });
  });

  after(async () => {
    worker?.shutdown();
    await running;
    await nativeConnection?.close();
    await clientConnection?.close();
    await stack?.stop();
    await tracing?.shutdown();
  });

  it('yields one connected trace from the claim to the provider request, which carries its traceparent', async () => {
    const chain = await claimTraced(retrysafe, 'traced');
    // By default the workflows only carry the context: no spans are made in the sandbox.
    assert.deepEqual(
      names(chain),
      'retrysafe.provider.send ← RunActivity:executeAction ← UpdateWithStartWorkflow:retrysafe.claim',
    );
  });

  it("continues a run's trace into the actions it claims, through the worker's own client", async () => {
    spans.reset();
    const eventId = uniqueEvent('traced-run');
    const run = await retrysafe.startRenewal(renewalInput(eventId));
    assert.equal(((await run.result()) as { status: string }).status, 'renewed');
    await tracing.flush();

    const all = spans.getFinishedSpans();
    const runSpan = all.find((s) => s.name === 'StartWorkflow:renewalWorkflow');
    assert.ok(runSpan, `the run's start, among ${[...new Set(all.map((s) => s.name))].join(', ')}`);
    const traceId = runSpan.spanContext().traceId;
    const sends = all.filter((s) => s.name === 'retrysafe.provider.send');
    assert.deepEqual(
      sends.map((s) => s.attributes['retrysafe.tool']).sort(),
      ['charge', 'create-shipment', 'reserve'],
      'one provider request per step',
    );
    for (const send of sends) {
      assert.equal(
        send.spanContext().traceId,
        traceId,
        `${String(send.attributes['retrysafe.tool'])} in the run's trace`,
      );
    }
    // The run acted on each action's ledger row in its own workflow task (a local activity), inside the run's trace.
    assert.ok(
      all.some((s) => s.name === 'RunActivity:prepareAndAct' && s.spanContext().traceId === traceId),
      "the run's acts are activity spans of its trace",
    );
  });

  it("exports a worker process's spans over OTLP with RETRYSAFE_TRACING=otlp", async () => {
    // A worker as `workerMain` runs it (examples/worker.ts), on the stack's own queue, exporting to this test.
    const received: string[] = [];
    const collector = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push(body);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const { port } = collector.address() as AddressInfo;
    const worker = await stack.startWorker({
      name: 'otlp',
      env: {
        RETRYSAFE_TRACING: 'otlp',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `http://127.0.0.1:${port}/v1/traces`,
        OTEL_SERVICE_NAME: 'otlp-test-worker',
        OTEL_BSP_SCHEDULE_DELAY: '200',
      },
    });
    try {
      const eventId = uniqueEvent('otlp');
      const intent = ticketIntent(eventId);
      const claimed = await stack.retrysafe.claimAction({ tenant: 'acme', eventId }, intent);
      await waitForStatus(stack.retrysafe, claimed.key, 'confirmed', { timeoutMs: 30_000 });
      const request = (await stack.providers.tickets.ledger()).requests.find((r) => r.reference === intent.externalRef);
      const [, traceId, spanId] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(request?.traceparent ?? '') ?? [];
      assert.ok(traceId, `the provider got a traceparent (${request?.traceparent})`);
      await waitUntil(
        'the worker exported the provider request span',
        async () => received.some((b) => b.includes(spanId!)),
        20_000,
      );
      const exported = received.map((b) => JSON.parse(b) as OtlpExport);
      const providerSpan = spansOf(received).find((sp) => sp.spanId === spanId);
      assert.equal(providerSpan?.name, 'retrysafe.provider.send');
      assert.equal(providerSpan?.traceId, traceId);
      // The executor's activity span, parent of the request span, came from the same worker, in the same trace.
      const activity = spansOf(received).find((sp) => isExecutor(sp.name, 'RunActivity') && sp.traceId === traceId);
      assert.ok(activity, "the executor activity span, in the claim's trace");
      assert.ok(
        exported.some((e) =>
          e.resourceSpans.some((r) =>
            r.resource.attributes.some((a) => a.key === 'service.name' && a.value.stringValue === 'otlp-test-worker'),
          ),
        ),
        'named after OTEL_SERVICE_NAME',
      );
    } finally {
      await worker.kill('SIGKILL');
      await new Promise<void>((resolve) => collector.close(() => resolve()));
    }
  });

  it("adds the workflows' own spans with workflowSpans, still one trace", async () => {
    // Last: it replaces this process's tracing with one that makes spans in the workflows.
    await tracing.shutdown(); // which stops its exporter too
    spans = new InMemorySpanExporter();
    tracing = startTracing({
      serviceName: 'retrysafe-test',
      spanProcessor: new SimpleSpanProcessor(spans),
      workflowSpans: true,
    });
    const queue = `${taskQueue}-workflow-spans`;
    const spansWorker = await Worker.create({
      connection: nativeConnection,
      namespace: stack.server.namespace,
      taskQueue: queue,
      plugins: [tracing.plugin, retrysafePlugin({ tools, ledger: stack.ledger })],
    });
    const spansRunning = spansWorker.run();
    try {
      const client = new Client({
        connection: clientConnection,
        namespace: stack.server.namespace,
        plugins: [tracing.plugin],
      });
      const chain = await claimTraced(new ExampleClient(client, { taskQueue: queue, tools }), 'traced-spans');
      assert.ok(
        chain.some((s) => s.name === 'RunWorkflow:actionWorkflowV3'),
        `the action workflow's span is on the way (${names(chain)})`,
      );
      assert.ok(
        chain.some((s) => isExecutor(s.name, 'StartActivity')),
        names(chain),
      );
    } finally {
      spansWorker.shutdown();
      await spansRunning;
    }
  });
});

/** What OTLP/HTTP's JSON encoding carries, as far as the test reads it. */
interface OtlpExport {
  resourceSpans: Array<{
    resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> };
    scopeSpans: Array<{ spans: Array<{ name: string; traceId: string; spanId: string }> }>;
  }>;
}

/** Every span of the OTLP/HTTP JSON bodies received. */
function spansOf(bodies: readonly string[]) {
  return bodies
    .map((b) => JSON.parse(b) as OtlpExport)
    .flatMap((e) => e.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((sc) => sc.spans)));
}

function names(chain: readonly ReadableSpan[]): string {
  return chain.map((s) => s.name).join(' ← ');
}
