import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { printTimeline, type TimedEvent } from '../../scripts/bench/timeline';
import { DEFAULT_TIMELINE_LEGS, parseTimelineOptions, UsageError } from '../../scripts/bench/timeline-args';

const KNOWN = ['bare-activity', 'retrysafe-action', 'bare-signal', 'retrysafe-confirmation'];

describe('bench:timeline options', () => {
  it('defaults to the action pair with 5 warm-ups', () => {
    assert.deepEqual(parseTimelineOptions([], KNOWN), { legs: DEFAULT_TIMELINE_LEGS, warmup: 5, recovery: false });
  });

  it('takes legs, warm-ups and the recovery mode', () => {
    assert.deepEqual(
      parseTimelineOptions(['--legs', 'bare-signal,retrysafe-confirmation', '--warmup', '0', '--recovery'], KNOWN),
      { legs: ['bare-signal', 'retrysafe-confirmation'], warmup: 0, recovery: true },
    );
  });

  it('refuses by name what it does not know, before anything starts', () => {
    const refusal = (argv: string[]) => {
      try {
        parseTimelineOptions(argv, KNOWN);
      } catch (err) {
        assert.ok(err instanceof UsageError, String(err));
        return err.message;
      }
      assert.fail(`${argv.join(' ')} was accepted`);
    };
    assert.match(refusal(['--legs', 'nope']), /no leg nope with a timeline; known: bare-activity/);
    assert.match(refusal(['--legs']), /--legs: give leg ids/);
    assert.match(refusal(['--legs', '--recovery']), /--legs: give leg ids/);
    assert.match(refusal(['--warmup', 'x']), /--warmup: must be a whole number/);
    assert.match(refusal(['--warmup', '101']), /--warmup/);
    assert.match(refusal(['--iterations', '3']), /unknown option --iterations/);
  });
});

describe('bench:timeline printing', () => {
  const lines = (events: TimedEvent[], zero: number, alsoBefore?: (e: TimedEvent) => boolean) => {
    const out: string[] = [];
    printTimeline(events, zero, (l) => out.push(l), alsoBefore ? { alsoBefore } : {});
    return out;
  };

  it('orders the events of several workflows on one clock, in ms from zero, and counts what came before', () => {
    const events: TimedEvent[] = [
      { ms: 1_120.4, who: 'action', what: 'workflowTaskStarted' },
      { ms: 990, who: 'run', what: 'workflowExecutionStarted' },
      { ms: 1_000, who: 'client', what: 'sent' },
      { ms: 1_045.6, who: 'run', what: 'activityTaskScheduled claimAndSend' },
    ];
    assert.deepEqual(lines(events, 1_000), [
      '  (1 earlier events of the preparation not shown)',
      '     0 ms  client  sent',
      '    46 ms  run     activityTaskScheduled claimAndSend',
      '   120 ms  action  workflowTaskStarted',
    ]);
  });

  it('also shows the earlier events asked for, at negative times', () => {
    const heartbeat = { ms: 950, who: 'run (server)', what: 'last heartbeat the server holds (attempt 1)' };
    const events: TimedEvent[] = [{ ms: 900, who: 'run', what: 'workflowTaskCompleted' }, heartbeat];
    assert.deepEqual(
      lines([...events, { ms: 1_000, who: 'bench', what: 'SIGKILL' }], 1_000, (e) => e === heartbeat),
      [
        '  (1 earlier events of the preparation not shown)',
        '   -50 ms  run (server)  last heartbeat the server holds (attempt 1)',
        '     0 ms  bench         SIGKILL',
      ],
    );
  });
});
