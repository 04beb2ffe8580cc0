import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';

import { connect, rpc } from '@restatedev/restate-sdk-clients';

import { getFreePort } from '../../../../cli/dev/free-port';
import type {
  PeerChargeInput,
  PeerCrashInput,
  PeerRenewalInput,
  PeerRenewalResult,
  PeerStartOptions,
  PeerSystem,
  StartPeer,
} from '../types';
import { registerDeployment } from './deployment';
import { WORKFLOW_NAMES, type ChargeWorkflow, type CrashStepWorkflow, type RenewalWorkflow } from './handlers';
import { startRestateServer } from './server';
import { startServiceProcess, type ServiceExit, type ServiceProcess } from './service-process';
import { actionKeyFor, crashIntent } from '../intents';
import { runWorkflowId } from 'retrysafe';

/** One crash iteration's service process, as it ended. */
export interface RestateCrash {
  pid: number;
  crashAt: string;
  exit: ServiceExit;
}

export interface RestatePeer extends PeerSystem {
  /** Every crash iteration's service process and how it died (SIGKILL, by itself, is the expected end). */
  readonly crashes: readonly RestateCrash[];
}

const HOST = '127.0.0.1';
/** How long the crash-spec'd service may take to reach its crash point after the step was submitted. */
const CRASH_WAIT_MS = 30_000;
/**
 * A bound on waiting for a workflow's output, so a stuck invocation fails the bench instead of hanging it.
 * Restate's default retry policy backs off exponentially up to a minute between attempts.
 */
const ATTACH_TIMEOUT_MS = 120_000;

/**
 * Restate as a bench peer: a throw-away restate-server (server.ts), the peer's workflows in a service process
 * of their own (service.ts), registered once through the admin API, and called through the ingress with the
 * typed clients. The service keeps one port for its life, restarts included: Restate pins an invocation to
 * the deployment (URI) it started on, so a retry after a crash must find the endpoint at the same address.
 *
 * Calls may overlap, except crashAfterCommit: it replaces the service process, which would fail (and make
 * Restate retry) whatever else was running on it.
 */
async function start(opts: PeerStartOptions): Promise<RestatePeer> {
  const dir = path.join(opts.workDir, 'restate');
  await mkdir(dir, { recursive: true });
  const server = await startRestateServer({ dir, log: opts.log });
  let service: ServiceProcess | undefined;
  const crashes: RestateCrash[] = [];
  try {
    const port = await getFreePort(HOST);
    const serviceUri = `http://${HOST}:${port}`;
    const logFile = path.join(dir, 'service.log');
    const startService = (crashAt?: string) =>
      startServiceProcess({ port, providers: opts.providers, logFile, ...(crashAt ? { crashAt } : {}) });

    service = await startService();
    const deployment = await registerDeployment(server.adminUrl, serviceUri);
    opts.log(`restate deployment ${deployment.id} at ${serviceUri}: ${deployment.services.join(', ')}`);

    const ingress = connect({ url: server.ingressUrl });
    const attachOpts = <O>() => rpc.opts<void, O>({ timeout: ATTACH_TIMEOUT_MS });
    const chargeOf = (key: string) => ingress.workflowClient<ChargeWorkflow>({ name: WORKFLOW_NAMES.charge }, key);
    const renewalOf = (key: string) => ingress.workflowClient<RenewalWorkflow>({ name: WORKFLOW_NAMES.renewal }, key);
    const crashStepOf = (key: string) =>
      ingress.workflowClient<CrashStepWorkflow>({ name: WORKFLOW_NAMES.crashStep }, key);

    return {
      name: 'restate',
      version: `restate-server ${server.version}, @restatedev/restate-sdk ${packageVersion('@restatedev/restate-sdk')}`,
      crashes,

      async charge(input: PeerChargeInput) {
        // Keyed by the action key: a second submission for the same event is PreviouslyAccepted, and attaching
        // answers the first run's journaled result.
        const workflow = chargeOf(actionKeyFor(input, 'charge'));
        await workflow.workflowSubmit(input);
        return workflow.workflowAttach(attachOpts());
      },

      async renewal(input: PeerRenewalInput): Promise<PeerRenewalResult> {
        // Keyed by the run ID, from which every step's action key derives.
        const workflow = renewalOf(runWorkflowId(input.tenant, input.eventId));
        await workflow.workflowSubmit(input);
        return workflow.workflowAttach(attachOpts());
      },

      async crashAfterCommit(input: PeerCrashInput) {
        const crashAt = `after-commit:${input.target}`;
        await service?.stop();
        service = undefined;
        const crashing = await startService(crashAt);
        service = crashing;
        const workflow = crashStepOf(actionKeyFor(input, crashIntent(input).operation));
        let exit: ServiceExit;
        try {
          await workflow.workflowSubmit(input);
          exit = await within(crashing.exited, CRASH_WAIT_MS, `the service (${crashAt}) did not die`);
        } finally {
          // Never leave the crash-spec'd process serving, whether it died or not. Same port, same URI: the
          // deployment registered at start still names it, so nothing is re-registered.
          await crashing.stop();
          service = await startService();
        }
        crashes.push({ pid: crashing.pid, crashAt, exit });
        opts.log(`restate service ${crashing.pid} (${crashAt}) exited by ${exit.signal ?? `code ${exit.code}`}`);
        if (exit.signal !== 'SIGKILL') {
          throw new Error(`the service (${crashAt}) ended by ${exit.signal ?? `code ${exit.code}`}, not SIGKILL`);
        }
        // Restate retries the interrupted invocation on the restarted service; this waits for its output.
        await workflow.workflowAttach(attachOpts());
      },

      async stop() {
        await service?.stop();
        await server.stop();
      },
    };
  } catch (err) {
    await service?.stop();
    await server.stop();
    throw err;
  }
}

export const startRestatePeer = start satisfies StartPeer;

function packageVersion(name: string): string {
  return (JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as { version: string }).version;
}

async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
