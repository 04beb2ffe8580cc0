import { setTimeout as sleep } from 'node:timers/promises';

import type { ConformanceRow, ProbeInput, SubjectSession } from './types';
import {
  outcomeOfError,
  type AnyTool,
  type DedupeCapability,
  type LookupAnswer,
  type ToolContext,
  type ToolOutcome,
} from 'retrysafe';

/**
 * The probes of the conformance check. Each calls the tool's own `execute` and `lookup` (the code the executor calls,
 * with an action key of its own) against the started provider, counts what the provider recorded, and sets that
 * against the tool's declarations:
 *
 *   same key twice          idempotency-key / transactional: one effect, the second call answering the first
 *   lookup of an unused key absent (a false "found" would confirm an action that never happened)
 *   lookup right after      may be empty inside the declared lag: reported as such, never as a failure
 *   lookup after the lag    finds the effect, with the reference the send answered, within the declared lag
 *   decline / invalid       answered `rejected` (final: the executor never retries it), nothing recorded
 *   key horizon             a resend just inside the declared retention is still answered from the key; a key kept
 *                           for good survives a restart of the provider, where the subject can restart it
 */
export interface ProbeOptions {
  /** The longest wait a horizon probe may take; a longer declared horizon is reported as not testable. */
  horizonBudgetMs: number;
  /** Unique per run, so that keys and business references never meet an earlier run's on a long-lived provider. */
  runTag: string;
  log: (line: string) => void;
}

/** How often a lookup is repeated while waiting out the lag. */
const LOOKUP_POLL_MS = 100;
/** Past the declared lag, how long the probe goes on looking before it says "not found". */
const LOOKUP_GRACE_MS = 3_000;
/** A horizon probe resends this far inside the declared retention (the measurement's own slack). */
const HORIZON_MARGIN_MS = 500;
const CALL_TIMEOUT_MS = 30_000;

export async function probeTool(
  session: SubjectSession,
  dedupe: DedupeCapability,
  opts: ProbeOptions,
): Promise<ConformanceRow[]> {
  const tool = session.tool;
  let n = 0;
  const nextTag = () => `${opts.runTag}-${++n}`;
  const keyFor = (tag: string) => `${tool.name}:v${tool.version}:conformance:${tag}`;
  const rows: ConformanceRow[] = [];
  const step = async (check: string, run: () => Promise<Omit<ConformanceRow, 'check'>>) => {
    opts.log(`  ${tool.name}: ${check}`);
    try {
      rows.push({ check, ...(await run()) });
    } catch (err) {
      rows.push({ check, declared: '—', observed: `the probe failed: ${(err as Error).message}`, verdict: 'fail' });
    }
  };

  await step('same key twice', () => sameKeyTwice(session, dedupe, nextTag(), keyFor));
  if (tool.lookup) {
    await step('lookup of a key never used', async () => {
      const tag = nextTag();
      const { input } = await session.sample(tag);
      const answer = await lookup(tool, input, keyFor(tag));
      return answer.found
        ? { declared: 'absent', observed: `found ${answer.providerRef}: a false "found"`, verdict: 'fail' }
        : { declared: 'absent', observed: 'absent', verdict: 'ok' };
    });
    const lagRows = await lookupAfterCommit(session, nextTag(), keyFor).catch((err: unknown) => [
      {
        check: 'lookup after the declared lag',
        declared: '—',
        observed: `the probe failed: ${(err as Error).message}`,
        verdict: 'fail' as const,
      },
    ]);
    rows.push(...lagRows);
  } else {
    rows.push({
      check: 'lookup',
      declared: 'none',
      observed: dedupe === 'lookup' ? 'the contract is lookup, but the tool has none' : '—',
      verdict: dedupe === 'lookup' ? 'fail' : 'n/a',
    });
  }
  await step('a decline is final', () => refusal(session, 'declined', nextTag(), keyFor));
  await step('a validation error is final', () => refusal(session, 'invalid', nextTag(), keyFor));
  await step('key horizon', () => horizon(session, dedupe, opts.horizonBudgetMs, nextTag(), keyFor));
  return rows;
}

