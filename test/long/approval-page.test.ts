import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { exampleRegistry, type ChargeIntent } from '../../examples/tools';
import { startApprovalServer, type ApprovalServer, type SignedEvent } from '../../cli/approvals/approval-http';
import { generateApprovalKeyPair } from '../../cli/approvals/approval-keys';
import { CONTENT_SECURITY_POLICY } from '../../cli/approvals/page/page-responses';
import { HIDDEN_VALUE, maskForDisplay } from '../../cli/approvals/page/display-masking';
import { createSessionStore } from '../../cli/approvals/page/session-store';
import { createApprovalSigner, hashOperatorToken, operatorScopesOf } from '../../cli/approvals/approval-signer';
import type { Role } from '../../policies/signed-decision';
import { startStack, type Stack } from '../../scripts/lib/stack';
import { resolveChromium, type ResolveChromiumOptions } from '../../scripts/toolchain/resolve-chromium';
import { ToolchainError } from '../../cli/toolchain/toolchain-error';
import { launchChromium } from '../support/browser';
import { uniqueEvent } from '../support/renewal-input';
import { sleep, waitForStatus } from '../support/wait';

/**
 * The approval page in real headless chromium, against a real stack: dev server, the payments provider process
 * and a worker process that trusts this file's approval key and operator. Charges of 5 000 cents or more wait for a
 * signed approval; the page signs for the signed-in operator and delivers the decision. Every effect is counted at
 * the payments provider, not read off the page.
 *
 * RETRYSAFE_SCREENSHOTS=1 writes the sign-in page and the queue to docs/images/.
 */

const KEYS = generateApprovalKeyPair();
const DANA_TOKEN = 'approval-page-dana-token-7c1e5a9f3b2d4e6a8c0e';
const OPERATORS = [
  {
    name: 'dana',
    tokenSha256: hashOperatorToken(DANA_TOKEN),
    tenants: ['acme'],
    roles: ['approver', 'resolver'] as Role[],
  },
];
const signer = createApprovalSigner({ privateKeyHex: KEYS.privateKeyHex, keyId: KEYS.keyId, operators: OPERATORS });
const WORKER_ENV = {
  RETRYSAFE_APPROVAL_PUBLIC_KEYS: JSON.stringify({ [KEYS.keyId]: KEYS.publicKeyHex }),
  RETRYSAFE_OPERATOR_SCOPES: JSON.stringify(operatorScopesOf(signer.operators)),
};
/** The Web UI the page links to; nothing needs to answer there for the links to be checked. */
const WEB_UI = 'http://127.0.0.1:8233';
/** Long enough for a worker that was going to dispatch to have done it. */
const SETTLE_MS = 1_500;
const SCREENSHOTS = process.env.RETRYSAFE_SCREENSHOTS === '1';
const IMAGES = path.resolve(__dirname, '..', '..', 'docs', 'images');

const RECEIPT_EMAIL = 'jane.doe@example.com';
const INJECTED = '<img src=x onerror="document.title=\'pwned\'"><script>document.title="pwned"</script>';

interface WaitingAction {
  key: string;
  requestHash: string;
  intent: ChargeIntent;
  reference: string;
}

