import { setTimeout as sleep } from 'node:timers/promises';

import type { TemporalCluster } from '../lib/temporal-cluster';
import type { ClusterFaultPlan, ClusterFaultRecord } from './types';

/**
 * Kills and restarts the cluster's services and database for `--target cluster`. A kill takes the whole cluster
 * down for everyone, so kills are done one at a time: an iteration whose point comes while another iteration's
 * kill is still recovering waits for the cluster to serve again, and its record says how late the kill came.
 */
export class ClusterFaults {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly cluster: TemporalCluster) {}

  /** Kills the target now (or once the kill ahead of it has recovered), restarts it, and waits until serving. */
  inflict(plan: ClusterFaultPlan, workStartedAtMs: number): Promise<ClusterFaultRecord> {
    const run = this.queue.then(() => this.killAndRestart(plan, workStartedAtMs));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async killAndRestart(plan: ClusterFaultPlan, workStartedAtMs: number): Promise<ClusterFaultRecord> {
    const record: ClusterFaultRecord = {
      target: plan.target,
      spareWorker: plan.spareWorker,
      signal: null,
      atMs: Date.now() - workStartedAtMs,
      downMs: plan.downMs,
      recoveryMs: 0,
    };
    try {
      if (plan.target === 'postgres') {
        // Timed like a service: from the start of the new postmaster (its crash recovery included) until serving.
        await this.cluster.postgres.kill();
        await sleep(plan.downMs);
        const restarted = Date.now();
        await this.cluster.postgres.start();
        await this.cluster.waitUntilServing();
        record.recoveryMs = Date.now() - restarted;
      } else {
        record.signal = await this.cluster.kill(plan.target, 'SIGKILL');
        await sleep(plan.downMs);
        const restarted = Date.now();
        await this.cluster.startService(plan.target);
        record.recoveryMs = Date.now() - restarted;
      }
    } catch (err) {
      record.error = (err as Error).message;
    }
    return record;
  }
}
