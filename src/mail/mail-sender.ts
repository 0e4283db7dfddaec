/**
 * Hands a rendered message to the mail server (SMTP_URL) or, without one, writes it as an .eml file under the mail
 * directory. The Message-ID comes from the outbox event's id, so a message sent again after a crash is recognisable
 * as the same one. A failure is a DeliveryError: retryable unless the server refused the message for good.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer, { type NodemailerError, type SendMailOptions } from 'nodemailer';
import type { MailConfig } from './mail-options.js';
import { DeliveryError } from '../outbox/delivery.js';
import type { MailMessage } from '../outbox/outbox.js';
import { oneLine, plainMailAddress } from './mail-parts.js';

export interface MailSender {
  /** Sends one message; `eventId` (the outbox event's id) makes its Message-ID, the same on every attempt. Throws DeliveryError. */
  send(message: MailMessage, eventId: string): Promise<void>;
  close(): void;
}

/** How long a connection, the server's greeting and a silent socket may take, each. */
const DEFAULT_TIMEOUT_MS = 15_000;

// An event id goes into the Message-ID and a file name: nothing that could end either.
const EVENT_ID = /^[A-Za-z0-9_-]{1,128}$/;

export function openMailSender(config: MailConfig, options: { timeoutMs?: number } = {}): MailSender {
  const messageIdHost = hostOfMailbox(config.from);
  const compose = (message: MailMessage, eventId: string): SendMailOptions => {
    if (!EVENT_ID.test(eventId)) throw new DeliveryError('The event id cannot make a Message-ID.', 'mail bad event id', false);
    const to = plainMailAddress(message.to);
    if (!to) throw new DeliveryError('The recipient is not a single plain address.', 'mail bad recipient', false);
    return {
      from: config.from,
      to,
      subject: oneLine(message.subject),
      text: message.text,
      html: message.html,
      messageId: `<${eventId}@${messageIdHost}>`,
      // RFC 3834: no vacation or out-of-office replies to an automatic message.
      headers: { 'Auto-Submitted': 'auto-generated' },
    };
  };
  return config.smtpUrl ? smtpSender(config.smtpUrl, options.timeoutMs ?? DEFAULT_TIMEOUT_MS, compose) : fileSender(config.dir, compose);
}

/** The host of `orders@example.com` or `Store <orders@example.com>`. */
function hostOfMailbox(mailbox: string): string {
  const address = /<([^<>]+)>\s*$/.exec(mailbox)?.[1] ?? mailbox;
  return address.slice(address.lastIndexOf('@') + 1).trim() || 'localhost';
}

type Compose = (message: MailMessage, eventId: string) => SendMailOptions;

function smtpSender(smtpUrl: string, timeoutMs: number, compose: Compose): MailSender {
  const transport = nodemailer.createTransport({
    url: smtpUrl,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    dnsTimeout: timeoutMs,
    // The message is text and HTML we rendered: nothing in it may make nodemailer read a file or fetch a URL.
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  return {
    async send(message, eventId) {
      const mail = compose(message, eventId);
      try {
        await transport.sendMail(mail);
      } catch (error) {
        throw smtpFailure(error as NodemailerError);
      }
    },
    close: () => transport.close(),
  };
}

/**
 * 5xx is a refusal for good, except 503 (a session in the wrong state) and a failed login (the store's credentials,
 * fixed by the merchant, not the message): those, 4xx, timeouts and lost connections are tried again.
 */
function smtpFailure(failure: NodemailerError): DeliveryError {
  const responseCode = failure.responseCode;
  const permanent = responseCode !== undefined && responseCode >= 500 && responseCode < 600 && responseCode !== 503 && failure.code !== 'EAUTH';
  const reason = String(responseCode ?? failure.code ?? 'error').replace(/[^A-Za-z0-9_]/g, '');
  const answer = failure.response ? `The mail server answered: ${failure.response}` : failure.message || 'The mail server did not take the message.';
  return new DeliveryError(oneLine(answer).slice(0, 500), `smtp ${reason}`, !permanent);
}

function fileSender(dir: string, compose: Compose): MailSender {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows', disableFileAccess: true, disableUrlAccess: true });
  return {
    async send(message, eventId) {
      const mail = compose(message, eventId);
      let content: Buffer;
      try {
        const info = await transport.sendMail(mail);
        if (!Buffer.isBuffer(info.message)) throw new Error('the stream transport gave no buffer');
        content = info.message;
      } catch (error) {
        throw new DeliveryError('The message could not be composed.', `mail compose ${codeOf(error)}`);
      }
      await writeWhole(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${eventId}.eml`, content);
    },
    close: () => transport.close(),
  };
}

/** Writes a temporary file beside the target and renames it, so a reader never sees half a message. */
async function writeWhole(dir: string, name: string, content: Buffer): Promise<void> {
  const temporary = path.join(dir, `.${name}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await writeFile(temporary, content, { mode: 0o600, flag: 'wx' });
    await rename(temporary, path.join(dir, name));
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => {});
    const code = codeOf(error);
    throw new DeliveryError(`The message could not be written to the mail directory (${code}).`, `mail file ${code}`);
  }
}

// The error's code only: its message names the file's path.
const codeOf = (error: unknown): string => String((error as NodeJS.ErrnoException | undefined)?.code ?? 'error').replace(/[^A-Za-z0-9_]/g, '');
