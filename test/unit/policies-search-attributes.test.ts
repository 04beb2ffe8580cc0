import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as sa from '../../policies/search-attributes';

const keys = Object.entries(sa)
  .filter(([name]) => name.startsWith('SA_'))
  .map(([, key]) => key as { name: string; type: string });

describe('search attributes', () => {
  it('registers every attribute retrysafe writes, once', () => {
    const registered = sa.SEARCH_ATTRIBUTE_REGISTRATIONS.map((r) => r.name);
    assert.equal(new Set(registered).size, registered.length);
    assert.deepEqual([...registered].sort(), keys.map((k) => k.name).sort());
  });

  it('registers each attribute with the server type matching its key', () => {
    const serverType = { KEYWORD: 'Keyword', KEYWORD_LIST: 'KeywordList' } as Record<string, string>;
    for (const key of keys) {
      const reg = sa.SEARCH_ATTRIBUTE_REGISTRATIONS.find((r) => r.name === key.name);
      assert.equal(reg?.type, serverType[key.type], key.name);
    }
  });

  it('prefixes every attribute with Retrysafe so it cannot clash with another application', () => {
    for (const key of keys) assert.match(key.name, /^Retrysafe[A-Z][A-Za-z]+$/);
  });

  it('holds the action keys of a run as a keyword list', () => {
    assert.equal(sa.SA_ACTION_KEYS.type, 'KEYWORD_LIST');
    assert.equal(sa.SA_STATUS.type, 'KEYWORD');
  });
});

describe('the action keys a run lists', () => {
  const key = (i: number) => `charge:v1:acme:renewal-2026-12-01-${String(i).padStart(4, '0')}:charge-${i}`;
  const jsonBytes = (ks: string[]) => Buffer.byteLength(JSON.stringify(ks));

  it('lists every key while they fit, in claim order', () => {
    const ks = Array.from({ length: 10 }, (_, i) => key(i));
    assert.deepEqual(sa.actionKeysWithinLimit(ks), ks);
  });

  it('keeps the newest keys under the server’s value limit once they do not all fit', () => {
    const ks = Array.from({ length: 200 }, (_, i) => key(i));
    assert.ok(jsonBytes(ks) > sa.SEARCH_ATTRIBUTE_VALUE_LIMIT_BYTES, 'the test needs more keys than fit');
    const kept = sa.actionKeysWithinLimit(ks);
    assert.ok(jsonBytes(kept) <= sa.SEARCH_ATTRIBUTE_VALUE_LIMIT_BYTES - 64, `${jsonBytes(kept)} bytes`);
    assert.deepEqual(kept, ks.slice(ks.length - kept.length), 'a suffix: the newest, in claim order');
    assert.ok(kept.length > 20, `${kept.length} kept: the limit is used, not wasted`);
    const oneMore = ks.slice(ks.length - kept.length - 1);
    assert.ok(jsonBytes(oneMore) > sa.SEARCH_ATTRIBUTE_VALUE_LIMIT_BYTES - 64, 'as many as fit');
  });

  it('counts bytes, not characters', () => {
    const wide = Array.from({ length: 100 }, (_, i) => `charge:v1:ténant-ü:évènement-${i}`);
    const kept = sa.actionKeysWithinLimit(wide);
    assert.ok(jsonBytes(kept) <= sa.SEARCH_ATTRIBUTE_VALUE_LIMIT_BYTES - 64, `${jsonBytes(kept)} bytes`);
  });
});
