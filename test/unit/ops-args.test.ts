import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ACTION_STATUSES } from '../../policies/action-status';
import { parseArgv, parseDuration } from '../../cli/ops/args';
import { UsageError } from '../../cli/ops/errors';
import { parseOperatorsArgs } from '../../cli/ops/operators';
import { DEFAULT_QUEUE_LIMIT, REVIEW_STATUSES, parseQueueArgs } from '../../cli/ops/queue';
import { parseResolveArgs } from '../../cli/ops/resolve';
import { parseShowArgs } from '../../cli/ops/show';

const KEY = 'send-email:v1:acme:evt-1';

/** Asserts a UsageError whose message starts with the argument's name. */
function refuses(fn: () => unknown, argument: string, detail?: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof UsageError, `expected a UsageError, got ${String(err)}`);
    assert.equal(err.exitCode, 2);
    assert.ok(err.message.startsWith(`${argument}:`), `message should name ${argument}: ${err.message}`);
    if (detail) assert.match(err.message, detail);
    return true;
  });
}

describe('ops argument tokenizer', () => {
  const specs = {
    tenant: { type: 'string' },
    status: { type: 'string', multiple: true },
    json: { type: 'boolean' },
  } as const;

  it('takes --name value and --name=value, collects repeated values and keeps positionals', () => {
    const parsed = parseArgv(['KEY', '--tenant', 'acme', '--status=unknown', '--status', 'failed', '--json'], specs);
    assert.deepEqual(parsed, {
      flags: { tenant: 'acme', status: ['unknown', 'failed'], json: true },
      positionals: ['KEY'],
      help: false,
    });
  });

  it('names the flag whose value is missing, at the end or before another flag', () => {
    refuses(() => parseArgv(['--tenant'], specs), '--tenant', /needs a value/);
    refuses(() => parseArgv(['--tenant', '--json'], specs), '--tenant', /needs a value/);
  });

  it('names unknown options and lists the known ones', () => {
    refuses(() => parseArgv(['--tenat', 'acme'], specs), '--tenat', /--tenant, --status, --json/);
    refuses(() => parseArgv(['-x'], specs), '-x');
  });

  it('refuses a repeated single-valued flag and a value given to a switch', () => {
    refuses(() => parseArgv(['--tenant', 'a', '--tenant', 'b'], specs), '--tenant', /more than once/);
    refuses(() => parseArgv(['--json=yes'], specs), '--json', /takes no value/);
  });

  it('treats everything after -- as positionals and spots --help anywhere', () => {
    assert.deepEqual(parseArgv(['--', '--tenant'], specs).positionals, ['--tenant']);
    assert.equal(parseArgv(['--tenant', 'a', '-h'], specs).help, true);
  });
});

describe('durations', () => {
  it('reads seconds, minutes, hours and days', () => {
    assert.equal(parseDuration('90s'), 90_000);
    assert.equal(parseDuration('10m'), 600_000);
    assert.equal(parseDuration('2h'), 7_200_000);
    assert.equal(parseDuration('1d'), 86_400_000);
  });

  it('refuses anything else', () => {
    for (const bad of ['', '10', 'm', '0m', '-5m', '1.5h', '10 m', '2w', '1h30m', '9'.repeat(20) + 'd']) {
      assert.equal(parseDuration(bad), undefined, bad);
    }
  });
});

describe('ops queue arguments', () => {
  it('defaults to the statuses a person may need to act on, and a limit', () => {
    const args = parseQueueArgs([]);
    assert.deepEqual(args.statuses, ['unknown', 'needs_review', 'awaiting_confirmation', 'compensating']);
    assert.deepEqual(args.statuses, [...REVIEW_STATUSES]);
    assert.equal(args.limit, DEFAULT_QUEUE_LIMIT);
    assert.equal(args.json, false);
  });

  it('parses every filter', () => {
    const args = parseQueueArgs([
      '--tenant',
      'acme',
      '--status',
      'unknown,needs_review',
      '--status',
      'unknown',
      '--operation',
      'charge',
      '--older-than',
      '2h',
      '--limit',
      '5',
      '--json',
    ]);
    assert.deepEqual(
      { ...args },
      {
        help: false,
        tenant: 'acme',
        statuses: ['unknown', 'needs_review'],
        operation: 'charge',
        olderThanMs: 7_200_000,
        limit: 5,
        json: true,
      },
    );
  });

  it('accepts every status of the effect status machine and nothing else', () => {
    for (const status of ACTION_STATUSES) assert.deepEqual(parseQueueArgs(['--status', status]).statuses, [status]);
    refuses(
      () => parseQueueArgs(['--status', 'needs-review']),
      '--status',
      /"needs-review" is not a status; use one of planned, /,
    );
    refuses(() => parseQueueArgs(['--status', 'unknown,']), '--status');
  });

  it('accepts any well-formed tool name, since tools are user-defined', () => {
    assert.equal(parseQueueArgs(['--operation', 'wire-transfer']).operation, 'wire-transfer');
    assert.equal(parseQueueArgs(['--operation', 'send-email']).operation, 'send-email');
  });

  it('names the argument in every refusal', () => {
    refuses(() => parseQueueArgs(['--older-than', '10']), '--older-than', /10m, 2h or 1d/);
    refuses(() => parseQueueArgs(['--limit', 'ten']), '--limit', /whole number/);
    refuses(() => parseQueueArgs(['--limit', '100000']), '--limit');
    refuses(() => parseQueueArgs(['--operation', 'Wire_Transfer']), '--operation', /must be a tool name/);
    refuses(() => parseQueueArgs(['--operation', '1charge']), '--operation', /must be a tool name/);
    refuses(() => parseQueueArgs(['--tenant', 'ac:me']), '--tenant', /must not contain/);
    refuses(() => parseQueueArgs(['--tenant', '']), '--tenant');
    refuses(() => parseQueueArgs(['--tenant']), '--tenant', /needs a value/);
  });
});

