/**
 * Prometheus metrics (issue [operations], item 3). Placeholder: counts nothing yet and serves no /metrics.
 */
import type { FastifyInstance } from 'fastify';
import type { Store } from '../store.js';

/** What other parts of the app report to the metrics. */
export interface Metrics {
  /** A request was refused with 429 in this route class. */
  rateLimited(routeClass: string): void;
  /** The shared rate-limit store (Redis) failed; the request was served anyway (fail open). */
  rateLimitStoreFailed(): void;
}

export function installMetrics(_app: FastifyInstance, _store: Store): Metrics {
  return { rateLimited() {}, rateLimitStoreFailed() {} };
}
