/**
 * Request-rate limits on every endpoint (issue [operations], item 1), with @fastify/rate-limit: per client address
 * (request.ip, which believes X-Forwarded-For only from TRUST_PROXY peers; an IPv6 client is its /64), one counter
 * per route class, counted in the app's one arrival hook (src/app.ts) after the shutdown, missing-Host and CORS
 * preflight answers, so a request is counted before its body is read, the commerce endpoint checks its Host, or a
 * 405 is chosen. An answer over budget is 429 with Retry-After (whole seconds, at least 1) and the storefront
 * Error; the commerce endpoint's own error handler turns it into its JSON-RPC error (src/ucp/routes.ts). Counters
 * live in this process, or with REDIS_URL in Redis, shared by every instance; if Redis fails, requests are served
 * unlimited (logged at most every LOG_EVERY_MS, and counted in the metrics). RATE_LIMIT=off counts nothing.
 */
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
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
  /** Products, collections, recommendations, sitemap, openapi, scopes, demo images: 20 product pages a minute is a
   *  fast shopper (~100 calls), this leaves room for a few behind one address, and holds a scraper to 10/s. */
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
  /** The approval page's GET, checkout, order and policy pages: a buyer opens a handful. */
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
  if (url === '/search/suggest.json' || url === '/search.json') return 'search';
  if (url === '/cart.js' || url === '/cart.json') return 'cart-read';
  if (url.startsWith('/cart/')) return 'cart-write';
  if (url.startsWith('/checkout/approve/')) return method === 'POST' ? 'approval-post' : 'page';
  if (url.startsWith('/checkouts/') || url.startsWith('/orders/') || url.startsWith('/policies/')) return 'page';
  if (/^\/(products|collections|recommendations|assets)\/|^\/(products\.json|sitemap\.xml|openapi\.json|scopes\.json)$/.test(url)) return 'catalog';
  return 'other';
}

/** Entries per class kept by the in-memory counters (least recently seen addresses go first). */
const LOCAL_COUNTERS_PER_CLASS = 20_000;
/** A Redis command answered later than this is a failure, and the request is served without a limit. */
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

/** Counts a request against its route class's budget; rejects with RateLimited when the budget is spent. */
export type RequestLimit = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/**
 * Sets up the budgets and returns the per-request count, which the app's one arrival hook (src/app.ts) runs for
 * every request, routed or not, before any body is read; undefined with RATE_LIMIT=off.
 */
export async function installRateLimits(app: FastifyInstance, store: Store, metrics: Metrics): Promise<RequestLimit | undefined> {
  const { config } = store;
  if (!config.rateLimit) {
    app.decorate('cartStarts', UNLIMITED_STARTS);
    return undefined;
  }
  const failures = failureLog(app);
  const redis = config.redisUrl ? await openRedis(config, failures.report) : undefined;
  if (redis) app.addHook('onClose', async () => redis.disconnect());

  await app.register(rateLimit, {
    global: false,
    hook: 'onRequest',
    ...(redis ? { redis, nameSpace: `${config.redisKeyPrefix}rate-limit:` } : {}),
  });
  // An IPv6 client is its /64 (normalizeIP); an IPv4 address is taken as it is, without the IPv6 parse.
  const clientKey = (ip: string) => (ip.includes(':') ? rateLimit.normalizeIP(ip) : ip);
  const classKey = (name: RouteClass) => (request: FastifyRequest) => `${name}:${clientKey(clientAddress(request))}`;
  const limiters = Object.fromEntries(
    (Object.keys(BUDGETS) as RouteClass[]).map((name) => [
      name,
      app.rateLimit({
        ...BUDGETS[name],
        cache: LOCAL_COUNTERS_PER_CLASS,
        // In Redis every class shares one key space (the plugin's child counters there have one prefix).
        keyGenerator: classKey(name),
        onExceeded: () => metrics.rateLimited(name),
        errorResponseBuilder: (_request, context) => new RateLimited(retryAfterSeconds(context.ttl)),
      }),
    ]),
  ) as Record<RouteClass, (request: FastifyRequest, reply: FastifyReply) => Promise<void>>;

  app.addHook('onRoute', (route) => {
    const method = Array.isArray(route.method) ? route.method[0]! : route.method;
    route.config = { ...route.config, rateLimitClass: routeClass(method, route.url) };
  });

  const limiterOf = (request: FastifyRequest) => limiters[request.routeOptions.config?.rateLimitClass ?? 'other'];
  const limit: RequestLimit = redis
    ? async (request, reply) => {
        try {
          await limiterOf(request)(request, reply);
        } catch (error) {
          if (error instanceof RateLimited) throw error;
          metrics.rateLimitStoreFailed();
          failures.report(error);
        }
      }
    : // Counters in memory never fail: the plugin's handler is the count.
      (request, reply) => limiterOf(request)(request, reply);

  const starts = app.createRateLimit({ ...BUDGETS['cart-start'], keyGenerator: classKey('cart-start') });
  const checkStarts = async (request: FastifyRequest, increment: boolean) => {
    try {
      return await starts(request, { increment });
    } catch (error) {
      metrics.rateLimitStoreFailed();
      failures.report(error);
      return undefined;
    }
  };
  /** The refusal, with the rate-limit headers of the cart-start budget (not of the route's, which had room). */
  const refuse = (reply: FastifyReply, ttl: number) => {
    metrics.rateLimited('cart-start');
    const seconds = retryAfterSeconds(ttl);
    reply.header('x-ratelimit-limit', BUDGETS['cart-start'].max).header('x-ratelimit-remaining', 0).header('x-ratelimit-reset', seconds);
    return new RateLimited(seconds);
  };
  app.decorate('cartStarts', {
    async admit(request, reply, hasToken, namesLiveCart) {
      const counted = await checkStarts(request, !hasToken);
      if (!counted || counted.isAllowed) return;
      if (!hasToken && counted.isExceeded) throw refuse(reply, counted.ttl);
      if (hasToken && counted.remaining === 0 && !(await namesLiveCart())) throw refuse(reply, counted.ttl);
    },
    record(request) {
      void checkStarts(request, true);
    },
  } satisfies CartStarts);
  return limit;
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
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
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
