/** The shop's pages in HTML: home, collections, products, search. (Being built: issue [pages].) */
import type { FastifyPluginAsync } from 'fastify';
import type { Store } from '../store.js';
import type { ProductBodies } from './product-bodies.js';

export const shopRoutes: FastifyPluginAsync<{ store: Store; bodies: ProductBodies }> = async () => {};
