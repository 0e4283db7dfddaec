/**
 * Request-rate limits on every endpoint (issue [operations], item 1): fixed-window counters per client address
 * (request.ip, which believes X-Forwarded-For only from TRUST_PROXY peers; an IPv6 client is its /64), one counter
 * per route class, counted in the app's one arrival hook (src/app.ts) after the shutdown, missing-Host and CORS
 * preflight answers, so a request is counted before its body is read, the commerce endpoint checks its Host, or a
 * 405 is chosen; a product read answered on arrival (src/storefront/product-read-on-arrival.ts) is counted there,
 * once, with the same counters. An answer over budget is 429 with Retry-After (whole seconds, at least 1), the x-ratelimit-*
 * headers (an answer within budget has none) and the storefront Error; the commerce endpoint's own error handler
 * turns it into its JSON-RPC error (src/ucp/routes.ts). Counters live in this process, or with REDIS_URL in Redis,
 * shared by every instance; if Redis fails, requests are served unlimited (logged at most every LOG_EVERY_MS, and
 * counted in the metrics). RATE_LIMIT=off counts nothing.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import ipaddr from 'ipaddr.js';
import { Redis } from 'ioredis';
import type { Config } from '../config.js';
import type { Store } from '../store.js';
import { MCP_PATH, PROFILE_PATH } from '../ucp/protocol.js';
import { ErrorMessage, StorefrontError } from './errors.js';
import type { Metrics } from './metrics.js';
import { clientAddress } from './request-id.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/**
 * Budgets per client address. A shopper's browser loads a product page with about five JSON calls and re-reads its
 * cart after each change; several shoppers may share one address (an office, a carrier's NAT); an agent platform
 * calls the commerce endpoint from few addresses for many shoppers.
 */
export const BUDGETS = {
  /** The shop's pages (home, collections, products) and their JSON, recommendations, sitemap, openapi, scopes, demo
   *  images and the shop's script: 20 product pages a minute is a fast shopper (~100 calls), this leaves room for a
   *  few behind one address, and holds a scraper to 10/s. */
  catalog: { max: 600, timeWindow: MINUTE },
  /** Search-as-you-type sends one request per keystroke: 300 is twenty typed queries a minute. */
  search: { max: 300, timeWindow: MINUTE },
  /** /cart.js and /cart.json: themes read the cart on every page and after every change. */
  'cart-read': { max: 300, timeWindow: MINUTE },
  /** Adds, changes, updates, clears and /cart/c/{token}: a person changes a cart a few times a minute, and a
   *  token guesser gets one guess a second at 192 random bits. */
  'cart-write': { max: 60, timeWindow: MINUTE },
  /** New carts (a cart answer handing out a new token), counted by the cart routes: one per visitor, so a busy
   *  shared address has room, while one client cannot fill the database with carts (see MAX_CART_TEXT_BYTES). */
  'cart-start': { max: 300, timeWindow: HOUR },
  /** The commerce endpoint: an agent platform calls from few addresses for many shoppers (10 calls/s sustained). */
  mcp: { max: 600, timeWindow: MINUTE },
  /** The UCP profile: its readers cache it (max-age 300). */
  profile: { max: 120, timeWindow: MINUTE },
  /** A person's own pages: the cart page, the checkout form, the approval page's GET, checkout, order and policy
   *  pages: a person opens a handful a minute. */
  page: { max: 120, timeWindow: MINUTE },
  /** Approving or declining is one click of a person; more is someone trying links or forms. */
  'approval-post': { max: 20, timeWindow: MINUTE },
  /** /healthz and /readyz: balancers and supervisors probe every few seconds; never refuse a probe that is sane. */
  health: { max: 1200, timeWindow: MINUTE },
  /** Everything else, 404s and 405s included: nothing a client needs often. */
  other: { max: 120, timeWindow: MINUTE },
} as const satisfies Record<string, { max: number; timeWindow: number }>;

