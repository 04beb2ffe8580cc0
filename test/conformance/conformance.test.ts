import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, describe, it } from 'node:test';

import { startSandboxProvider, type SandboxProvider } from '../../examples/sandbox-providers/spawn';
import { paymentTools } from '../../examples/tools/payments';
import { probeTool } from '../../scripts/conformance/probes';
import { resolveLocalstripe } from '../../scripts/toolchain/resolve-localstripe';
import { resolveMailpit } from '../../scripts/toolchain/resolve-mailpit';
import type { ConformanceRow, SubjectSession, ToolReport } from '../../scripts/conformance/types';
import { skipWithout } from '../../scripts/lib/required-servers';

/**
 * `npm run conformance` against every example tool on its provider, and against providers that break a declaration:
 * the check must say which one, and exit non-zero.
 */
const ROOT = path.resolve(__dirname, '..', '..');

function conformance(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/conformance.ts', ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const verdicts = (report: ToolReport) => Object.fromEntries(report.rows.map((r) => [r.check, r.verdict]));

/** The servers setup:toolchain installs; without one, its tool is skipped by the check, as the check itself says. */
const servers = Promise.all([
  resolveMailpit({ build: false }).then(
    () => true,
    () => false,
  ),
  resolveLocalstripe({ install: false }).then(
    () => true,
    () => false,
  ),
]).then(([mailpit, localstripe]) => ({ mailpit, localstripe }));

describe('npm run conformance', async () => {
  const have = await servers;
  skipWithout(have.mailpit ? false : 'Mailpit is not here: npm run setup:toolchain builds it');
  const skipStripe = skipWithout(
    have.localstripe ? false : 'localstripe is not here: npm run setup:toolchain installs it',
  );

  it('holds every example tool to its declared contract, and says what each provider did', async (t) => {
    const run = await conformance(['--tool', 'all', '--json']);
    assert.equal(run.code, 0, run.stderr.slice(-3000));
    const { reports, failed } = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as {
      reports: ToolReport[];
      failed: number;
    };
    assert.equal(failed, 0);
    const byTool = Object.fromEntries(reports.map((r) => [r.tool, r]));
    const expectSkipped = [
      ...(have.mailpit ? [] : ['send-notification']),
      ...(have.localstripe ? [] : ['stripe-charge']),
    ];
    assert.deepEqual(
      reports.filter((r) => r.unavailable).map((r) => r.tool),
      expectSkipped,
      'only a tool whose server is missing is skipped',
    );
    for (const tool of expectSkipped) {
      t.diagnostic(`${tool} skipped: ${byTool[tool].unavailable}`);
      assert.match(byTool[tool].unavailable!, /npm run setup:toolchain/);
    }
    // The key-kept tools answer a second call from the key; the others make a second effect, as declared.
    for (const tool of ['charge', 'refund', 'reserve', 'release', 'record-order']) {
      assert.match(byTool[tool].rows[0].observed, /^1 effect; the second answered \S+ \(replayed\)$/, tool);
    }
    assert.match(byTool['send-email'].rows[0].observed, /^2 effects/);
    if (have.mailpit) assert.match(byTool['send-notification'].rows[0].observed, /^2 effects/);
    // Every lagging sandbox lookup was empty right after the commit, and that was reported as proving nothing.
    for (const tool of ['charge', 'refund', 'create-ticket', 'reserve', 'release', 'create-shipment']) {
      const row = byTool[tool].rows.find((r) => r.check === 'lookup right after the commit')!;
      assert.match(row.observed, /^empty at \d+ ms: inside the lag, so it proves nothing$/, tool);
    }
    assert.deepEqual(verdicts(byTool['record-order']), {
      'same key twice': 'ok',
      'lookup of a key never used': 'ok',
      'lookup right after the commit': 'ok',
      'lookup after the declared lag': 'ok',
      'a decline is final': 'n/a',
      // A CHECK violation used to be thrown, which the executor reads as ambiguous and retries.
      'a validation error is final': 'ok',
      // Kept for good: the key survives a crash of the database (pg_ctl stop -m immediate) and a restart.
      'key horizon': 'ok',
    });
    if (have.mailpit)
      assert.deepEqual(verdicts(byTool['send-notification']), {
        'same key twice': 'ok',
        'lookup of a key never used': 'ok',
        'lookup right after the commit': 'ok',
        'lookup after the declared lag': 'ok',
        // A recipient refused at RCPT (550) used to be reported as ambiguous.
        'a decline is final': 'ok',
        'a validation error is final': 'n/a',
        'key horizon': 'n/a',
      });
    // localstripe ignores Idempotency-Key; under the lookup contract that is reported, and it breaks nothing.
    if (have.localstripe) {
      assert.match(byTool['stripe-charge'].rows[0].observed, /^idempotency key ignored: 2 effects/);
      assert.equal(byTool['stripe-charge'].dedupe, 'lookup');
    }
    if (have.localstripe)
      assert.deepEqual(verdicts(byTool['stripe-charge']), {
        'same key twice': 'ok',
        'lookup of a key never used': 'ok',
        'lookup right after the commit': 'ok',
        'lookup after the declared lag': 'ok',
        'a decline is final': 'ok',
        'a validation error is final': 'ok',
        'key horizon': 'n/a',
      });
    assert.deepEqual(verdicts(byTool.charge), {
      'same key twice': 'ok',
      'lookup of a key never used': 'ok',
      'lookup right after the commit': 'ok',
      'lookup after the declared lag': 'ok',
      'a decline is final': 'ok',
      'a validation error is final': 'ok',
      'key horizon': 'n/a',
    });
    assert.match(
      run.stdout + run.stderr,
      new RegExp(
        `conformance: \\d+ tool\\(s\\) probed, ${expectSkipped.length} skipped, 0 declaration\\(s\\) that did not hold`,
      ),
    );
  });

  it('fails a wrong declaration: the email provider held to idempotency-key sends twice', async () => {
    const run = await conformance(['--tool', 'send-email', '--contract', 'idempotency-key']);
    assert.equal(run.code, 1, run.stderr.slice(-2000));
    assert.match(
      run.stdout,
      /same key twice\s+one effect\s+2 effects; the second answered another reference, msg_\d+ \(the tool sends no key\)\s+fail/,
    );
    assert.match(run.stdout, /contract idempotency-key \(declared none; --contract\)/);
    assert.match(run.stdout, /1 declaration\(s\) that did not hold/);
  });

  it('fails a lookup contract on a tool that has no lookup, and still probes the rest', async () => {
    const run = await conformance(['--tool', 'send-email', '--contract', 'lookup']);
    assert.equal(run.code, 1, run.stderr.slice(-2000));
    assert.match(run.stdout, /lookup\s+none\s+the contract is lookup, but the tool has none\s+fail/);
    assert.match(
      run.stdout,
      /a decline is final\s+rejected, nothing recorded\s+rejected \(declined, 422\), 0 effects\s+ok/,
    );
  });

  it(
    "fails stripe-charge held to Stripe's documented contract on localstripe: idempotency key ignored",
    { skip: skipStripe },
    async () => {
      const run = await conformance(['--tool', 'stripe-charge', '--contract', 'idempotency-key']);
      assert.equal(run.code, 1, run.stderr.slice(-2000));
      assert.match(run.stdout, /stripe-charge on localstripe 1\.15\.10 · contract idempotency-key/);
      assert.match(
        run.stdout,
        /same key twice\s+one effect\s+idempotency key ignored: 2 effects; the second answered another reference, ch_\w+\s+fail/,
      );
      assert.match(run.stdout, /key horizon\s+kept 24 h\s+not testable here/);
    },
  );

  it('names the argument it refuses', async () => {
    const unknown = await conformance(['--tool', 'no-such-tool']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^--tool: no example tool "no-such-tool"; available: charge, .*, or all/m);
    const contract = await conformance(['--tool', 'charge', '--contract', 'maybe']);
    assert.equal(contract.code, 2);
    assert.match(contract.stderr, /^--contract: must be one of idempotency-key, lookup, none, transactional/m);
    const none = await conformance([]);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /^--tool: needs a tool name, or all/m);
  });
});

