/**
 * The bench's peers: other durable-execution systems running the same keyed side effects as retrysafe,
 * against the same sandbox providers, with the same key derivation (policies/action-key.ts) and the same
 * requests on the wire (the example tools' own execute functions, called with that key).
 *
 * A peer is a server (or a database) plus a service process of its own; the bench process only calls it.
 * The service process can be started with a crash spec (RETRYSAFE_CRASH_AT, activities/crash-points.ts),
 * so that it SIGKILLs itself at the same points as retrysafe's worker, and restarted without one.
 */

/** Base URLs of the sandbox providers the peer's service calls (examples/sandbox-providers). */
export interface PeerProviderUrls {
  payments: string;
  email: string;
  tickets: string;
  inventory: string;
  shipping: string;
}

export interface PeerStartOptions {
  providers: PeerProviderUrls;
  /** A throw-away folder the peer may keep its server's data and logs in; the bench deletes it. */
  workDir: string;
  log(line: string): void;
}

/** One keyed charge, as the bench's retrysafe-action leg proposes it. */
export interface PeerChargeInput {
  tenant: string;
  eventId: string;
  customerId: string;
  paymentMethod: string;
  amountCents: number;
  currency: string;
  orderId: string;
}

/** The renewal's three side effects in order: reserve → charge → create shipment. */
export interface PeerRenewalInput extends PeerChargeInput {
  sku: string;
  quantity: number;
  shipTo: { line1: string; city: string; postalCode: string; country: string };
}

export interface PeerRenewalResult {
  reservationId: string;
  chargeId: string;
  shipmentId: string;
}

/** What the crash scenario sends once per iteration: through a key-less provider, or a lagging lookup one. */
export type PeerCrashTarget = 'send-email' | 'create-ticket';

export interface PeerCrashInput {
  tenant: string;
  eventId: string;
  target: PeerCrashTarget;
}

export interface PeerSystem {
  /** 'restate' or 'dbos'. */
  readonly name: string;
  /** The versions of server and SDK that ran, for the report. */
  readonly version: string;
  /** Resolves with the charge's provider reference once the peer has recorded the step's result. */
  charge(input: PeerChargeInput): Promise<{ chargeId: string }>;
  renewal(input: PeerRenewalInput): Promise<PeerRenewalResult>;
  /**
   * One iteration of the SIGKILL-after-commit scenario: restarts the service process with
   * RETRYSAFE_CRASH_AT=after-commit:<target>, starts the durable step, waits until that process has died
   * (SIGKILL, by itself, after the provider committed), restarts the service without a crash spec, and
   * resolves once the peer reports the step finished. The caller counts the effects at the provider.
   */
  crashAfterCommit(input: PeerCrashInput): Promise<void>;
  /** Stops the service and the server and removes what they kept. */
  stop(): Promise<void>;
}

export type StartPeer = (opts: PeerStartOptions) => Promise<PeerSystem>;
