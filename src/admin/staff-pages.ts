/** This admin section's routes (being built). */
import type { FastifyInstance } from 'fastify';
import type { AdminContext } from './admin-kit.js';

export function register(_admin: FastifyInstance, _ctx: AdminContext): void {}
