/** Whether a form post comes from one of this store's own pages, as the browser says where the form was. */
import type { FastifyRequest } from 'fastify';

/** The check for a store at `baseUrl`: a POST from a page of another site is refused. */
export function sameOriginCheck(baseUrl: string): (request: FastifyRequest) => boolean {
  const ownOrigin = new URL(baseUrl).origin;
  return (request) => {
    const origin = request.headers.origin;
    // Browsers send `Origin: null` for a form posted from a page with Referrer-Policy: no-referrer, as ours are.
    if (origin !== undefined && origin !== 'null' && origin !== ownOrigin) return false;
    const site = request.headers['sec-fetch-site'];
    return site === undefined || site === 'same-origin';
  };
}
