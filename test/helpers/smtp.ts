/**
 * A real SMTP server on loopback for tests (smtp-server): plain SMTP, no TLS, no login required, on a free port of
 * 127.0.0.1. Every message it takes is parsed back with mailparser and kept, with its envelope and raw bytes.
 * It can be told to refuse for a while (a 4xx for retries, a 5xx for a refusal for good).
 *
 *   const smtp = await startSmtpServer();
 *   const config = { ...loadConfig(env).mail, smtpUrl: smtp.url };
 *   …
 *   const [mail] = await smtp.waitFor(1);
 *   assert.equal(mail!.subject, 'Storefront: order #1001 confirmed');
 *   smtp.refuse(451);            // every recipient refused with 451 until accept()
 *   smtp.refuse(451, { times: 2 }); // the next two attempts refused, then messages are taken again
 *   await smtp.close();
 */
import { simpleParser, type ParsedMail } from 'mailparser';
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerDataStream } from 'smtp-server';

/** A message the server took: mailparser's reading of it, the SMTP envelope, and the bytes as they arrived. */
export interface ReceivedMail extends ParsedMail {
  envelope: { from: string | undefined; to: string[] };
  raw: Buffer;
}

export interface RefuseOptions {
  /** Refuse this many attempts (messages), then take messages again; by default until accept(). */
  times?: number;
  /** Where the refusal comes: at RCPT TO (the default, as a server refusing a recipient) or after DATA. */
  at?: 'rcpt' | 'data';
  /** The text after the code. */
  message?: string;
}

export interface TestSmtpServer {
  /** `smtp://127.0.0.1:PORT`: an SMTP_URL for the store. */
  url: string;
  port: number;
  /** Every message taken, in the order they arrived. Clear it with `messages.length = 0`. */
  messages: ReceivedMail[];
  /** How many attempts were refused so far. */
  readonly refusals: number;
  /** Resolves with the messages once there are at least `count`; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  /** Refuses messages with this SMTP code (451 by default: try again later) until accept() or `times` refusals. */
  refuse(code?: number, options?: RefuseOptions): void;
  /** Takes messages again. */
  accept(): void;
  close(): Promise<void>;
}

interface Refusal {
  code: number;
  at: 'rcpt' | 'data';
  message: string;
  remaining: number;
}

export async function startSmtpServer(): Promise<TestSmtpServer> {
  const messages: ReceivedMail[] = [];
  const waiters = new Set<() => void>();
  let refusal: Refusal | undefined;
  let refusals = 0;

  /** The refusal this attempt meets, if any; counts it. */
  const refusalAt = (at: 'rcpt' | 'data'): Error | undefined => {
    if (!refusal || refusal.at !== at) return undefined;
    const error = Object.assign(new Error(refusal.message), { responseCode: refusal.code });
    refusals += 1;
    refusal.remaining -= 1;
    if (refusal.remaining <= 0) refusal = undefined;
    return error;
  };

  const receive = async (stream: SMTPServerDataStream, envelope: ReceivedMail['envelope']): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const refused = refusalAt('data');
    if (refused) throw refused;
    const parsed = await simpleParser(raw);
    messages.push(Object.assign(parsed, { envelope, raw }));
    for (const wake of waiters) wake();
  };

  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    authOptional: true,
    logger: false,
    // Tests close the server right after their last message: no need to wait long for idle clients.
    closeTimeout: 500,
    onRcptTo(_address, _session, callback) {
      callback(refusalAt('rcpt') ?? null);
    },
    onData(stream, session, callback) {
      const envelope = {
        from: session.envelope.mailFrom === false ? undefined : session.envelope.mailFrom.address,
        to: session.envelope.rcptTo.map((recipient) => recipient.address),
      };
      // The client hears "250" only once the message is parsed and kept: after a send resolves, it is in `messages`.
      receive(stream, envelope).then(
        () => callback(null),
        (error: Error) => callback(error),
      );
    },
  });
  server.on('error', () => {});

  const port = await new Promise<number>((resolve, reject) => {
    const listening = server.listen(0, '127.0.0.1', () => resolve((listening.address() as AddressInfo).port));
    listening.once('error', reject);
  });

  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    messages,
    get refusals() {
      return refusals;
    },
    waitFor(count, timeoutMs = 5_000) {
      if (messages.length >= count) return Promise.resolve(messages);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(wake);
          reject(new Error(`SMTP test server: ${messages.length} of ${count} messages after ${timeoutMs} ms`));
        }, timeoutMs);
        const wake = () => {
          if (messages.length < count) return;
          clearTimeout(timer);
          waiters.delete(wake);
          resolve(messages);
        };
        waiters.add(wake);
      });
    },
    refuse(code = 451, options = {}) {
      refusal = {
        code,
        at: options.at ?? 'rcpt',
        message: options.message ?? (code >= 500 ? 'Refused for good (test server)' : 'Try again later (test server)'),
        remaining: options.times ?? Infinity,
      };
    },
    accept() {
      refusal = undefined;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
