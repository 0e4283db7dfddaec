/**
 * GET /metrics (issue [operations], item 3): Prometheus figures of this instance (requests and latency by route and
 * status, rate limiting, the database pool, the process and its event loop), and whatever figures the app adds
 * (MetricsCollector: the store's own, src/store-figures.ts).
 *
 * Each app has a registry of its own (tests build many apps in one process; prom-client's global registry would
 * refuse the second). Only loopback may read it, or anyone with METRICS_TOKEN as a bearer token.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import perfHooks from 'node:perf_hooks';
import type { FastifyInstance, FastifyRequest, onResponseHookHandler } from 'fastify';
import ipaddr from 'ipaddr.js';
import { collectDefaultMetrics, Counter, Gauge, Registry, type Metric } from 'prom-client';
import type { Database } from '../db/database.js';
import { ErrorMessage, sendError } from './errors.js';

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
// A product read takes well under a millisecond: the default buckets (from 5 ms) would put every read in the first.
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** A pg pool's figures: the Database's poolStats() gives them on PostgreSQL (PGlite is one embedded connection, no pool). */
interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

/** Adds figures of its own to the metrics' registry (gauges and counters read when /metrics is scraped). */
export type MetricsCollector = (register: Registry) => void;

/** What the metrics read: the database (its pool's figures) and who may read them (METRICS_TOKEN). */
export interface MetricsSource {
  db: Database;
  config: { metricsToken: string | undefined };
}

export function installMetrics(app: FastifyInstance, store: MetricsSource, collectors: readonly MetricsCollector[] = []): Metrics {
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
  for (const collect of collectors) collect(register);
  poolGauges(register, store.db);

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
