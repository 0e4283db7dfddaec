/**
 * The error catalogue of both doors: every error a client sees is `{status, message, description}` with
 * `status` equal to the HTTP status and `message` the class the catalogue gives that status (the commerce
 * endpoint adds its JSON-RPC members). Nothing internal (stack, SQL, path) leaks.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { isDatabaseUnavailable } from '../db/database.js';

export const ErrorSchema = Type.Object(
  {
    status: Type.Integer({ description: 'the HTTP status code repeated in the body' }),
    message: Type.String({ description: 'short machine-stable error class' }),
    description: Type.Optional(Type.String({ description: 'human-readable explanation' })),
  },
  { $id: 'Error' },
);

/**
 * The one catalogue of error classes, for every door: an HTTP status always carries the same `message`, in
 * the storefront JSON and in the commerce endpoint's error bodies alike (its JSON-RPC codes are another
 * table, src/ucp/jsonrpc-errors.ts). The single exception is 422, whose three classes the spec names
 * (Errors): `Invalid parameter error` (the default), `Missing parameter error` and `Cart Error`.
 */
export const STATUS_MESSAGE = {
  400: 'Bad request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  406: 'Not acceptable',
  408: 'Request timeout',
  409: 'Conflict',
  413: 'Payload too large',
  415: 'Unsupported media type',
  417: 'Expectation failed',
  422: 'Invalid parameter error',
  424: 'Failed dependency',
  429: 'Too many requests',
  431: 'Request header fields too large',
  500: 'Internal server error',
  503: 'Service unavailable',
} as const;

export type ErrorStatus = keyof typeof STATUS_MESSAGE;

/** The 422 classes of the spec (Errors), exactly as it writes them. */
export const UNPROCESSABLE_MESSAGES = ['Invalid parameter error', 'Missing parameter error', 'Cart Error'] as const;
export type UnprocessableMessage = (typeof UNPROCESSABLE_MESSAGES)[number];

export const ErrorMessage = {
  badRequest: STATUS_MESSAGE[400],
  unauthorized: STATUS_MESSAGE[401],
  forbidden: STATUS_MESSAGE[403],
  notFound: STATUS_MESSAGE[404],
  methodNotAllowed: STATUS_MESSAGE[405],
  notAcceptable: STATUS_MESSAGE[406],
  requestTimeout: STATUS_MESSAGE[408],
  conflict: STATUS_MESSAGE[409],
  payloadTooLarge: STATUS_MESSAGE[413],
  unsupportedMediaType: STATUS_MESSAGE[415],
  expectationFailed: STATUS_MESSAGE[417],
  invalidParameter: 'Invalid parameter error',
  missingParameter: 'Missing parameter error',
  cartError: 'Cart Error',
  failedDependency: STATUS_MESSAGE[424],
  tooManyRequests: STATUS_MESSAGE[429],
  headersTooLarge: STATUS_MESSAGE[431],
  internal: STATUS_MESSAGE[500],
  unavailable: STATUS_MESSAGE[503],
} as const;

/**
 * The message a status carries: the catalogue's; for 422 the spec class asked for when it is one. A status
 * the catalogue lacks falls back to its range's (400 or 500), so nothing ever leaves without a message.
 */
export function statusMessage(status: number, unprocessable?: string): string {
  if (status === 422 && (UNPROCESSABLE_MESSAGES as readonly string[]).includes(unprocessable ?? '')) return unprocessable!;
  return (STATUS_MESSAGE as Record<number, string>)[status] ?? (status >= 500 ? STATUS_MESSAGE[500] : STATUS_MESSAGE[400]);
}

/** The storefront Error body for a status (the commerce endpoint adds its JSON-RPC members to it). */
export function errorBody(status: number, description: string, unprocessable?: string): { status: number; message: string; description: string } {
  return { status, message: statusMessage(status, unprocessable), description };
}

/** An error a domain function or adapter raises on purpose; the error handler turns it into the JSON body. */
export class StorefrontError extends Error {
  constructor(
    readonly statusCode: number,
    /** The message class: the catalogue's for the status (a 422 may name one of the spec's classes). */
    readonly errorClass: string,
    readonly description: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
  }
}

/**
 * While the database is unavailable (restarting, unreachable), requests that need it are answered 503 with this
 * Retry-After (seconds), the same as /readyz and a draining instance; a restart takes a few seconds.
 */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;
