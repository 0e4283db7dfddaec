/** Search and recommendation routes: built by the [search] issue. */
import type { FastifyPluginAsync } from 'fastify';
import type { Store } from '../store.js';

export const searchRoutes: FastifyPluginAsync<{ store: Store }> = async () => {};