export type RouteClass = keyof typeof BUDGETS;

/** The class of a route, from its method and URL pattern; decided once per route when it is registered. */
export function routeClass(method: string, url: string): RouteClass {
  if (url === '/healthz' || url === '/readyz') return 'health';
  if (url === MCP_PATH) return 'mcp';
  if (url === PROFILE_PATH || url.startsWith(`${PROFILE_PATH}/`)) return 'profile';
  if (url === '/search/suggest.json' || url === '/search.json' || url === '/search') return 'search';
  // The home page is a shop page like a collection's, the same for everyone (publicly cached): the catalog's budget.
  if (url === '/') return 'catalog';
  // A person's own pages: the cart, the checkout form (its POST changes a checkout).
  if (url === '/cart') return 'page';
  if (url === '/checkout') return method === 'POST' ? 'cart-write' : 'page';
  if (url === '/cart.js' || url === '/cart.json') return 'cart-read';
  if (url.startsWith('/cart/')) return 'cart-write';
  if (url.startsWith('/checkout/approve/')) return method === 'POST' ? 'approval-post' : 'page';
  if (url.startsWith('/checkouts/') || url.startsWith('/orders/') || url.startsWith('/policies/')) return 'page';
  if (/^\/(products|collections|recommendations|assets)\/|^\/(products\.json|sitemap\.xml|openapi\.json|scopes\.json)$/.test(url)) return 'catalog';
  return 'other';
}

/** Counters kept in memory at most (about 100 bytes each); past it the oldest go first. */
const MAX_LOCAL_COUNTERS = 200_000;
/** How often expired counters are swept out of memory. */
const SWEEP_EVERY_MS = MINUTE;
/**
 * A Redis command answered later than this is a failure, and the request is served without a limit
 * (Config.redisCommandTimeoutMs overrides it: tests that count to a budget's edge lengthen it).
 */
const REDIS_COMMAND_TIMEOUT_MS = 200;
/** Reconnection backoff: 50 ms doubling up to this. */
const REDIS_MAX_BACKOFF_MS = 2000;
/** How long the app waits at start for Redis before serving without it. */
const REDIS_START_WAIT_MS = 2000;
/** A failing Redis is logged at most this often (with the failures since the last line). */
const LOG_EVERY_MS = 30_000;

/** A request over its budget: 429 with Retry-After, the storefront Error (the commerce endpoint answers JSON-RPC). */
export class RateLimited extends StorefrontError {
  constructor(readonly retryAfterSeconds: number) {
    super(429, ErrorMessage.tooManyRequests, `Too many requests; retry after ${retryAfterSeconds} s (Retry-After).`, {
      'retry-after': String(retryAfterSeconds),
    });
  }
}

const retryAfterSeconds = (ttlMs: number) => Math.max(1, Math.ceil(ttlMs / 1000));

/**
 * Carts one client address may start (BUDGETS['cart-start']), asked by the cart routes. A cart request whose cookie
 * carries no cart token is handed a new one; once the address has no start left this hour, only a cookie naming a
 * live cart is served.
 */
export interface CartStarts {
  /**
   * Before a cart request: counts a start when there is no token, else (only once the budget is spent) asks
   * `namesLiveCart`; throws RateLimited when the request would start a cart and none is left.
   */
  admit(request: FastifyRequest, reply: FastifyReply, hasToken: boolean, namesLiveCart: () => Promise<boolean>): Promise<void>;
  /** After a cart answer that handed a new token to a cookie naming no live cart: counts that start, refusing nothing. */
  record(request: FastifyRequest): void;
}

const UNLIMITED_STARTS: CartStarts = { admit: async () => {}, record: () => {} };

declare module 'fastify' {
  interface FastifyInstance {
    /** The cart-start budget (BUDGETS['cart-start']); unlimited with RATE_LIMIT=off. */
    cartStarts: CartStarts;
  }
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Every route's class, set by installRateLimits when the route is registered. */
    rateLimitClass?: RouteClass;
  }
}

