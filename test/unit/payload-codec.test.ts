import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { AesGcmPayloadCodec, PayloadCodecError, type PayloadKeys } from '../../codec/aes-gcm-codec';
import {
  PayloadKeysError,
  dataConverterFromEnv,
  generatePayloadKeys,
  generatePayloadKeysFile,
  loadPayloadKeys,
  payloadCodecFromEnv,
} from '../../codec/codec-config';

const K1 = randomBytes(32);
const K2 = randomBytes(32);
const keySet = (active: string, keys: Record<string, Buffer>): PayloadKeys => ({
  activeKeyId: active,
  keys: new Map(Object.entries(keys)),
});
const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('utf8');
const INTENT = { operation: 'send-email', to: 'a@example.com', body: 'marker-4f1c9e: the card on file is pm_secret' };

function plainPayload(value: unknown = INTENT): Payload {
  return defaultPayloadConverter.toPayload(value);
}

/** The message a rejected promise carried, asserting it is a PayloadCodecError. */
async function codecRefusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof PayloadCodecError, `expected a PayloadCodecError, got ${String(err)}`);
    return err.message;
  }
  return assert.fail('the payload was decoded');
}

function keysRefusal(env: NodeJS.ProcessEnv): string {
  try {
    loadPayloadKeys(env);
  } catch (err) {
    assert.ok(err instanceof PayloadKeysError, `expected a PayloadKeysError, got ${String(err)}`);
    return err.message;
  }
  return assert.fail('the key setting was accepted');
}

describe('AES-256-GCM payload codec', () => {
  const codec = new AesGcmPayloadCodec(keySet('k1', { k1: K1 }));

  it('round-trips a payload, hiding its data and its original metadata', async () => {
    const original = plainPayload();
    const [encoded] = await codec.encode([original]);
    assert.equal(text(encoded.metadata?.encoding), 'binary/encrypted');
    assert.equal(text(encoded.metadata?.['encryption-key-id']), 'k1');
    assert.deepEqual(Object.keys(encoded.metadata ?? {}).sort(), ['encoding', 'encryption-key-id']);
    const stored = Buffer.from(encoded.data ?? []);
    assert.equal(stored.includes('marker-4f1c9e'), false, 'the plaintext is not in the encoded bytes');
    assert.equal(stored.includes('json/plain'), false, 'the original encoding is hidden too');
    const [decoded] = await codec.decode([encoded]);
    assert.equal(text(decoded.metadata?.encoding), 'json/plain');
    assert.deepEqual(defaultPayloadConverter.fromPayload(decoded), INTENT);
    assert.deepEqual(Buffer.from(decoded.data ?? []), Buffer.from(original.data ?? []));
  });

  it('uses a fresh IV per payload: the same payload never encrypts to the same bytes', async () => {
    const [a, b] = await codec.encode([plainPayload(), plainPayload()]);
    assert.notDeepEqual(Buffer.from(a.data!).subarray(0, 12), Buffer.from(b.data!).subarray(0, 12));
    assert.notDeepEqual(Buffer.from(a.data!), Buffer.from(b.data!));
  });

  it('round-trips an empty batch and a payload without data', async () => {
    assert.deepEqual(await codec.decode(await codec.encode([])), []);
    const [decoded] = await codec.decode(await codec.encode([defaultPayloadConverter.toPayload(undefined)]));
    assert.equal(text(decoded.metadata?.encoding), 'binary/null');
    assert.equal(defaultPayloadConverter.fromPayload(decoded), undefined);
  });

  it('rotates: data under k1 still decodes once k2 is active, and new data is encoded under k2', async () => {
    const [underK1] = await codec.encode([plainPayload()]);
    const rotated = new AesGcmPayloadCodec(keySet('k2', { k1: K1, k2: K2 }));
    assert.deepEqual(defaultPayloadConverter.fromPayload((await rotated.decode([underK1]))[0]), INTENT);
    const [underK2] = await rotated.encode([plainPayload()]);
    assert.equal(text(underK2.metadata?.['encryption-key-id']), 'k2');
    assert.deepEqual(defaultPayloadConverter.fromPayload((await rotated.decode([underK2]))[0]), INTENT);
    // A process that was not given k2 yet refuses it by name rather than guessing.
    assert.match(
      await codecRefusal(codec.decode([underK2])),
      /key "k2", which is not among the known payload keys \(k1\)/,
    );
  });

  it('refuses a payload under an unknown key ID, naming the key ID', async () => {
    const other = new AesGcmPayloadCodec(keySet('k9-retired', { 'k9-retired': K2 }));
    const [encoded] = await other.encode([plainPayload()]);
    const message = await codecRefusal(codec.decode([plainPayload(), encoded]));
    assert.match(message, /"k9-retired"/);
    assert.equal(message.includes(K1.toString('base64')), false);
    const noKeyId = { ...encoded, metadata: { encoding: Buffer.from('binary/encrypted') } };
    assert.match(await codecRefusal(codec.decode([noKeyId])), /no encryption-key-id/);
  });

  it('refuses a tampered payload: ciphertext, tag, IV, truncation, or another key under the same ID', async () => {
    const [encoded] = await codec.encode([plainPayload()]);
    const data = Buffer.from(encoded.data!);
    const flipped = (at: number) => {
      const copy = Buffer.from(data);
      copy[at] ^= 0x01;
      return { ...encoded, data: copy };
    };
    for (const [what, payload] of [
      ['ciphertext', flipped(20)],
      ['tag', flipped(data.length - 1)],
      ['IV', flipped(0)],
      ['a cut-off end', { ...encoded, data: data.subarray(0, data.length - 4) }],
    ] as const) {
      assert.match(await codecRefusal(codec.decode([payload])), /key "k1" failed authentication/, what);
    }
    assert.match(await codecRefusal(codec.decode([{ ...encoded, data: data.subarray(0, 20) }])), /truncated/);
    const impostor = new AesGcmPayloadCodec(keySet('k1', { k1: K2 }));
    assert.match(await codecRefusal(impostor.decode([encoded])), /failed authentication/);
    // Relabelled to another known key: that key's tag check fails as well.
    const both = new AesGcmPayloadCodec(keySet('k1', { k1: K1, k2: K2 }));
    const relabelled = { ...encoded, metadata: { ...encoded.metadata, 'encryption-key-id': Buffer.from('k2') } };
    assert.match(await codecRefusal(both.decode([relabelled])), /key "k2" failed authentication/);
  });

  it('passes payloads that are not encrypted through decode unchanged (histories from before encryption)', async () => {
    const plain = [plainPayload(), defaultPayloadConverter.toPayload(undefined), { data: Buffer.from('raw') }];
    const decoded = await codec.decode(plain);
    assert.equal(decoded.length, 3);
    decoded.forEach((p, i) => assert.equal(p, plain[i], `payload ${i} is passed through as it is`));
  });

  it('refuses a key set whose active key is missing or whose key is not 32 bytes', () => {
    assert.throws(() => new AesGcmPayloadCodec(keySet('k2', { k1: K1 })), /activeKeyId "k2": is not among the keys/);
    assert.throws(() => new AesGcmPayloadCodec(keySet('k1', { k1: K1.subarray(0, 16) })), /key k1: must be 32 bytes/);
  });
});

