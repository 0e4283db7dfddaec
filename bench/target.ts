/**
 * A server for the benchmark to load, in its own process so the load generator does not share its core:
 *   bare BYTES             node:http answering a fixed JSON body of BYTES bytes (the baseline)
 *   bare-file FILE TYPE    node:http answering the bytes of FILE as TYPE (the baseline for an HTML page)
 *   store PRODUCTS [pglite|postgres] [CONTROL_SOCKET]   the storefront with the demo catalog plus PRODUCTS
 *       generated products; with CONTROL_SOCKET it serves the merchant's commands there (as `storefront serve`
 *       does for an embedded database), and GET /__bench/catalog tells how often the catalog was reloaded
 * Prints "READY <port>" once listening on 127.0.0.1.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { buildApp } from '../src/app.js';
import { importCatalog } from '../src/catalog/import/import-catalog.js';
import { loadConfig } from '../src/config.js';
import { openStore } from '../src/store.js';
import { serveControlSocket } from '../src/cli/control-socket.js';
import { storeCommands } from '../src/cli/merchant-commands.js';
import { backends } from '../test/helpers/store.js';
import { generateCatalog } from './generated-catalog.js';

const [mode, arg, backendName = 'pglite', controlSocket] = process.argv.slice(2);

function fixedBody(bytes: number): string {
  const skeleton = JSON.stringify({ products: [{ title: '' }] });
  return JSON.stringify({ products: [{ title: 'x'.repeat(Math.max(0, bytes - skeleton.length)) }] });
}

if (mode === 'bare' || mode === 'bare-file') {
  const body = mode === 'bare' ? Buffer.from(fixedBody(Number(arg))) : readFileSync(arg!);
  const type = mode === 'bare' ? 'application/json; charset=utf-8' : process.argv[4]!;
  const server = http.createServer((_request, response) => {
    response.writeHead(200, { 'content-type': type, 'content-length': body.length });
    response.end(body);
  });
  server.listen(0, '127.0.0.1', () => console.log(`READY ${(server.address() as { port: number }).port}`));
} else if (mode === 'store') {
  const backend = backends.find((b) => b.name === backendName)!;
  const { db } = await backend.open();
  const config = { ...loadConfig({ RATE_LIMIT: 'off', BASE_URL: 'http://127.0.0.1', DATA_DIR: 'unused' }) };
  const store = await openStore(config, { db });
  await importCatalog(store.db, generateCatalog(Number(arg)));
  await store.catalog.refresh(store.db);
  await store.inventory.refresh(store.db);
  let catalogLoads = 0;
  store.catalog.onChange(() => catalogLoads++);
  if (controlSocket) {
    await serveControlSocket(
      controlSocket,
      storeCommands(store),
    );
  }
  const app = await buildApp(store, {
    extend: (app) => app.get('/__bench/catalog', { config: { rateLimit: 'other' } }, async () => ({ version: store.catalog.snapshot.version, loads: catalogLoads })),
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  console.log(`READY ${(app.server.address() as { port: number }).port}`);
} else {
  console.error('usage: target.ts bare BYTES | bare-file FILE TYPE | store PRODUCTS [pglite|postgres]');
  process.exit(2);
}
