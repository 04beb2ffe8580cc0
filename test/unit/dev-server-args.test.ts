import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { DEV_SERVER_DYNAMIC_CONFIG, devServerArgs } from '../../cli/dev/dev-server';

const DEPLOY_CONFIG = path.resolve(__dirname, '..', '..', 'deploy', 'temporal-dynamic-config.yaml');
/** Keys whose values the server reads as durations. */
const DURATION_KEYS = ['history.timerProcessorMaxTimeShift'];

describe('the embedded dev server’s dynamic config', () => {
  const args = devServerArgs({ dbFile: '/tmp/x.sqlite', port: 7233, uiPort: null, namespace: 'default' });
  const given = args.flatMap((a, i) => (a === '--dynamic-config-value' ? [args[i + 1]] : []));

  it('passes every value on the command line', () => {
    assert.ok(Object.keys(DEV_SERVER_DYNAMIC_CONFIG).length > 0);
    assert.deepEqual(
      given,
      Object.entries(DEV_SERVER_DYNAMIC_CONFIG).map(([k, v]) => `${k}=${JSON.stringify(v)}`),
    );
    assert.ok(given.includes('history.transferProcessorMaxPollRPS=200'), 'the transfer queue is read often enough');
    // A duration is a JSON string on the command line: unquoted, `100ms` is not JSON and the CLI refuses it.
    assert.ok(given.includes('history.timerProcessorMaxTimeShift="100ms"'), 'timers fire within 100 ms of due');
  });

  it('gives every duration with its unit: a bare number would be read as seconds', () => {
    for (const key of DURATION_KEYS) {
      const value = DEV_SERVER_DYNAMIC_CONFIG[key];
      assert.equal(typeof value, 'string', `${key} is a duration string, not ${JSON.stringify(value)}`);
      assert.match(String(value), /^\d+(ms|s|m|h)$/, key);
    }
  });

  it('agrees with the cluster’s dynamic config (deploy/temporal-dynamic-config.yaml), key by key', async () => {
    const yaml = await readFile(DEPLOY_CONFIG, 'utf8');
    for (const [key, value] of Object.entries(DEV_SERVER_DYNAMIC_CONFIG)) {
      const m = new RegExp(`^${key.replace(/\./g, '\\.')}:\\n\\s+- value: (\\S+)$`, 'm').exec(yaml);
      assert.ok(m, `${key} is missing from ${DEPLOY_CONFIG}`);
      // The YAML value as written, compared as text: `100` and `100ms` must not pass as equal.
      assert.equal(m[1], String(value), `${key}: the cluster has ${m[1]}, the dev server ${value}`);
    }
  });
});
