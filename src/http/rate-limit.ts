/**
 * Request-rate limits on every endpoint (issue [operations], item 1): every route declares its class
 * (`config: { rateLimit: 'cart-write' }`, checked when the route is added), and a request is counted in the app's one
 * arrival hook (src/app.ts) after the shutdown, missing-Host and CORS preflight answers, so a request is counted before
 * its body is read, the commerce endpoint checks its Host, or a 405 is chosen. A request counts against its class's
 * budget for its client address (request.ip, which believes X-Forwarded-For only from TRUST_PROXY peers; an IPv6
 * client is its /64), and against each further budget its route declares with `config: { rateLimitKeys: [...] }`
 * (a RateLimitKey: what in the request names the key, read by the door that declares the route: the storefront's
 * cart, the commerce door's agent profile). It is served only if every one of its budgets has room,
 * and then it is taken from all of them; a refused request takes from none, so a client hammering its own cart does not
 * spend what its address's other shoppers have left. The budgets are config.rateLimits (RATE_LIMITS over
 * RATE_LIMIT_DEFAULTS).
 *
 * The counting is GCRA (the generic cell rate algorithm): a budget of `max` per `periodMs` lets `max` requests through
 * at once and then one every periodMs / max, and each key keeps one number, the time its budget is next due (its
 * "theoretical arrival time"). A request over budget is 429 with Retry-After, the seconds until a request would be
 * served again (rounded up, at least 1), the x-ratelimit-* headers (an answer within budget has none) and the
 * storefront Error; a door may turn it into its own error (the commerce endpoint's JSON-RPC error, src/ucp/routes.ts).
 * Counters live in this process, or with REDIS_URL in Redis, shared by every instance; if Redis fails, requests are
 * served unlimited (logged at most every LOG_EVERY_MS, and counted in the metrics). RATE_LIMIT=off counts nothing.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import ipaddr from 'ipaddr.js';
import { Redis } from 'ioredis';
import type { BudgetName, Config, RateBudget, RateLimitBudgets } from '../config.js';
import type { Store } from '../store.js';
import { ErrorMessage, StorefrontError } from './errors.js';
import type { Metrics } from './metrics.js';
import { clientAddress } from './request-id.js';

/** The classes a route declares: each is the name of its per-address budget. */
const ROUTE_CLASSES = [
  'catalog',
  'search',
  'cart-read',
  'cart-write',
  'mcp',
  'profile',
  'page',
  'approval-post',
  'admin',
  'admin-sign-in',
  'health',
  'other',
] as const satisfies readonly BudgetName[];

export type RouteClass = (typeof ROUTE_CLASSES)[number];

/**
 * A budget a route's requests count against besides their class's per-address one, declared by the door with the
 * route (`config: { rateLimit: 'cart-write', rateLimitKeys: PER_CART }`): which budget, and what in a request
 * names its key.
 */
export interface RateLimitKey {
  budget: BudgetName;
  /** The key a request names on arrival, before its body is read (its path, headers, cookies); undefined: none. */
  onArrival(request: FastifyRequest): string | undefined;
  /** For a request that named none on arrival: the key its parsed body names, counted before its handler runs. */
  afterBody?(request: FastifyRequest): string | undefined;
  /**
   * The key is a claim anyone can make (a header): it counts per client address too, so a claim spends only the
   * claimant's share of that key's budget, never its owner's.
   */
  perAddress?: boolean;
  /** A key's own budget in place of `budget`'s, from RATE_LIMITS (`mcp-per-profile[URL]`); undefined: `budget`'s. */
  ownBudget?(key: string, rateLimits: RateLimitBudgets): RateBudget | undefined;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's rate-limit class (src/http/rate-limit.ts): a route without one stops the app from starting. */
    rateLimit?: RouteClass;
    /** Further budgets the route's requests count against (src/http/rate-limit.ts, RateLimitKey). */
    rateLimitKeys?: readonly RateLimitKey[];
  }
}

/** Keys kept in memory at most (about 100 bytes each); past it the oldest go first. */
const MAX_LOCAL_COUNTERS = 200_000;
/** How often spent keys are swept out of memory. */
const SWEEP_EVERY_MS = 60_000;
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

/** Whole seconds, rounded up (a client waiting them is served), and at least 1 as Retry-After requires. */
const retryAfterSeconds = (waitMs: number) => Math.max(1, Math.ceil(waitMs / 1000));

