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
