import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sandboxUrlsFromEnv, sandboxUrlsToEnv } from '../../examples/sandbox-env';
import { ConfigError, DEFAULT_TASK_QUEUE, parseWorkerConfig } from '../../workers/config';
import { loadConnectConfig } from '../../workers/connection';
import { isRetrysafeError } from '../../policies/errors';

const URLS = {
  RETRYSAFE_PAYMENTS_URL: 'http://127.0.0.1:4101',
  RETRYSAFE_EMAIL_URL: 'http://127.0.0.1:4102',
  RETRYSAFE_TICKETS_URL: 'http://127.0.0.1:4103',
  RETRYSAFE_INVENTORY_URL: 'http://127.0.0.1:4104',
  RETRYSAFE_SHIPPING_URL: 'http://127.0.0.1:4105',
};

function refused(env: NodeJS.ProcessEnv): string {
  try {
    parseWorkerConfig(env);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${String(err)}`);
    return err.message;
  }
  assert.fail('the configuration was accepted');
}

function sandboxRefused(env: NodeJS.ProcessEnv): string {
  try {
    sandboxUrlsFromEnv(env);
  } catch (err) {
    assert.ok(isRetrysafeError(err, 'InvalidConfig'), `expected an InvalidConfig error, got ${String(err)}`);
    return err.message;
  }
  assert.fail('the sandbox configuration was accepted');
}

describe('worker configuration from the environment', () => {
  it('needs no tool settings: the engine has sensible defaults for everything', () => {
    const config = parseWorkerConfig({});
    assert.equal(config.taskQueue, DEFAULT_TASK_QUEUE);
    assert.deepEqual(config.crashAt, []);
    assert.deepEqual(config.trustedApprovalKeys, {});
    assert.equal(config.logLevel, 'info');
    assert.equal(config.tenantPolicyFile, undefined);
    assert.ok(!('providerUrls' in config), 'provider URLs belong to the example tools, not the engine');
  });

  it('reads the task queue and the tenant policy file', () => {
    const config = parseWorkerConfig({
      RETRYSAFE_TASK_QUEUE: 'payments',
      RETRYSAFE_POLICY_FILE: '/etc/retrysafe/policy.json',
    });
    assert.equal(config.taskQueue, 'payments');
    assert.equal(config.tenantPolicyFile, '/etc/retrysafe/policy.json');
  });

  it('names every malformed variable in one message', () => {
    const message = refused({ LOG_LEVEL: 'loud', RETRYSAFE_TASK_QUEUE: '' });
    assert.match(message, /LOG_LEVEL/);
    assert.match(message, /RETRYSAFE_TASK_QUEUE/);
    assert.doesNotMatch(message, /RETRYSAFE_POLICY_FILE/);
  });

  it('refuses an unknown log level and an unknown crash point, naming them', () => {
    assert.match(refused({ ...URLS, LOG_LEVEL: 'loud' }), /LOG_LEVEL/);
    assert.match(refused({ ...URLS, RETRYSAFE_CRASH_AT: 'after-lunch' }), /RETRYSAFE_CRASH_AT.*after-lunch/);
  });

  it('takes a lease clock offset for fault injection, in whole ms within an hour, and names a bad one', () => {
    assert.equal(parseWorkerConfig({ ...URLS, RETRYSAFE_LEASE_CLOCK_OFFSET_MS: '70000' }).leaseClockOffsetMs, 70_000);
    assert.equal(parseWorkerConfig({ ...URLS, RETRYSAFE_LEASE_CLOCK_OFFSET_MS: '-2500' }).leaseClockOffsetMs, -2_500);
    assert.equal(parseWorkerConfig({ ...URLS }).leaseClockOffsetMs, undefined);
    assert.match(refused({ ...URLS, RETRYSAFE_LEASE_CLOCK_OFFSET_MS: 'soon' }), /RETRYSAFE_LEASE_CLOCK_OFFSET_MS/);
    assert.match(refused({ ...URLS, RETRYSAFE_LEASE_CLOCK_OFFSET_MS: '7200000' }), /RETRYSAFE_LEASE_CLOCK_OFFSET_MS/);
  });

  it('parses crash points with an optional operation', () => {
    const config = parseWorkerConfig({ ...URLS, RETRYSAFE_CRASH_AT: 'after-commit:charge, before-send' });
    assert.deepEqual(config.crashAt, [{ point: 'after-commit', operation: 'charge' }, { point: 'before-send' }]);
  });

  it('takes trusted approval keys as JSON and refuses malformed ones, naming the variable', () => {
    const key = 'ab'.repeat(32);
    assert.deepEqual(
      parseWorkerConfig({ ...URLS, RETRYSAFE_APPROVAL_PUBLIC_KEYS: JSON.stringify({ k1: key }) }).trustedApprovalKeys,
      {
        k1: key,
      },
    );
    assert.match(
      refused({ ...URLS, RETRYSAFE_APPROVAL_PUBLIC_KEYS: '{"k1":"short"}' }),
      /RETRYSAFE_APPROVAL_PUBLIC_KEYS.*k1/,
    );
    assert.match(refused({ ...URLS, RETRYSAFE_APPROVAL_PUBLIC_KEYS: 'not json' }), /RETRYSAFE_APPROVAL_PUBLIC_KEYS/);
  });

  it('uses standard Temporal connection variables, so the same worker runs against any cluster', () => {
    const local = loadConnectConfig({ TEMPORAL_ADDRESS: '127.0.0.1:7999', TEMPORAL_NAMESPACE: 'payments-prod' });
    assert.equal(local.connectionOptions.address, '127.0.0.1:7999');
    assert.equal(local.namespace, 'payments-prod');
    const cloud = loadConnectConfig({
      TEMPORAL_ADDRESS: 'acme.a1b2c.tmprl.cloud:7233',
      TEMPORAL_NAMESPACE: 'acme.a1b2c',
      TEMPORAL_API_KEY: 'secret-key',
    });
    assert.equal(cloud.connectionOptions.apiKey, 'secret-key');
    assert.ok(cloud.connectionOptions.tls, 'an API key implies TLS');
    assert.equal(loadConnectConfig({}).namespace, 'default');
  });
});

describe('example sandbox provider URLs from the environment', () => {
  it('reads the five provider URLs and writes them back', () => {
    const urls = sandboxUrlsFromEnv(URLS);
    assert.deepEqual(urls, {
      payments: 'http://127.0.0.1:4101',
      email: 'http://127.0.0.1:4102',
      tickets: 'http://127.0.0.1:4103',
      inventory: 'http://127.0.0.1:4104',
      shipping: 'http://127.0.0.1:4105',
    });
    assert.deepEqual(sandboxUrlsToEnv(urls), URLS);
  });

  it('names every missing or malformed variable in one message', () => {
    const message = sandboxRefused({ ...URLS, RETRYSAFE_EMAIL_URL: undefined, RETRYSAFE_TICKETS_URL: 'not a url' });
    assert.match(message, /RETRYSAFE_EMAIL_URL/);
    assert.match(message, /RETRYSAFE_TICKETS_URL/);
    assert.doesNotMatch(message, /RETRYSAFE_PAYMENTS_URL/);
  });
});
