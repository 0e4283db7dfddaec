/**
 * The storefront error catalogue: every error a client sees is `{status, message, description}` with
 * `status` equal to the HTTP status and `message` a stable class. Nothing internal (stack, SQL, path) leaks.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';

export const ErrorSchema = Type.Object(
  {
    status: Type.Integer({ description: 'the HTTP status code repeated in the body' }),
    message: Type.String({ description: 'short machine-stable error class' }),
    description: Type.Optional(Type.String({ description: 'human-readable explanation' })),
  },
  { $id: 'Error' },
);

export const ErrorMessage = {
  badRequest: 'Bad request',
  notFound: 'Not found',
  methodNotAllowed: 'Method not allowed',
  payloadTooLarge: 'Payload too large',
  unsupportedMediaType: 'Unsupported media type',
  invalidParameter: 'Invalid parameter error',
  missingParameter: 'Missing parameter error',
  cartError: 'Cart Error',
  tooManyRequests: 'Too many requests',
  internal: 'Internal server error',
  unavailable: 'Service unavailable',
} as const;

/** An error a domain function or adapter raises on purpose; the error handler turns it into the JSON body. */
export class StorefrontError extends Error {
  constructor(
    readonly statusCode: number,
    readonly errorClass: string,
    readonly description: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
  }
}

export const notFound = (description: string) => new StorefrontError(404, ErrorMessage.notFound, description);
export const invalidParameter = (description: string) => new StorefrontError(422, ErrorMessage.invalidParameter, description);
export const missingParameter = (description: string) => new StorefrontError(422, ErrorMessage.missingParameter, description);

export function sendError(reply: FastifyReply, status: number, message: string, description: string): FastifyReply {
  return reply
    .code(status)
    .type('application/json; charset=utf-8')
    .send(JSON.stringify({ status, message, description }));
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
    request.log.error({ err: error }, 'request failed');
    if (status === 503) return sendError(reply, 503, ErrorMessage.unavailable, 'The store is temporarily unavailable; retry shortly.');
    return sendError(reply, 500, ErrorMessage.internal, 'Something went wrong on our side; retry shortly.');
  });

  app.setNotFoundHandler((request, reply) => {
    return sendError(reply, 404, ErrorMessage.notFound, `Nothing is at ${request.method} ${(request.url.split('?')[0] ?? '').slice(0, 200)}.`);
  });
}
