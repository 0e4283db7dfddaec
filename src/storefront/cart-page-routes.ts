/** The cart page, the agent's cart hand-off and the browser checkout, in HTML. (Being built: issue [pages].) */
import type { FastifyPluginAsync } from 'fastify';
import type { Store } from '../store.js';

export const cartPageRoutes: FastifyPluginAsync<{ store: Store }> = async () => {};
