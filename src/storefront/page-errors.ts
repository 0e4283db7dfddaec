/**
 * The errors of the routes a person reads (the cart and checkout forms, the subscription pages): pages too, except
 * 429, which keeps the store's JSON and Retry-After. A refused request (too large, another type, unreadable) says
 * nothing was changed; an outage is a 503 with Retry-After; anything else is logged and a plain 500 page.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../db/database.js';
import { StorefrontError, UNAVAILABLE_RETRY_AFTER_SECONDS, databaseErrorName } from '../http/errors.js';

/** A page that only says something: its status, title and paragraphs. */
export type SayPage = (reply: FastifyReply, status: number, title: string, paragraphs: string[]) => FastifyReply;

export interface PageErrorWords {
  /** Where the person goes back to try again ("Go back to your cart and try again."). */
  again: string;
  /** The outage's sentence. */
  unavailable: string;
}

export function pageErrorHandler(sayPage: SayPage, words: PageErrorWords) {
  return (error: FastifyError | StorefrontError, request: FastifyRequest, reply: FastifyReply) => {
    const status = error.statusCode ?? 500;
    if (status === 429) throw error;
    if (status < 500) {
      const why = error instanceof StorefrontError ? error.description : 'The form could not be read.';
      return sayPage(reply, status, 'Nothing was changed', [`${why} Nothing was changed.`, words.again]);
    }
    if (isDatabaseUnavailable(error)) {
      request.log.warn({ cause: databaseErrorName(error) }, 'database unavailable: answered 503');
      reply.header('retry-after', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
      return sayPage(reply, 503, 'The store is briefly unavailable', [words.unavailable]);
    }
    request.log.error({ err: error }, 'page failed');
    return sayPage(reply, 500, 'Something went wrong', ['Something went wrong on our side. Try again in a moment.']);
  };
}