describe('the approval page in headless chromium, on the real dev server with the payments provider', () => {
  let stack: Stack;
  let server: ApprovalServer;
  let browser: Browser;
  const signed: SignedEvent[] = [];
  /** Waits for approval and is approved from the page; its description carries an email address. */
  let approved: WaitingAction;
  /** Waits for approval; its description carries markup; a tampered form is refused, then it is rejected. */
  let rejected: WaitingAction;
  /** Waits throughout: the forms that must be refused are aimed at it. */
  let bystander: WaitingAction;
  /** Tenant globex's, so outside dana's scope. */
  let globex: WaitingAction;
  /** Above the per-action limit: human-only, in needs_review. */
  let review: WaitingAction;
  /** dana's signed-in browser. */
  let dana: BrowserContext;
  let queue: Page;
  /** The CSRF token of the sign-in form dana's browser was shown before signing in. */
  let signInFormToken: string;

  before(async () => {
    const started = Date.now();
    [stack, browser] = await Promise.all([
      startStack({ providerKinds: ['payments'] }).then(async (s) => {
        await s.startWorker({ name: 'approval-page', env: WORKER_ENV });
        return s;
      }),
      launchChromium(),
    ]);
    server = await startApprovalServer(signer, {
      port: 0,
      onSigned: (e) => signed.push(e),
      temporal: { client: stack.client, namespace: stack.server.namespace, webUiUrl: WEB_UI },
    });
    [approved, rejected, bystander, globex, review] = await Promise.all([
      claimWaitingCharge('page-approve', { description: `receipt to ${RECEIPT_EMAIL}` }),
      claimWaitingCharge('page-reject', { description: INJECTED }),
      claimWaitingCharge('page-bystander'),
      claimWaitingCharge('page-globex', { tenant: 'globex' }),
      claimWaitingCharge('page-review', { amountCents: 1_500_000, expected: 'needs_review' }),
    ]);
    process.stderr.write(`approval page test: stack, browser and 5 actions ready in ${Date.now() - started} ms\n`);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await stack?.stop();
  });

  async function claimWaitingCharge(
    prefix: string,
    opts: { tenant?: string; amountCents?: number; description?: string; expected?: string } = {},
  ): Promise<WaitingAction> {
    const eventId = uniqueEvent(prefix);
    const intent: ChargeIntent = {
      operation: 'charge',
      amountCents: opts.amountCents ?? 7500,
      currency: 'usd',
      customerId: `cus_${opts.tenant ?? 'acme'}`,
      paymentMethod: 'pm_7',
      merchantReference: `ord-${eventId}`.slice(0, 100),
      ...(opts.description !== undefined ? { description: opts.description } : {}),
    };
    const claimed = await stack.retrysafe.claimAction({ tenant: opts.tenant ?? 'acme', eventId }, intent);
    const waiting = await waitForStatus(stack.retrysafe, claimed.key, [
      'awaiting_confirmation',
      'dispatching',
      'confirmed',
      'failed',
      'needs_review',
    ]);
    assert.equal(waiting.status, opts.expected ?? 'awaiting_confirmation', JSON.stringify(waiting.audit));
    return { key: claimed.key, requestHash: claimed.requestHash, intent, reference: intent.merchantReference };
  }

  /** Requests and charge records at the payments provider for one action (by key or reference). */
  async function atProvider(action: WaitingAction) {
    const ledger = await stack.providers.payments.ledger();
    const mine = (r: { idempotencyKey?: string; reference?: string; merchantReference?: string }) =>
      r.idempotencyKey === action.key || r.reference === action.reference || r.merchantReference === action.reference;
    const requests = ledger.requests.filter(mine);
    return {
      requests: requests.length,
      committed: requests.filter((r) => r.outcome === 'committed').length,
      charges: (ledger.records.charges ?? []).filter((c) => mine(c as Parameters<typeof mine>[0])).length,
    };
  }

  const statusOf = async (action: WaitingAction) => (await stack.retrysafe.getAction(action.key))?.status;
  const card = (page: Page, action: WaitingAction) => page.locator(`article.action[data-key="${action.key}"]`);

  /** Opens the queue, reloading while the listing (Temporal visibility) has not caught up with `keys` yet. */
  async function openQueue(page: Page, showing: WaitingAction[] = []): Promise<void> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const res = await page.goto(`${server.url}/queue`);
      assert.equal(res?.status(), 200);
      const counts = await Promise.all(showing.map((a) => card(page, a).count()));
      if (counts.every((n) => n === 1)) return;
      if (Date.now() > deadline) assert.fail(`the queue did not list ${showing.map((a) => a.key).join(', ')}`);
      await sleep(300);
    }
  }

  /** Clicks `button` and waits for the page the browser lands on (after the post's redirect, if any). */
  async function submit(page: Page, click: () => Promise<void>) {
    const [res] = await Promise.all([page.waitForNavigation(), click()]);
    return res;
  }

  async function notice(page: Page) {
    const el = page.locator('#notice');
    return {
      outcome: await el.getAttribute('data-outcome'),
      reason: await el.getAttribute('data-reason'),
      text: (await el.innerText()).replace(/\s+/g, ' '),
    };
  }

  async function decide(page: Page, action: WaitingAction, decision: 'Approve' | 'Reject', reason: string) {
    const form = card(page, action).locator('form.decision');
    await form.locator('input[name="reason"]').fill(reason);
    return submit(page, () => form.getByRole('button', { name: decision }).click());
  }

  /** Sets a hidden field of `action`'s decision form, as a person editing the page (or a forged form) would. */
  async function setHidden(page: Page, action: WaitingAction, field: string, value: string) {
    await card(page, action)
      .locator(`form.decision input[name="${field}"]`)
      .evaluate((input, v) => input.setAttribute('value', v), value);
  }

  async function signIn(context: BrowserContext, token: string): Promise<Page> {
    const page = await context.newPage();
    await page.goto(`${server.url}/sign-in`);
    await page.locator('input[name="token"]').fill(token);
    const res = await submit(page, () => page.getByRole('button', { name: 'Sign in' }).click());
    assert.equal(res?.status(), 200);
    assert.equal(new URL(page.url()).pathname, '/queue');
    return page;
  }

  async function sessionCookieOf(context: BrowserContext) {
    const cookies = (await context.cookies(server.url)).filter((c) => c.name === 'retrysafe-session');
    assert.equal(cookies.length, 1, JSON.stringify(cookies));
    return cookies[0];
  }

  it('serves the page only when given Temporal, and the JSON API beside it as before', async () => {
    const apiOnly = await startApprovalServer(signer, { port: 0 });
    try {
      const res = await fetch(`${apiOnly.url}/sign-in`);
      assert.equal(res.status, 404);
      assert.equal(((await res.json()) as { error: string }).error, 'not-found');
    } finally {
      await apiOnly.close();
    }
    const key = await fetch(`${server.url}/public-key`);
    assert.deepEqual(await key.json(), { keyId: KEYS.keyId, publicKey: KEYS.publicKeyHex });
    const api = await fetch(`${server.url}/decisions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${DANA_TOKEN}` },
      body: JSON.stringify({ key: bystander.key, requestHash: bystander.requestHash, decision: 'reject' }),
    });
    assert.equal(api.status, 200, 'the JSON API still signs (the envelope is not delivered)');
    assert.equal(((await api.json()) as { claims: { operator: string } }).claims.operator, 'dana');
    // On loopback the page answers loopback names only (a DNS-rebinding guard); the JSON API is unchanged.
    const port = new URL(server.url).port;
    assert.equal(await statusForHost('/sign-in', `localhost:${port}`), 200);
    assert.equal(await statusForHost('/sign-in', `rebound.example:${port}`), 421);
    assert.equal(await statusForHost('/public-key', `rebound.example:${port}`), 200);
  });

  /** GET `path` with this Host header (fetch does not let a caller set it). */
  function statusForHost(route: string, host: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const req = http.get(`${server.url}${route}`, { headers: { host } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
    });
  }

  it('refuses a wrong token, then signs in into a new HttpOnly, SameSite=Strict session; no page shows a token', async () => {
    dana = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await dana.newPage();
    const shown = await page.goto(`${server.url}/sign-in`);
    const headers = shown!.headers();
    assert.equal(headers['content-security-policy'], CONTENT_SECURITY_POLICY);
    assert.match(CONTENT_SECURITY_POLICY, /default-src 'none'; script-src 'self'; style-src 'self'/);
    assert.equal(headers['x-frame-options'], 'DENY');
    assert.equal(headers['referrer-policy'], 'no-referrer');
    assert.equal(headers['cache-control'], 'no-store');
    const anonymous = await sessionCookieOf(dana);
    assert.equal(anonymous.httpOnly, true);
    assert.equal(anonymous.sameSite, 'Strict');
    assert.equal(anonymous.path, '/');
    signInFormToken = (await page.locator('input[name="csrf"]').getAttribute('value'))!;
    assert.match(signInFormToken, /^[A-Za-z0-9_-]{43}$/);
    if (SCREENSHOTS) {
      await mkdir(IMAGES, { recursive: true });
      await page.screenshot({ path: path.join(IMAGES, 'approval-page-sign-in.png') });
    }

    const wrong = 'not-danas-token-0000000000000000';
    await page.locator('input[name="token"]').fill(wrong);
    const refused = await submit(page, () => page.getByRole('button', { name: 'Sign in' }).click());
    assert.equal(refused?.status(), 401);
    assert.match(await page.locator('#sign-in-error').innerText(), /not recognized/);
    assert.equal(await page.locator('input[name="token"]').inputValue(), '', 'the token field is not filled again');
    assert.ok(!(await page.content()).includes(wrong), 'the wrong token is not echoed');
    assert.equal((await page.goto(`${server.url}/queue`))?.url(), `${server.url}/sign-in`, 'still signed out');

    queue = await signIn(dana, DANA_TOKEN);
    assert.match(await queue.locator('#who').innerText(), /Signed in as dana · acme · roles approver, resolver/);
    assert.ok(!(await queue.content()).includes(DANA_TOKEN), 'the token is not on the page');
    const session = await sessionCookieOf(dana);
    assert.notEqual(session.value, anonymous.value, 'signing in starts a new session id');
    assert.deepEqual([session.httpOnly, session.sameSite, session.path], [true, 'Strict', '/']);
    assert.equal(await queue.evaluate('document.cookie'), '', 'no script can read the session cookie');
    assert.notEqual(await queue.locator('input[name="csrf"]').first().getAttribute('value'), signInFormToken);
  });

  it("lists dana's waiting actions with their dry runs, masked and escaped, and never globex's", async () => {
    await openQueue(queue, [approved, rejected, bystander, review]);
    const shown = card(queue, approved);
    assert.equal(await shown.locator('[data-field="target"]').innerText(), 'customer cus_acme (payment method pm_7)');
    assert.equal(await shown.locator('[data-field="amount"]').innerText(), '75.00 USD (7500 minor units)');
    assert.equal(await shown.locator('[data-field="request-hash"]').innerText(), approved.requestHash);
    assert.equal(await shown.locator('input[name="requestHash"]').getAttribute('value'), approved.requestHash);
    assert.match(
      await shown.locator('[data-field="policy"]').innerText(),
      /^confirm \(money-movement\): .*money\.confirm/,
    );
    const payload = await shown.locator('[data-field="payload"]').innerText();
    assert.match(payload, new RegExp(`merchantReference\\s+${approved.reference}`));
    assert.match(payload, /description\s+r\*\*\*@example\.com/, payload);
    const link = shown.locator('a[data-field="web-ui"]');
    assert.equal(
      await link.getAttribute('href'),
      `${WEB_UI}/namespaces/${stack.server.namespace}/workflows/${encodeURIComponent(approved.key)}`,
    );
    assert.equal(await link.getAttribute('rel'), 'noopener noreferrer');

    const html = await queue.content();
    assert.ok(!html.includes(RECEIPT_EMAIL), 'the email address in the description is masked');
    assert.ok(!html.includes('jane.doe'), 'no part of the email address before the @ is shown');
    assert.ok(!html.includes(globex.key), 'the globex action is not listed for an acme operator');
    assert.equal(await queue.locator('article.action[data-key*=":globex:"]').count(), 0);
    // Markup in an intent is text on the page: escaped, never run.
    assert.match(await card(queue, rejected).locator('[data-field="payload"]').innerText(), /<script>document\.title/);
    assert.ok(html.includes('&lt;script&gt;document.title'), 'the markup is escaped');
    assert.notEqual(await queue.title(), 'pwned');
    assert.equal(await queue.locator('#review article.action').count(), 1);
    if (SCREENSHOTS) await queue.screenshot({ path: path.join(IMAGES, 'approval-page-queue.png'), fullPage: true });
  });

  it('approves from the page: one charge at the provider; the same form in two stale tabs is refused and sends nothing', async () => {
    const staleApprove = await dana.newPage();
    const staleReject = await dana.newPage();
    await openQueue(queue, [approved]);
    await openQueue(staleApprove, [approved]);
    await openQueue(staleReject, [approved]);
    const before = signed.length;

    await decide(queue, approved, 'Approve', 'customer confirmed on the phone');
    const done = await notice(queue);
    assert.equal(done.outcome, 'done', done.text);
    assert.match(done.text, new RegExp(`Approved by dana: ${approved.key}`));
    assert.match(done.text, /The action is now (dispatching|confirmed)\./);
    const after = await waitForStatus(stack.retrysafe, approved.key, ['confirmed', 'failed', 'needs_review'], {
      timeoutMs: 30_000,
    });
    assert.equal(after.status, 'confirmed', JSON.stringify(after.audit));
    assert.equal(after.approvedBy, 'dana');
    assert.deepEqual(
      signed.slice(before).map((e) => [e.operator, e.key, e.decision]),
      [['dana', approved.key, 'approve']],
    );
    assert.deepEqual(await atProvider(approved), { requests: 1, committed: 1, charges: 1 });

    await decide(staleApprove, approved, 'Approve', 'approving again from an old tab');
    const again = await notice(staleApprove);
    assert.deepEqual([again.outcome, again.reason], ['refused', 'stale-form'], again.text);
    assert.match(again.text, /is confirmed now/);
    await decide(staleReject, approved, 'Reject', 'rejecting from an old tab');
    assert.equal((await notice(staleReject)).reason, 'stale-form');
    assert.equal(signed.length, before + 1, 'nothing was signed for the stale forms');
    await sleep(SETTLE_MS);
    const settled = await stack.retrysafe.getAction(approved.key);
    assert.equal(settled?.status, 'confirmed');
    assert.equal(settled?.dispatches, 1);
    assert.deepEqual(await atProvider(approved), { requests: 1, committed: 1, charges: 1 }, 'no second effect');
    await Promise.all([staleApprove.close(), staleReject.close()]);
  });

  it('refuses a form whose request hash is not the action’s (the workflow says hash-mismatch), then rejects: failed, nothing charged', async () => {
    await openQueue(queue, [rejected]);
    const changed = exampleRegistry().hash(exampleRegistry().parseIntent({ ...rejected.intent, amountCents: 49_900 }));
    assert.notEqual(changed, rejected.requestHash);
    await setHidden(queue, rejected, 'requestHash', changed);
    await decide(queue, rejected, 'Approve', 'approving a changed request');
    const mismatch = await notice(queue);
    assert.deepEqual([mismatch.outcome, mismatch.reason], ['refused', 'hash-mismatch'], mismatch.text);
    assert.match(mismatch.text, /Refused by the action \(hash-mismatch\)/);
    await sleep(SETTLE_MS);
    assert.equal(await statusOf(rejected), 'awaiting_confirmation');
    assert.deepEqual(await atProvider(rejected), { requests: 0, committed: 0, charges: 0 });

    await openQueue(queue, [rejected]);
    await decide(queue, rejected, 'Reject', 'the customer cancelled');
    const done = await notice(queue);
    assert.equal(done.outcome, 'done', done.text);
    assert.match(done.text, /Rejected by dana: .* The action is now failed\./);
    const failed = await waitForStatus(stack.retrysafe, rejected.key, ['failed', 'confirmed', 'needs_review']);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.error?.code, 'DecisionRejected');
    assert.equal(failed.audit.at(-1)?.by, 'dana');
    await sleep(SETTLE_MS);
    assert.deepEqual(await atProvider(rejected), { requests: 0, committed: 0, charges: 0 });
  });

  it("refuses a forged post for globex's action with a valid session and CSRF token; nothing is signed or sent", async () => {
    await openQueue(queue, [bystander]);
    assert.equal(await queue.locator(`[data-key="${globex.key}"]`).count(), 0);
    const before = signed.length;
    await setHidden(queue, bystander, 'key', globex.key);
    await setHidden(queue, bystander, 'requestHash', globex.requestHash);
    await decide(queue, bystander, 'Approve', 'forged for another tenant');
    const refused = await notice(queue);
    assert.deepEqual([refused.outcome, refused.reason], ['refused', 'missing-tenant'], refused.text);
    assert.match(refused.text, /not an operator of tenant globex/);
    assert.equal(signed.length, before, 'nothing was signed');
    await sleep(SETTLE_MS);
    assert.equal(await statusOf(globex), 'awaiting_confirmation');
    assert.equal(await statusOf(bystander), 'awaiting_confirmation');
    assert.deepEqual(await atProvider(globex), { requests: 0, committed: 0, charges: 0 });
    assert.deepEqual(await atProvider(bystander), { requests: 0, committed: 0, charges: 0 });
  });

  it('refuses posts with the CSRF token of another or an earlier session, from another site, or oversized', async () => {
    const other = await browser.newContext();
    const otherPage = await signIn(other, DANA_TOKEN);
    const otherToken = (await otherPage.locator('input[name="csrf"]').first().getAttribute('value'))!;
    await other.close();
    const before = signed.length;
    for (const [name, token] of [
      ['another session', otherToken],
      ['the sign-in form, before signing in', signInFormToken],
    ]) {
      await openQueue(queue, [bystander]);
      await setHidden(queue, bystander, 'csrf', token);
      const res = await decide(queue, bystander, 'Approve', `with the CSRF token of ${name}`);
      assert.equal(res?.status(), 403, name);
      assert.match(await queue.locator('#refusal').innerText(), /CSRF token/, name);
    }

    // The same session's cookie and token, sent from another site: refused on the Origin header alone.
    await openQueue(queue, [bystander]);
    const token = (await card(queue, bystander).locator('input[name="csrf"]').getAttribute('value'))!;
    const form = {
      csrf: token,
      key: bystander.key,
      requestHash: bystander.requestHash,
      decision: 'approve',
      reason: 'posted from another site',
    };
    const crossSite = await dana.request.post(`${server.url}/queue/decide`, {
      form,
      headers: { Origin: 'http://evil.example' },
      maxRedirects: 0,
    });
    assert.equal(crossSite.status(), 403);
    assert.match(await crossSite.text(), /Cross-site request refused/);
    const noOrigin = await dana.request.post(`${server.url}/queue/decide`, { form, maxRedirects: 0 });
    assert.equal(noOrigin.status(), 403, 'a post that names no origin is refused too');
    const oversized = await dana.request.post(`${server.url}/queue/decide`, {
      form: { ...form, reason: 'x'.repeat(9_000) },
      headers: { Origin: server.url },
      maxRedirects: 0,
    });
    assert.equal(oversized.status(), 413);
    // Control: this request context does carry the session, so the refusals above are the origin check's.
    const sameSite = await dana.request.post(`${server.url}/queue/decide`, {
      form: { ...form, decision: 'maybe' },
      headers: { Origin: server.url },
      maxRedirects: 0,
    });
    assert.equal(sameSite.status(), 303, 'session and token accepted');
    await openQueue(queue);
    assert.match((await notice(queue)).text, /decision must be approve or reject/);

    assert.equal(signed.length, before, 'nothing was signed');
    await sleep(SETTLE_MS);
    assert.equal(await statusOf(bystander), 'awaiting_confirmation');
    assert.deepEqual(await atProvider(bystander), { requests: 0, committed: 0, charges: 0 });
  });

  it('resolves a human-only action in needs_review as done by a person, with its provider reference; nothing is sent', async () => {
    await openQueue(queue, [review]);
    const shown = card(queue, review);
    assert.equal(await shown.locator('[data-field="amount"]').innerText(), '15000.00 USD (1500000 minor units)');
    assert.match(await shown.locator('[data-field="policy"]').innerText(), /^human-only/);
    const form = shown.locator('form.resolution');
    assert.deepEqual(await form.locator('select[name="outcome"] option').allInnerTexts(), [
      'choose…',
      'confirmed: it was done (give the provider reference)',
      'failed: it will not be done',
    ]);
    await form.locator('select[name="outcome"]').selectOption('confirmed');
    // The page's script (allowed by the CSP as 'self') asks for the reference a confirmation needs.
    assert.equal(
      await form.locator('input[name="providerRef"]').evaluate((i) => (i as { required: boolean }).required),
      true,
    );
    await form.locator('input[name="providerRef"]').fill('wire-7781');
    await form.locator('input[name="reason"]').fill('wired by treasury after a call with the customer');
    await submit(queue, () => form.getByRole('button', { name: 'Resolve' }).click());
    const done = await notice(queue);
    assert.equal(done.outcome, 'done', done.text);
    assert.match(done.text, /Resolved as confirmed by dana: .* now confirmed \(provider reference wire-7781\)/);
    const after = await stack.retrysafe.getAction(review.key);
    assert.deepEqual([after?.status, after?.providerRef], ['confirmed', 'wire-7781']);
    assert.equal(await queue.locator('#review article.action').count(), 0);
    assert.deepEqual(await atProvider(review), { requests: 0, committed: 0, charges: 0 }, 'the agent sent nothing');
  });

  it('follows the operators file: a narrowed scope hides the actions at once, a re-issued token ends the session', async () => {
    const file = path.join(await mkdtemp(path.join(tmpdir(), 'retrysafe-operators-')), 'operators.json');
    const RILEY_TOKEN = 'approval-page-riley-token-2b4d6f8a0c1e3a5c7e9a';
    const riley = (tenants: string[], token = RILEY_TOKEN, addedAt?: string) => ({
      name: 'riley',
      tokenSha256: hashOperatorToken(token),
      tenants,
      roles: ['approver'] as Role[],
      ...(addedAt ? { addedAt } : {}),
    });
    await writeFile(file, JSON.stringify({ operators: [riley(['acme'])] }));
    const fileSigner = createApprovalSigner({
      privateKeyHex: KEYS.privateKeyHex,
      keyId: KEYS.keyId,
      operators: [riley(['acme'])],
      operatorsFile: file,
    });
    const own = await startApprovalServer(fileSigner, {
      port: 0,
      temporal: { client: stack.client, namespace: stack.server.namespace },
    });
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${own.url}/sign-in`);
      await page.locator('input[name="token"]').fill(RILEY_TOKEN);
      await submit(page, () => page.getByRole('button', { name: 'Sign in' }).click());
      const listed = async () => {
        await page.goto(`${own.url}/queue`);
        return card(page, bystander).count();
      };
      const deadline = Date.now() + 15_000;
      while ((await listed()) === 0 && Date.now() < deadline) await sleep(300);
      assert.equal(await card(page, bystander).count(), 1, 'riley sees the acme action');

      await writeFile(file, JSON.stringify({ operators: [riley(['globex'])] }));
      assert.equal(await listed(), 0, 'narrowed to globex: the acme action is gone from the queue');
      assert.match(await page.locator('#who').innerText(), /Signed in as riley · globex/);

      await writeFile(
        file,
        JSON.stringify({ operators: [riley(['acme'], 'a-new-token-for-riley-0000000000', new Date().toISOString())] }),
      );
      const res = await page.goto(`${own.url}/queue`);
      assert.equal(res?.url(), `${own.url}/sign-in`, 'a re-issued token ends the session');
      await page.locator('input[name="token"]').fill('a-new-token-for-riley-0000000000');
      await submit(page, () => page.getByRole('button', { name: 'Sign in' }).click());
      assert.equal(new URL(page.url()).pathname, '/queue', 'the new token signs in');
    } finally {
      await context.close();
      await own.close();
      await rm(path.dirname(file), { recursive: true, force: true });
    }
  });

  it('signs out: the session ends, and its cookie and CSRF token are refused afterwards', async () => {
    await openQueue(queue, [bystander]);
    const cookie = await sessionCookieOf(dana);
    const token = (await card(queue, bystander).locator('input[name="csrf"]').getAttribute('value'))!;
    await submit(queue, () => queue.getByRole('button', { name: 'Sign out' }).click());
    assert.equal(new URL(queue.url()).pathname, '/sign-in');
    assert.match(await queue.locator('#signed-out').innerText(), /signed out/);
    assert.equal((await queue.goto(`${server.url}/queue`))?.url(), `${server.url}/sign-in`);

    const replay = await browser.newContext();
    await replay.addCookies([{ ...cookie }]);
    const page = await replay.newPage();
    assert.equal((await page.goto(`${server.url}/queue`))?.url(), `${server.url}/sign-in`, 'the old cookie is dead');
    const res = await replay.request.post(`${server.url}/queue/decide`, {
      form: {
        csrf: token,
        key: bystander.key,
        requestHash: bystander.requestHash,
        decision: 'approve',
        reason: 'replayed after sign-out',
      },
      headers: { Origin: server.url },
      maxRedirects: 0,
    });
    assert.equal(res.status(), 401);
    await replay.close();
    await dana.close();
    await sleep(SETTLE_MS);
    assert.equal(await statusOf(bystander), 'awaiting_confirmation');
    assert.deepEqual(await atProvider(bystander), { requests: 0, committed: 0, charges: 0 });
  });
});

describe('approval page display masking', () => {
  it('masks email addresses and card numbers at any depth and hides credential-named fields', () => {
    const shown = maskForDisplay({
      operation: 'notify',
      to: 'j***@example.com',
      note: 'copy to ops.lead@example.org please',
      nested: { contact: { email: 'sam.smith@example.net' }, cards: ['paid with 4242 4242 4242 4242'] },
      apiKey: 'sk_live_123',
      webhookSecret: { value: 'whsec_abc' },
    });
    assert.deepEqual(shown, {
      operation: 'notify',
      to: 'j***@example.com',
      note: 'copy to o***@example.org please',
      nested: { contact: { email: 's***@example.net' }, cards: ['paid with •••• 4242'] },
      apiKey: HIDDEN_VALUE,
      webhookSecret: HIDDEN_VALUE,
    });
  });
});

describe('approval page sessions', () => {
  const operator = signer.operators[0];

  it('end after 15 idle minutes, after 8 hours whatever the activity, and sign-in forms after 10 minutes', () => {
    let now = 0;
    const store = createSessionStore({ now: () => now });
    const idle = store.signIn(undefined, operator);
    now += 14 * 60_000;
    assert.equal(store.get(idle.id)?.id, idle.id);
    now += 14 * 60_000;
    assert.equal(store.get(idle.id)?.id, idle.id, 'each request restarts the idle clock');
    now += 15 * 60_000;
    assert.equal(store.get(idle.id), undefined, 'idle for 15 minutes');

    now = 0;
    const busy = store.signIn(undefined, operator);
    for (now = 10 * 60_000; now < 8 * 3_600_000; now += 10 * 60_000) assert.ok(store.get(busy.id), `at ${now}`);
    assert.equal(store.get(busy.id), undefined, 'ended at 8 hours although active');

    now = 0;
    const form = store.startAnonymous();
    now = 9 * 60_000;
    assert.ok(store.get(form.id));
    now = 10 * 60_000;
    assert.equal(store.get(form.id), undefined);
  });

  it('gives each session a random id and CSRF token, and signing in replaces the anonymous session', () => {
    const store = createSessionStore();
    const anonymous = store.startAnonymous();
    const signedIn = store.signIn(anonymous, operator);
    assert.equal(store.get(anonymous.id), undefined);
    assert.equal(store.get(signedIn.id)?.operator?.name, 'dana');
    const ids = new Set([anonymous.id, signedIn.id, anonymous.csrfToken, signedIn.csrfToken]);
    for (let i = 0; i < 50; i++) ids.add(store.startAnonymous().id);
    assert.equal(ids.size, 54);
    for (const id of ids) assert.match(id, /^[A-Za-z0-9_-]{43}$/);
  });

  it('evicts anonymous sessions before signed-in ones when full', () => {
    const store = createSessionStore({ maxSessions: 3 });
    const a = store.signIn(undefined, operator);
    const b = store.signIn(undefined, operator);
    for (let i = 0; i < 10; i++) store.startAnonymous();
    assert.equal(store.size, 3);
    assert.ok(store.get(a.id) && store.get(b.id), 'showing the sign-in form cannot sign anyone out');
  });
});

describe("the page tests' chromium: RETRYSAFE_CHROMIUM, PATH, .tools/chromium-debian, then an install", () => {
  let scratch: string;
  before(async () => {
    scratch = await mkdtemp(path.join(tmpdir(), 'retrysafe-chromium-'));
  });
  after(() => rm(scratch, { recursive: true, force: true }));

  /** Seams that keep the resolver off this machine: nothing on PATH, no unpacked copy, no root, no installers. */
  function isolated(overrides: ResolveChromiumOptions = {}) {
    const calls = { unpacked: 0, systemInstalled: 0 };
    const options: ResolveChromiumOptions = {
      env: { PATH: '' },
      projectRoot: scratch,
      lookupOnPath: async () => undefined,
      checkUnpacked: async () => 'does not exist',
      unpacker: async () => {
        calls.unpacked++;
        throw new Error('apt-get download failed: no network');
      },
      systemInstaller: async () => {
        calls.systemInstalled++;
      },
      isRoot: () => false,
      ...overrides,
    };
    return { options, calls };
  }

  it('takes $RETRYSAFE_CHROMIUM first, and refuses one that points nowhere instead of falling back', async () => {
    const file = path.join(scratch, 'my-chromium');
    await writeFile(file, '#!/bin/sh\n');
    await chmod(file, 0o755);
    const onPath = isolated({ lookupOnPath: async (name) => `/usr/bin/${name}` });
    const env = { RETRYSAFE_CHROMIUM: file, PATH: '/usr/bin' };
    assert.deepEqual(await resolveChromium({ ...onPath.options, env }), {
      name: 'chromium',
      path: file,
      source: 'env',
    });
    await assert.rejects(
      resolveChromium({ ...onPath.options, env: { ...env, RETRYSAFE_CHROMIUM: path.join(scratch, 'missing') } }),
      /\$RETRYSAFE_CHROMIUM is set to .*missing, which does not exist\. Fix or unset RETRYSAFE_CHROMIUM/,
    );
  });

  it('then PATH (chromium, chromium-browser, google-chrome-stable, google-chrome), then the unpacked copy', async () => {
    const seen: string[] = [];
    const onPath = isolated({
      lookupOnPath: async (name) => (
        seen.push(name),
        name === 'chromium-browser' ? '/snap/bin/chromium-browser' : undefined
      ),
    });
    assert.deepEqual(await resolveChromium(onPath.options), {
      name: 'chromium',
      path: '/snap/bin/chromium-browser',
      source: 'path',
    });
    assert.deepEqual(seen, ['chromium', 'chromium-browser']);
    const cached = isolated({ checkUnpacked: async () => undefined });
    const found = await resolveChromium(cached.options);
    assert.deepEqual(
      [found.source, found.path],
      ['project-local', path.join(scratch, '.tools', 'chromium-debian', 'chromium')],
    );
    assert.deepEqual(cached.calls, { unpacked: 0, systemInstalled: 0 }, 'nothing is installed when a copy runs');
  });

  it('unpacks into .tools/ when nothing is found, once', async () => {
    let unpacked = false;
    const fresh = isolated({
      checkUnpacked: async () => (unpacked ? undefined : 'does not exist'),
      unpacker: async () => {
        unpacked = true;
      },
    });
    assert.equal((await resolveChromium(fresh.options)).source, 'project-local');
    assert.equal((await resolveChromium(fresh.options)).source, 'project-local');
  });

  it('falls back to apt-get install as root, and otherwise says what each source answered', async () => {
    let installed = false;
    const root = isolated({
      isRoot: () => true,
      lookupOnPath: async (name) => (installed && name === 'chromium' ? '/usr/bin/chromium' : undefined),
      systemInstaller: async () => {
        installed = true;
      },
    });
    assert.deepEqual(await resolveChromium(root.options), {
      name: 'chromium',
      path: '/usr/bin/chromium',
      source: 'system-package',
    });

    const user = isolated();
    await assert.rejects(resolveChromium(user.options), (err) => {
      assert.ok(err instanceof ToolchainError);
      assert.equal(err.attempts.length, 5);
      const lines = err.message.split('\n');
      assert.match(lines[1], /1\. \$RETRYSAFE_CHROMIUM: not set/);
      assert.match(lines[2], /2\. PATH: no executable named chromium, chromium-browser/);
      assert.match(lines[3], /3\. project-local: .*chromium-debian\/chromium does not exist/);
      assert.match(lines[4], /4\. unpack Debian's chromium into \.tools\/: apt-get download failed: no network/);
      assert.match(
        lines[5],
        /5\. apt-get install chromium: skipped, not running as root \(sudo apt-get install chromium\)/,
      );
      assert.match(err.message, /Set RETRYSAFE_CHROMIUM to a Chromium or Chrome executable/);
      return true;
    });
    assert.deepEqual(user.calls, { unpacked: 1, systemInstalled: 0 });
    const noInstall = isolated();
    await assert.rejects(resolveChromium({ ...noInstall.options, install: false }), /install: skipped/);
    assert.equal(noInstall.calls.unpacked, 0);
  });
});
