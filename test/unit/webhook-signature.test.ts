import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { standardWebhookHeaders } from '../../examples/sandbox-providers/webhooks';
import {
  SeenEvents,
  parseWebhookSecrets,
  signatureHeader,
  verifySignature,
  webhookHeaders,
  type WebhookHeaders,
} from '../../workers/webhook-signature';

/** Verification of Standard Webhooks deliveries, by itself: no server, the clock passed in. */

const secretNamed = (name: string) => `whsec_${Buffer.from(name.padEnd(32, '.')).toString('base64')}`;
const OLD = secretNamed('old');
const NEW = secretNamed('new');
const RETIRED = secretNamed('retired');
const NOW = 1_790_000_000;
const ID = 'evt_1';
const BODY = Buffer.from('{"id":"evt_1","type":"charge.succeeded","data":{"id":"ch_1"}}');

function verify(headers: WebhookHeaders, opts: { body?: Buffer; secrets?: string[]; now?: number } = {}) {
  return verifySignature({
    headers,
    rawBody: opts.body ?? BODY,
    secrets: opts.secrets ?? [NEW],
    nowSeconds: opts.now ?? NOW,
  });
}
const failure = (result: ReturnType<typeof verify>) => (result.ok ? 'ok' : result.failure);

describe('webhook signatures (Standard Webhooks)', () => {
  it('signs base64 HMAC-SHA256 of "<id>.<timestamp>.<raw body>" with the decoded secret, as the sandbox does', () => {
    const key = Buffer.from(NEW.slice('whsec_'.length), 'base64');
    const expected = createHmac('sha256', key)
      .update(`${ID}.${NOW}.${BODY.toString('utf8')}`)
      .digest('base64');
    assert.equal(signatureHeader(NEW, ID, NOW, BODY), `v1,${expected}`);
    assert.deepEqual(webhookHeaders(NEW, ID, NOW, BODY), {
      'webhook-id': ID,
      'webhook-timestamp': String(NOW),
      'webhook-signature': `v1,${expected}`,
    });
    // The sandbox's signer is written separately (as a provider's would be); both must agree.
    assert.deepEqual(standardWebhookHeaders(NEW, ID, BODY.toString('utf8'), NOW), webhookHeaders(NEW, ID, NOW, BODY));
  });

  it('accepts a fresh signature by the current secret, answering the message ID', () => {
    assert.deepEqual(verify(webhookHeaders(NEW, ID, NOW, BODY)), { ok: true, id: ID, timestamp: NOW });
  });

  it('accepts the old and the new secret during a rotation, and refuses a retired one', () => {
    const rotating = [NEW, OLD];
    assert.equal(verify(webhookHeaders(OLD, ID, NOW, BODY), { secrets: rotating }).ok, true);
    assert.equal(verify(webhookHeaders(NEW, ID, NOW, BODY), { secrets: rotating }).ok, true);
    assert.equal(failure(verify(webhookHeaders(OLD, ID, NOW, BODY), { secrets: [NEW] })), 'mismatch');
    assert.equal(failure(verify(webhookHeaders(RETIRED, ID, NOW, BODY), { secrets: rotating })), 'mismatch');
  });

  it('accepts a header with one v1 per secret when any of them matches (a provider mid-rotation)', () => {
    const headers = webhookHeaders([RETIRED, NEW], ID, NOW, BODY);
    assert.match(headers['webhook-signature'], /^v1,[A-Za-z0-9+/]+=* v1,[A-Za-z0-9+/]+=*$/);
    assert.equal(verify(headers).ok, true);
  });

  it('refuses a timestamp outside the 5-minute tolerance, either way, and accepts one at its edge', () => {
    for (const skew of [301, -301, 86_400]) {
      assert.equal(failure(verify(webhookHeaders(NEW, ID, NOW - skew, BODY))), 'stale', `skew ${skew}`);
    }
    assert.equal(verify(webhookHeaders(NEW, ID, NOW - 300, BODY)).ok, true);
    assert.equal(verify(webhookHeaders(NEW, ID, NOW + 300, BODY)).ok, true);
  });

  it('refuses an old signature given a new timestamp, or another message ID', () => {
    const old = webhookHeaders(NEW, ID, NOW - 3600, BODY);
    assert.equal(failure(verify({ ...old, 'webhook-timestamp': String(NOW) })), 'mismatch');
    assert.equal(failure(verify({ ...webhookHeaders(NEW, ID, NOW, BODY), 'webhook-id': 'evt_2' })), 'mismatch');
  });

  it('verifies the raw bytes: a changed or re-serialized body no longer matches', () => {
    const headers = webhookHeaders(NEW, ID, NOW, BODY);
    const tampered = Buffer.from(BODY.toString('utf8').replace('ch_1', 'ch_2'));
    const reserialized = Buffer.from(JSON.stringify(JSON.parse(BODY.toString('utf8')), null, 1));
    for (const body of [tampered, reserialized]) assert.equal(failure(verify(headers, { body })), 'mismatch');
  });

  it('refuses unsigned and malformed headers', () => {
    const good = webhookHeaders(NEW, ID, NOW, BODY);
    assert.equal(failure(verify({ ...good, 'webhook-signature': undefined })), 'unsigned');
    assert.equal(failure(verify({ ...good, 'webhook-signature': '  ' })), 'unsigned');
    for (const headers of [
      { ...good, 'webhook-id': undefined },
      { ...good, 'webhook-id': 'x'.repeat(256) },
      { ...good, 'webhook-timestamp': undefined },
      { ...good, 'webhook-timestamp': 'abc' },
      { ...good, 'webhook-timestamp': '-5' },
      { ...good, 'webhook-signature': good['webhook-signature'].replace('v1,', 'v1=') },
      { ...good, 'webhook-signature': 'garbage' },
    ]) {
      assert.equal(failure(verify(headers)), 'malformed', JSON.stringify(headers));
    }
    // Unknown schemes are ignored, as long as a v1 is present.
    assert.equal(verify({ ...good, 'webhook-signature': `v1a,abc ${good['webhook-signature']}` }).ok, true);
  });

  it('refuses everything for a provider with no usable secret (never an empty or short key)', () => {
    const headers = webhookHeaders(secretNamed(''), ID, NOW, BODY);
    for (const secrets of [[], [''], ['short'], ['whsec_c2hvcnQ=']]) {
      assert.equal(failure(verify(headers, { secrets })), 'no-secret');
    }
  });
});