describe('ops show arguments', () => {
  it('takes one well-formed key', () => {
    assert.deepEqual(parseShowArgs([KEY, '--json']), { help: false, KEY, json: true });
  });

  it('names KEY when it is missing, malformed or followed by extras', () => {
    refuses(() => parseShowArgs([]), 'KEY', /is required/);
    refuses(() => parseShowArgs(['charge-acme-1']), 'KEY', /operation:vN:tenant:eventId/);
    refuses(() => parseShowArgs(['charge:1:acme:e1']), 'KEY', /vN/);
    assert.throws(() => parseShowArgs([KEY, 'extra']), /unexpected argument "extra"/);
  });
});

describe('ops resolve arguments', () => {
  const base = [KEY, '--reason', 'seen in provider dashboard'];

  it('parses a confirmation with its provider reference', () => {
    const args = parseResolveArgs([
      ...base,
      '--decision',
      'confirmed',
      '--provider-ref',
      'msg_1',
      '--operator-token',
      't',
    ]);
    assert.deepEqual(
      { ...args },
      {
        help: false,
        KEY,
        decision: 'confirmed',
        reason: 'seen in provider dashboard',
        'provider-ref': 'msg_1',
        'operator-token': 't',
        json: false,
      },
    );
  });

  it('requires --provider-ref for confirmed, and says so', () => {
    refuses(
      () => parseResolveArgs([...base, '--decision', 'confirmed']),
      '--provider-ref',
      /required with --decision confirmed/,
    );
  });

  it('refuses --provider-ref with other decisions instead of dropping it silently', () => {
    refuses(
      () => parseResolveArgs([...base, '--decision', 'failed', '--provider-ref', 'msg_1']),
      '--provider-ref',
      /only applies/,
    );
  });

  it('names missing and bad values', () => {
    refuses(
      () => parseResolveArgs([KEY, '--reason', 'why not']),
      '--decision',
      /is required: one of confirmed, not-happened, failed, compensate/,
    );
    refuses(() => parseResolveArgs([...base, '--decision', 'yes']), '--decision', /must be one of/);
    refuses(() => parseResolveArgs([KEY, '--decision', 'failed']), '--reason', /is required/);
    refuses(() => parseResolveArgs([KEY, '--decision', 'failed', '--reason', '  ']), '--reason', /must say why/);
    refuses(() => parseResolveArgs(['nope', '--decision', 'failed', '--reason', 'because']), 'KEY');
    refuses(() => parseResolveArgs([...base, '--decision', 'failed', '--wait', 'soon']), '--wait');
  });

  it('takes the decision values of the workflow API', () => {
    for (const decision of ['not-happened', 'failed', 'compensate'] as const) {
      const args = parseResolveArgs([...base, '--decision', decision]);
      assert.equal(!args.help && args.decision, decision);
    }
  });
});

describe('ops operators arguments', () => {
  it('takes add NAME', () => {
    assert.deepEqual(parseOperatorsArgs(['add', 'alice']), { help: false, action: 'add', NAME: 'alice', json: false });
  });

  it('names the missing subcommand and a bad name', () => {
    refuses(() => parseOperatorsArgs([]), 'SUBCOMMAND');
    refuses(() => parseOperatorsArgs(['remove', 'alice']), 'SUBCOMMAND', /use add/);
    refuses(() => parseOperatorsArgs(['add']), 'NAME', /is required/);
    refuses(() => parseOperatorsArgs(['add', 'alice smith']), 'NAME');
  });
});
