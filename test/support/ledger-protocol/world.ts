import type fc from 'fast-check';
import type { LedgerClaim } from '../../../activities/record-ledger';
import type { ActionLedger } from '../../../ledger';

/**
 * The world one run of the ledger protocol's model plays in: one action key on a real ledger, a key-less provider
 * that counts what reached it, a clock the run moves forward past leases, and the actors (run acts, action
 * workflows, sweepers) whose every ledger call and send waits for the scheduler, so fast-check chooses the order
 * of all their steps and the step at which each one dies.
 */

/** Thrown at an actor's step once it has died: nothing of that step or after it happens. */
export class Crash extends Error {
  override readonly name = 'Crash';
}

/** A provider with no idempotency key and no lookup: every send that reaches it is one more business effect. */
export interface KeylessProvider {
  effects: Array<{ by: string }>;
}

export interface ActorPlan {
  /** The step (1-based) at which the actor dies before doing it; undefined: it runs to its end. */
  crashAt: number | undefined;
  /** Whether the provider's replies to this actor's sends are lost after it committed (a reset, a timeout). */
  replyLost: boolean;
}

/** One actor's view: its steps go through the scheduler, and die at `crashAt`. */
export class Actor {
  private steps = 0;
  dead = false;
  /** Started, released by the scheduler and not yet at its next step (awaiting the database, say). */
  running = false;
  ended = false;
  readonly trace: string[] = [];

  constructor(
    readonly name: string,
    readonly plan: ActorPlan,
    private readonly world: World,
  ) {}

  /** Waits for the scheduler to let this step happen, then dies here or goes on. */
  async step(label: string): Promise<void> {
    if (this.dead) throw new Crash(`${this.name} is dead`);
    this.running = false;
    await this.world.scheduler.schedule(Promise.resolve(label), `${this.name}: ${label}`);
    this.running = true;
    this.steps += 1;
    if (this.plan.crashAt !== undefined && this.steps >= this.plan.crashAt) {
      this.dead = true;
      this.trace.push(`✝ before ${label}`);
      throw new Crash(`${this.name} died before ${label}`);
    }
    this.trace.push(label);
  }

  /** The ledger as this actor reaches it: every call is a step. */
  get ledger(): ActionLedger {
    const real = this.world.ledger;
    const stepped = ['recordClaim', 'claimRow', 'takeOver', 'recordStatus', 'get', 'audit', 'raiseAlarm'];
    return new Proxy(real, {
      get: (target, prop, receiver) => {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (typeof value !== 'function') return value;
        if (typeof prop !== 'string' || !stepped.includes(prop)) return (value as () => unknown).bind(target);
        return async (...args: unknown[]) => {
          await this.step(prop === 'recordStatus' ? `recordStatus ${(args[0] as { status: string }).status}` : prop);
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  }

  /** A send to the key-less provider: the effect happens, and its reply may be lost on the way back. */
  async send(): Promise<{ ref: string; replyLost: boolean }> {
    await this.step('send');
    this.world.provider.effects.push({ by: this.name });
    return { ref: `ref-${this.world.provider.effects.length}`, replyLost: this.plan.replyLost };
  }
}

export class World {
  readonly provider: KeylessProvider = { effects: [] };
  readonly actors: Actor[] = [];
  readonly running: Array<Promise<void>> = [];
  /** Each action workflow run's claim, as its history records it once the local activity completed. */
  readonly history = new Map<string, LedgerClaim>();
  private generation = 1;
  private attempts = 0;
  private workflows = 0;

  constructor(
    readonly ledger: ActionLedger,
    readonly scheduler: fc.Scheduler,
    readonly key: string,
    readonly clock: { advance(ms: number): void },
  ) {}

  /**
   * The next execution of the run's act: its next attempt in the same workflow task, or (`rerun`) the act run again
   * with the run's next workflow task, as a local activity is after a crash: attempt 1 of a later generation.
   */
  nextExecution(rerun: boolean): { generation: number; attempt: number } {
    if (rerun && this.attempts > 0) {
      this.generation += 3;
      this.attempts = 0;
    }
    return { generation: this.generation, attempt: ++this.attempts };
  }

  nextWorkflow(): number {
    return ++this.workflows;
  }

  actor(name: string, plan: ActorPlan): Actor {
    const actor = new Actor(name, plan, this);
    this.actors.push(actor);
    return actor;
  }

  /**
   * Starts an actor without waiting for it (once `after` has ended, when given): a crash is its end; anything else
   * it throws is its end as well. Answers when it has ended.
   */
  launch(actor: Actor, run: () => Promise<unknown>, after: Promise<unknown> = Promise.resolve()): Promise<void> {
    const ended = after
      .then(() => {
        actor.running = true;
        return run();
      })
      .then(
        () => actor.trace.push('end'),
        (err: Error) => actor.trace.push(err instanceof Crash ? 'dead' : `threw: ${err.message.slice(0, 100)}`),
      )
      .then(() => {
        actor.ended = true;
      });
    this.running.push(ended);
    return ended;
  }

  /**
   * Lets the scheduler order every step until all actors have ended: it picks among the steps waiting only once no
   * actor is between two steps (awaiting the database), so both back ends see the same choices for one seed.
   */
  async playOut(): Promise<void> {
    for (;;) {
      // Whatever a released step set off on promises alone has happened once a macrotask has passed.
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.actors.every((a) => a.ended)) return;
      if (this.actors.some((a) => !a.ended && a.running) || this.scheduler.count() === 0) continue;
      await this.scheduler.waitNext(1);
    }
  }
}
