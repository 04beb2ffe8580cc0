import fc from 'fast-check';
import { ROW_LEASE_MS } from '../../../activities/act-on-record';
import type { ActionLedger } from '../../../ledger';
import { runAct, runSweeper, runWorkflow } from './actors';
import { World, type ActorPlan } from './world';

/**
 * The ledger protocol's model-based test: fast-check draws a list of commands (run acts' executions: a retried
 * attempt, or the act run again with a later workflow task as a local activity is after a crash; action workflow
 * runs and their replays, sweeps, the clock moving past the lease), each actor with the step it dies at and whether
 * the provider's replies to it are lost, and a scheduler that orders every step of every actor. The property, on the
 * ledger and on the key-less provider once every actor has ended:
 *   at most one send reached the provider (it has no key: a second send is a second effect), and
 *   the row says what the provider holds: `planned` or `failed` with no effect, `confirmed` with exactly one;
 *   `dispatching` and `unknown` are the honest answers when a send may have happened.
 */

interface Model {
  acts: number;
  workflowRuns: number;
  /** The last action workflow run launched: the next starts once it has ended (one run per workflow ID at a time). */
  lastWorkflow: Promise<void>;
  /** Runs that died, which a later launch may replay on another worker. */
  deadRuns: string[];
}

type Setup = { model: Model; real: World };
type Command = fc.AsyncCommand<Model, World>;

class LaunchAct implements Command {
  constructor(
    readonly plan: ActorPlan,
    readonly rerun: boolean,
  ) {}
  check = (m: Readonly<Model>) => m.acts < 4;
  async run(m: Model, world: World) {
    m.acts += 1;
    const execution = world.nextExecution(this.rerun);
    const actor = world.actor(`act#${execution.generation}.${execution.attempt}`, this.plan);
    void world.launch(actor, () => runAct(world, actor, execution));
  }
  toString = () => `act(${planText(this.plan)}${this.rerun ? ', with a new workflow task' : ''})`;
}

class LaunchWorkflow implements Command {
  constructor(
    readonly plan: ActorPlan,
    readonly replay: boolean,
  ) {}
  check = (m: Readonly<Model>) => m.workflowRuns < 3;
  async run(m: Model, world: World) {
    m.workflowRuns += 1;
    const n = world.nextWorkflow();
    const actor = world.actor(`workflow#${n}`, this.plan);
    let runId = `r${n}`;
    m.lastWorkflow = world.launch(
      actor,
      () => {
        // A run whose worker died is replayed on another worker (same run ID); otherwise a new run of the ID.
        if (this.replay && m.deadRuns.length > 0) runId = m.deadRuns.pop()!;
        actor.trace.push(`run ${runId}`);
        return runWorkflow(world, actor, runId).catch((err: Error) => {
          if (actor.dead) m.deadRuns.push(runId);
          throw err;
        });
      },
      m.lastWorkflow,
    );
  }
  toString = () => `workflow(${planText(this.plan)}${this.replay ? ', replay' : ''})`;
}

class Sweep implements Command {
  constructor(readonly plan: ActorPlan) {}
  check = () => true;
  async run(_m: Model, world: World) {
    const actor = world.actor('sweeper', this.plan);
    void world.launch(actor, () => runSweeper(world, actor));
  }
  toString = () => `sweep(${planText(this.plan)})`;
}

/** The clock moves past the lease at a moment the scheduler picks, like any actor's step. */
class LeaseRunsOut implements Command {
  check = () => true;
  async run(_m: Model, world: World) {
    const actor = world.actor('clock', { crashAt: undefined, replyLost: false });
    void world.launch(actor, async () => {
      await actor.step('lease runs out');
      world.clock.advance(ROW_LEASE_MS + 1_000);
    });
  }
  toString = () => 'lease runs out';
}

function planText(p: ActorPlan): string {
  return [p.crashAt === undefined ? 'lives' : `dies at step ${p.crashAt}`, ...(p.replyLost ? ['reply lost'] : [])].join(
    ', ',
  );
}

const plan: fc.Arbitrary<ActorPlan> = fc.record({
  crashAt: fc.option(fc.integer({ min: 1, max: 9 }), { nil: undefined, freq: 2 }),
  replyLost: fc.boolean(),
});

export const protocolCommands = fc.commands(
  [
    fc.tuple(plan, fc.boolean()).map(([p, rerun]) => new LaunchAct(p, rerun)),
    fc.tuple(plan, fc.boolean()).map(([p, replay]) => new LaunchWorkflow(p, replay)),
    plan.map((p) => new Sweep(p)),
    fc.constant(new LeaseRunsOut()),
  ],
  { maxCommands: 10 },
);