describe('payload keys from the environment', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-keys-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const inline = (json: unknown) => ({ RETRYSAFE_PAYLOAD_KEYS: JSON.stringify(json) });

  it('configures no codec when neither variable is set, or both are empty', () => {
    assert.equal(loadPayloadKeys({}), undefined);
    assert.equal(dataConverterFromEnv({}), undefined);
    assert.equal(dataConverterFromEnv({ RETRYSAFE_PAYLOAD_KEYS: '', RETRYSAFE_PAYLOAD_KEYS_FILE: '' }), undefined);
  });

  it('reads the inline form, and its codec reads what a codec of the same keys wrote', async () => {
    const json = { activeKeyId: 'k2', keys: { k1: K1.toString('base64'), k2: K2.toString('base64') } };
    const keys = loadPayloadKeys(inline(json))!;
    assert.equal(keys.activeKeyId, 'k2');
    assert.deepEqual([...keys.keys.keys()], ['k1', 'k2']);
    const converter = dataConverterFromEnv(inline(json))!;
    assert.equal(converter.payloadCodecs?.length, 1);
    const [encoded] = await converter.payloadCodecs![0].encode([plainPayload()]);
    assert.equal(text(encoded.metadata?.['encryption-key-id']), 'k2');
    const byHand = new AesGcmPayloadCodec(keySet('k1', { k1: K1, k2: K2 }));
    assert.deepEqual(defaultPayloadConverter.fromPayload((await byHand.decode([encoded]))[0]), INTENT);
  });

  it('names the variable and the field, and never prints key material', () => {
    const short = randomBytes(16).toString('base64');
    const hex = randomBytes(32).toString('hex');
    const good = K1.toString('base64');
    const cases: Array<[NodeJS.ProcessEnv, RegExp, string[]]> = [
      [
        inline({ activeKeyId: 'k1', keys: { k1: short } }),
        /^RETRYSAFE_PAYLOAD_KEYS: keys\.k1: must be 32 bytes of base64$/,
        [short],
      ],
      [
        inline({ activeKeyId: 'k1', keys: { k1: hex } }),
        /^RETRYSAFE_PAYLOAD_KEYS: keys\.k1: must be 32 bytes of base64$/,
        [hex],
      ],
      [inline({ activeKeyId: 'k1', keys: { k1: 42 } }), /keys\.k1: must be 32 bytes of base64/, []],
      [
        inline({ activeKeyId: 'k3', keys: { k1: good } }),
        /RETRYSAFE_PAYLOAD_KEYS: activeKeyId: "k3" is not one of keys \(k1\)/,
        [good],
      ],
      [inline({ keys: { k1: good } }), /RETRYSAFE_PAYLOAD_KEYS: activeKeyId: must be a string/, [good]],
      [inline({ activeKeyId: 'k1', keys: {} }), /RETRYSAFE_PAYLOAD_KEYS: keys: must hold at least one key/, []],
      [inline({ activeKeyId: 'k1', keys: [good] }), /RETRYSAFE_PAYLOAD_KEYS: keys: must be an object/, [good]],
      [inline({ activeKeyId: 'k1', keys: { k1: good }, key: good }), /unknown field "key"/, [good]],
      // A key pasted where its ID belongs is not echoed either.
      [inline({ activeKeyId: good, keys: { [good]: good } }), /keys: key ID number 1 must be/, [good]],
      // JSON.parse's own message would quote the text around the error: the key.
      [
        { RETRYSAFE_PAYLOAD_KEYS: `{"activeKeyId":"k1","keys":{"k1":"${good}",}}` },
        /^RETRYSAFE_PAYLOAD_KEYS: is not valid JSON$/,
        [good, good.slice(0, 12)],
      ],
      [{ RETRYSAFE_PAYLOAD_KEYS: good }, /is not valid JSON/, [good]],
      [{ RETRYSAFE_PAYLOAD_KEYS: '"k1"' }, /RETRYSAFE_PAYLOAD_KEYS: must be a JSON object/, []],
      [
        { ...inline({ activeKeyId: 'k1', keys: { k1: good } }), RETRYSAFE_PAYLOAD_KEYS_FILE: '/x' },
        /set RETRYSAFE_PAYLOAD_KEYS_FILE or RETRYSAFE_PAYLOAD_KEYS, not both/,
        [good],
      ],
    ];
    for (const [env, expected, secrets] of cases) {
      const message = keysRefusal(env);
      assert.match(message, expected);
      for (const secret of secrets) assert.equal(message.includes(secret), false, `"${message}" shows key material`);
    }
  });

  it('reads a key file, naming the file in its errors', async () => {
    const file = path.join(dir, 'keys.json');
    const short = randomBytes(31).toString('base64');
    await writeFile(file, JSON.stringify({ activeKeyId: 'k1', keys: { k1: short } }));
    const message = keysRefusal({ RETRYSAFE_PAYLOAD_KEYS_FILE: file });
    assert.equal(message, `RETRYSAFE_PAYLOAD_KEYS_FILE (${file}): keys.k1: must be 32 bytes of base64`);
    const missing = path.join(dir, 'absent.json');
    assert.equal(
      keysRefusal({ RETRYSAFE_PAYLOAD_KEYS_FILE: missing }),
      `RETRYSAFE_PAYLOAD_KEYS_FILE: cannot read ${missing}: ENOENT`,
    );
    await writeFile(file, JSON.stringify(generatePayloadKeys('2026-08')));
    assert.deepEqual(payloadCodecFromEnv({ RETRYSAFE_PAYLOAD_KEYS_FILE: file })?.keyIds, {
      active: '2026-08',
      known: ['2026-08'],
    });
  });

  it('generates a key file once, mode 0600, and leaves an existing one as it is', async () => {
    const file = path.join(dir, 'nested', 'payload-keys.json');
    assert.deepEqual(await generatePayloadKeysFile(file), { path: file, created: true });
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    const first = await readFile(file, 'utf8');
    const keys = loadPayloadKeys({ RETRYSAFE_PAYLOAD_KEYS_FILE: file })!;
    assert.equal(keys.activeKeyId, 'k1');
    assert.equal(keys.keys.get('k1')?.length, 32);
    assert.deepEqual(await generatePayloadKeysFile(file), { path: file, created: false });
    assert.equal(await readFile(file, 'utf8'), first, 'the second call changed nothing');
    // Two first starts at once: one creates, both end with the same file.
    const raced = path.join(dir, 'raced.json');
    const results = await Promise.all([generatePayloadKeysFile(raced), generatePayloadKeysFile(raced)]);
    assert.deepEqual(results.map((r) => r.created).sort(), [false, true]);
    // An existing file that is not a key set stops the caller instead of being overwritten.
    const broken = path.join(dir, 'broken.json');
    await writeFile(broken, '{"activeKeyId":"k1"}');
    await assert.rejects(generatePayloadKeysFile(broken), /keys: must be an object/);
    assert.equal(await readFile(broken, 'utf8'), '{"activeKeyId":"k1"}');
  });
});
