import { AFTER_COMMIT_FAULTS, BEFORE_COMMIT_FAULTS } from './types';
import type { Fault, FaultKind } from './types';

export interface ArmedFault {
  op: string;
  kind: FaultKind;
  remaining: number;
  delayMs: number;
  status: number;
}

const beforeCommit = new Set<FaultKind>(BEFORE_COMMIT_FAULTS);
const afterCommit = new Set<FaultKind>(AFTER_COMMIT_FAULTS);

/**
 * Faults waiting for matching mutations. A request takes at most one before-commit fault and, if it
 * commits, one after-commit fault, each the oldest matching one; so `delay` then `drop-after-commit`
 * can strike the same request. permanent-failure is never used up, only cleared.
 */
export class FaultBook {
  private armed: ArmedFault[] = [];

  add(faults: readonly Fault[]): void {
    for (const fault of faults) {
      this.armed.push({
        op: fault.op,
        kind: fault.kind,
        remaining: fault.times ?? 1,
        delayMs: fault.delayMs ?? 0,
        status: fault.status ?? (fault.kind === 'status-after-commit' ? 502 : 503),
      });
    }
  }

  clear(): void {
    this.armed = [];
  }

  list(): readonly ArmedFault[] {
    return this.armed.map((fault) => ({ ...fault }));
  }

  takeBeforeCommit(op: string): ArmedFault | undefined {
    const permanent = this.armed.find((f) => f.kind === 'permanent-failure' && matches(f, op));
    return permanent ? { ...permanent } : this.take(op, beforeCommit);
  }

  takeAfterCommit(op: string): ArmedFault | undefined {
    return this.take(op, afterCommit);
  }

  private take(op: string, kinds: ReadonlySet<FaultKind>): ArmedFault | undefined {
    const index = this.armed.findIndex((f) => kinds.has(f.kind) && f.kind !== 'permanent-failure' && matches(f, op));
    if (index < 0) return undefined;
    const fault = this.armed[index];
    fault.remaining -= 1;
    if (fault.remaining <= 0) this.armed.splice(index, 1);
    return { ...fault };
  }
}

function matches(fault: ArmedFault, op: string): boolean {
  return fault.op === '*' || fault.op === op;
}
