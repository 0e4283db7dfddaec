/**
 * Request-rate limits for every endpoint (issue [operations], item 1). Placeholder: the limits are still the
 * commerce door's own (src/ucp/routes.ts) until this module takes them over.
 */
import type { FastifyInstance } from 'fastify';
import type { Store } from '../store.js';
import type { Metrics } from './metrics.js';

export async function installRateLimits(_app: FastifyInstance, _store: Store, _metrics: Metrics): Promise<void> {}
