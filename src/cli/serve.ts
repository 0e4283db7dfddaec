/**
 * `storefront serve`: the store in this process until a signal stops it (its drain, its grace, a signal while it starts).
 * Only a process of its own runs it; the merchant's other commands are in command-line.ts.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { ConfigError, type Config } from '../config.js';
import { controlSocketPath } from './control-socket.js';
import { startBanner } from './start-banner.js';
import { printLines, type TextStream } from './terminal-text.js';

/** How long requests under way may take to finish once serve is asked to stop. */
export const DRAIN_SECONDS = 10;
/**
 * After the drain, how long closing the store (it waits up to CLOSE_WAIT_MS for the database work of requests whose
 * clients left) and writing out the log may take before the process exits anyway.
 */
const STOP_GRACE_SECONDS = 5;

/**
 * How long a start signalled to stop may still take. A first start on the embedded database creates it (initdb),
 * migrates and seeds: seconds on a quiet machine, over 15 s on a busy one (seen in CI), and a process cut short there
 * leaves a DATA_DIR the next start cannot open. Only a start that cannot finish (a database server that does not
 * answer, a migration waiting on a lock) should hit this.
 */
const START_STOP_SECONDS = 60;

/** Exits 1, saying why, if the process is still running `seconds` from now. */
function exitIfStillRunning(why: string, seconds = DRAIN_SECONDS + STOP_GRACE_SECONDS): void {
  setTimeout(() => {
    process.stderr.write(`storefront: ${why}; exiting\n`);
    process.exit(1);
  }, seconds * 1000).unref();
}

/** A HOST naming no address stops the start before the database is opened, in one line naming HOST. */
async function listenAddressOrThrow(host: string): Promise<void> {
  if (isIP(host)) return;
  try {
    await lookup(host);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new ConfigError('HOST', `"${host.slice(0, 80)}" names no address of this machine (${typeof code === 'string' ? code : 'not resolved'})`);
  }
}

export async function serve(config: Config, stdout: TextStream): Promise<void> {
  // A signal may come while the store starts (a deploy that changes its mind, an orchestrator's timeout): the
  // database being opened, migrated or seeded is let finish and closed, then the process exits 0, never cut short
  // mid-write. Once the app exists, `shutdown` below takes over.
  let stopWhileStarting: string | undefined;
  let shutdown: ((signal: string) => Promise<void>) | undefined = undefined;
  const onSignal = (signal: string) => {
    if (shutdown) return void shutdown(signal);
    if (stopWhileStarting) process.exit(1);
    stopWhileStarting = signal;
    process.stderr.write(`storefront: ${signal} while starting: stopping once the store has started (a second signal exits at once)\n`);
    // A start that cannot finish (a database server that does not answer, a migration waiting on a lock) still ends.
    exitIfStillRunning(`the start did not finish within ${START_STOP_SECONDS} s of ${signal}`, START_STOP_SECONDS);
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  await listenAddressOrThrow(config.host);
  // The store and its app are loaded by serve alone: the merchant's commands (and a usage error) start without them.
  const [{ openStore }, { buildApp }, { flushRequestLog }, { serveControlSocket }, { storeCommands }] = await Promise.all([
    import('../store.js'),
    import('../app.js'),
    import('../http/request-log.js'),
    import('./control-socket.js'),
    import('./merchant-commands.js'),
  ]);
  const store = await openStore(config, { deliver: true });
  if (stopWhileStarting) {
    await store.close();
    process.stderr.write('storefront: stopped before serving\n');
    process.exit(0);
  }
  const app = await buildApp(store, { logger: true });
  // The embedded database belongs to this process: the merchant's commands reach it through this socket.
  const control = config.databaseUrl
    ? undefined
    : await serveControlSocket(
        controlSocketPath(config.dataDir),
        storeCommands(store),
      );
  let closing = false;
  let listening: Promise<unknown> | undefined = undefined;
  // Stop accepting connections on both sockets, let the requests under way finish (closing what is left after
  // DRAIN_SECONDS), then stop the background work and close the database. A second signal exits at once.
  shutdown = async (signal: string) => {
    if (closing) {
      app.log.warn({ signal }, 'second signal: exiting without waiting');
      process.exit(1);
    }
    closing = true;
    app.log.info({ signal }, `shutting down: requests under way have ${DRAIN_SECONDS} s to finish`);
    const deadline = setTimeout(() => {
      app.log.warn('requests still under way after the drain: closing their connections');
      app.server.closeAllConnections();
      control?.closeAllConnections();
    }, DRAIN_SECONDS * 1000);
    // Whatever hangs past the drain (the database's close, a log that cannot be written), the process still ends.
    exitIfStillRunning(`shutdown did not finish within ${DRAIN_SECONDS + STOP_GRACE_SECONDS} s`);
    try {
      // A signal during listen: the socket is bound (or failed to be) before it is closed.
      await listening?.catch(() => {});
      // Both at once: waiting first for a slow merchant command on the control socket would keep the app taking
      // requests past the drain's deadline, and nothing would then bound the app's close.
      await Promise.all([control?.close(), app.close()]);
      clearTimeout(deadline);
      await store.close();
      app.log.info('stopped');
      // The log is written in the background: what it still holds goes out before the process ends.
      await flushRequestLog(app.log);
      process.exit(0);
    } catch (error) {
      app.log.error({ err: error }, 'shutdown failed');
      await flushRequestLog(app.log);
      process.exit(1);
    }
  };
  // A signal that came while the app was being built.
  if (stopWhileStarting) return shutdown(stopWhileStarting);
  listening = app.listen({ port: config.port, host: config.host });
  try {
    await listening;
  } catch (error) {
    // A signal's shutdown is under way and closes everything itself; otherwise (the port taken, say) the store
    // and its sockets are closed before the error ends the process.
    if (closing) return;
    closing = true;
    await Promise.all([control?.close(), app.close()]).catch(() => {});
    await store.close().catch(() => {});
    throw error;
  }
  if (closing) return;
  app.log.info(`storefront serving ${config.baseUrl} on ${config.databaseUrl ? 'PostgreSQL' : `embedded PostgreSQL in ${config.dataDir}`}`);
  if (process.stdout.isTTY) {
    const hasOwner = (await store.staff.list(store.db)).some((member) => member.role === 'owner' && member.revokedAt === null);
    printLines(stdout, `\n${startBanner(config, store.catalog.snapshot, { hasOwner })}\n`);
  }
  if (config.checkout.approvalProof === 'passkey-or-code' && isIP(new URL(config.baseUrl).hostname.replace(/^\[|\]$/g, ''))) {
    app.log.warn('BASE_URL names an IP address, which passkeys cannot be bound to: buyers approve with a mailed code only; give BASE_URL a host name to offer passkeys');
  }
  if (config.checkout.approvalProof === 'link') {
    app.log.warn('APPROVAL_PROOF=link: approval pages ask for no proof, so whoever holds an approval link (an agent too) can place the order; for development only');
  }
}
