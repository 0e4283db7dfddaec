/**
 * GET /metrics (issue [operations], item 3): Prometheus figures of this instance (requests and latency by route and
 * status, rate limiting, the database pool, the process and its event loop) and of the store as a whole (open
 * carts, checkouts by status, approval links by state, orders), the latter read from the database at scrape time.
 *
 * Each app has a registry of its own (tests build many apps in one process; prom-client's global registry would
 * refuse the second). Only loopback may read it, or anyone with METRICS_TOKEN as a bearer token.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import perfHooks from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, FastifyRequest, onResponseHookHandler } from 'fastify';
import ipaddr from 'ipaddr.js';
import { collectDefaultMetrics, Counter, Gauge, Registry, type Metric } from 'prom-client';
import type { Database } from '../db/database.js';
import type { Store } from '../store.js';
import { ErrorMessage, sendError } from './errors.js';
import { readStoreFigures, type StoreFigures } from './metrics-queries.js';

/** What other parts of the app report to the metrics. */
export interface Metrics {
  /** A request was refused with 429 in this route class. */
  rateLimited(routeClass: string): void;
  /** The shared rate-limit store (Redis) failed; the request was served anyway (fail open). */
  rateLimitStoreFailed(): void;
  /** Adds GET /metrics: called with the other routes, after the hooks that must hear of every route (405s). */
  routes(app: FastifyInstance): void;
}

/** The route label of a request no route matched: one value, so clients cannot multiply label values. */
export const UNMATCHED_ROUTE = 'unmatched';
/** The longest a scrape waits for the store figures (the server also cancels the statement then). */
export const STORE_FIGURES_DEADLINE_MS = 2000;
// A product read takes well under a millisecond: the default buckets (from 5 ms) would put every read in the first.
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** A pg pool's figures: the Database's poolStats() gives them on PostgreSQL (PGlite is one embedded connection, no pool). */
interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

export function installMetrics(app: FastifyInstance, store: Store): Metrics {
  const register = new Registry();
  const stopProcessMetrics = collectProcessMetrics(register).stop;
  const requests = new RequestMetrics(register);
  const rateLimited = new Counter({
    name: 'storefront_rate_limited_requests_total',
    help: 'Requests refused with 429, by route class.',
    labelNames: ['route_class'],
    registers: [register],
  });
  const rateLimitStoreFailures = new Counter({
    name: 'storefront_rate_limit_store_failures_total',
    help: 'Requests served without a rate-limit decision because the shared counter store failed (fail open).',
    registers: [register],
  });
  storeFigureGauges(register, new StoreFiguresReader(store.db));
  poolGauges(register, store.db);
  buyerProofCounters(register, store);

  // Each route counts its own answers under its pattern, bound once here (request.routeOptions builds an object per call).
  app.addHook('onRoute', (route) => {
    const hook = requests.hookFor(route.url);
    const existing = route.onResponse;
    route.onResponse = existing === undefined ? [hook] : [...(Array.isArray(existing) ? existing : [existing]), hook];
  });
  const unmatched = requests.hookFor(UNMATCHED_ROUTE);
  app.addHook('onResponse', (request, reply, done) => {
    if (request.is404) return unmatched.call(app, request, reply, done);
    done();
  });

  app.addHook('onClose', (_instance, done) => {
    stopProcessMetrics();
    done();
  });

  return {
    rateLimited: (routeClass) => rateLimited.inc({ route_class: routeClass }),
    rateLimitStoreFailed: () => rateLimitStoreFailures.inc(),
    routes(routeApp) {
      const refusal = metricsAccess(store.config.metricsToken);
      routeApp.get('/metrics', { config: { rateLimit: 'other' }, schema: { hide: true } }, async (request, reply) => {
        const refused = refusal(request);
        if (refused !== undefined) return sendError(reply, 403, ErrorMessage.forbidden, refused);
        const text = await register.metrics();
        return reply.type(register.contentType).header('cache-control', 'no-store').send(text);
      });
    },
  };
}

/** Counts one answer of a route: its method, status, and seconds from arrival until it was sent. */
type AnswerTally = (method: string, status: number, seconds: number) => void;

