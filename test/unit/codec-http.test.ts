import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { after, before, beforeEach, describe, it } from 'node:test';
import { defaultPayloadConverter, type Payload, type PayloadCodec } from '@temporalio/common';
import { AesGcmPayloadCodec } from '../../codec/aes-gcm-codec';
import { Hono } from 'hono';
import { createCodecRoutes } from '../../cli/approvals/codec-http';
import { listenHttp, type HttpListener } from '../../workers/http-listener';

const UI_ORIGIN = 'http://127.0.0.1:8233';
const TOKEN = 'codec-test-token-7c1f';
const MAX_BODY = 2048;
const SECRET = { body: `marker-${randomBytes(8).toString('hex')}`, paymentMethod: 'pm_codec_test' };

const real = new AesGcmPayloadCodec({ activeKeyId: 'k1', keys: new Map([['k1', randomBytes(32)]]) });
/** The real codec, counting its calls: a refused request must not reach it. */
const calls = { encode: 0, decode: 0 };
const codec: PayloadCodec = {
  encode: (p) => ((calls.encode += 1), real.encode(p)),
  decode: (p) => ((calls.decode += 1), real.decode(p)),
};
const served: Array<{ operator: string; operation: string; namespace?: string; payloads: number }> = [];

const b64 = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('base64');
const toJson = (p: Payload) => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, b64(v)])),
  data: b64(p.data),
});
const fromJson = (p: { metadata: Record<string, string>; data: string }): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: Buffer.from(p.data, 'base64'),
});

