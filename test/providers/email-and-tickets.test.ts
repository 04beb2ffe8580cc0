import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startSandboxProvider } from '../../examples/sandbox-providers/spawn';
import type { SandboxProvider } from '../../examples/sandbox-providers/spawn';
import { listOf, Message, Ticket } from '../../examples/sandbox-providers/resources';
import { errorOf, eventually, get, post, startWebhookReceiver } from './provider-http';

describe('email provider', () => {
  let email: SandboxProvider;

  before(async () => {
    email = await startSandboxProvider('email');
  });
  after(async () => {
    await email.stop();
  });

  it('sends twice when the same message is posted twice, even with the same Idempotency-Key', async () => {
    const message = { to: 'ada@example.com', subject: 'Your receipt', body: 'Thanks!' };
    const first = await post(email.url, '/v1/messages', message, { key: 'ignored-key' });
    const second = await post(email.url, '/v1/messages', message, { key: 'ignored-key' });

    assert.equal(first.status, 202);
    assert.equal(second.status, 202);
    assert.notEqual(Message.parse(first.body).id, Message.parse(second.body).id);
    const ledger = await email.ledger();
    assert.equal(ledger.records.messages.length, 2);
    assert.equal(ledger.counts['messages.create'].committed, 2);
  });

  it('offers no way to look a message up', async () => {
    const sent = Message.parse(
      (await post(email.url, '/v1/messages', { to: 'b@example.com', subject: 's', body: '' })).body,
    );
    for (const path of ['/v1/messages', `/v1/messages/${sent.id}`, '/v1/messages?to=b@example.com']) {
      const res = await get(email.url, path);
      assert.equal(res.status, 404, path);
      assert.equal(errorOf(res).code, 'not_found');
    }
  });

  it('rejects a malformed address naming the field, sending nothing', async () => {
    const before = (await email.ledger()).records.messages.length;
    const res = await post(email.url, '/v1/messages', { to: 'not-an-address', subject: 's', body: 'b' });
    assert.equal(res.status, 400);
    assert.equal(errorOf(res).field, 'to');
    assert.equal((await email.ledger()).records.messages.length, before);
  });

  it('announces each send with a message.sent webhook carrying no key', async () => {
    const receiver = await startWebhookReceiver();
    try {
      await email.configure({ webhookUrl: receiver.url });
      const sent = Message.parse(
        (await post(email.url, '/v1/messages', { to: 'c@example.com', subject: 's', body: 'b' })).body,
      );
      const [event] = await eventually(async () => (receiver.events.length ? receiver.events : undefined));
      assert.equal(event.type, 'message.sent');
      assert.equal(event.idempotencyKey, undefined);
      assert.equal(event.data.id, sent.id);
    } finally {
      await email.configure({ webhookUrl: null });
      await receiver.close();
    }
  });
});

describe('tickets provider', () => {
  let tickets: SandboxProvider;
  const Tickets = listOf(Ticket);

  before(async () => {
    tickets = await startSandboxProvider('tickets', { readLagMs: 300 });
  });
  after(async () => {
    await tickets.stop();
  });

  it('opens a duplicate ticket for a repeated POST, and the lookup by ref sees both only after the lag', async () => {
    const ticket = { externalRef: 'incident-42', title: 'Printer on fire', body: 'Again.' };
    const first = Ticket.parse((await post(tickets.url, '/v1/tickets', ticket)).body);
    const second = Ticket.parse((await post(tickets.url, '/v1/tickets', ticket)).body);

    assert.notEqual(first.id, second.id);
    assert.equal(first.priority, 'normal');
    const inside = Tickets.parse((await get(tickets.url, '/v1/tickets?externalRef=incident-42')).body);
    assert.deepEqual(inside.data, [], 'inside the lag the lookup says nothing was created');
    assert.equal(Ticket.parse((await get(tickets.url, `/v1/tickets/${second.id}`)).body).id, second.id);

    const visible = await eventually(async () => {
      const { data } = Tickets.parse((await get(tickets.url, '/v1/tickets?externalRef=incident-42')).body);
      return data.length === 2 ? data : undefined;
    });
    assert.deepEqual(
      visible.map((t) => t.id),
      [first.id, second.id],
    );
    const ledger = await tickets.ledger();
    assert.equal(ledger.records.tickets.length, 2);
    assert.equal(ledger.counts['tickets.create'].committed, 2);
  });

  it('refuses a lookup filter it does not support, naming it', async () => {
    const res = await get(tickets.url, '/v1/tickets?title=Printer');
    assert.equal(res.status, 400);
    assert.equal(errorOf(res).field, 'title');
  });
});