type RequestLabels = { method: string; route: string; status_code: number };

/** One (method, route, status) series: answers counted, their seconds summed, and how many fell in each bucket. */
interface RequestSeries {
  labels: RequestLabels;
  count: number;
  sum: number;
  /** Answers at most LATENCY_BUCKETS[i] seconds and over the bound before it (not cumulative; +Inf is `count`). */
  buckets: number[];
}

/**
 * Requests and their latency by method, route pattern and status: a counter and a histogram. Each answer adds to the
 * tally of its series (a few additions, no allocation); prom-client reads the tallies when it is scraped. Calling
 * prom-client's Counter.inc and Histogram.observe on every answer cost about 3 µs of CPU per request (each call
 * hashes the labels into a string and allocates), against 0.1 µs for the tally, on the benchmarked product read.
 */
class RequestMetrics {
  private readonly series: RequestSeries[] = [];
  private readonly tallies = new Map<string, AnswerTally>();

  constructor(register: Registry) {
    const series = this.series;
    new Counter({
      name: 'storefront_http_requests_total',
      help: 'Answered requests by method, route pattern and status.',
      labelNames: ['method', 'route', 'status_code'],
      registers: [register],
      collect() {
        this.reset();
        for (const one of series) this.inc(one.labels, one.count);
      },
    });
    register.registerMetric(latencyHistogram(series) as unknown as Metric);
  }

  /**
   * The tally of one route pattern (one per pattern, however often asked): it finds its series by method and status
   * in two small maps (made on the first answer of each) and adds to it.
   */
  tallyFor(route: string): AnswerTally {
    let tally = this.tallies.get(route);
    if (tally !== undefined) return tally;
    const byMethod = new Map<string, Map<number, RequestSeries>>();
    tally = (method, status, seconds) => {
      let byStatus = byMethod.get(method);
      if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()));
      let series = byStatus.get(status);
      if (series === undefined) {
        series = { labels: { method, route, status_code: status }, count: 0, sum: 0, buckets: LATENCY_BUCKETS.map(() => 0) };
        byStatus.set(status, series);
        this.series.push(series);
      }
      series.count++;
      series.sum += seconds;
      for (let i = 0; i < LATENCY_BUCKETS.length; i++) {
        if (seconds <= LATENCY_BUCKETS[i]!) {
          series.buckets[i]!++;
          break;
        }
      }
    };
    this.tallies.set(route, tally);
    return tally;
  }

  /** A callback-style onResponse hook for one route pattern, adding to its tally. */
  hookFor(route: string): onResponseHookHandler {
    const tally = this.tallyFor(route);
    return (request, reply, done) => {
      tally(request.method, reply.statusCode, reply.elapsedTime / 1000);
      done();
    };
  }
}

/**
 * The latency tallies as a prom-client metric: what its registry reads from a metric (name, help, type and get()
 * giving the samples), so the exposition, escaping included, is prom-client's.
 */
function latencyHistogram(series: readonly RequestSeries[]) {
  const name = 'storefront_http_request_duration_seconds';
  const help = 'Time from receiving a request to the end of its answer, by method, route pattern and status.';
  const samples = () =>
    series.flatMap((one) => {
      let cumulative = 0;
      return [
        ...LATENCY_BUCKETS.map((le, i) => ({ metricName: `${name}_bucket`, labels: { ...one.labels, le }, value: (cumulative += one.buckets[i]!) })),
        { metricName: `${name}_bucket`, labels: { ...one.labels, le: '+Inf' }, value: one.count },
        { metricName: `${name}_sum`, labels: one.labels, value: one.sum },
        { metricName: `${name}_count`, labels: one.labels, value: one.count },
      ];
    });
  return {
    name,
    help,
    type: 'histogram' as const,
    aggregator: 'sum' as const,
    get: async () => ({ name, help, type: 'histogram' as const, aggregator: 'sum' as const, values: samples() }),
    reset: () => {
      for (const one of series) {
        one.count = 0;
        one.sum = 0;
        one.buckets.fill(0);
      }
    },
  };
}

