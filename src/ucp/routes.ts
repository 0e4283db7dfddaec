/** Commerce-protocol door (/.well-known/ucp, /api/ucp/mcp): built by the [protocol] issue. */
import type { FastifyPluginAsync } from 'fastify';
import type { Store } from '../store.js';

export const ucpRoutes: FastifyPluginAsync<{ store: Store }> = async () => {};
