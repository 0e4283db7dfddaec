/** What the storefront adds to the interface description (src/http/openapi.ts): its tags, the cart's session scheme and scope. */
import type { OpenApiFragment, SecurityRequirement } from '../http/openapi.js';

/** For the cart's operations: the session cookie `cart`, scope cart:write. */
export const SESSION_CART: SecurityRequirement[] = [{ sessionCart: ['cart:write'] }];

export const STOREFRONT_OPENAPI: OpenApiFragment = {
  tags: [
    { name: 'catalog', description: 'Products and collections' },
    { name: 'search', description: 'Predictive search and recommendations' },
    { name: 'cart', description: 'The session cart (cookie `cart`)' },
  ],
  securitySchemes: {
    sessionCart: {
      type: 'apiKey',
      in: 'cookie',
      name: 'cart',
      description: 'Scope cart:write. The opaque cart session cookie, set by the store on the first cart request.',
    },
  },
  scopes: [
    {
      scope: 'cart:write',
      grants: 'Create and modify one cart; no access to customer or order data.',
      credential: 'session cookie `cart` only',
      security_scheme: 'sessionCart',
    },
  ],
};