/** The clock every actor reads (Date.now), moved forward by the model; restored by `restore`. */
export function modelClock() {
  const realNow = Date.now.bind(Date);
  let offsetMs = 0;
  Date.now = () => realNow() + offsetMs;
  return {
    advance(ms: number) {
      offsetMs += ms;
    },
    restore() {
      Date.now = realNow;
    },
  };
}

let runs = 0;

/** One run of the property on `ledger`: a fresh key, the commands played under the scheduler, then the check. */
export async function protocolHolds(
  ledger: ActionLedger,
  clock: { advance(ms: number): void },
  s: fc.Scheduler,
  commands: Iterable<Command>,
): Promise<void> {
  const key = `notify:v1:acme:model-${process.pid}-${++runs}`;
  const world = new World(ledger, s, key, clock);
  const setup = (): Setup => ({
    model: { acts: 0, workflowRuns: 0, lastWorkflow: Promise.resolve(), deadRuns: [] },
    real: world,
  });
  // The commands launch their actors, each waiting at its first step; the scheduler then orders every step.
  await fc.asyncModelRun(setup, commands);
  await world.playOut();
  const row = await ledger.get(key);
  const effects = world.provider.effects.length;
  const status = row?.status ?? 'none';
  const problems: string[] = [];
  if (effects > 1) problems.push(`${effects} sends reached a key-less provider`);
  if ((status === 'none' || status === 'planned' || status === 'failed') && effects !== 0) {
    problems.push(`the row says ${status}, the provider holds ${effects} effect(s)`);
  }
  if (status === 'confirmed' && effects !== 1) problems.push(`the row says confirmed, the provider holds ${effects}`);
  if (problems.length > 0) {
    const audit = row
      ? (await ledger.audit(key)).map((e) => `${e.seq}:${e.status} by ${e.by ?? '?'} (${e.reason})`)
      : [];
    throw new Error(
      [
        ...problems,
        `row: ${JSON.stringify(row && { status: row.status, seq: row.seq, holder: row.holder, epoch: row.epoch })}`,
        `audit: ${audit.join(' | ')}`,
        `effects by: ${world.provider.effects.map((e) => e.by).join(', ')}`,
        ...world.actors.map((a) => `${a.name}: ${a.trace.join(' → ')}`),
      ].join('\n'),
    );
  }
}

/** How many runs and which seed: RETRYSAFE_LEDGER_PROTOCOL_RUNS and RETRYSAFE_LEDGER_PROTOCOL_SEED, else `runs`. */
export function protocolRunOptions(defaultRuns: number): { numRuns: number; seed: number } {
  const runs = Number(process.env.RETRYSAFE_LEDGER_PROTOCOL_RUNS ?? defaultRuns);
  const seedText = process.env.RETRYSAFE_LEDGER_PROTOCOL_SEED;
  const seed = seedText !== undefined ? Number(seedText) : (Date.now() ^ (Math.random() * 0x100000000)) | 0;
  if (!Number.isSafeInteger(runs) || runs < 1) throw new Error(`RETRYSAFE_LEDGER_PROTOCOL_RUNS=${runs} is no count`);
  if (!Number.isSafeInteger(seed)) throw new Error(`RETRYSAFE_LEDGER_PROTOCOL_SEED=${seedText} is no integer`);
  return { numRuns: runs, seed };
}

/** Asserts the protocol's property for `numRuns` runs from `seed`; a failure names the seed that replays it. */
export async function assertProtocol(
  backend: string,
  ledger: ActionLedger,
  options: { numRuns: number; seed: number },
): Promise<{ ms: number }> {
  const clock = modelClock();
  const started = performance.now();
  try {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), protocolCommands, (s, commands) => protocolHolds(ledger, clock, s, commands)),
      { numRuns: options.numRuns, seed: options.seed, includeErrorInReport: true },
    );
  } catch (err) {
    throw new Error(
      `the ledger protocol failed on ${backend} (replay: RETRYSAFE_LEDGER_PROTOCOL_SEED=${options.seed} ` +
        `RETRYSAFE_LEDGER_PROTOCOL_RUNS=${options.numRuns}):\n${(err as Error).message}`,
    );
  } finally {
    clock.restore();
  }
  return { ms: performance.now() - started };
}
