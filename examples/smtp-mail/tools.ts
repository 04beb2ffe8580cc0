/**
 * An example tool on a real mail server through its official client: `send-notification` sends a message over
 * SMTP with `nodemailer`, to a server with a search API (Mailpit here). SMTP has no idempotency key, but the message
 * carries a Message-ID derived from the action key, and the server can be searched for it: so the contract is
 * `lookup`, not `none`. A failed TCP connect or a failure reply from the server (4xx: not now, 5xx: refused for good)
 * counts as nothing sent; any other failure (a reply lost after DATA among them) is ambiguous, and the executor then
 * waits out the declared lag and searches for the Message-ID before it ever sends again.
 */
import { createHash } from 'node:crypto';

import { createTransport } from 'nodemailer';
import { z } from 'zod';
import { absent, ambiguous, committed, defineTool, found, notCommitted, rejected } from 'retrysafe';

export interface SmtpMailSettings {
  smtp: { host: string; port: number };
  /** The mail server's HTTP API (Mailpit's), searched by Message-ID. */
  apiUrl: string;
  from: string;
}

/** The Message-ID an action's message carries: the same for every attempt with the key, without its characters. */
export function messageIdFor(actionKey: string): string {
  return `${createHash('sha256').update(actionKey).digest('hex').slice(0, 32)}@retrysafe.invalid`;
}

export const Notification = z.strictObject({
  to: z.email().max(200),
  subject: z.string().trim().min(1).max(200),
  text: z.string().trim().min(1).max(10_000),
});

const SearchAnswer = z.object({ messages: z.array(z.object({ MessageID: z.string() })) });

export function smtpMailTools(settings: SmtpMailSettings) {
  const sendNotification = defineTool({
    name: 'send-notification',
    version: 1,
    description: 'Send a notification email to the team over SMTP.',
    input: Notification,
    kind: 'mutation',
    dedupe: 'lookup',
    // Mailpit indexes a message as it accepts it; the margin covers a loaded machine.
    readAfterWriteLagMs: 1_000,
    riskClass: 'routine-message',
    summarize: (i) => `mail to ${i.to}: ${i.subject.slice(0, 60)}`,
    async execute(i, ctx) {
      const transport = createTransport({
        host: settings.smtp.host,
        port: settings.smtp.port,
        secure: false,
        ignoreTLS: true,
        connectionTimeout: 5_000,
        socketTimeout: 10_000,
      });
      try {
        const info = await transport.sendMail({
          from: settings.from,
          to: i.to,
          subject: i.subject,
          text: i.text,
          messageId: `<${messageIdFor(ctx.key)}>`,
        });
        return committed(messageIdFor(ctx.key), { accepted: info.accepted.map(String) });
      } catch (err) {
        // Only a refused or failed TCP connect proves nothing was handed over. nodemailer labels a connection that
        // closed after DATA with the same command ('CONN', "Connection closed unexpectedly"), so the command proves
        // nothing: the test behind a relay that cuts the reply to DATA saw exactly that.
        const { syscall, command, responseCode } = err as { syscall?: string; command?: string; responseCode?: number };
        const message = (err as Error).message;
        if (syscall === 'connect') return notCommitted(`SMTP connection failed: ${message}`);
        // The server answered with a failure code: it took nothing (a refused recipient fails the whole send when it
        // is the only one). 5xx is for good, a recipient refused at RCPT being the business kind; 4xx is "later".
        if (typeof responseCode === 'number' && responseCode >= 400 && responseCode < 600) {
          if (responseCode < 500) return notCommitted(`SMTP ${command ?? 'send'} answered ${responseCode}: ${message}`);
          return rejected(command === 'RCPT TO' ? 'declined' : 'invalid', `SMTP ${command ?? 'send'}: ${message}`);
        }
        return ambiguous(`SMTP ${command ?? 'send'} failed after the connection was up: ${message}`);
      } finally {
        transport.close();
      }
    },
    async lookup(_i, ctx) {
      const id = messageIdFor(ctx.key);
      const query = encodeURIComponent(`message-id:"${id}"`);
      const res = await fetch(`${settings.apiUrl}/api/v1/search?query=${query}`, { signal: ctx.signal });
      if (!res.ok) throw new Error(`mail search answered HTTP ${res.status}`);
      const { messages } = SearchAnswer.parse(await res.json());
      const match = messages.find((m) => m.MessageID === id);
      return match ? found(id) : absent();
    },
  });
  return [sendNotification];
}

/** The worker's settings, from its environment; a bad one is named. */
export const SMTP_MAIL_ENV = {
  smtpUrl: 'RETRYSAFE_SMTP_URL',
  apiUrl: 'RETRYSAFE_MAIL_API_URL',
  from: 'RETRYSAFE_MAIL_FROM',
} as const;

const SmtpMailEnv = z.object({
  [SMTP_MAIL_ENV.smtpUrl]: z.url({ protocol: /^smtp$/, message: `${SMTP_MAIL_ENV.smtpUrl} must be smtp://host:port` }),
  [SMTP_MAIL_ENV.apiUrl]: z.url({ protocol: /^https?$/, message: `${SMTP_MAIL_ENV.apiUrl} must be an http(s) URL` }),
  [SMTP_MAIL_ENV.from]: z
    .email({ message: `${SMTP_MAIL_ENV.from} must be an email address` })
    .default('retrysafe@localhost'),
});

export function smtpMailSettingsFromEnv(env: NodeJS.ProcessEnv): SmtpMailSettings {
  const parsed = SmtpMailEnv.safeParse(env);
  if (!parsed.success) throw new Error(parsed.error.issues.map((issue) => issue.message).join('; '));
  const smtp = new URL(parsed.data[SMTP_MAIL_ENV.smtpUrl]);
  return {
    smtp: { host: smtp.hostname, port: Number(smtp.port || 25) },
    apiUrl: parsed.data[SMTP_MAIL_ENV.apiUrl].replace(/\/$/, ''),
    from: parsed.data[SMTP_MAIL_ENV.from],
  };
}