/**
 * The store figures, read once per scrape for all the gauges that show them, within STORE_FIGURES_DEADLINE_MS.
 * A read still running from an earlier scrape (a slow database) is waited for again rather than started twice,
 * so scrapes never hold more than one database connection.
 */
class StoreFiguresReader {
  private running: Promise<StoreFigures> | undefined;
  private scrape: Promise<StoreFigures | undefined> | undefined;

  constructor(private readonly db: Database) {}

  /** The figures, or undefined when the database did not give them in time. */
  read(): Promise<StoreFigures | undefined> {
    this.scrape ??= this.readInTime().finally(() => (this.scrape = undefined));
    return this.scrape;
  }

  private async readInTime(): Promise<StoreFigures | undefined> {
    this.running ??= readStoreFigures(this.db, STORE_FIGURES_DEADLINE_MS).finally(() => (this.running = undefined));
    const deadline = new AbortController();
    try {
      return await Promise.race([this.running, sleep(STORE_FIGURES_DEADLINE_MS, undefined, { signal: deadline.signal, ref: false })]);
    } catch {
      return undefined;
    } finally {
      deadline.abort();
    }
  }
}

function storeFigureGauges(register: Registry, figures: StoreFiguresReader): void {
  new Gauge({
    name: 'storefront_store_figures_up',
    help: `1 when this scrape read the store figures from the database, 0 when it could not within ${STORE_FIGURES_DEADLINE_MS / 1000} s (they are then left out).`,
    registers: [register],
    async collect() {
      this.set((await figures.read()) === undefined ? 0 : 1);
    },
  });
  const labelled = (name: string, help: string, label: string, pick: (read: StoreFigures) => Record<string, number>) =>
    new Gauge({
      name,
      help,
      labelNames: [label],
      registers: [register],
      async collect() {
        const read = await figures.read();
        this.reset();
        if (read === undefined) return;
        for (const [value, count] of Object.entries(pick(read))) this.set({ [label]: value }, count);
      },
    });
  labelled('storefront_carts', 'Carts in the store (open: changed within their 14-day lifetime), read from the database.', 'status', (read) => ({ open: read.openCarts }));
  labelled('storefront_checkouts', 'Checkouts in the store by status, read from the database.', 'status', (read) => read.checkouts);
  labelled(
    'storefront_checkout_approvals',
    "Buyers' approval links by state (pending, used: approved into an order, voided: declined, replaced or changed, expired), read from the database.",
    'state',
    (read) => read.approvals,
  );
  labelled('storefront_orders', 'Orders in the store by status, read from the database.', 'status', (read) => read.orders);
  new Gauge({
    name: 'storefront_outbox_messages',
    help: 'Outbox messages (mail to buyers and the merchant, order webhooks to platforms) by kind and state: pending, delivered (kept 30 days), failed (given up after the deadline; storefront outbox lists them), read from the database.',
    labelNames: ['kind', 'state'],
    registers: [register],
    async collect() {
      const read = await figures.read();
      this.reset();
      if (read === undefined) return;
      for (const [key, count] of Object.entries(read.outbox)) {
        const [kind, state] = key.split(':') as [string, string];
        this.set({ kind, state }, count);
      }
    },
  });
}

/** The approval page's proofs: codes mailed and proofs refused since this instance started (the buyer-proof service counts them). */
function buyerProofCounters(register: Registry, store: Store): void {
  new Counter({
    name: 'storefront_approval_codes_sent_total',
    help: "Approval codes mailed to buyers (each when the person on the approval page asked for one).",
    registers: [register],
    collect() {
      this.reset();
      this.inc(store.buyerProof.codesSent);
    },
  });
  new Counter({
    name: 'storefront_approval_proof_failures_total',
    help: 'Approval proofs refused, by proof (code, passkey) and reason (wrong, expired, used, locked, none_sent; invalid, replayed, unknown_challenge, unknown_passkey, malformed, expired).',
    labelNames: ['proof', 'reason'],
    registers: [register],
    collect() {
      this.reset();
      for (const [key, count] of store.buyerProof.failures) {
        const [proof, reason] = key.split(':') as [string, string];
        this.inc({ proof, reason }, count);
      }
    },
  });
}