describe('the probes against a provider that breaks the declaration', () => {
  const providers: SandboxProvider[] = [];
  after(async () => {
    await Promise.all(providers.map((p) => p.stop()));
  });

  /** The sandbox charge tool on a payments provider started with `opts`, declared as `declare` says. */
  async function chargeSession(
    opts: Parameters<typeof startSandboxProvider>[1],
    declare: { readAfterWriteLagMs?: number; keyRetentionMs?: number },
  ): Promise<SubjectSession> {
    const provider = await startSandboxProvider('payments', opts);
    providers.push(provider);
    const tool = { ...paymentTools(provider.url)[0], ...declare };
    return {
      tool,
      sample: async (tag) => ({
        input: {
          amountCents: 500,
          currency: 'usd',
          customerId: 'cus_p',
          paymentMethod: 'pm_p',
          merchantReference: tag,
        },
      }),
      effects: async (tag) =>
        ((await provider.ledger()).records.charges ?? []).filter((r) => r.merchantReference === tag).length,
      stop: async () => undefined,
    };
  }
  const row = (rows: ConformanceRow[], check: string) => rows.find((r) => r.check === check)!;
  const opts = { horizonBudgetMs: 10_000, runTag: `t${Date.now().toString(36)}`, log: () => undefined };

  it('fails a lookup that finds the commit only after the declared lag', async () => {
    const session = await chargeSession({ readLagMs: 1_500 }, { readAfterWriteLagMs: 500 });
    const rows = await probeTool(session, 'idempotency-key', opts);
    const late = row(rows, 'lookup after the declared lag');
    assert.equal(late.verdict, 'fail');
    // The provider's 1.5 s lag runs from its commit, a little before the probe's clock starts (1488 ms seen in CI).
    const m = /^found by (\d+) ms, after the declared 500 ms$/.exec(late.observed);
    assert.ok(m, late.observed);
    assert.ok(Number(m[1]) > 1_000 && Number(m[1]) < 5_000, late.observed);
    assert.equal(row(rows, 'same key twice').verdict, 'ok');
  });

  it('fails a provider that forgets keys before the declared horizon, and passes one that keeps them', async () => {
    const forgetful = await chargeSession({ keyRetentionMs: 1_000 }, { keyRetentionMs: 3_000 });
    const forgot = row(await probeTool(forgetful, 'idempotency-key', opts), 'key horizon');
    assert.equal(forgot.verdict, 'fail');
    assert.equal(forgot.declared, 'kept 3 s');
    assert.match(forgot.observed, /^2\.5 s later: 2 effects \(the key was forgotten\)$/);

    const keeping = await chargeSession({ keyRetentionMs: 5_000 }, { keyRetentionMs: 3_000 });
    const kept = row(await probeTool(keeping, 'idempotency-key', opts), 'key horizon');
    assert.deepEqual(kept, {
      check: 'key horizon',
      declared: 'kept 3 s',
      observed: '2.5 s later: 1 effect',
      verdict: 'ok',
    });
  });
});
