/**
 * The mail sender (src/mail/mail-sender.ts) against a real SMTP server on loopback (test/helpers/smtp.ts) and, with
 * no SMTP_URL, into .eml files: what arrives parses back as what was sent, with a Message-ID made from the event's
 * id; refusals and lost connections are DeliveryErrors, retryable unless refused for good, whose log reason names
 * no address; and nothing in a message can add a header.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { simpleParser, type AddressObject, type ParsedMail } from 'mailparser';
import type { MailConfig } from '../../src/config.js';
import { openMailSender, type MailSender } from '../../src/mail/mail-sender.js';
import { DeliveryError } from '../../src/outbox/delivery.js';
import type { MailMessage } from '../../src/outbox/outbox.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'sf-mail-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const MESSAGE: MailMessage = {
  to: 'ada@example.com',
  subject: 'Storefront: order #1001 confirmed',
  text: 'Hello Ada,\n\nThank you for your order #1001. Total: $31.81\n',
  html: '<!DOCTYPE html>\n<html><body><p>Hello Ada,</p><p>Thank you for your order #1001. Total: $31.81</p></body></html>\n',
};

const mailConfig = (overrides: Partial<MailConfig> = {}): MailConfig => ({
  smtpUrl: undefined,
  from: 'Storefront <orders@shop.example>',
  merchantEmail: undefined,
  dir: path.join(scratch, 'mail'),
  ...overrides,
});

const addresses = (field: AddressObject | AddressObject[] | undefined) => [field ?? []].flat().flatMap((group) => group.value.map((each) => each.address));

function assertSameMessage(parsed: ParsedMail, eventId: string): void {
  assert.equal(parsed.subject, MESSAGE.subject);
  assert.deepEqual(addresses(parsed.from), ['orders@shop.example']);
  assert.equal(parsed.from?.value[0]?.name, 'Storefront');
  assert.deepEqual(addresses(parsed.to), ['ada@example.com']);
  assert.equal(parsed.text?.trim(), MESSAGE.text.trim());
  assert.equal(typeof parsed.html === 'string' ? parsed.html.trim() : parsed.html, MESSAGE.html.trim());
  assert.equal(parsed.messageId, `<${eventId}@shop.example>`);
}

/** The send's failure, which must be a DeliveryError. */
async function failureOf(send: Promise<void>): Promise<DeliveryError> {
  try {
    await send;
  } catch (error) {
    assert.ok(error instanceof DeliveryError, `a DeliveryError, not ${String(error)}`);
    return error;
  }
  assert.fail('the send did not fail');
}

describe('sending through an SMTP server', () => {
  let smtp: TestSmtpServer;
  let sender: MailSender;
  before(async () => {
    smtp = await startSmtpServer();
    sender = openMailSender(mailConfig({ smtpUrl: smtp.url }), { timeoutMs: 2_000 });
  });
  after(async () => {
    sender.close();
    await smtp.close();
  });
  beforeEach(() => {
    smtp.accept();
    smtp.messages.length = 0;
  });

  it('delivers the message, which parses back with its subject, sender, recipient, text, HTML and Message-ID', async () => {
    await sender.send(MESSAGE, 'evt_first');
    const [received] = await smtp.waitFor(1);
    assertSameMessage(received!, 'evt_first');
    assert.deepEqual(received!.envelope, { from: 'orders@shop.example', to: ['ada@example.com'] });
    assert.equal(received!.headers.get('auto-submitted'), 'auto-generated');
  });

  it('gives a message sent again for the same event the same Message-ID', async () => {
    await sender.send(MESSAGE, 'evt_again');
    await sender.send(MESSAGE, 'evt_again');
    await sender.send(MESSAGE, 'evt_other');
    const received = await smtp.waitFor(3);
    assert.deepEqual(
      received.map((mail) => mail.messageId),
      ['<evt_again@shop.example>', '<evt_again@shop.example>', '<evt_other@shop.example>'],
    );
  });

  it('a server that says "try again later" (451) is a retryable failure whose log reason names no address', async () => {
    smtp.refuse(451);
    const failure = await failureOf(sender.send(MESSAGE, 'evt_later'));
    assert.equal(failure.retryable, true);
    assert.equal(failure.logReason, 'smtp 451');
    assert.match(failure.message, /451/);
    assert.equal(smtp.messages.length, 0);
    smtp.accept();
    await sender.send(MESSAGE, 'evt_later');
    assert.equal((await smtp.waitFor(1))[0]!.messageId, '<evt_later@shop.example>');
  });

  it('a 451 after the message was sent is retryable too', async () => {
    smtp.refuse(451, { at: 'data', times: 1 });
    const failure = await failureOf(sender.send(MESSAGE, 'evt_data'));
    assert.equal(failure.retryable, true);
    assert.equal(failure.logReason, 'smtp 451');
    await sender.send(MESSAGE, 'evt_data');
    assert.equal(smtp.messages.length, 1);
  });

  it('a refusal for good (550) is not retryable, and the merchant reads the server’s answer', async () => {
    smtp.refuse(550, { message: 'No such user here' });
    const failure = await failureOf(sender.send(MESSAGE, 'evt_never'));
    assert.equal(failure.retryable, false);
    assert.equal(failure.logReason, 'smtp 550');
    assert.match(failure.message, /550 No such user here/);
    assert.ok(!failure.logReason.includes('@') && !failure.logReason.includes('example'));
  });

  it('a header injected through the subject or the body adds no header', async () => {
    await sender.send(
      { ...MESSAGE, subject: 'Order #1001\r\nBcc: eve@evil.example', text: 'Hi\r\n\r\nBcc: eve@evil.example\r\n', html: '<p>Hi</p>\r\nBcc: eve@evil.example' },
      'evt_injection',
    );
    const [received] = await smtp.waitFor(1);
    assert.equal(received!.bcc, undefined);
    assert.ok(!received!.headers.has('bcc'));
    assert.deepEqual(received!.envelope.to, ['ada@example.com']);
    assert.equal(received!.subject, 'Order #1001 Bcc: eve@evil.example');
    const headerSection = received!.raw.toString('utf8').split('\r\n\r\n')[0]!;
    assert.ok(!/^bcc:/im.test(headerSection), headerSection);
  });

  it('refuses a recipient that is not one plain address, sending nothing', async () => {
    for (const to of ['ada@example.com\r\nBcc: eve@evil.example', 'Ada <ada@example.com>', 'ada@example.com, eve@evil.example']) {
      const failure = await failureOf(sender.send({ ...MESSAGE, to }, 'evt_bad_to'));
      assert.equal(failure.retryable, false);
      assert.ok(!failure.logReason.includes('@'));
    }
    assert.equal(smtp.messages.length, 0);
  });
});

