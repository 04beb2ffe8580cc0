import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { webhookServiceSettingsFromEnv } from '../../workers/webhook-router-service';

const SECRETS = JSON.stringify({ payments: [`whsec_${Buffer.from('a'.repeat(24)).toString('base64')}`] });

describe('the webhook router service settings (retrysafe webhooks, npm run webhooks)', () => {
  it('takes the defaults for unset, empty or blank variables', () => {
    const settings = webhookServiceSettingsFromEnv({
      RETRYSAFE_WEBHOOK_SECRETS: SECRETS,
      RETRYSAFE_WEBHOOK_PORT: ' ',
      RETRYSAFE_LEDGER_WAIT_SECONDS: '',
    });
    assert.deepEqual(
      {
        port: settings.port,
        host: settings.host,
        toleranceSeconds: settings.toleranceSeconds,
        ledgerWaitMs: settings.ledgerWaitMs,
        ledger: settings.ledger,
      },
      { port: 4200, host: '127.0.0.1', toleranceSeconds: 300, ledgerWaitMs: 120_000, ledger: undefined },
    );
    assert.deepEqual(Object.keys(settings.secrets), ['payments']);
  });

  it('reads whole numbers only, and names every malformed variable in one message', () => {
    const settings = webhookServiceSettingsFromEnv({
      RETRYSAFE_WEBHOOK_SECRETS: SECRETS,
      RETRYSAFE_WEBHOOK_PORT: '0',
      RETRYSAFE_LEDGER_WAIT_SECONDS: ' 5 ',
      RETRYSAFE_LEDGER: 'sqlite:/var/lib/retrysafe/ledger.sqlite',
    });
    assert.equal(settings.port, 0);
    assert.equal(settings.ledgerWaitMs, 5_000);
    assert.deepEqual(settings.ledger, { kind: 'sqlite', path: '/var/lib/retrysafe/ledger.sqlite' });
    assert.throws(
      () =>
        webhookServiceSettingsFromEnv({
          RETRYSAFE_WEBHOOK_SECRETS: SECRETS,
          RETRYSAFE_WEBHOOK_PORT: '0x50',
          RETRYSAFE_WEBHOOK_TOLERANCE_SECONDS: '7200',
          RETRYSAFE_LEDGER_WAIT_SECONDS: '-1',
        }),
      (err: Error) => {
        assert.match(err.message, /^RETRYSAFE_WEBHOOK_PORT: must be a whole number$/m);
        assert.match(err.message, /^RETRYSAFE_WEBHOOK_TOLERANCE_SECONDS: .*3600/m);
        assert.match(err.message, /^RETRYSAFE_LEDGER_WAIT_SECONDS: must be a whole number$/m);
        return true;
      },
    );
  });

  it('refuses to start without signing secrets, and refuses the ledger setting 0.2 accepted', () => {
    assert.throws(() => webhookServiceSettingsFromEnv({}), /^Error: RETRYSAFE_WEBHOOK_SECRETS is not set/);
    assert.throws(
      () => webhookServiceSettingsFromEnv({ RETRYSAFE_WEBHOOK_SECRETS: SECRETS, RETRYSAFE_LEDGER: 'none' }),
      /RETRYSAFE_LEDGER/,
    );
  });
});