/**
 * Counts a request against its route class's budget: undefined when it is within budget, else the RateLimited to
 * answer (its x-ratelimit-* headers already on the reply). In memory the answer is immediate; with Redis it is a
 * promise, which never rejects (a failing Redis serves the request).
 */
export type RequestLimit = (request: FastifyRequest, reply: FastifyReply) => RateLimited | undefined | Promise<RateLimited | undefined>;

/**
 * The limits as the app applies them: `limit` in its arrival hook, and `countOnArrival` for the reads answered
 * before routing (src/storefront/product-read-on-arrival.ts).
 */
export interface RateLimits {
  limit: RequestLimit;
  /**
   * Counts a request that has not reached Fastify, of class `name` from `address` (the address Fastify's
   * request.ip would give): true when it is within budget. Over budget the count stays on the request, and the
   * arrival hook answers its 429 from it without counting it again. A promise with Redis, which never rejects.
   */
  countOnArrival(raw: IncomingMessage, name: RouteClass, address: string): boolean | Promise<boolean>;
  /** A request counted within budget on arrival goes on to Fastify after all: the arrival hook does not count it again. */
  passOn(raw: IncomingMessage, name: RouteClass): void;
}

const COUNTED_ON_ARRIVAL = Symbol('countedOnArrival');
type CountedRequest = IncomingMessage & { [COUNTED_ON_ARRIVAL]?: { name: RouteClass; counted: Counted | undefined } };

/** A counter after a request: how many it has counted in its window, and the milliseconds until the window ends. */
export interface Counted {
  current: number;
  ttl: number;
}

/**
 * Fixed-window counters, one per key: the first count starts a window of `windowMs`, and the counter starts again
 * from zero once it has passed. `increment` false reads without counting.
 */
export interface Counters {
  count(key: string, windowMs: number, increment: boolean): Counted | Promise<Counted>;
}

/**
 * Counters in this process's memory: a Map, swept of expired counters every SWEEP_EVERY_MS and bounded by
 * MAX_LOCAL_COUNTERS (the oldest first: a Map iterates in insertion order). Counting is synchronous, so a product
 * read within budget pays a Map lookup and no promise; @fastify/rate-limit, which this replaced, cost about 8 µs
 * of CPU per request (its handler awaits three times and keeps an LRU list).
 */
export class LocalCounters implements Counters {
  private readonly counters = new Map<string, { current: number; endsAt: number }>();
  private readonly sweeper = setInterval(() => this.sweep(this.clock()), SWEEP_EVERY_MS).unref();

  /** `maxCounters` and `clock` are for tests. */
  constructor(
    private readonly maxCounters = MAX_LOCAL_COUNTERS,
    private readonly clock: () => number = Date.now,
  ) {}

  /** How many counters are kept (for tests). */
  get size(): number {
    return this.counters.size;
  }

  count(key: string, windowMs: number, increment: boolean): Counted {
    const now = this.clock();
    let counter = this.counters.get(key);
    if (counter === undefined || counter.endsAt <= now) {
      if (!increment) return { current: 0, ttl: 0 };
      if (counter !== undefined) this.counters.delete(key); // a new window goes to the end of the insertion order
      else if (this.counters.size >= this.maxCounters) this.makeRoom(now);
      counter = { current: 0, endsAt: now + windowMs };
      this.counters.set(key, counter);
    }
    if (increment) counter.current++;
    return { current: counter.current, ttl: counter.endsAt - now };
  }

  close(): void {
    clearInterval(this.sweeper);
  }

  private sweep(now: number): void {
    for (const [key, counter] of this.counters) if (counter.endsAt <= now) this.counters.delete(key);
  }

  private makeRoom(now: number): void {
    this.sweep(now);
    let excess = this.counters.size - Math.floor(this.maxCounters * 0.9);
    for (const key of this.counters.keys()) {
      if (excess-- <= 0) break;
      this.counters.delete(key);
    }
  }
}

