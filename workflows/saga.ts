/**
 * Sagas of keyed actions. Each step registers the action that undoes it; when a later step fails for
 * good, the registered compensations run newest first. A compensation is an action like any other: its
 * own key (`refund:v1:acme:renewal-2026-08-28-01`), status, retry budget and audit trail, so a crash in
 * the middle of compensating resumes it instead of repeating it.
 *
 *   register(undo reserve) ─ reserve ─ register(undo charge) ─ charge ─ ship ✗
 *                                                        compensate: refund ─▶ release
 *
 * Register before a step that can half-succeed (a charge whose reply was lost): the compensation then
 * looks at what actually happened — the step's outcome, or a lookup at the provider — and undoes only that.
 */
import { log } from '@temporalio/workflow';
import type { Intent } from '../policies/intents';
import { act, knownActions, ownsAction, settle } from './act';
import type { EffectSnapshot } from './effect-api';

export interface Compensation {
  /** The key of the action this compensation undoes. */
  forKey: string;
  /** Builds the undo from what happened; undefined when nothing happened that needs undoing. */
  build(step: EffectSnapshot | undefined): Promise<Intent | undefined> | Intent | undefined;
}

export interface CompensationResult {
  forKey: string;
  compensationKey?: string;
  status: 'compensated' | 'nothing-to-undo' | 'left-to-owner' | 'needs_review';
}

export class Saga {
  private readonly compensations: Compensation[] = [];

  /** Registers the undo of the action with key `forKey`, before or after taking it. */
  addCompensation(compensation: Compensation): void {
    this.compensations.push(compensation);
  }

  /** Tells every kept, compensatable action that the run finished with it (it may close). */
  async keepAll(): Promise<void> {
    for (const c of this.compensations) {
      const step = knownActions().find((a) => a.key === c.forKey);
      if (step?.status === 'confirmed') await settle(c.forKey, { state: 'kept' });
    }
  }

  /** Runs the registered compensations newest first, each exactly once per key. */
  async compensate(): Promise<CompensationResult[]> {
    const results: CompensationResult[] = [];
    for (const c of [...this.compensations].reverse()) {
      const step = knownActions().find((a) => a.key === c.forKey);
      if (!ownsAction(c.forKey)) {
        // Another run owns this effect: it decides on the undo. Two undos of one charge are two refunds.
        results.push({ forKey: c.forKey, status: 'left-to-owner' });
        continue;
      }
      if (step && step.status === 'failed') {
        results.push({ forKey: c.forKey, status: 'nothing-to-undo' });
        continue;
      }
      const undo = await c.build(step);
      if (!undo) {
        results.push({ forKey: c.forKey, status: 'nothing-to-undo' });
        if (step?.status === 'confirmed') await settle(c.forKey, { state: 'kept' });
        continue;
      }
      log.info('compensating', { forKey: c.forKey, operation: undo.operation });
      if (step) await settle(c.forKey, { state: 'compensating' });
      const done = await act(undo, { compensation: true });
      const ok = done.status === 'confirmed';
      if (step) await settle(c.forKey, { state: ok ? 'compensated' : 'compensation-failed', compensationKey: done.key });
      results.push({ forKey: c.forKey, compensationKey: done.key, status: ok ? 'compensated' : 'needs_review' });
    }
    return results;
  }
}
