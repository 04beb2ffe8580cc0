import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { RetrysafeClient } from '../../client';
import { SMTP_MAIL_ENV, messageIdFor, smtpMailTools } from '../../examples/smtp-mail/tools';
import { startMailpit, type MailpitServer } from '../../scripts/lib/mailpit-server';
import { startStack, type Stack } from '../../scripts/lib/stack';
import { resolveMailpit } from '../../scripts/toolchain/resolve-mailpit';
import { missingPiece } from '../../cli/toolchain/toolchain-error';
import { startReplyCuttingProxy } from '../support/reply-cutting-proxy';
import { uniqueEvent } from '../support/renewal-input';
import { skipWithout } from '../../scripts/lib/required-servers';

/**
 * send-notification on a real SMTP server (Mailpit) through nodemailer, on its own worker process. SMTP has no
 * idempotency key: the Message-ID derived from the action key, found through Mailpit's search API, is what keeps a
 * retry from sending twice. Messages are counted in Mailpit.
 */
const mailpit = resolveMailpit({ build: false }).then(
  (found) => ({ found }),
  (err: unknown) => ({
    why: `Mailpit is not here (${missingPiece(err)}): npm run setup:toolchain builds it`,
  }),
);

describe('send-notification on a real Mailpit, through nodemailer, with worker processes that are SIGKILLed', async () => {
  const resolved = await mailpit;
  const skip = skipWithout('why' in resolved ? resolved.why : false);
  let server: MailpitServer;
  let stack: Stack;
  let client: RetrysafeClient;
  let env: Record<string, string>;

  const messagesWith = async (messageId: string) => {
    const res = await fetch(`${server.apiUrl}/api/v1/messages?limit=500`);
    const { messages } = (await res.json()) as { messages: Array<{ MessageID: string }> };
    return messages.filter((m) => m.MessageID === messageId).length;
  };

  before(async () => {
    if (skip) return;
    server = await startMailpit({ binary: 'found' in resolved ? resolved.found.path : undefined });
    const settings = { smtp: server.smtp, apiUrl: server.apiUrl, from: 'agent@example.com' };
    env = {
      [SMTP_MAIL_ENV.smtpUrl]: `smtp://${server.smtp.host}:${server.smtp.port}`,
      [SMTP_MAIL_ENV.apiUrl]: server.apiUrl,
      [SMTP_MAIL_ENV.from]: settings.from,
    };
    stack = await startStack({
      providerKinds: [],
      worker: { entry: 'examples/smtp-mail/worker.ts', workflowsPath: require.resolve('../../workflows') },
    });
    client = new RetrysafeClient(stack.client, { taskQueue: stack.taskQueue, tools: smtpMailTools(settings) });
  });
  after(async () => {
    await stack?.stop();
    await server?.stop();
  });

  const notification = (subject: string) => ({
    operation: 'send-notification',
    to: 'ops-team@example.com',
    subject,
    text: 'The nightly payout run finished.',
  });

  for (const point of ['after-commit', 'before-send'] as const) {
    it(
      `sends one message when the worker is SIGKILLed ${point === 'after-commit' ? 'after the server accepted it, before the outcome is recorded' : 'before it sends'}`,
      { skip },
      async () => {
        const eventId = uniqueEvent(point);
        const crashing = await stack.startWorker({
          env,
          crashAt: `${point}:send-notification`,
          name: `crash-${point}`,
        });
        const claimed = client.claimAction({ tenant: 'acme', eventId }, notification(`payouts ${eventId}`), {
          wait: true,
        });
        assert.equal((await crashing.exited).signal, 'SIGKILL');
        const key = `send-notification:v1:acme:${eventId}`;
        assert.equal(await messagesWith(messageIdFor(key)), point === 'after-commit' ? 1 : 0, 'at the kill');
        const recovery = await stack.startWorker({ env, name: `recover-${point}` });
        try {
          const action = await claimed;
          assert.equal(action.key, key);
          assert.equal(action.status, 'confirmed', JSON.stringify(action.audit));
          assert.equal(action.providerRef, messageIdFor(key));
          assert.equal(await messagesWith(messageIdFor(key)), 1, 'one message in Mailpit');
        } finally {
          await recovery.stop();
        }
      },
    );
  }

  it(
    'sends one message when the connection is cut after DATA, before the reply: ambiguous, then found by lookup',
    { skip },
    async () => {
      // An SMTP relay in front of Mailpit that hangs up instead of passing on the reply to the end of DATA.
      const proxy = await startReplyCuttingProxy(server.smtp, (sent) => sent.includes('\r\n.\r\n'));
      // Its own task queue: only the worker behind the relay may take this action.
      const taskQueue = 'mail-behind-cutting-relay';
      const worker = await stack.startWorker({
        env: { ...env, [SMTP_MAIL_ENV.smtpUrl]: `smtp://127.0.0.1:${proxy.port}`, RETRYSAFE_TASK_QUEUE: taskQueue },
        name: 'behind-cutting-relay',
      });
      const relayed = new RetrysafeClient(stack.client, {
        taskQueue,
        tools: smtpMailTools({ smtp: server.smtp, apiUrl: server.apiUrl, from: 'agent@example.com' }),
      });
      try {
        const eventId = uniqueEvent('cut');
        const key = `send-notification:v1:acme:${eventId}`;
        const action = await relayed.claimAction({ tenant: 'acme', eventId }, notification(`payouts ${eventId}`), {
          wait: true,
        });
        assert.equal(proxy.cut(), 1, 'the relay cut one reply');
        assert.equal(action.status, 'confirmed', JSON.stringify(action.audit));
        // Confirmed by the lookup, not by a second send: before the fix that counted nodemailer's "Connection closed
        // unexpectedly" as nothing sent, this was "provider send" with two messages in Mailpit.
        assert.match(action.audit.at(-1)?.reason ?? '', /^provider lookup: /, JSON.stringify(action.audit));
        assert.equal(await messagesWith(messageIdFor(key)), 1, 'one message in Mailpit, never a second send');
      } finally {
        await worker.stop();
        proxy.close();
      }
    },
  );
});
