import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import type { SendEmailIntent } from '../../examples/tools';
import { generateApprovalKeyPair } from '../../cli/approvals/approval-keys';
import {
  createApprovalSigner,
  hashOperatorToken,
  operatorScopesOf,
  submitApproval,
} from '../../cli/approvals/approval-signer';
import { getFreePort } from '../../cli/dev/free-port';
import { startStack, type Stack } from '../../scripts/lib/stack';
import { resolvePrometheus } from '../../scripts/toolchain/resolve-prometheus';
import { launchChromium } from '../support/browser';
import { uniqueEvent } from '../support/renewal-input';
import { waitForStatus, waitUntil } from '../support/wait';

/**
 * The shipped alert rules against a real Prometheus (Debian's package, installed by scripts/toolchain/) scraping a
 * real worker of the embedded stack: promtool accepts the rules; an email whose reply the provider drops goes to
 * needs_review, and Prometheus, through its HTTP API, sees the review gauge and the oldest-age gauge move, the
 * status changes counted, and the escalation alert fire for that tenant once its (short, for the test) window has
 * passed; resolving the action empties the queue again.
 */

const ROOT = path.resolve(__dirname, '..', '..');
const SHIPPED_RULES = path.join(ROOT, 'deploy', 'prometheus', 'retrysafe-rules.yml');
const DASHBOARD = path.join(ROOT, 'deploy', 'grafana', 'retrysafe-dashboard.json');
const IMAGES = path.join(ROOT, 'docs', 'images');
const TENANT = 'acme';
const WINDOW_SECONDS = 3;

const keys = generateApprovalKeyPair();
const TOKEN = 'prometheus-alerts-test-operator';
const approvals = createApprovalSigner({
  privateKeyHex: keys.privateKeyHex,
  keyId: keys.keyId,
  operators: [
    { name: 'ops', tokenSha256: hashOperatorToken(TOKEN), tenants: [TENANT], roles: ['approver', 'resolver'] },
  ],
});
const operator = approvals.authenticate(TOKEN)!;

let stack: Stack;
let tmp: string;
let prometheus: ChildProcess | undefined;
let promUrl: string;
let promtool: string;
let metricsUrl: string;
/** RETRYSAFE_SCREENSHOTS=1 writes Prometheus's graph and alert pages, as the test leaves them, to docs/images/. */
const SCREENSHOTS = process.env.RETRYSAFE_SCREENSHOTS === '1';

/** One instant query through Prometheus's HTTP API: each series' labels and value. */
async function query(expr: string): Promise<Array<{ labels: Record<string, string>; value: number }>> {
  const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
  const body = (await res.json()) as {
    status: string;
    error?: string;
    data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
  };
  assert.equal(body.status, 'success', `${expr}: ${body.error}`);
  return body.data.result.map((r) => ({ labels: r.metric, value: Number(r.value[1]) }));
}

/** The one value of a query that must return one series, or undefined while it returns none. */
async function scalar(expr: string): Promise<number | undefined> {
  const rows = await query(expr);
  assert.ok(rows.length <= 1, `${expr} returned ${rows.length} series`);
  return rows[0]?.value;
}

async function alerts(): Promise<Array<{ labels: Record<string, string>; state: string }>> {
  const res = await fetch(`${promUrl}/api/v1/alerts`);
  const body = (await res.json()) as { data: { alerts: Array<{ labels: Record<string, string>; state: string }> } };
  return body.data.alerts;
}

/** Every query of a dashboard panel, its variables set to match everything. */
async function dashboardQueries(): Promise<string[]> {
  const dashboard = JSON.parse(await readFile(DASHBOARD, 'utf8')) as {
    panels: Array<{ targets?: Array<{ expr: string }> }>;
  };
  return dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr.replace(/\$(tenant|tool)\b/g, '.*')));
}

/** The graph page with the review queue and the alerts page, firing, for docs/observability.md. */
async function screenshots(): Promise<void> {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const expr = 'max by (tenant, tool, status) (retrysafe_action_oldest_age_seconds)';
    await page.goto(`${promUrl}/graph?g0.expr=${encodeURIComponent(expr)}&g0.tab=0&g0.range_input=1m`);
    await page.waitForTimeout(2_000);
    await page.screenshot({ path: path.join(IMAGES, 'prometheus-oldest-age.png') });
    await page.goto(`${promUrl}/classic/alerts`);
    // Each alert's detail open: its expression, its labels and since when it fires.
    await page
      .locator('.alert_header')
      .first()
      .click()
      .catch(() => undefined);
    await page.waitForTimeout(1_000);
    await page.screenshot({ path: path.join(IMAGES, 'prometheus-alerts.png'), fullPage: true });
  } finally {
    await browser.close();
  }
}