async function sameKeyTwice(
  session: SubjectSession,
  dedupe: DedupeCapability,
  tag: string,
  keyFor: (tag: string) => string,
): Promise<Omit<ConformanceRow, 'check'>> {
  const { input } = await session.sample(tag);
  const key = keyFor(tag);
  const first = await execute(session.tool, input, key);
  if (first.outcome !== 'committed') {
    return { declared: '—', observed: `the first call answered ${describeOutcome(first)}`, verdict: 'fail' };
  }
  const second = await execute(session.tool, input, key);
  const effects = await session.effects(tag, input);
  const answered =
    second.outcome === 'committed'
      ? second.providerRef === first.providerRef
        ? `the second answered ${second.providerRef}${second.replayed ? ' (replayed)' : ''}`
        : `the second answered another reference, ${second.providerRef}`
      : `the second answered ${describeOutcome(second)}`;
  // Said only of a tool that sends the key: a second effect without one is the tool's doing, not the provider's.
  const ignored = effects > 1 && session.sendsKey ? 'idempotency key ignored: ' : '';
  const noKey = effects > 1 && !session.sendsKey && dedupe === 'idempotency-key' ? ' (the tool sends no key)' : '';
  const observed = `${ignored}${effects} effect${effects === 1 ? '' : 's'}; ${answered}${noKey}`;
  if (dedupe === 'idempotency-key' || dedupe === 'transactional') {
    const ok = effects === 1 && second.outcome === 'committed' && second.providerRef === first.providerRef;
    return { declared: 'one effect', observed, verdict: ok ? 'ok' : 'fail' };
  }
  // No dedupe promised: the executor never resends without a lookup (`lookup`) or a person (`none`).
  const declared = dedupe === 'lookup' ? 'no dedupe (looked up before any resend)' : 'no dedupe (a person decides)';
  const note = effects === 1 ? ' (the provider dedupes on its own)' : '';
  return { declared, observed: `${observed}${note}`, verdict: 'ok' };
}

async function lookupAfterCommit(
  session: SubjectSession,
  tag: string,
  keyFor: (tag: string) => string,
): Promise<ConformanceRow[]> {
  const tool = session.tool;
  const lagMs = tool.readAfterWriteLagMs;
  const { input } = await session.sample(tag);
  const key = keyFor(tag);
  const sent = await execute(tool, input, key);
  if (sent.outcome !== 'committed') throw new Error(`the send answered ${describeOutcome(sent)}`);
  const committedAt = Date.now();
  const first = await lookup(tool, input, key);
  const firstAtMs = Date.now() - committedAt;
  const rightAfter: ConformanceRow = {
    check: 'lookup right after the commit',
    declared: lagMs > 0 ? `may be empty for ${lagMs} ms` : 'found (no lag declared)',
    observed: first.found
      ? `found at once (${firstAtMs} ms)`
      : `empty at ${firstAtMs} ms${lagMs > 0 ? ': inside the lag, so it proves nothing' : ''}`,
    verdict: first.found || lagMs > 0 ? 'ok' : 'fail',
  };
  let found: Extract<LookupAnswer, { found: true }> | undefined = first.found ? first : undefined;
  let foundAtMs = first.found ? 0 : undefined;
  while (!found && Date.now() - committedAt < lagMs + LOOKUP_GRACE_MS) {
    await sleep(LOOKUP_POLL_MS);
    const askedAtMs = Date.now() - committedAt;
    const answer = await lookup(tool, input, key);
    if (answer.found) {
      found = answer;
      foundAtMs = askedAtMs;
    }
  }
  const declared = `found within ${lagMs} ms`;
  let afterLag: ConformanceRow;
  if (!found) {
    afterLag = {
      check: '',
      declared,
      observed: `not found ${lagMs + LOOKUP_GRACE_MS} ms after the commit`,
      verdict: 'fail',
    };
  } else if (found.providerRef !== sent.providerRef) {
    afterLag = {
      check: '',
      declared,
      observed: `found ${found.providerRef}, but the send answered ${sent.providerRef}`,
      verdict: 'fail',
    };
  } else {
    const late = foundAtMs! > lagMs + LOOKUP_POLL_MS;
    afterLag = {
      check: '',
      declared,
      observed: `found by ${foundAtMs} ms${late ? `, after the declared ${lagMs} ms` : ''}`,
      verdict: late ? 'fail' : 'ok',
    };
  }
  return [rightAfter, { ...afterLag, check: 'lookup after the declared lag' }];
}

