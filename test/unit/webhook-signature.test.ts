import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { signPayload } from '../../examples/sandbox-providers/webhooks';
import {
  SeenEvents,
  computeSignature,
  parseSignatureHeader,
  parseWebhookSecrets,
  signatureHeader,
  verifySignature,
} from '../../workers/webhook-signature';

/** Verification of signed webhooks, by itself: no server, the clock passed in. */

const OLD = 'whsec_old_0123456789abcdef';
const NEW = 'whsec_new_0123456789abcdef';
const RETIRED = 'whsec_retired_0123456789ab';
const NOW = 1_790_000_000;
const BODY = Buffer.from('{"id":"evt_1","type":"charge.succeeded","data":{"id":"ch_1"}}');

function verify(header: string | undefined, opts: { body?: Buffer; secrets?: string[]; now?: number } = {}) {
  return verifySignature({
    header,
    rawBody: opts.body ?? BODY,
    secrets: opts.secrets ?? [NEW],
    nowSeconds: opts.now ?? NOW,
  });
}

describe('webhook signatures', () => {
  it('signs HMAC-SHA256 of "<t>.<raw body>" in hex, as the sandbox providers do', () => {
    const expected = createHmac('sha256', NEW)
      .update(`${NOW}.${BODY.toString('utf8')}`)
      .digest('hex');
    assert.equal(computeSignature(NEW, NOW, BODY), expected);
    assert.equal(signatureHeader(NEW, NOW, BODY), `t=${NOW},v1=${expected}`);
    // The sandbox's signer is written separately (as a third party's would be); both must agree.
    assert.equal(signPayload(NEW, BODY.toString('utf8'), NOW), signatureHeader(NEW, NOW, BODY));
  });

  it('accepts a fresh signature by the current secret', () => {
    assert.deepEqual(verify(signatureHeader(NEW, NOW, BODY)), { ok: true, timestamp: NOW });
  });

  it('accepts the old and the new secret during a rotation, and refuses a retired one', () => {
    const rotating = [NEW, OLD];
    assert.equal(verify(signatureHeader(OLD, NOW, BODY), { secrets: rotating }).ok, true);
    assert.equal(verify(signatureHeader(NEW, NOW, BODY), { secrets: rotating }).ok, true);
    const retired = verify(signatureHeader(OLD, NOW, BODY), { secrets: [NEW] });
    assert.deepEqual(retired.ok ? undefined : retired.failure, 'mismatch');
    const unknown = verify(signatureHeader(RETIRED, NOW, BODY), { secrets: rotating });
    assert.deepEqual(unknown.ok ? undefined : unknown.failure, 'mismatch');
  });

  it('accepts a header with one v1 per secret when any of them matches (a provider mid-rotation)', () => {
    const header = signatureHeader([RETIRED, NEW], NOW, BODY);
    assert.match(header, /^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    assert.equal(verify(header).ok, true);
  });

  it('refuses a timestamp outside the 5-minute tolerance, either way, and accepts one at its edge', () => {
    for (const skew of [301, -301, 86_400]) {
      const result = verify(signatureHeader(NEW, NOW - skew, BODY));
      assert.equal(result.ok ? 'ok' : result.failure, 'stale', `skew ${skew}`);
    }
    assert.equal(verify(signatureHeader(NEW, NOW - 300, BODY)).ok, true);
    assert.equal(verify(signatureHeader(NEW, NOW + 300, BODY)).ok, true);
  });

  it('refuses a stale timestamp even if the attacker re-signs the old v1 with a new t', () => {
    const old = parseSignatureHeader(signatureHeader(NEW, NOW - 3600, BODY))!;
    const result = verify(`t=${NOW},v1=${old.signatures[0]}`);
    assert.equal(result.ok ? 'ok' : result.failure, 'mismatch');
  });

  it('verifies the raw bytes: a changed or re-serialized body no longer matches', () => {
    const header = signatureHeader(NEW, NOW, BODY);
    const tampered = Buffer.from(BODY.toString('utf8').replace('ch_1', 'ch_2'));
    const reserialized = Buffer.from(JSON.stringify(JSON.parse(BODY.toString('utf8')), null, 1));
    for (const body of [tampered, reserialized]) {
      const result = verify(header, { body });
      assert.equal(result.ok ? 'ok' : result.failure, 'mismatch');
    }
  });

  it('refuses unsigned and malformed headers', () => {
    assert.equal((verify(undefined) as { failure: string }).failure, 'unsigned');
    assert.equal((verify('  ') as { failure: string }).failure, 'unsigned');
    const sig = computeSignature(NEW, NOW, BODY);
    for (const header of [
      `v1=${sig}`,
      `t=${NOW}`,
      `t=${NOW},v1=nothex`,
      `t=${NOW},v1=${sig.slice(0, 40)}`,
      `t=abc,v1=${sig}`,
      `t=${NOW},t=${NOW},v1=${sig}`,
      `t=-5,v1=${sig}`,
      'garbage',
      `t=${NOW};v1=${sig}`,
    ]) {
      assert.equal((verify(header) as { failure?: string }).failure, 'malformed', header);
    }
    // Unknown schemes are ignored, as long as a v1 is present.
    assert.equal(verify(`t=${NOW},v0=abc,v1=${sig}`).ok, true);
  });

  it('refuses everything for a provider with no usable secret (never an empty-key HMAC)', () => {
    const emptyKeySig = signatureHeader('', NOW, BODY);
    for (const secrets of [[], [''], ['short']]) {
      const result = verify(emptyKeySig, { secrets });
      assert.equal(result.ok ? 'ok' : result.failure, 'no-secret');
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
      [JSON.stringify({ payments: ['tooshort'] }), /payments\.0: a signing secret has at least 16/],
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
