/**
 * The commerce door's cross-origin policy (src/http/response-headers.ts): its profiles are public reads any origin
 * may fetch; the commerce endpoint judges Origin and Host itself (src/ucp/routes.ts), so a cross-origin preflight
 * there reaches it.
 */
import type { CrossOriginPolicy } from '../http/response-headers.js';
import { MCP_PATH } from './protocol.js';

export const UCP_CROSS_ORIGIN: CrossOriginPolicy = {
  publicReads: [String.raw`\.well-known\/ucp(?:[/?#]|$)`],
  ownOriginRules: [MCP_PATH],
};