async function refusal(
  session: SubjectSession,
  kind: 'declined' | 'invalid',
  tag: string,
  keyFor: (tag: string) => string,
): Promise<Omit<ConformanceRow, 'check'>> {
  const make = kind === 'declined' ? session.declined : session.invalid;
  const declared = 'rejected, nothing recorded';
  if (!make) {
    const why =
      kind === 'declined'
        ? 'the provider has no business refusal'
        : "the provider accepts every input the tool's schema admits";
    return { declared, observed: why, verdict: 'n/a' };
  }
  const probe: ProbeInput = await make.call(session, tag);
  const outcome = await execute(session.tool, probe.input, keyFor(tag), probe.pastSchema);
  const effects = await session.effects(tag, probe.input);
  const how = probe.pastSchema ? ' (an input past the tool schema)' : '';
  const observed = `${describeOutcome(outcome)}, ${effects} effect${effects === 1 ? '' : 's'}${how}`;
  const verdict = outcome.outcome === 'rejected' && effects === 0 ? 'ok' : 'fail';
  const retried =
    outcome.outcome === 'not-committed' || outcome.outcome === 'ambiguous' ? ': the executor would try it again' : '';
  return { declared, observed: `${observed}${retried}`, verdict };
}

async function horizon(
  session: SubjectSession,
  dedupe: DedupeCapability,
  budgetMs: number,
  tag: string,
  keyFor: (tag: string) => string,
): Promise<Omit<ConformanceRow, 'check'>> {
  const tool = session.tool;
  if (dedupe !== 'idempotency-key' && dedupe !== 'transactional') {
    return { declared: 'no key kept', observed: '—', verdict: 'n/a' };
  }
  const retention = tool.keyRetentionMs;
  const declared = retention === undefined ? 'kept for good' : `kept ${formatDuration(retention)}`;
  if (retention !== undefined && retention - HORIZON_MARGIN_MS > budgetMs) {
    return {
      declared,
      observed: `not testable here: longer than the probe's ${formatDuration(budgetMs)} (--horizon-budget)`,
      verdict: 'n/a',
    };
  }
  if (retention === undefined && !session.restart) {
    return { declared, observed: 'not testable here: the provider cannot be restarted by the check', verdict: 'n/a' };
  }
  const { input } = await session.sample(tag);
  const key = keyFor(tag);
  const first = await execute(tool, input, key);
  if (first.outcome !== 'committed') throw new Error(`the first call answered ${describeOutcome(first)}`);
  let waited: string;
  if (retention === undefined) {
    await session.restart!();
    waited = 'after a restart of the provider';
  } else {
    const waitMs = Math.max(0, retention - HORIZON_MARGIN_MS);
    await sleep(waitMs);
    waited = `${formatDuration(waitMs)} later`;
  }
  const second = await execute(tool, input, key);
  const effects = await session.effects(tag, input);
  const same = second.outcome === 'committed' && second.providerRef === first.providerRef;
  return {
    declared,
    observed: `${waited}: ${effects} effect${effects === 1 ? '' : 's'}${effects > 1 ? ' (the key was forgotten)' : ''}`,
    verdict: effects === 1 && same ? 'ok' : 'fail',
  };
}

/** The tool's execute as the executor calls it: the input parsed by the tool's schema, a throw read as the executor reads it. */
async function execute(tool: AnyTool, input: Record<string, unknown>, key: string, pastSchema = false) {
  const parsed: unknown = pastSchema ? input : tool.input.parse(input);
  try {
    return await tool.execute(parsed, probeContext(key));
  } catch (err) {
    return outcomeOfError(err, tool.name);
  }
}

async function lookup(tool: AnyTool, input: Record<string, unknown>, key: string): Promise<LookupAnswer> {
  return tool.lookup!(tool.input.parse(input), probeContext(key));
}

function probeContext(key: string): ToolContext {
  return {
    key,
    attempt: 1,
    heartbeat: () => undefined,
    signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    log: { info: () => undefined, warn: () => undefined },
  };
}

function describeOutcome(o: ToolOutcome): string {
  switch (o.outcome) {
    case 'committed':
      return `committed ${o.providerRef}`;
    case 'rejected':
      return `rejected (${o.reason}${o.status ? `, ${o.status}` : ''})`;
    case 'not-committed':
      return `not-committed (${o.reason.slice(0, 80)})`;
    case 'ambiguous':
      return `ambiguous (${o.message.slice(0, 80)})`;
  }
}

export function formatDuration(ms: number): string {
  if (ms >= 3_600_000 && ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms >= 1_000) return `${(ms / 1_000).toFixed(ms % 1_000 === 0 ? 0 : 1)} s`;
  return `${ms} ms`;
}
