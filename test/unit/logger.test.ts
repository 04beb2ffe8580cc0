import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import type { Logger } from 'pino';
import { createLogger } from '../../workers/logger';

/** The worker's logger, writing into memory. */
function capture(): { logger: Logger; lines: () => string[] } {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  const logger = createLogger({ destination: sink, level: 'info' });
  return { logger, lines: () => chunks.join('').trim().split('\n') };
}

describe('worker logging', () => {
  it('redacts card data, email addresses and secrets in log metadata', () => {
    const { logger, lines } = capture();
    logger.info({ payment: { cardNumber: '4242424242424242', cvc: '123' }, intent: { to: 'jane@example.com', subject: 'hi' } }, 'x');
    logger.info({ provider: { apiKey: 'sk_live_123', authorization: 'Bearer abc' } }, 'y');
    const text = lines().join('\n');
    for (const secret of ['4242424242424242', '"123"', 'jane@example.com', 'sk_live_123', 'Bearer abc']) {
      assert.ok(!text.includes(secret), `${secret} leaked: ${text}`);
    }
    assert.match(text, /\[redacted\]/);
    assert.match(text, /"subject":"hi"/, 'what is not secret stays readable');
  });

  it('masks email addresses inside free-text messages too', () => {
    const { logger, lines } = capture();
    logger.warn('could not deliver to bob@example.org, will not resend');
    const text = lines().join('\n');
    assert.ok(!text.includes('bob@example.org'), text);
    assert.match(text, /could not deliver to \[email\], will not resend/);
  });
});
