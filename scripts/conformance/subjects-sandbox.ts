import { startSandboxProvider, type ProviderKind, type SandboxProvider } from '../../examples/sandbox-providers/spawn';
import { exampleTools } from '../../examples/tools';
import type { ConformanceSubject, ProbeInput, SubjectSession } from './types';
import { providerRequest, type AnyTool } from 'retrysafe';

/**
 * The seven example tools on their sandbox providers (examples/sandbox-providers), one provider process per tool.
 * Each provider is started with a read lag of three quarters of what its tool declares, so the probe meets a lag
 * without the provider breaking the declaration. Declines are the sandbox's own (a `decline` fault on the next
 * request); validation errors come from the provider's request schema, which the tool's schema already keeps
 * out, so those inputs are built past the tool's schema.
 */
interface SandboxSpec {
  tool: string;
  kind: ProviderKind;
  /** The provider operation the tool's execute reaches; the decline fault is armed on it. */
  op: string;
  /** The provider's record collection the effects land in, and the input field every record copies. */
  collection: string;
  field: string;
  sample(tag: string, provider: SandboxProvider): Promise<Record<string, unknown>>;
  /** Fields that make the request fail the provider's own validation. */
  invalid: Record<string, unknown>;
  /** The tool sends the action key as the Idempotency-Key header. */
  sendsKey: boolean;
}

const UNUSED = 'http://127.0.0.1:9';

/** Creates a record directly at the provider (the charge a refund refers to), with a key of its own. */
async function create(provider: SandboxProvider, path: string, body: Record<string, unknown>, key: string) {
  const res = await providerRequest({
    baseUrl: provider.url,
    method: 'POST',
    path,
    body,
    idempotencyKey: key,
    timeoutMs: 10_000,
  });
  const id = (res.body as { id?: unknown } | undefined)?.id;
  if (res.status >= 300 || typeof id !== 'string') throw new Error(`POST ${path} answered ${res.status}`);
  return id;
}

const SPECS: readonly SandboxSpec[] = [
  {
    tool: 'charge',
    sendsKey: true,
    kind: 'payments',
    op: 'charges.create',
    collection: 'charges',
    field: 'merchantReference',
    sample: async (tag) => ({
      amountCents: 1250,
      currency: 'usd',
      customerId: 'cus_conformance',
      paymentMethod: 'pm_conformance',
      merchantReference: tag,
    }),
    invalid: { amountCents: 0 },
  },
  {
    tool: 'refund',
    sendsKey: true,
    kind: 'payments',
    op: 'refunds.create',
    collection: 'refunds',
    field: 'merchantReference',
    sample: async (tag, provider) => {
      const charge = { amountCents: 5000, currency: 'usd', customerId: 'cus_conformance', paymentMethod: 'pm_c' };
      const chargeId = await create(provider, '/v1/charges', { ...charge, merchantReference: tag }, `setup-${tag}`);
      return { chargeId, amountCents: 100, merchantReference: tag };
    },
    invalid: { amountCents: 0 },
  },
  {
    tool: 'send-email',
    sendsKey: false,
    kind: 'email',
    op: 'messages.create',
    collection: 'messages',
    field: 'subject',
    sample: async (tag) => ({ to: 'conformance@example.com', subject: `conformance ${tag}`, body: 'A probe.' }),
    invalid: { to: 'not an address' },
  },
  {
    tool: 'create-ticket',
    sendsKey: false,
    kind: 'tickets',
    op: 'tickets.create',
    collection: 'tickets',
    field: 'externalRef',
    sample: async (tag) => ({ externalRef: tag, title: 'A conformance probe', body: 'Nothing to do.' }),
    invalid: { priority: 'urgent' },
  },
  {
    tool: 'reserve',
    sendsKey: true,
    kind: 'inventory',
    op: 'reservations.create',
    collection: 'reservations',
    field: 'orderId',
    sample: async (tag) => ({ sku: 'sku-conformance', quantity: 1, orderId: tag }),
    invalid: { quantity: 0 },
  },
  {
    tool: 'release',
    sendsKey: true,
    kind: 'inventory',
    op: 'releases.create',
    collection: 'releases',
    field: 'reservationId',
    sample: async (tag, provider) => ({
      reservationId: await create(
        provider,
        '/v1/reservations',
        { sku: 'sku-conformance', quantity: 1, orderId: tag },
        `setup-${tag}`,
      ),
    }),
    invalid: { reservationId: '' },
  },
  {
    tool: 'create-shipment',
    sendsKey: false,
    kind: 'shipping',
    op: 'shipments.create',
    collection: 'shipments',
    field: 'shipmentRef',
    sample: async (tag) => ({
      shipmentRef: tag,
      orderId: tag,
      address: { line1: '1 Probe Way', city: 'Testville', postalCode: '00000', country: 'US' },
    }),
    invalid: { orderId: '' },
  },
];

function sandboxSubject(spec: SandboxSpec): ConformanceSubject {
  return {
    tool: spec.tool,
    provider: `sandbox ${spec.kind}`,
    async start(): Promise<SubjectSession> {
      const urls = { payments: UNUSED, email: UNUSED, tickets: UNUSED, inventory: UNUSED, shipping: UNUSED };
      const probeTool = (url: string): AnyTool =>
        exampleTools({ ...urls, [spec.kind]: url }).find((t) => t.name === spec.tool)!;
      const declaredLag = probeTool(UNUSED).readAfterWriteLagMs;
      const provider = await startSandboxProvider(spec.kind, { readLagMs: Math.floor(declaredLag * 0.75) });
      const tool = probeTool(provider.url);
      const sample = async (tag: string): Promise<ProbeInput> => ({ input: await spec.sample(tag, provider) });
      return {
        tool,
        sendsKey: spec.sendsKey,
        sample,
        async effects(_tag, input) {
          const records = (await provider.ledger()).records[spec.collection] ?? [];
          return records.filter((r) => (r as Record<string, unknown>)[spec.field] === input[spec.field]).length;
        },
        async declined(tag) {
          const probe = await sample(tag);
          await provider.setFaults([{ op: spec.op, kind: 'decline', times: 1 }]);
          return probe;
        },
        async invalid(tag) {
          const { input } = await sample(tag);
          return { input: { ...input, ...spec.invalid }, pastSchema: true };
        },
        stop: () => provider.stop(),
      };
    },
  };
}

export const SANDBOX_SUBJECTS: readonly ConformanceSubject[] = SPECS.map(sandboxSubject);