describe('Prometheus, the shipped rules and a worker of the embedded stack', () => {
  before(async () => {
    const bins = await resolvePrometheus();
    promtool = bins.promtool;
    tmp = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-prometheus-'));
    stack = await startStack({ providerKinds: ['email'], ledger: `sqlite:${path.join(tmp, 'ledger.sqlite')}` });
    const metricsAddress = `127.0.0.1:${await getFreePort()}`;
    metricsUrl = `http://${metricsAddress}/metrics`;
    await stack.startWorker({
      name: 'observed',
      env: {
        RETRYSAFE_APPROVAL_PUBLIC_KEYS: JSON.stringify({ [keys.keyId]: keys.publicKeyHex }),
        RETRYSAFE_OPERATOR_SCOPES: JSON.stringify(operatorScopesOf(approvals.operators)),
        RETRYSAFE_METRICS_ADDRESS: metricsAddress,
        RETRYSAFE_ESCALATION_WINDOWS: `${TENANT}=${WINDOW_SECONDS}s,*=24h`,
        RETRYSAFE_METRICS_POLL_MS: '500',
      },
    });

    // The shipped rules with their `for:` durations cut to 0 s, so that the test need not wait minutes; the
    // expressions are the shipped ones, checked by promtool like the originals.
    const rules = (await readFile(SHIPPED_RULES, 'utf8')).replace(/^(\s+)for:\s*\S+\s*$/gm, '$1for: 0s');
    const testRules = path.join(tmp, 'rules.yml');
    await writeFile(testRules, rules);
    const check = spawnSync(promtool, ['check', 'rules', testRules], { encoding: 'utf8' });
    assert.equal(check.status, 0, `promtool check rules (test copy): ${check.stdout}${check.stderr}`);
    const port = await getFreePort();
    const config = path.join(tmp, 'prometheus.yml');
    await writeFile(
      config,
      [
        'global:',
        '  scrape_interval: 1s',
        '  evaluation_interval: 1s',
        'rule_files:',
        `  - ${testRules}`,
        'scrape_configs:',
        '  - job_name: retrysafe-worker',
        '    static_configs:',
        `      - targets: ['${metricsAddress}']`,
        '',
      ].join('\n'),
    );
    prometheus = spawn(
      bins.prometheus,
      [
        `--config.file=${config}`,
        `--storage.tsdb.path=${path.join(tmp, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        ...(bins.webAssets ? [`--web.local-assets=${bins.webAssets}`] : []),
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    prometheus.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    promUrl = `http://127.0.0.1:${port}`;
    await waitUntil(
      `Prometheus ready at ${promUrl} (${stderr})`,
      async () => (await fetch(`${promUrl}/-/ready`).catch(() => undefined))?.ok === true,
      30_000,
    );
    await waitUntil('the worker scraped once', async () => (await scalar('up{job="retrysafe-worker"}')) === 1, 30_000);
  });

  after(async () => {
    prometheus?.kill('SIGKILL');
    await stack?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('promtool accepts the shipped rules as they are, and their unit tests pass', () => {
    const check = spawnSync(promtool, ['check', 'rules', SHIPPED_RULES], { encoding: 'utf8' });
    assert.equal(check.status, 0, `${check.stdout}${check.stderr}`);
    assert.match(check.stdout, /SUCCESS: 4 rules found/);
    // Each rule firing on the series that should fire it, and not on the others (deploy/prometheus/*.test.yml).
    const unit = spawnSync(promtool, ['test', 'rules', 'retrysafe-rules.test.yml'], {
      cwd: path.dirname(SHIPPED_RULES),
      encoding: 'utf8',
    });
    assert.equal(unit.status, 0, `${unit.stdout}${unit.stderr}`);
    assert.match(unit.stdout, /SUCCESS/);
    const config = spawnSync(promtool, ['check', 'config', 'prometheus.yml'], {
      cwd: path.dirname(SHIPPED_RULES),
      encoding: 'utf8',
    });
    assert.equal(config.status, 0, `the example configuration: ${config.stdout}${config.stderr}`);
  });

  it('shows a key-less email in needs_review, its age past the window, and fires the escalation alert', async () => {
    const open = `max(retrysafe_actions_open{tenant="${TENANT}",tool="send-email",status="needs_review"})`;
    const age = `max(retrysafe_action_oldest_age_seconds{tenant="${TENANT}",tool="send-email",status="needs_review"})`;
    assert.ok(((await scalar(open)) ?? 0) === 0, 'nothing waits for review yet');
    assert.equal(
      (await alerts()).filter((a) => a.labels.alertname === 'RetrysafeActionUnresolvedPastWindow').length,
      0,
      'no escalation before anything is unresolved',
    );

    // An email (no key, no lookup) whose reply the provider drops after sending it: unknown, then needs_review.
    const email = stack.providers.email;
    await email.configure({ webhookUrl: null });
    await email.setFaults([{ op: 'messages.create', kind: 'drop-after-commit', times: 1 }]);
    const eventId = uniqueEvent('prometheus-review');
    const intent: SendEmailIntent = {
      operation: 'send-email',
      to: 'customer@example.com',
      subject: `Your renewal ${eventId}`,
      body: 'Thanks for renewing.',
    };
    const claimed = await stack.retrysafe.claimAction({ tenant: TENANT, eventId }, intent);
    await waitForStatus(stack.retrysafe, claimed.key, 'awaiting_confirmation', { timeoutMs: 30_000 });
    await submitApproval(
      stack.client,
      approvals.sign(operator, { key: claimed.key, requestHash: claimed.requestHash, decision: 'approve' }),
    );
    const review = await waitForStatus(stack.retrysafe, claimed.key, 'needs_review', { timeoutMs: 60_000 });
    assert.ok(
      review.audit.some((a) => a.to === 'unknown'),
      'through unknown',
    );

    await waitUntil('the review gauge at 1', async () => (await scalar(open)) === 1, 20_000);
    const firstAge = (await scalar(age))!;
    await waitUntil('the oldest age growing', async () => ((await scalar(age)) ?? 0) > firstAge, 10_000);
    for (const status of ['unknown', 'needs_review']) {
      assert.equal(
        await scalar(
          `sum(retrysafe_action_status_changes_total{tenant="${TENANT}",tool="send-email",status="${status}"})`,
        ),
        1,
        `one change into ${status}`,
      );
    }
    assert.equal(
      await scalar('sum(retrysafe_provider_requests_total{tool="send-email",kind="send",outcome="ambiguous"})'),
      1,
      'the one send, answered ambiguously (the reply was dropped)',
    );
    assert.equal(await scalar(`max(retrysafe_escalation_window_seconds{tenant="${TENANT}"})`), WINDOW_SECONDS);

    await waitUntil(
      'RetrysafeActionUnresolvedPastWindow firing for acme/send-email/needs_review',
      async () =>
        (await alerts()).some(
          (a) =>
            a.labels.alertname === 'RetrysafeActionUnresolvedPastWindow' &&
            a.state === 'firing' &&
            a.labels.tenant === TENANT &&
            a.labels.tool === 'send-email' &&
            a.labels.status === 'needs_review',
        ),
      30_000,
    );

    if (SCREENSHOTS) await screenshots();

    // A person resolves it: the queue empties and the alert stops.
    const messageId = (await email.ledger()).records.messages?.find(
      (m) => (m as { reference?: string }).reference === claimed.key,
    )?.id as string;
    assert.match(messageId, /^msg_/);
    await stack.retrysafe.resolveAction(
      approvals.sign(operator, {
        decision: 'resolve',
        key: claimed.key,
        requestHash: claimed.requestHash,
        params: { outcome: 'confirmed', reason: 'in the provider log', providerRef: messageId },
      }),
    );
    await waitUntil('the review gauge back at 0', async () => (await scalar(open)) === 0, 20_000);
    await waitUntil(
      'the escalation alert resolved',
      async () =>
        !(await alerts()).some(
          (a) => a.labels.alertname === 'RetrysafeActionUnresolvedPastWindow' && a.labels.tool === 'send-email',
        ),
      20_000,
    );
  });

  it("the dashboard's queries run in Prometheus and name only metrics that exist", async () => {
    const queries = await dashboardQueries();
    assert.ok(queries.length >= 20, `${queries.length} queries`);
    for (const expr of queries) await query(expr); // fails on a query Prometheus cannot parse
    // retrysafe's names as the code creates them; Temporal's as this worker exports them (it ran workflows and
    // activities above). Histograms are named with their _bucket series.
    const source = (
      await Promise.all(
        ['metrics/instruments.ts', 'workflows/workflow-metrics.ts'].map((f) => readFile(path.join(ROOT, f), 'utf8')),
      )
    ).join('\n');
    const exported = await (await fetch(metricsUrl)).text();
    const names = new Set(queries.flatMap((q) => q.match(/\b(retrysafe|temporal)_[a-z_]+/g) ?? []));
    for (const name of names) {
      const base = name.replace(/_(bucket|count|sum)$/, '');
      if (name.startsWith('retrysafe_')) assert.ok(source.includes(`'${base}'`), `${name} is not a retrysafe metric`);
      // A counter of failures appears once something failed; its name is the SDK's documented one.
      else if (name !== 'temporal_workflow_task_execution_failed') {
        assert.match(exported, new RegExp(`^${name}[{ ]`, 'm'), `the worker exports no ${name}`);
      }
    }
  });
});
