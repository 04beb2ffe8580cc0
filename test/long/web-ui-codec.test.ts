import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Payload } from '@temporalio/common';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { payloadCodecFromEnv, payloadKeysFileEnv } from '../../codec/codec-config';
import type { SendEmailIntent } from '../../examples/tools';
import { generateApprovalKeyPair } from '../../cli/approvals/approval-keys';
import { startApprovalServer, type ApprovalServer } from '../../cli/approvals/approval-http';
import {
  createApprovalSigner,
  hashOperatorToken,
  operatorScopesOf,
  submitApproval,
} from '../../cli/approvals/approval-signer';
import { getFreePort } from '../../cli/dev/free-port';
import { startStack, type Stack } from '../../scripts/lib/stack';
import { launchChromium } from '../support/browser';
import { uniqueEvent } from '../support/renewal-input';
import { letterMarker } from '../support/intents';
import { waitForStatus } from '../support/wait';

/**
 * The Web UI decodes encrypted payloads through the approval service's codec endpoint, and only for an
 * operator signed in to the approval page. Driven from a real Chromium page on the Web UI's own origin,
 * as the UI's remote codec calls it (`credentials: 'include'`): the browser decides which cookie is sent
 * and which answer a page may read.
 */
const KEYS = generateApprovalKeyPair();
const TOKEN = `web-ui-codec-${randomBytes(8).toString('hex')}`;
const SCOPED_TOKEN = `web-ui-codec-acme-${randomBytes(8).toString('hex')}`;
const OPERATORS = [
  // Payloads name no tenant, so only an operator of every tenant may read them decoded.
  { name: 'ava', tokenSha256: hashOperatorToken(SCOPED_TOKEN), tenants: ['acme'], roles: ['approver' as const] },
  { name: 'dana', tokenSha256: hashOperatorToken(TOKEN), tenants: ['*'], roles: ['approver' as const] },
];
const signer = createApprovalSigner({ privateKeyHex: KEYS.privateKeyHex, keyId: KEYS.keyId, operators: OPERATORS });
const MARKER = letterMarker();

/** Waits until the page's visible text contains `text` (the Web UI renders payloads after it has decoded them). */
async function pageShows(page: Page, text: string): Promise<void> {
  await page.waitForFunction(
    (t) => (globalThis as unknown as { document: { body: { innerText: string } } }).document.body.innerText.includes(t),
    text,
    { timeout: 30_000 },
  );
}

/** What a page's fetch of the codec endpoint saw: the status, or the error when the browser blocked it. */
type Seen = { status: number; body: string } | { blocked: string };