describe('codec server handler (remote codec protocol)', () => {
  let server: HttpListener;
  let base: string;

  before(async () => {
    const routes = createCodecRoutes({
      codec,
      allowedOrigins: [UI_ORIGIN],
      maxBodyBytes: MAX_BODY,
      async authorize(c) {
        return c.req.header('authorization') === `Bearer ${TOKEN}` ? { operator: 'dana' } : undefined;
      },
      onServed: (event) => served.push(event),
    });
    // Mounted as the approval service mounts it: /codec/<subpath>.
    const app = new Hono().route('/codec', routes);
    server = await listenHttp(app, { port: 0, host: '127.0.0.1' });
    base = `${server.origin}/codec`;
  });
  after(() => server.close());
  beforeEach(() => {
    calls.encode = calls.decode = 0;
    served.length = 0;
  });

  const post = (subpath: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}${subpath}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-namespace': 'default', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const auth = { authorization: `Bearer ${TOKEN}` };

  async function encryptedBody() {
    return { payloads: (await real.encode([defaultPayloadConverter.toPayload(SECRET)])).map(toJson) };
  }

  it('answers an unauthenticated request 401 and decodes nothing', async () => {
    const body = await encryptedBody();
    for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: TOKEN }] as Record<
      string,
      string
    >[]) {
      const res = await post('/decode', body, headers);
      assert.equal(res.status, 401);
      assert.equal(res.headers.get('cache-control'), 'no-store');
      const text = await res.text();
      assert.equal(text.includes(SECRET.body), false);
      assert.deepEqual(JSON.parse(text), { error: 'authentication required' });
    }
    assert.equal((await post('/encode', { payloads: [] })).status, 401);
    assert.deepEqual(calls, { encode: 0, decode: 0 }, 'the codec was never called');
    assert.deepEqual(served, []);
  });

  it('decodes with authorization: the payloads come back as they were before encryption', async () => {
    const res = await post('/decode', await encryptedBody(), auth);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    const { payloads } = (await res.json()) as { payloads: Array<{ metadata: Record<string, string>; data: string }> };
    assert.equal(payloads.length, 1);
    assert.equal(Buffer.from(payloads[0].metadata.encoding, 'base64').toString(), 'json/plain');
    assert.deepEqual(defaultPayloadConverter.fromPayload(fromJson(payloads[0])), SECRET);
    assert.deepEqual(served, [{ operator: 'dana', operation: 'decode', namespace: 'default', payloads: 1 }]);
  });

  it('passes unencrypted payloads through decode, and encodes with the active key', async () => {
    const plain = toJson(defaultPayloadConverter.toPayload({ n: 1 }));
    const decoded = (await (await post('/decode', { payloads: [plain] }, auth)).json()) as { payloads: unknown[] };
    assert.deepEqual(decoded.payloads, [plain]);

    const res = await post('/encode', { payloads: [toJson(defaultPayloadConverter.toPayload(SECRET))] }, auth);
    assert.equal(res.status, 200);
    const { payloads } = (await res.json()) as { payloads: Array<{ metadata: Record<string, string>; data: string }> };
    const encoded = fromJson(payloads[0]);
    assert.equal(Buffer.from(encoded.metadata!.encoding!).toString(), 'binary/encrypted');
    assert.equal(Buffer.from(encoded.metadata!['encryption-key-id']!).toString(), 'k1');
    assert.equal(Buffer.from(encoded.data!).includes(SECRET.body), false);
    assert.deepEqual(defaultPayloadConverter.fromPayload((await real.decode([encoded]))[0]), SECRET);
  });

  it('answers the Web UI preflight for an allowed origin with that exact origin and credentials', async () => {
    const res = await fetch(`${base}/decode`, {
      method: 'OPTIONS',
      headers: {
        origin: UI_ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-namespace,authorization',
      },
    });
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), UI_ORIGIN);
    assert.equal(res.headers.get('access-control-allow-credentials'), 'true');
    assert.equal(res.headers.get('access-control-allow-headers'), 'content-type, x-namespace, authorization');
    assert.match(res.headers.get('access-control-allow-methods') ?? '', /\bPOST\b/);
    assert.match(res.headers.get('vary') ?? '', /Origin/);
    // And the request that follows carries the same CORS answer.
    const after = await post('/decode', await encryptedBody(), { ...auth, origin: UI_ORIGIN });
    assert.equal(after.status, 200);
    assert.equal(after.headers.get('access-control-allow-origin'), UI_ORIGIN);
    assert.equal(after.headers.get('access-control-allow-credentials'), 'true');
  });

  it('refuses a preflight and a request from any other origin, without CORS headers', async () => {
    for (const origin of ['http://evil.example', 'http://127.0.0.1:8234', 'null', `${UI_ORIGIN}.evil.example`]) {
      const pre = await fetch(`${base}/decode`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST' },
      });
      assert.equal(pre.status, 403, origin);
      assert.equal(pre.headers.get('access-control-allow-origin'), null);
      assert.equal(pre.headers.get('access-control-allow-credentials'), null);
      const res = await post('/decode', await encryptedBody(), { ...auth, origin });
      assert.equal(res.status, 403, origin);
      assert.equal(res.headers.get('access-control-allow-origin'), null);
      assert.equal((await res.text()).includes(SECRET.body), false);
    }
    assert.deepEqual(calls, { encode: 0, decode: 0 });
  });

  it('answers a body over the limit 413, declared or streamed', async () => {
    const big = { payloads: [{ metadata: {}, data: Buffer.alloc(MAX_BODY).toString('base64') }] };
    const res = await post('/decode', big, auth);
    assert.equal(res.status, 413);
    assert.match(((await res.json()) as { error: string }).error, /over 2048 bytes/);
    // Chunked, without a content-length: counted while it streams.
    const streamed = await new Promise<number>((resolve, reject) => {
      const req = http.request(`${base}/decode`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
      });
      req.on('response', (r) => (r.resume(), resolve(r.statusCode ?? 0))).on('error', reject);
      for (let i = 0; i < 10; i += 1) req.write('x'.repeat(512));
      req.end();
    });
    assert.equal(streamed, 413);
    assert.deepEqual(calls, { encode: 0, decode: 0 });
  });

  it('answers malformed bodies 400 naming the field', async () => {
    const good = toJson(defaultPayloadConverter.toPayload(1));
    const cases: Array<[unknown, RegExp]> = [
      ['{"payloads": [', /^body: must be JSON/],
      ['[1]', /^body: must be a JSON object/],
      [{}, /^payloads: must be an array$/],
      [{ payloads: 'x' }, /^payloads: must be an array$/],
      [{ payloads: [good, 7] }, /^payloads\[1\]: must be an object/],
      [{ payloads: [good, { data: 'not base64!' }] }, /^payloads\[1\]\.data: must be a base64 string$/],
      [
        { payloads: [{ metadata: { encoding: 5 }, data: '' }] },
        /^payloads\[0\]\.metadata\.encoding: must be a base64 string$/,
      ],
      [{ payloads: [{ metadata: ['x'] }] }, /^payloads\[0\]\.metadata: must be an object/],
    ];
    for (const [body, expected] of cases) {
      const res = await post('/decode', body, auth);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.match(((await res.json()) as { error: string }).error, expected);
    }
    assert.deepEqual(calls, { encode: 0, decode: 0 });
  });

  it('refuses other paths, methods and content types, and reports a payload the codec cannot read', async () => {
    assert.equal((await post('/other', { payloads: [] }, auth)).status, 404);
    const get = await fetch(`${base}/decode`, { headers: auth });
    assert.equal(get.status, 405);
    assert.match(get.headers.get('allow') ?? '', /POST/);
    assert.equal((await post('/decode', '{"payloads":[]}', { ...auth, 'content-type': 'text/plain' })).status, 415);
    const stranger = new AesGcmPayloadCodec({ activeKeyId: 'k7', keys: new Map([['k7', randomBytes(32)]]) });
    const unknown = { payloads: (await stranger.encode([defaultPayloadConverter.toPayload(SECRET)])).map(toJson) };
    const res = await post('/decode', unknown, auth);
    assert.equal(res.status, 422);
    assert.match(((await res.json()) as { error: string }).error, /cannot decode: .*key "k7"/);
  });
});