/** One budget a request counts against: its name (for the 429's headers and the metrics), its key and its size. */
export interface Demand {
  name: BudgetName;
  key: string;
  budget: RateBudget;
}

/** A request refused: the budget with the longest wait, and the milliseconds until the request would be served. */
export interface OverBudget {
  demand: Demand;
  waitMs: number;
}

/**
 * GCRA counters, one time per key: `take` serves a request when every demand's budget has room, and then takes it
 * from all of them; otherwise it takes from none and answers the longest wait. `commit` false only asks.
 */
export interface Counters {
  take(demands: readonly Demand[], commit: boolean): OverBudget | undefined | Promise<OverBudget | undefined>;
}

/**
 * A budget in whole microseconds: the spacing between requests at its sustained rate, and the most a key's time may
 * run ahead of the clock (`max` spacings). Whole numbers keep the arithmetic exact (a clock near 1.7e15 µs is still an
 * exact double), so a whole budget is exactly `max` requests, however its period divides.
 */
const spacingUs = (budget: RateBudget) => Math.max(1, Math.round((budget.periodMs * 1000) / budget.max));
const burstUs = (budget: RateBudget) => spacingUs(budget) * budget.max;

/** A key's time after one more request, from the time it has (undefined: a whole budget) at `nowUs`. */
const nextArrival = (arrivalUs: number | undefined, budget: RateBudget, nowUs: number) =>
  (arrivalUs === undefined || arrivalUs < nowUs ? nowUs : arrivalUs) + spacingUs(budget);

/**
 * GCRA counters in this process's memory: a Map, swept of spent keys every SWEEP_EVERY_MS and bounded by
 * MAX_LOCAL_COUNTERS (the oldest first: a Map iterates in insertion order). Counting is synchronous, so a product
 * read within budget pays a Map lookup and no promise; @fastify/rate-limit, which this replaced, cost about 8 µs
 * of CPU per request (its handler awaits three times and keeps an LRU list).
 */
export class LocalCounters implements Counters {
  /** Each key's theoretical arrival time (µs); a time already past is a whole budget, as no key is. */
  private readonly arrivals = new Map<string, number>();
  private readonly sweeper = setInterval(() => this.sweep(this.nowUs()), SWEEP_EVERY_MS).unref();

  /** `maxCounters` and `clock` (ms) are for tests. */
  constructor(
    private readonly maxCounters = MAX_LOCAL_COUNTERS,
    private readonly clock: () => number = Date.now,
  ) {}

  /** How many keys are kept (for tests). */
  get size(): number {
    return this.arrivals.size;
  }

  take(demands: readonly Demand[], commit: boolean): OverBudget | undefined {
    const now = this.nowUs();
    let over: OverBudget | undefined;
    for (const demand of demands) {
      const waitUs = nextArrival(this.arrivals.get(demand.key), demand.budget, now) - now - burstUs(demand.budget);
      if (waitUs > 1000 * (over?.waitMs ?? 0)) over = { demand, waitMs: waitUs / 1000 };
    }
    if (over !== undefined || !commit) return over;
    for (const { key, budget } of demands) {
      const arrival = this.arrivals.get(key);
      if (arrival === undefined || arrival <= now) {
        // A key starting afresh goes to the end of the insertion order, the last to be dropped.
        if (arrival !== undefined) this.arrivals.delete(key);
        else if (this.arrivals.size >= this.maxCounters) this.makeRoom(now);
      }
      this.arrivals.set(key, nextArrival(arrival, budget, now));
    }
    return undefined;
  }

  close(): void {
    clearInterval(this.sweeper);
  }

  private nowUs(): number {
    return Math.round(this.clock() * 1000);
  }

  private sweep(now: number): void {
    for (const [key, arrival] of this.arrivals) if (arrival <= now) this.arrivals.delete(key);
  }

  private makeRoom(now: number): void {
    this.sweep(now);
    let excess = this.arrivals.size - Math.floor(this.maxCounters * 0.9);
    for (const key of this.arrivals.keys()) {
      if (excess-- <= 0) break;
      this.arrivals.delete(key);
    }
  }
}

/**
 * GCRA over the keys, atomically, on Redis's clock (every instance agrees on it), counted as LocalCounters counts:
 * ARGV[1] is 1 to take, 0 to ask; ARGV[2i] and ARGV[2i+1] are key i's spacing and burst (µs). A key's value is its
 * theoretical arrival time (µs), and it expires when that time passes (a whole budget is no key). Answers {0, 0}
 * within every budget, else {the 1-based index of the key with the longest wait, that wait in ms rounded up}.
 */
