/**
 * The control socket: while a store serves its embedded database (which one process alone may open), the
 * merchant's commands reach it here, an HTTP endpoint on a Unix socket inside DATA_DIR that only the
 * store's own user can open. The store runs each command in-process, in its own transaction, and takes the
 * change in at once. (Serving the database itself over a socket would let another process's transaction
 * interleave with the store's own queries on PGlite's single connection.)
 */
import { createHash } from 'node:crypto';
import { chmodSync, createReadStream, createWriteStream, existsSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { ImportError } from '../catalog/import/catalog-document.js';
import { CatalogStream, type CatalogFormat } from '../catalog/import/catalog-stream.js';
import type { ImportReport } from '../catalog/import/import-catalog.js';
import { CommandError, type FulfillRequest, type MerchantCommands } from './merchant-commands.js';
import { staffRoute } from './staff-commands.js';
import { subscriptionRoute, type SubscriptionCommands } from './subscription-commands.js';

/** Unix socket paths are limited to about 107 bytes; a deep DATA_DIR gets a socket in the temp folder instead. */
const MAX_SOCKET_PATH = 100;
const MAX_BODY_BYTES = 256 * 1024 * 1024;

export function controlSocketPath(dataDir: string): string {
  const inDataDir = path.join(dataDir, 'storefront.sock');
  if (inDataDir.length <= MAX_SOCKET_PATH) return inDataDir;
  return path.join(tmpdir(), `storefront-${createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 16)}.sock`);
}

type Answer = { status: number; body: unknown };

/** What a running store answers on its socket: the merchant's commands and the subscriptions'. */
export type ControlCommands = MerchantCommands & SubscriptionCommands;

async function route(commands: ControlCommands, method: string, url: string, body: unknown): Promise<Answer> {
  const input = (body ?? {}) as Record<string, unknown>;
  if (method === 'GET' && url === '/stock') return { status: 200, body: await commands.stock() };
  if (method === 'POST' && url === '/stock') return { status: 200, body: await commands.setStock(String(input.sku), Number(input.onHand)) };
  if (method === 'GET' && url === '/orders') return { status: 200, body: await commands.orders() };
  const id = String(input.id ?? '');
  if (method === 'POST' && url === '/orders/capture') {
    return { status: 200, body: await commands.capture(id, input.amount === undefined || input.amount === null ? undefined : Number(input.amount)) };
  }
  if (method === 'POST' && url === '/orders/fulfill') return { status: 200, body: await commands.fulfill(id, (input.request ?? {}) as FulfillRequest) };
  const reason = typeof input.reason === 'string' ? input.reason : undefined;
  if (method === 'POST' && url === '/orders/cancel') return { status: 200, body: await commands.cancel(id, reason) };
  if (method === 'POST' && url === '/orders/refund') return { status: 200, body: await commands.refund(id, Number(input.amount), reason) };
  if (method === 'POST' && url === '/signing-key/rotate') return { status: 200, body: await commands.rotateSigningKey() };
  if (method === 'GET' && url === '/buyers') return { status: 200, body: await commands.buyers() };
  if (method === 'POST' && url === '/buyers/revoke') {
    return { status: 200, body: await commands.revokeBuyer(String(input.email ?? ''), typeof input.passkeyId === 'string' ? input.passkeyId : undefined) };
  }
  const staff = await staffRoute(commands, method, url, input);
  if (staff) return staff;
  const subscriptions = await subscriptionRoute(commands, method, url, input);
  if (subscriptions) return subscriptions;
  if (method === 'GET' && url === '/outbox') return { status: 200, body: await commands.outbox() };
  if (method === 'POST' && url === '/outbox/retry') return { status: 200, body: await commands.retryOutbox(Number(input.id)) };
  // An order's id or number, escaped in the path (`#1001` would otherwise read as a fragment); null when none.
  if (method === 'GET' && url.startsWith('/orders/')) return { status: 200, body: await commands.order(decodeURIComponent(url.slice('/orders/'.length))) };
  return { status: 404, body: { error: 'unknown command' } };
}

/** The path of an import: the catalog file is the body, its format, --set-stock and --dry-run in the query. */
const IMPORT_PATH = '/import';

/**
 * An import's file as the CLI streams it: written to a temporary file as it comes (never held in memory), then
 * imported from there. The upload ends before the import's transaction begins, so a slow or stopped upload never
 * holds the embedded database, which the store's requests share.
 */
async function importUpload(commands: ControlCommands, upload: http.IncomingMessage, query: URLSearchParams): Promise<Answer> {
  const format: CatalogFormat = query.get('format') === 'csv' ? 'csv' : 'json';
  const dir = await mkdtemp(path.join(tmpdir(), 'storefront-import-'));
  try {
    const file = path.join(dir, `catalog.${format}`);
    await pipeline(upload, createWriteStream(file, { mode: 0o600 }));
    const options = { setStock: query.get('set-stock') === 'true', dryRun: query.get('dry-run') === 'true' };
    return { status: 200, body: await commands.importCatalog(CatalogStream.ofFile(file, format), options) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Serves the commands on the socket until closed; a socket left by a store that died is replaced. */
export async function serveControlSocket(socketPath: string, commands: ControlCommands): Promise<{ close(): Promise<void>; closeAllConnections(): void }> {
  if (existsSync(socketPath)) rmSync(socketPath, { force: true }); // the data directory's lock says no live store holds it
  const server = http.createServer((request, response) => {
    const reply = (answer: Answer) => {
      response.writeHead(answer.status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(answer.body));
    };
    const refused = (error: unknown) => {
      if (error instanceof CommandError) return reply({ status: 422, body: { error: error.message } });
      if (error instanceof ImportError) return reply({ status: 422, body: { error: error.message, where: error.where } });
      reply({ status: 500, body: { error: `the store could not run the command: ${(error as Error).message}` } });
    };
    const url = new URL(request.url ?? '/', 'http://control');
    if (request.method === 'POST' && url.pathname === IMPORT_PATH) return void importUpload(commands, request, url.searchParams).then(reply, refused);
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    request.on('end', () => {
      let body: unknown;
      try {
        body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
      } catch {
        return reply({ status: 400, body: { error: 'the command is not valid JSON' } });
      }
      route(commands, request.method ?? 'GET', request.url ?? '/', body).then(reply, refused);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  chmodSync(socketPath, 0o600);
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          rmSync(socketPath, { force: true });
          resolve();
        });
      }),
    // close() waits for the commands under way; this ends them (the store's drain is over).
    closeAllConnections: () => server.closeAllConnections(),
  };
}

/** Sends a command to the store that holds the socket and reads its answer; refusals come back as CommandError / ImportError. */
function sendToStore<T>(socketPath: string, method: 'GET' | 'POST', url: string, send: (request: http.ClientRequest) => void, contentType: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const request = http.request({ socketPath, method, path: url, headers: { 'content-type': contentType } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        let answer: { error?: string; where?: string } & Record<string, unknown>;
        try {
          answer = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          return reject(new Error('the running store gave an answer that is not JSON'));
        }
        if (response.statusCode === 200) return resolve(answer as T);
        if (response.statusCode === 422 && answer.where !== undefined) {
          return reject(new ImportError(answer.where, (answer.error ?? '').slice(answer.where.length + 2)));
        }
        if (response.statusCode === 422) return reject(new CommandError(answer.error ?? 'refused'));
        reject(new Error(answer.error ?? `the running store answered ${response.statusCode}`));
      });
    });
    request.on('error', (error) => reject(new Error(`cannot reach the running store on its control socket (${error.message})`)));
    send(request);
  });
}

/** Runs a command in the store that holds the socket; its refusals come back as CommandError / ImportError. */
export function sendControlCommand<T>(socketPath: string, method: 'GET' | 'POST', url: string, body?: unknown): Promise<T> {
  return sendToStore<T>(socketPath, method, url, (request) => request.end(body === undefined ? undefined : JSON.stringify(body)), 'application/json');
}

/** Has the store that holds the socket import a catalog file, streamed to it as it is read. */
export function sendCatalogFile(socketPath: string, catalog: { path: string; format: CatalogFormat }, options: { setStock?: boolean; dryRun?: boolean }): Promise<ImportReport> {
  const query = new URLSearchParams({ format: catalog.format, 'set-stock': String(options.setStock === true), 'dry-run': String(options.dryRun === true) });
  return sendToStore<ImportReport>(
    socketPath,
    'POST',
    `${IMPORT_PATH}?${query}`,
    (request) => {
      const file = createReadStream(catalog.path);
      file.on('error', (error) => request.destroy(error));
      file.pipe(request);
    },
    'application/octet-stream',
  );
}
