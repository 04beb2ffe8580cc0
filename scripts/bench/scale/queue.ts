import { spawn } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { runLoad } from '../stats';
import type { ScaleContext } from './context';
import { DEFAULT_AUTO_APPROVE_BELOW_CENTS } from 'retrysafe';
import { SA_KIND, SA_STATUS, SA_TENANT } from '../../../policies/search-attributes';

const ROOT = path.resolve(__dirname, '..', '..', '..');
/** Claims in flight while the queue is filled: enough to keep the worker busy, few enough not to time out. */
const CLAIM_CONCURRENCY = 16;
/** `ops queue` runs per checkpoint; the median is reported. */
const QUEUE_RUNS = 3;
const VISIBILITY_TIMEOUT_MS = 120_000;

export interface QueuePoint {
  /** Actions awaiting confirmation in the tenant when the queue was read. */
  actions: number;
  /** Median wall time of `ops queue --tenant T --json`, a process of its own as an operator runs it. */
  queueMs: number;
  runsMs: number[];
  /** queueMs less the median over the empty tenant (the process's start and connection): the time spent reading. */
  readMs: number;
  /** Rows the command printed (its default limit). */
  rows: number;
  /** Seconds the claims that filled this step took, and their rate. */
  fillSeconds: number;
  claimsPerSec: number;
}

/**
 * Fills one tenant with `total` actions waiting for a signed confirmation (charges at the confirmation
 * threshold: real action workflows, each in awaiting_confirmation), and times `ops queue` at `steps` points on
 * the way: the command reads every listing before it sorts (visibility lists newest first), so its time is
 * expected to grow with the queue.
 */
export async function measureQueue(ctx: ScaleContext, total: number, steps: number): Promise<QueuePoint[]> {
  const tenant = `scaleq${ctx.tag}`;
  const points: QueuePoint[] = [];
  const query = `${SA_KIND.name} = 'action' AND ${SA_TENANT.name} = '${tenant}' AND ${SA_STATUS.name} = 'awaiting_confirmation'`;
  const timeQueue = async () => {
    const runsMs: number[] = [];
    let rows = 0;
    for (let r = 0; r < QUEUE_RUNS; r++) {
      const run = await opsQueue(ctx, tenant);
      runsMs.push(run.ms);
      rows = run.rows;
    }
    return { runsMs, rows, queueMs: [...runsMs].sort((a, b) => a - b)[Math.floor(QUEUE_RUNS / 2)] };
  };
  const empty = await timeQueue();
  ctx.log(`  ops queue over an empty tenant: ${empty.queueMs} ms (runs ${empty.runsMs.join(', ')} ms)`);
  let claimed = 0;
  for (let step = 1; step <= steps; step++) {
    const target = Math.round((total * step) / steps);
    const count = target - claimed;
    const from = claimed;
    const t0 = performance.now();
    let done = 0;
    const progress = setInterval(() => ctx.log(`    queue: ${from + done} of ${total} actions claimed`), 15_000);
    try {
      await runLoad(count, CLAIM_CONCURRENCY, async (i) => {
        await ctx.retrysafe.claimAction(
          { tenant, eventId: `q-${from + i}` },
          {
            operation: 'charge',
            amountCents: DEFAULT_AUTO_APPROVE_BELOW_CENTS,
            currency: 'usd',
            customerId: 'cus_scale',
            paymentMethod: 'pm_scale',
            merchantReference: `Q-${from + i}`,
          },
          { wait: false },
        );
        done++;
        return 0;
      });
    } finally {
      clearInterval(progress);
    }
    const fillSeconds = (performance.now() - t0) / 1000;
    claimed = target;
    await waitForCount(ctx, query, target);
    const { runsMs, rows, queueMs } = await timeQueue();
    points.push({
      actions: target,
      queueMs,
      runsMs,
      readMs: queueMs - empty.queueMs,
      rows,
      fillSeconds: Math.round(fillSeconds),
      claimsPerSec: Math.round((count / fillSeconds) * 10) / 10,
    });
    ctx.log(`  ops queue over ${target} actions: ${queueMs} ms (runs ${runsMs.join(', ')} ms), ${rows} rows`);
  }
  return points;
}

/** Visibility is eventually consistent: wait until every claimed action is listed as awaiting confirmation. */
async function waitForCount(ctx: ScaleContext, query: string, n: number): Promise<void> {
  const deadline = Date.now() + VISIBILITY_TIMEOUT_MS;
  for (;;) {
    const { count } = await ctx.client.workflow.count(query);
    if (count >= n) return;
    if (Date.now() > deadline)
      throw new Error(`visibility lists ${count} of ${n} actions after ${VISIBILITY_TIMEOUT_MS / 1000} s`);
    await sleep(500);
  }
}

async function opsQueue(ctx: ScaleContext, tenant: string): Promise<{ ms: number; rows: number }> {
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'cli', 'main.ts'), 'ops', 'queue', '--tenant', tenant, '--json'],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: ctx.stack.server.address,
        TEMPORAL_NAMESPACE: ctx.stack.server.namespace,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  const ms = Math.round(performance.now() - t0);
  if (code !== 0) throw new Error(`ops queue exited ${code}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`);
  const parsed = JSON.parse(stdout) as unknown;
  if (!Array.isArray(parsed)) throw new Error(`ops queue --json printed no array: ${stdout.slice(0, 200)}`);
  const rows = parsed.length;
  return { ms, rows };
}