describe('an SMTP server that cannot be reached', () => {
  it('a refused connection is retryable, its log reason the error code', async () => {
    const closed = await startSmtpServer();
    await closed.close();
    const sender = openMailSender(mailConfig({ smtpUrl: closed.url }), { timeoutMs: 2_000 });
    try {
      const failure = await failureOf(sender.send(MESSAGE, 'evt_refused'));
      assert.equal(failure.retryable, true);
      assert.match(failure.logReason, /^smtp E[A-Z]+$/);
    } finally {
      sender.close();
    }
  });

  it('a server that never greets times out after timeoutMs, retryably', async () => {
    const sockets = new Set<Socket>();
    const silent: Server = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    const sender = openMailSender(mailConfig({ smtpUrl: `smtp://127.0.0.1:${port}` }), { timeoutMs: 300 });
    try {
      const started = Date.now();
      const failure = await failureOf(sender.send(MESSAGE, 'evt_silent'));
      assert.ok(Date.now() - started < 5_000);
      assert.equal(failure.retryable, true);
      assert.equal(failure.logReason, 'smtp ETIMEDOUT');
    } finally {
      sender.close();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

describe('without SMTP_URL: .eml files', () => {
  it('writes the message to the mail directory (made if missing, private), where it parses back the same', async () => {
    const dir = path.join(scratch, 'eml', 'mail');
    const sender = openMailSender(mailConfig({ dir }));
    try {
      await sender.send(MESSAGE, 'evt_file');
    } finally {
      sender.close();
    }
    const files = readdirSync(dir);
    assert.equal(files.length, 1, 'one file and no temporary one');
    assert.match(files[0]!, /^\d{4}-\d{2}-\d{2}T[\d-]+Z-evt_file\.eml$/);
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    assert.equal(statSync(path.join(dir, files[0]!)).mode & 0o777, 0o600);
    const parsed = await simpleParser(readFileSync(path.join(dir, files[0]!)));
    assertSameMessage(parsed, 'evt_file');
  });

  it('keeps each message in a file of its own', async () => {
    const dir = path.join(scratch, 'eml-many');
    const sender = openMailSender(mailConfig({ dir }));
    try {
      await Promise.all(['evt_a', 'evt_b', 'evt_c'].map((eventId) => sender.send(MESSAGE, eventId)));
    } finally {
      sender.close();
    }
    assert.deepEqual(
      readdirSync(dir)
        .map((name) => name.replace(/^.*-(evt_\w+)\.eml$/, '$1'))
        .sort(),
      ['evt_a', 'evt_b', 'evt_c'],
    );
  });

  it('a directory that cannot be made is a retryable failure naming no path', async () => {
    const file = path.join(scratch, 'a-file');
    writeFileSync(file, '');
    const sender = openMailSender(mailConfig({ dir: path.join(file, 'mail') }));
    try {
      const failure = await failureOf(sender.send(MESSAGE, 'evt_blocked'));
      assert.equal(failure.retryable, true);
      assert.equal(failure.logReason, 'mail file ENOTDIR');
      assert.ok(!failure.message.includes(scratch));
    } finally {
      sender.close();
    }
  });
});
