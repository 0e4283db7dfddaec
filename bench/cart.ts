/**
 * Cart benchmark: POST /cart/add.js against the real app on a loopback port, on a fresh database of each
 * backend, spread over one cart per connection (a back-orderable variant, ceiling raised, so no add is
 * refused). At the end the quantities stored must equal the number of 200 answers: zero lost updates.
 * The app runs in a worker thread so that autocannon, in this thread, does not take the app's CPU time.
 *
 *   node --import tsx bench/cart.ts [seconds] [connections]
 */
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { backends, dropTestDatabases, startTestStore } from '../test/helpers/store.js';

/** The part of autocannon's programmatic API used here (the package ships no types). */
interface AutocannonRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  setupRequest?: (request: { headers?: Record<string, string> }) => object;
}
interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
}
type Autocannon = (options: { url: string; connections: number; duration: number; requests: AutocannonRequest[] }) => Promise<AutocannonResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

/** The back-orderable demo variant (inventory policy continue): stock never refuses an add. */
const BENCH_SKU = 'SLP-60';
const SERVER_ROLE = 'cart-bench-server';

type Backend = 'pglite' | 'postgres';

export interface CartBenchResult {
  backend: string;
  adds: number;
  addsPerSecond: number;
  expectedQuantity: number;
  actualQuantity: number;
  lostUpdates: number;
}

/** What the app's thread reports when the load is over. */
interface ServerTally {
  /** 200 answers to POST /cart/add.js, counted by the server (the client stops counting at its deadline). */
  addsAnswered: number;
  /** Sum of the quantities stored in the given carts. */
  storedQuantity: number;
}

type ToServer = { tokens: string[] };
type FromServer = { port: number; variantId: number } | ServerTally;

/** The app's thread: starts the store and the app, answers the port, then the tally for the carts it is given. */
async function serveBenchApp(backendName: Backend): Promise<void> {
  const backend = backends.find((b) => b.name === backendName)!;
  let addsAnswered = 0;
  let inFlight = 0;
  const t = await startTestStore(backend, {
    config: { cartMaxLineQuantity: 1_000_000, rateLimit: false },
    app: {
      extend: (app) => {
        app.addHook('onRequest', async () => {
          inFlight++;
        });
        // onSend, not onResponse: an add committed for a client that already hung up still counts.
        app.addHook('onSend', async (request, reply) => {
          inFlight--;
          if (request.url === '/cart/add.js' && reply.statusCode === 200) addsAnswered++;
        });
      },
    },
  });
  try {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    if (!address || typeof address === 'string') throw new Error('the app is not listening on a TCP port');
    const variant = t.store.catalog.snapshot.products.flatMap((p) => p.variants).find((v) => v.sku === BENCH_SKU);
    if (!variant) throw new Error(`the demo catalog has no ${BENCH_SKU}`);
    parentPort!.postMessage({ port: address.port, variantId: variant.id } satisfies FromServer);

    const [{ tokens }] = (await once(parentPort!, 'message')) as [ToServer];
    const deadline = Date.now() + 10_000;
    while (inFlight > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    const [row] = await t.store.db.query<{ total: number }>(
      `select coalesce(sum(l.quantity), 0)::int as total
         from carts c join cart_lines l on l.cart_id = c.id where c.token = any($1::text[])`,
      [tokens],
    );
    parentPort!.postMessage({ addsAnswered, storedQuantity: row?.total ?? 0 } satisfies FromServer);
  } finally {
    await t.close();
    await dropTestDatabases();
  }
}

export async function benchCartAdds(options: { backend: Backend; seconds: number; connections: number }): Promise<CartBenchResult> {
  // On Node 20 a worker's .ts entry loads before --import hooks apply: register tsx first, then import this file.
  const entry = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))})
    .then(({ register }) => { register(); return import(${JSON.stringify(import.meta.url)}); })`;
  const server = new Worker(entry, { eval: true, workerData: { role: SERVER_ROLE, backend: options.backend } });
  const failed = once(server, 'error').then(([error]) => Promise.reject(error as Error));
  failed.catch(() => {});
  const nextMessage = () => Promise.race([once(server, 'message').then(([message]) => message as FromServer), failed]);
  try {
    const started = await nextMessage();
    if (!('port' in started)) throw new Error('the bench app did not start');
    const url = `http://127.0.0.1:${started.port}`;
    const body = JSON.stringify({ items: [{ id: started.variantId, quantity: 1 }] });

    // One cart per connection, each made by a first add (quantity 1).
    const cookies: string[] = [];
    for (let i = 0; i < options.connections; i++) {
      const response = await fetch(`${url}/cart/add.js`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      if (response.status !== 200) throw new Error(`creating a cart answered ${response.status}: ${await response.text()}`);
      cookies.push(response.headers.get('set-cookie')!.split(';')[0]!);
    }
    const tokens = cookies.map((cookie) => cookie.slice('cart='.length));

    let next = 0;
    const load = await autocannon({
      url,
      connections: options.connections,
      duration: options.seconds,
      requests: [
        {
          method: 'POST',
          path: '/cart/add.js',
          headers: { 'content-type': 'application/json' },
          body,
          setupRequest: (request) => ({ ...request, headers: { ...request.headers, cookie: cookies[next++ % cookies.length]! } }),
        },
      ],
    });
    if (load.non2xx > 0 || load.errors > 0) {
      console.error(`${options.backend}: ${load.non2xx} non-2xx answers, ${load.errors} errors (${load.timeouts} timeouts)`);
    }

    server.postMessage({ tokens } satisfies ToServer);
    const tally = await nextMessage();
    if (!('addsAnswered' in tally)) throw new Error('the bench app sent no tally');
    const adds = tally.addsAnswered - tokens.length;
    const expectedQuantity = tally.addsAnswered;
    await once(server, 'exit');
    return {
      backend: options.backend,
      adds,
      addsPerSecond: Math.round(adds / load.duration),
      expectedQuantity,
      actualQuantity: tally.storedQuantity,
      lostUpdates: expectedQuantity - tally.storedQuantity,
    };
  } catch (error) {
    await server.terminate();
    throw error;
  }
}

if (!isMainThread && (workerData as { role?: string } | null)?.role === SERVER_ROLE) {
  await serveBenchApp((workerData as { backend: Backend }).backend);
} else if (isMainThread && process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const seconds = Number(process.argv[2] ?? 10);
  const connections = Number(process.argv[3] ?? 50);
  for (const backend of ['pglite', 'postgres'] as const) {
    const result = await benchCartAdds({ backend, seconds, connections });
    console.log(
      `cart adds on ${result.backend}: ${result.addsPerSecond} adds/s (${result.adds} adds in ${seconds} s, ${connections} connections); ` +
        `quantity stored ${result.actualQuantity} of ${result.expectedQuantity} answered, lost updates ${result.lostUpdates}`,
    );
  }
}