describe('RETRYSAFE_WEBHOOK_SECRETS', () => {
  it('reads {provider: [secret, ...]}, a single string as a list of one, and drops empty entries', () => {
    assert.deepEqual(parseWebhookSecrets(JSON.stringify({ payments: [NEW, OLD], email: NEW, tickets: [NEW, ''] })), {
      payments: [NEW, OLD],
      email: [NEW],
      tickets: [NEW],
    });
  });

  it('refuses to start without secrets, and names the problem without printing a secret', () => {
    const cases: Array<[string | undefined, RegExp]> = [
      [undefined, /not set/],
      ['', /not set/],
      ['not json', /not JSON/],
      ['{}', /names no provider/],
      [JSON.stringify({ payments: [] }), /payments: at least one secret/],
      [JSON.stringify({ payments: ['', ''] }), /payments: at least one secret/],
      [
        JSON.stringify({ payments: ['tooshort'] }),
        /payments\.0: a signing secret is whsec_ and the base64 of at least 24/,
      ],
      [JSON.stringify({ payments: [NEW, OLD, RETIRED] }), /payments: at most two secrets/],
      [JSON.stringify({ 'Pay Ments': [NEW] }), /provider name/],
    ];
    for (const [json, message] of cases) {
      assert.throws(
        () => parseWebhookSecrets(json),
        (err: Error) => {
          assert.match(err.message, message);
          assert.ok(!err.message.includes('tooshort') && !err.message.includes(NEW), err.message);
          return true;
        },
        String(json),
      );
    }
  });
});

describe('seen event IDs', () => {
  it('takes an ID once per provider until it expires, and gives it back on release', () => {
    const seen = new SeenEvents(1_000);
    assert.equal(seen.claim('payments', 'evt_1', 0), true);
    assert.equal(seen.claim('payments', 'evt_1', 10), false, 'a replay');
    assert.equal(seen.claim('email', 'evt_1', 10), true, 'another provider has its own IDs');
    seen.release('payments', 'evt_1');
    assert.equal(seen.claim('payments', 'evt_1', 20), true, 'released after a failed routing');
    assert.equal(seen.claim('payments', 'evt_1', 500), false);
    assert.equal(seen.claim('payments', 'evt_1', 1_021), true, 'expired: its signature is stale by now anyway');
  });

  it('holds at most its capacity per provider, dropping the oldest', () => {
    const seen = new SeenEvents(60_000, 3);
    for (const id of ['a', 'b', 'c', 'd']) assert.equal(seen.claim('p', id, 0), true);
    assert.equal(seen.claim('p', 'd', 1), false);
    assert.equal(seen.claim('p', 'a', 1), true, 'the oldest was dropped');
  });
});
