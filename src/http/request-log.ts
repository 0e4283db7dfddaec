/**
 * Request logging (issue [operations], items 3 and 5). Placeholder: Fastify's own request logging.
 */
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import type { Config } from '../config.js';

/** The logger options of the Fastify instance. */
export function loggerOptions(enabled: boolean | undefined, config: Config): Pick<FastifyServerOptions, 'logger' | 'disableRequestLogging'> {
  return { logger: enabled ? { level: config.logLevel } : false };
}

export function installRequestLog(_app: FastifyInstance): void {}