/**
 * One counter in Redis, counted and read atomically: INCRBY (by 0 to read, without creating the key) and the
 * window set with PEXPIRE when the count starts. Answers { current, ttl in ms }.
 */
const COUNT_SCRIPT = `
if ARGV[2] == '0' and redis.call('EXISTS', KEYS[1]) == 0 then return {0, 0} end
local current = redis.call('INCRBY', KEYS[1], ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {current, ttl}
`;

/** Counters in Redis, shared by every instance (keys under `prefix`). A command that fails rejects. */
export class RedisCounters implements Counters {
  constructor(
    private readonly redis: Redis & { storefrontCount?: (key: string, windowMs: number, by: number) => Promise<[number, number]> },
    private readonly prefix: string,
  ) {
    redis.defineCommand('storefrontCount', { numberOfKeys: 1, lua: COUNT_SCRIPT });
  }

  async count(key: string, windowMs: number, increment: boolean): Promise<Counted> {
    const [current, ttl] = await this.redis.storefrontCount!(`${this.prefix}${key}`, windowMs, increment ? 1 : 0);
    return { current, ttl };
  }
}

/** An IPv6 client is its /64 (a host there has many addresses); an IPv4 client is its address. */
export function clientKey(address: string): string {
  if (!address.includes(':') || !ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  return `${(parsed as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16)).join(':')}::/64`;
}

/**
 * Sets up the budgets and returns the limits: the per-request count the app's one arrival hook (src/app.ts) runs for
 * every request, routed or not, before any body is read, and the count for reads answered on arrival; undefined with
 * RATE_LIMIT=off.
 */
export async function installRateLimits(app: FastifyInstance, store: Store, metrics: Metrics): Promise<RateLimits | undefined> {
  const { config } = store;
  if (!config.rateLimit) {
    app.decorate('cartStarts', UNLIMITED_STARTS);
    return undefined;
  }
  const failures = failureLog(app);
  const redis = config.redisUrl ? await openRedis(config, failures.report) : undefined;
  let counters: Counters;
  if (redis) {
    counters = new RedisCounters(redis, `${config.redisKeyPrefix}rate-limit:`);
    app.addHook('onClose', async () => redis.disconnect());
  } else {
    const local = new LocalCounters();
    counters = local;
    app.addHook('onClose', async () => local.close());
  }

  app.addHook('onRoute', (route) => {
    const method = Array.isArray(route.method) ? route.method[0]! : route.method;
    route.config = { ...route.config, rateLimitClass: routeClass(method, route.url) };
  });

  /** The answer over budget: the x-ratelimit-* headers (only a 429 carries them) and the error to send. */
  const refusal = (name: RouteClass, reply: FastifyReply, ttl: number): RateLimited => {
    metrics.rateLimited(name);
    const seconds = retryAfterSeconds(ttl);
    reply.header('x-ratelimit-limit', BUDGETS[name].max).header('x-ratelimit-remaining', 0).header('x-ratelimit-reset', seconds);
    return new RateLimited(seconds);
  };
  const failedOpen = (error: unknown): undefined => {
    metrics.rateLimitStoreFailed();
    failures.report(error);
    return undefined;
  };
  const verdict = (name: RouteClass, reply: FastifyReply, counted: Counted) => (counted.current > BUDGETS[name].max ? refusal(name, reply, counted.ttl) : undefined);

  /** Counts one request; undefined when the counter store failed (the request is served). */
  const count = (name: RouteClass, address: string): Counted | undefined | Promise<Counted | undefined> => {
    const counted = counters.count(`${name}:${clientKey(address)}`, BUDGETS[name].timeWindow, true);
    return counted instanceof Promise ? counted.catch(failedOpen) : counted;
  };

  const limit: RequestLimit = (request, reply) => {
    const early = (request.raw as CountedRequest)[COUNTED_ON_ARRIVAL];
    if (early !== undefined) return early.counted && verdict(early.name, reply, early.counted);
    const name = request.routeOptions.config?.rateLimitClass ?? 'other';
    const counted = count(name, clientAddress(request));
    if (!(counted instanceof Promise)) return counted && verdict(name, reply, counted);
    return counted.then((result) => result && verdict(name, reply, result));
  };

  // A request counted on arrival is not counted again: the arrival hook takes its verdict from the mark. Only a
  // request that goes on to Fastify is marked (a property added to Node's request objects is not free).
  const mark = (raw: IncomingMessage, name: RouteClass, counted: Counted | undefined) => {
    (raw as CountedRequest)[COUNTED_ON_ARRIVAL] = { name, counted };
  };
  const within = (raw: IncomingMessage, name: RouteClass, counted: Counted | undefined): boolean => {
    if (counted === undefined || counted.current <= BUDGETS[name].max) return true;
    mark(raw, name, counted);
    return false;
  };
  const countOnArrival = (raw: IncomingMessage, name: RouteClass, address: string): boolean | Promise<boolean> => {
    const counted = count(name, address);
    return counted instanceof Promise ? counted.then((result) => within(raw, name, result)) : within(raw, name, counted);
  };

  const startKey = (request: FastifyRequest) => `cart-start:${clientKey(clientAddress(request))}`;
  const countStarts = async (request: FastifyRequest, increment: boolean): Promise<Counted | undefined> => {
    try {
      return await counters.count(startKey(request), BUDGETS['cart-start'].timeWindow, increment);
    } catch (error) {
      return failedOpen(error);
    }
  };
  const startsMax = BUDGETS['cart-start'].max;
  app.decorate('cartStarts', {
    async admit(request, reply, hasToken, namesLiveCart) {
      const counted = await countStarts(request, !hasToken);
      if (!counted) return;
      // A new cart over the budget is refused; a cookie's cart is served while it names a live cart.
      if (!hasToken && counted.current > startsMax) throw refusal('cart-start', reply, counted.ttl);
      if (hasToken && counted.current >= startsMax && !(await namesLiveCart())) throw refusal('cart-start', reply, counted.ttl);
    },
    record(request) {
      void countStarts(request, true);
    },
  } satisfies CartStarts);
  return { limit, countOnArrival, passOn: (raw, name) => mark(raw, name, undefined) };
}

/** Logs a failing counter store at most every LOG_EVERY_MS, with how many failures the line stands for. */
function failureLog(app: FastifyInstance) {
  let lastLogged = 0;
  let unlogged = 0;
  return {
    report(error: unknown) {
      unlogged++;
      const now = Date.now();
      if (now - lastLogged < LOG_EVERY_MS) return;
      app.log.warn(
        { failures: unlogged, error: (error as Error)?.message ?? String(error) },
        'rate-limit counters unavailable (Redis); serving requests without limits',
      );
      lastLogged = now;
      unlogged = 0;
    },
  };
}

/**
 * A Redis client that never makes a request wait long: no offline queue (a command while disconnected fails at
 * once), a short command timeout, no retries of a command, and reconnection forever with a bounded backoff.
 */
async function openRedis(config: Config, report: (error: unknown) => void): Promise<Redis> {
  const redis = new Redis(config.redisUrl!, {
    lazyConnect: true,
    enableOfflineQueue: false,
    commandTimeout: config.redisCommandTimeoutMs ?? REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: REDIS_START_WAIT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: (attempt) => Math.min(50 * 2 ** Math.min(attempt, 10), REDIS_MAX_BACKOFF_MS),
    // Concurrent requests' counters go out in one round trip.
    enableAutoPipelining: true,
  });
  redis.on('error', report);
  // Serve even when Redis is not there yet; the client keeps reconnecting.
  await redis.connect().catch(report);
  return redis;
}
