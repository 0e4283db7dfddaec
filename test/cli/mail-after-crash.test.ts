/**
 * The outbox survives the process: an order's confirmation, committed with the order, is still sent when the
 * store is killed (SIGKILL) while it is sending it, and sent once, by the store started again. The first store's
 * mail server accepts the connection and never answers, so the kill lands with the message claimed and not sent;
 * the store started again (on the embedded database, and on PostgreSQL after the dead instance's lease ends)
 * sends it to a real SMTP server on loopback.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { openStore } from '../../src/store.js';
import { freePort } from '../helpers/browser.js';
import { cliScratch, cliTargets, storefrontArgs } from '../helpers/cli.js';
import { placeOrder } from '../helpers/orders.js';
import { startSmtpServer } from '../helpers/smtp.js';

const { scratch, databases } = cliScratch('sf-crash-mail');

/** Places one order through the checkout in a store that delivers nothing (this process's); answers its number. */
async function placeOneOrder(env: Record<string, string>, email: string): Promise<number> {
  const store = await openStore(loadConfig({ ...env, LOG_LEVEL: 'silent' }), { onBackgroundError: () => {} });
  try {
    const variantId = store.catalog.snapshot.productByHandle('espresso-capsules')!.variants[0]!.id;
    return (await placeOrder(store, [{ variantId, quantity: 2 }], { email })).number;
  } finally {
    await store.close();
  }
}

/** A mail server that takes connections and never says a word: a send to it is under way until its timeout. */
async function silentMailServer(): Promise<{ url: string; connected: Promise<void>; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  let onConnect = () => {};
  const connected = new Promise<void>((resolve) => (onConnect = resolve));
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    onConnect();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `smtp://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    connected,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function serve(env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, storefrontArgs('serve'), { env: { ...process.env, LOG_LEVEL: 'silent', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr!.setEncoding('utf8');
  return child;
}

const exited = (child: ChildProcess) => new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));

for (const target of cliTargets(scratch, 'sf_crash_mail', databases)) {
  describe(`mail after a crash (${target.name})`, () => {
    it('a store killed while sending the confirmation sends it after restart, once', { timeout: 120_000 }, async () => {
      const env = { ...(await target.env()), BASE_URL: 'http://shop.test', OUTBOX_LEASE: '5', OUTBOX_RETRY_BASE: '1' };
      const email = `crash-${Date.now()}@example.com`;
      const number = await placeOneOrder(env, email);

      const silent = await silentMailServer();
      const first = serve({ ...env, PORT: String(await freePort()), HOST: '127.0.0.1', SMTP_URL: silent.url });
      try {
        // The store claimed the confirmation and is talking to the mail server: kill it there.
        await Promise.race([
          silent.connected,
          exited(first).then(() => {
            throw new Error('the store exited before it tried to send');
          }),
        ]);
        first.kill('SIGKILL');
        await exited(first);
      } finally {
        if (first.exitCode === null && first.signalCode === null) first.kill('SIGKILL');
        await silent.close();
      }

      const smtp = await startSmtpServer();
      const second = serve({ ...env, PORT: String(await freePort()), HOST: '127.0.0.1', SMTP_URL: smtp.url });
      try {
        const [mail] = await smtp.waitFor(1, 60_000);
        assert.equal(mail!.envelope.to.join(','), email);
        assert.match(mail!.subject ?? '', new RegExp(`#${number}\\b`));
        // Once: nothing more arrives (the first store never finished its send; the restart sent it once).
        await sleep(3000);
        assert.equal(smtp.messages.length, 1);
      } finally {
        second.kill('SIGTERM');
        await exited(second);
        await smtp.close();
      }
    });
  });
}