describe('the Web UI decodes payloads through the codec endpoint, for a signed-in operator only', () => {
  let stack: Stack;
  let approvals: ApprovalServer;
  let browser: Browser;
  let context: BrowserContext;
  let webUiUrl: string;
  let stored: Payload;
  let actionKey: string;
  let elsewhere: http.Server;
  let elsewhereUrl: string;

  /** POSTs `{ payloads: [stored] }` to /codec/decode from a page, as the Web UI does. */
  async function decodeFrom(page: Page): Promise<Seen> {
    const body = JSON.stringify({
      payloads: [
        {
          metadata: Object.fromEntries(
            Object.entries(stored.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
          ),
          data: Buffer.from(stored.data ?? []).toString('base64'),
        },
      ],
    });
    return page.evaluate(
      async ({ url, body }) => {
        try {
          const res = await fetch(url, {
            method: 'POST',
            credentials: 'include',
            headers: { 'content-type': 'application/json', 'x-namespace': 'default' },
            body,
          });
          return { status: res.status, body: await res.text() };
        } catch (err) {
          return { blocked: String(err) };
        }
      },
      { url: `${approvals.url}/codec/decode`, body },
    );
  }

  const decodedText = (seen: Seen) => {
    assert.ok('status' in seen, `the browser blocked the request: ${JSON.stringify(seen)}`);
    assert.equal(seen.status, 200, seen.body);
    const [payload] = (JSON.parse(seen.body) as { payloads: Array<{ data: string }> }).payloads;
    return Buffer.from(payload.data, 'base64').toString('utf8');
  };

  before(async () => {
    const approvalsPort = await getFreePort();
    stack = await startStack({
      providerKinds: ['email'],
      uiPort: 0,
      payloadEncryption: {},
      uiCodecEndpoint: `http://127.0.0.1:${approvalsPort}/codec`,
    });
    await stack.startWorker({
      env: {
        RETRYSAFE_APPROVAL_PUBLIC_KEYS: JSON.stringify({ [KEYS.keyId]: KEYS.publicKeyHex }),
        RETRYSAFE_OPERATOR_SCOPES: JSON.stringify(operatorScopesOf(signer.operators)),
      },
    });
    webUiUrl = stack.server.uiUrl!;
    approvals = await startApprovalServer(signer, {
      port: approvalsPort,
      temporal: { client: stack.client, namespace: stack.server.namespace, webUiUrl },
      codec: {
        codec: payloadCodecFromEnv(payloadKeysFileEnv(stack.payloadKeysFile!))!,
        allowedOrigins: [new URL(webUiUrl).origin],
      },
    });
    // Another origin on loopback, standing in for any other site the operator has open.
    elsewhere = http.createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<p>elsewhere</p>'),
    );
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    elsewhereUrl = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/`;

    const eventId = uniqueEvent('web-ui-codec');
    const intent: SendEmailIntent = {
      operation: 'send-email',
      to: 'customer@example.com',
      subject: 'Your order',
      body: `Thanks, ${MARKER}.`,
    };
    const claimed = await stack.retrysafe.claimAction({ tenant: 'acme', eventId }, intent);
    const waiting = await waitForStatus(stack.retrysafe, claimed.key, 'awaiting_confirmation', { timeoutMs: 30_000 });
    await submitApproval(
      stack.client,
      signer.sign(signer.authenticate(TOKEN)!, {
        key: waiting.key,
        requestHash: waiting.requestHash,
        decision: 'approve',
      }),
    );
    await waitForStatus(stack.retrysafe, claimed.key, 'confirmed', { timeoutMs: 30_000 });
    // The action's input as the server stores it: read with a client that has no codec.
    const { Client } = await import('@temporalio/client');
    const raw = new Client({ connection: stack.connection, namespace: stack.server.namespace });
    const history = await raw.workflow.getHandle(claimed.key).fetchHistory();
    stored = history.events![0].workflowExecutionStartedEventAttributes!.input!.payloads![0] as Payload;
    actionKey = claimed.key;

    browser = await launchChromium();
    context = await browser.newContext();
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await approvals?.close();
    await new Promise((resolve) => elsewhere?.close(resolve));
    await stack?.stop();
  });

  it('stores the payload encrypted: the server holds no plain text of it', () => {
    assert.equal(Buffer.from(stored.metadata!.encoding!).toString(), 'binary/encrypted');
    assert.equal(Buffer.from(stored.data!).includes(MARKER), false);
  });

  it('tells the Web UI where its codec is', async () => {
    const settings = (await (await fetch(`${webUiUrl}/api/v1/settings`)).json()) as { Codec?: { Endpoint?: string } };
    assert.equal(settings.Codec?.Endpoint, `${approvals.url}/codec`);
  });

  it('refuses to decode for the Web UI until an operator signs in, then decodes for it', async () => {
    const ui = await context.newPage();
    await ui.goto(webUiUrl);
    const before = await decodeFrom(ui);
    assert.ok('status' in before, JSON.stringify(before));
    assert.equal(before.status, 401, 'no session: nothing decoded');
    assert.equal(before.body.includes(MARKER), false);

    const page = await context.newPage();
    await page.goto(`${approvals.url}/sign-in`);
    await page.locator('input[name="token"]').fill(TOKEN);
    await Promise.all([page.waitForURL(/\/queue$/), page.getByRole('button', { name: 'Sign in' }).click()]);

    // The same request from the Web UI's page now carries the session cookie (SameSite=Strict: same site).
    assert.match(decodedText(await decodeFrom(ui)), new RegExp(MARKER));
  });

  it('decodes for a bearer token of an operator of every tenant, and for no operator of one tenant', async () => {
    const call = (token: string) =>
      fetch(`${approvals.url}/codec/decode`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({
          payloads: [
            {
              metadata: Object.fromEntries(
                Object.entries(stored.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
              ),
              data: Buffer.from(stored.data ?? []).toString('base64'),
            },
          ],
        }),
      });
    const scoped = await call(SCOPED_TOKEN);
    assert.equal(scoped.status, 401, 'an operator of acme only cannot read payloads that name no tenant');
    assert.equal((await scoped.text()).includes(MARKER), false);
    const all = await call(TOKEN);
    assert.equal(all.status, 200);
    assert.match(await all.text(), /"data"/);
  });

  it('gives another origin nothing, even with the operator signed in', async () => {
    const other = await context.newPage();
    await other.goto(elsewhereUrl);
    const seen = await decodeFrom(other);
    // The browser either blocks the answer (no CORS grant for this origin) or the server refuses it outright.
    assert.ok('blocked' in seen || (seen.status === 403 && !seen.body.includes(MARKER)), JSON.stringify(seen));
  });

  it('the Web UI itself shows the decoded input to a signed-in operator, and ciphertext to anyone else', async () => {
    /** A browser whose Web UI sends cookies to its codec endpoint: the UI's "include cross-origin credentials". */
    const withCodecCredentials = async () => {
      const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      await ctx.addInitScript((endpoint) => {
        const storage = (globalThis as unknown as { localStorage: { setItem(k: string, v: string): void } })
          .localStorage;
        storage.setItem('overrideRemoteCodecConfiguration', 'true');
        storage.setItem('endpoint', JSON.stringify(endpoint));
        storage.setItem('includeCredentials', 'true');
      }, `${approvals.url}/codec`);
      return ctx;
    };
    const workflowPage = async (ctx: BrowserContext) => {
      const page = await ctx.newPage();
      await page.goto(`${webUiUrl}/namespaces/default/workflows/${encodeURIComponent(actionKey)}`);
      return page;
    };

    const stranger = await withCodecCredentials();
    try {
      const page = await workflowPage(stranger);
      // The UI asked the codec, was refused, and says so; it shows the stored ciphertext instead.
      await pageShows(page, 'Codec Server could not');
      assert.equal((await page.locator('body').innerText()).includes(MARKER), false, 'no session: ciphertext only');
    } finally {
      await stranger.close();
    }

    const operator = await withCodecCredentials();
    try {
      const signIn = await operator.newPage();
      await signIn.goto(`${approvals.url}/sign-in`);
      await signIn.locator('input[name="token"]').fill(TOKEN);
      await Promise.all([signIn.waitForURL(/\/queue$/), signIn.getByRole('button', { name: 'Sign in' }).click()]);
      const page = await workflowPage(operator);
      await pageShows(page, MARKER);
      if (process.env.RETRYSAFE_SCREENSHOTS === '1') {
        await page.screenshot({ path: path.join(__dirname, '..', '..', 'docs', 'images', 'web-ui-decoded.png') });
      }
    } finally {
      await operator.close();
    }
  });

  it('stops decoding when the operator signs out', async () => {
    const page = await context.newPage();
    await page.goto(`${approvals.url}/queue`);
    await Promise.all([page.waitForURL(/\/sign-in/), page.getByRole('button', { name: 'Sign out' }).click()]);
    const ui = await context.newPage();
    await ui.goto(webUiUrl);
    const after = await decodeFrom(ui);
    assert.ok('status' in after, JSON.stringify(after));
    assert.equal(after.status, 401);
  });
});