/** The pg pool's connections and waiting queries; nothing on PGlite, which has no pool. */
function poolGauges(register: Registry, db: Database): void {
  // Optional until every Database has poolStats().
  const poolStats = (db as { poolStats?: () => PoolStats | undefined }).poolStats?.bind(db);
  if (poolStats?.() === undefined) return;
  const gauge = (name: string, help: string, pick: (stats: PoolStats) => number) =>
    new Gauge({
      name,
      help,
      registers: [register],
      collect() {
        const stats = poolStats();
        if (stats === undefined) this.reset();
        else this.set(pick(stats));
      },
    });
  gauge('storefront_db_pool_connections', 'Connections the database pool holds (idle and in use).', (stats) => stats.total);
  gauge('storefront_db_pool_idle_connections', 'Pool connections waiting for a query.', (stats) => stats.idle);
  gauge('storefront_db_pool_waiting_queries', 'Queries waiting for a pool connection.', (stats) => stats.waiting);
}

/**
 * prom-client's process figures (CPU, memory, handles, GC, event-loop lag) into `register`. Two of them start
 * monitors prom-client never stops (an event-loop delay histogram sampling every 10 ms, and a GC observer); they
 * are caught as prom-client makes them, so that closing the app stops them instead of every app a test process
 * builds leaving its pair running. `monitors` says how many were caught.
 */
export function collectProcessMetrics(register: Registry): { stop: () => void; monitors: number } {
  const hooks = perfHooks as { monitorEventLoopDelay: typeof perfHooks.monitorEventLoopDelay; PerformanceObserver: typeof perfHooks.PerformanceObserver };
  const { monitorEventLoopDelay, PerformanceObserver } = hooks;
  const stops: (() => void)[] = [];
  hooks.monitorEventLoopDelay = (options) => {
    const histogram = monitorEventLoopDelay(options);
    stops.push(() => histogram.disable());
    return histogram;
  };
  hooks.PerformanceObserver = class extends PerformanceObserver {
    constructor(callback: ConstructorParameters<typeof PerformanceObserver>[0]) {
      super(callback);
      stops.push(() => this.disconnect());
    }
  };
  try {
    collectDefaultMetrics({ register });
  } finally {
    hooks.monitorEventLoopDelay = monitorEventLoopDelay;
    hooks.PerformanceObserver = PerformanceObserver;
  }
  return {
    stop: () => {
      for (const stop of stops.splice(0)) stop();
    },
    monitors: stops.length,
  };
}

const LOOPBACK_ONLY = 'GET /metrics answers only on the loopback interface; set METRICS_TOKEN to scrape it from elsewhere.';
const TOKEN_NEEDED = 'GET /metrics needs the metrics token: send Authorization: Bearer <METRICS_TOKEN>.';

/**
 * Who may read the metrics: with METRICS_TOKEN set, whoever sends it as a bearer token (compared in constant
 * time), from anywhere, loopback included; without it, loopback only, and not a request a proxy forwarded that
 * TRUST_PROXY does not name (its X-Forwarded-For says another client is behind it). Returns why a request is
 * refused, or undefined.
 */
function metricsAccess(token: string | undefined): (request: FastifyRequest) => string | undefined {
  if (token !== undefined && token !== '') {
    const expected = createHash('sha256').update(token).digest();
    return (request) => {
      const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(request.headers.authorization ?? '');
      const sent = createHash('sha256')
        .update(match?.[1] ?? '')
        .digest();
      return match !== null && timingSafeEqual(sent, expected) ? undefined : TOKEN_NEEDED;
    };
  }
  return (request) => {
    // request.ips lists the socket's peer, then each X-Forwarded-For hop taken from a TRUST_PROXY proxy.
    const forwardedUnheard =
      (request.headers['x-forwarded-for'] !== undefined || request.headers.forwarded !== undefined) && (request.ips?.length ?? 0) < 2;
    return !forwardedUnheard && isLoopback(request.ip) ? undefined : LOOPBACK_ONLY;
  };
}

function isLoopback(ip: string | undefined): boolean {
  if (ip === undefined || !ipaddr.isValid(ip)) return false;
  return ipaddr.process(ip).range() === 'loopback';
}
