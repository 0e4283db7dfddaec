/** Session cart routes (/cart.js, /cart/add.js, /cart/change.js, …): built by the [cart] issue. */
import type { FastifyPluginAsync } from 'fastify';
import type { Store } from '../store.js';

export const cartRoutes: FastifyPluginAsync<{ store: Store }> = async () => {};