export const UNAVAILABLE_DESCRIPTION = 'The store is temporarily unavailable; retry after the number of seconds in Retry-After.';

/**
 * Answers 503 with Retry-After when `error` means the database is unavailable (one short warning, no stack: an
 * outage under load fails many requests alike); returns undefined for any other error.
 */
function sendIfDatabaseUnavailable(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined {
  if (!isDatabaseUnavailable(error)) return undefined;
  request.log.warn({ cause: databaseErrorName(error) }, 'database unavailable: answered 503');
  reply.header('retry-after', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
  return sendError(reply, 503, ErrorMessage.unavailable, UNAVAILABLE_DESCRIPTION);
}

/** An unavailable database's error, named for the log: its code (ECONNREFUSED, 57P01) or else its message. */
export function databaseErrorName(error: unknown): string {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return typeof code === 'string' ? code : String(message);
}

/** The 404 description for a path nothing answers (the path cut to 200 characters, the query left out). */
export const notFoundDescription = (method: string, url: string) => `Nothing is at ${method} ${(url.split('?')[0] ?? '').slice(0, 200)}.`;

export const notFound = (description: string) => new StorefrontError(404, ErrorMessage.notFound, description);
export const invalidParameter = (description: string) => new StorefrontError(422, ErrorMessage.invalidParameter, description);
export const missingParameter = (description: string) => new StorefrontError(422, ErrorMessage.missingParameter, description);

/** Sends the Error body; `message` only chooses among the 422 classes, every other status has one. */
export function sendError(reply: FastifyReply, status: number, message: string, description: string): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send(JSON.stringify(errorBody(status, description, message)));
}

/** Names the parameter a schema validation failed on: `limit`, `items[0].quantity`, … */
function parameterName(error: FastifyError): string {
  const first = error.validation?.[0];
  if (!first) return 'request';
  const missing = (first.params as { missingProperty?: string } | undefined)?.missingProperty;
  const path = (first.instancePath ?? '')
    .split('/')
    .filter(Boolean)
    .map((part) => (/^\d+$/.test(part) ? `[${part}]` : `.${part}`))
    .join('')
    .replace(/^\./, '');
  const name = missing ? (path ? `${path}.${missing}` : missing) : path;
  return name || (error.validationContext === 'body' ? 'body' : 'request');
}

function validationDescription(error: FastifyError): string {
  const first = error.validation?.[0];
  const name = parameterName(error);
  const missing = (first?.params as { missingProperty?: string } | undefined)?.missingProperty;
  if (missing) return `Required parameter missing: ${name}`;
  return `Parameter ${name} is invalid: ${first?.message ?? 'invalid value'}`;
}

export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | StorefrontError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof StorefrontError) {
      reply.headers(error.headers);
      return sendError(reply, error.statusCode, error.errorClass, error.description);
    }
    if (error.validation) {
      return sendError(reply, 422, ErrorMessage.invalidParameter, validationDescription(error));
    }
    const status = error.statusCode ?? 500;
    if (status === 429) {
      return sendError(reply, 429, ErrorMessage.tooManyRequests, 'Too many requests; retry after the number of seconds in Retry-After.');
    }
    if (status === 413) return sendError(reply, 413, ErrorMessage.payloadTooLarge, 'The request body is too large.');
    if (status === 415) {
      return sendError(reply, 415, ErrorMessage.unsupportedMediaType, `Unsupported Content-Type: ${request.headers['content-type'] ?? 'none'}.`);
    }
    if (status >= 400 && status < 500) {
      // Fastify's own client errors (malformed JSON, empty JSON body, bad URL encoding): say what, never how.
      const description =
        error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError
          ? 'The request body is not valid JSON.'
          : error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
            ? 'The request body is empty but Content-Type is application/json.'
            : 'The request could not be understood.';
      return sendError(reply, 400, ErrorMessage.badRequest, description);
    }
    if (sendIfDatabaseUnavailable(error, request, reply)) return reply;
    request.log.error({ err: error }, 'request failed');
    if (status === 503) return sendError(reply, 503, ErrorMessage.unavailable, 'The store is temporarily unavailable; retry shortly.');
    return sendError(reply, 500, ErrorMessage.internal, 'Something went wrong on our side; retry shortly.');
  });

  app.setNotFoundHandler((request, reply) => sendError(reply, 404, ErrorMessage.notFound, notFoundDescription(request.method, request.url)));
}