const TAKE_SCRIPT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local arrivals = {}
local over, wait = 0, 0
for i, key in ipairs(KEYS) do
  local spacing, burst = tonumber(ARGV[2 * i]), tonumber(ARGV[2 * i + 1])
  local arrival = math.max(tonumber(redis.call('GET', key) or '0') or 0, now) + spacing
  arrivals[i] = arrival
  if arrival - now - burst > wait then over, wait = i, arrival - now - burst end
end
if over == 0 and ARGV[1] == '1' then
  for i, key in ipairs(KEYS) do
    redis.call('SET', key, string.format('%.0f', arrivals[i]), 'PX', math.ceil((arrivals[i] - now) / 1000))
  end
end
return {over, math.ceil(wait / 1000)}
`;

type TakeCommand = (keyCount: number, ...keysAndArgs: (string | number)[]) => Promise<[number, number]>;

/** GCRA counters in Redis, shared by every instance (keys under `prefix`). A command that fails rejects. */
export class RedisCounters implements Counters {
  constructor(
    private readonly redis: Redis & { storefrontTake?: TakeCommand },
    private readonly prefix: string,
  ) {
    redis.defineCommand('storefrontTake', { lua: TAKE_SCRIPT });
  }

  async take(demands: readonly Demand[], commit: boolean): Promise<OverBudget | undefined> {
    const keys = demands.map((demand) => `${this.prefix}${demand.key}`);
    const budgets = demands.flatMap(({ budget }) => [spacingUs(budget), burstUs(budget)]);
    const [over, waitMs] = await this.redis.storefrontTake!(keys.length, ...keys, commit ? 1 : 0, ...budgets);
    return over === 0 ? undefined : { demand: demands[over - 1]!, waitMs };
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
 * Carts one client address may start (budget 'cart-start'), asked by the cart routes. A cart request whose cookie
 * carries no cart token is handed a new one; once the address has no start left, only a cookie naming a live cart
 * is served.
 */
export interface CartStarts {
  /**
   * Before a cart request: takes a start when there is no token, else (only once the budget is spent) asks
   * `namesLiveCart`; throws RateLimited when the request would start a cart and none is left.
   */
  admit(request: FastifyRequest, reply: FastifyReply, hasToken: boolean, namesLiveCart: () => Promise<boolean>): Promise<void>;
  /** After a cart answer that handed a new token to a cookie naming no live cart: takes that start, refusing nothing. */
  record(request: FastifyRequest): void;
}

const UNLIMITED_STARTS: CartStarts = { admit: async () => {}, record: () => {} };

declare module 'fastify' {
  interface FastifyInstance {
    /** The cart-start budget; unlimited with RATE_LIMIT=off. */
    cartStarts: CartStarts;
  }
}

/**
 * Counts a request against its budgets: undefined when it is within them, else the RateLimited to answer (its
 * x-ratelimit-* headers already on the reply). In memory the answer is immediate; with Redis it is a promise, which
 * never rejects (a failing Redis serves the request).
 */
export type RequestLimit = (request: FastifyRequest, reply: FastifyReply) => RateLimited | undefined | Promise<RateLimited | undefined>;

/** The limits as the app applies them: `limit` in its arrival hook. */
export interface RateLimits {
  limit: RequestLimit;
}

/**
 * Checks that every route declares its class, and sets up the budgets: returns the per-request count the app's one
 * arrival hook (src/app.ts) runs for every request, routed or not, before any body is read; undefined with
 * RATE_LIMIT=off. Call it before any route is added.
 */
export async function installRateLimits(app: FastifyInstance, store: Store, metrics: Metrics): Promise<RateLimits | undefined> {
  // Even with the limits off, so that a route without a class fails every test. Fastify's own HEAD route for a GET
  // copies the GET's options, class included.
  app.addHook('onRoute', (route) => {
    const declared = route.config?.rateLimit;
    if (declared === undefined || !ROUTE_CLASSES.includes(declared)) {
      throw new Error(`${String(route.method)} ${route.url} declares no rate-limit class: give it config: { rateLimit: '…' }, one of ${ROUTE_CLASSES.join(', ')}`);
    }
  });

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

  /** The answer over budget: the x-ratelimit-* headers (only a 429 carries them) and the error to send. */
  const refusal = ({ demand, waitMs }: OverBudget, reply: FastifyReply): RateLimited => {
    metrics.rateLimited(demand.name);
    const seconds = retryAfterSeconds(waitMs);
    reply.header('x-ratelimit-limit', demand.budget.max).header('x-ratelimit-remaining', 0).header('x-ratelimit-reset', seconds);
    return new RateLimited(seconds);
  };
  const failedOpen = (error: unknown): undefined => {
    metrics.rateLimitStoreFailed();
    failures.report(error);
    return undefined;
  };
  /** Takes a request from its budgets; undefined when within them, or when the counter store failed (it is served). */
  const take = (demands: readonly Demand[], commit: boolean): OverBudget | undefined | Promise<OverBudget | undefined> => {
    const over = counters.take(demands, commit);
    return over instanceof Promise ? over.catch(failedOpen) : over;
  };

  const demands = demandsOf(config.rateLimits);
  const limit: RequestLimit = (request, reply) => {
    const over = take(demands(request), true);
    if (!(over instanceof Promise)) return over && refusal(over, reply);
    return over.then((result) => result && refusal(result, reply));
  };

  // A key a request did not name on arrival may be named by its body (the commerce door's tool arguments name an agent
  // profile): it is counted once the body is read, before the handler. Its address was counted on arrival, with the rest.
  const limitAfterBody = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    const later = afterBodyDemands(config.rateLimits, request);
    if (later.length === 0) return done();
    const over = take(later, true);
    if (!(over instanceof Promise)) return done(over && refusal(over, reply));
    over.then((result) => done(result && refusal(result, reply)), done);
  };
  app.addHook('onRoute', (route) => {
    if (!route.config?.rateLimitKeys?.some((key) => key.afterBody !== undefined)) return;
    const existing = route.preHandler;
    route.preHandler = existing === undefined ? [limitAfterBody] : [limitAfterBody, ...(Array.isArray(existing) ? existing : [existing])];
  });

  const starts = (request: FastifyRequest): Demand[] => [
    { name: 'cart-start', key: `cart-start:${clientKey(clientAddress(request))}`, budget: config.rateLimits.budgets['cart-start'] },
  ];
  app.decorate('cartStarts', {
    async admit(request, reply, hasToken, namesLiveCart) {
      // A new cart over the budget is refused; a cookie's cart is served while it names a live cart.
      const over = await take(starts(request), !hasToken);
      if (over && (!hasToken || !(await namesLiveCart()))) throw refusal(over, reply);
    },
    record(request) {
      void take(starts(request), true);
    },
  } satisfies CartStarts);
  return { limit };
}

/**
 * The budgets a request counts against on arrival: its class's for its address (a request with no route is 'other'),
 * and each of its route's keys the request names.
 */
function demandsOf(rateLimits: RateLimitBudgets): (request: FastifyRequest) => Demand[] {
  const { budgets } = rateLimits;
  return (request) => {
    const routeConfig = request.routeOptions.config;
    const name = routeConfig?.rateLimit ?? 'other';
    const address = clientKey(clientAddress(request));
    const demands: Demand[] = [{ name, key: `${name}:${address}`, budget: budgets[name] }];
    for (const key of routeConfig?.rateLimitKeys ?? []) {
      const named = key.onArrival(request);
      if (named !== undefined) demands.push(keyDemand(rateLimits, key, address, named));
    }
    return demands;
  };
}

/** The budgets of the route's keys a request named only in its body. */
function afterBodyDemands(rateLimits: RateLimitBudgets, request: FastifyRequest): Demand[] {
  const demands: Demand[] = [];
  for (const key of request.routeOptions.config?.rateLimitKeys ?? []) {
    if (key.afterBody === undefined || key.onArrival(request) !== undefined) continue;
    const named = key.afterBody(request);
    if (named !== undefined) demands.push(keyDemand(rateLimits, key, clientKey(clientAddress(request)), named));
  }
  return demands;
}

/** The demand of a key a request named, from `address` (a client key). */
function keyDemand(rateLimits: RateLimitBudgets, key: RateLimitKey, address: string, named: string): Demand {
  return {
    name: key.budget,
    key: key.perAddress ? `${key.budget}:${address} ${named}` : `${key.budget}:${named}`,
    budget: key.ownBudget?.(named, rateLimits) ?? rateLimits.budgets[key.budget],
  };
}

/** Logs a failing counter store at most every LOG_EVERY_MS, with how many failures the line stands for. */
function failureLog(app: FastifyInstance) {
  let lastLogged = 0;
  let unlogged = 0;
  return {
    report: (error: unknown) => {
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
