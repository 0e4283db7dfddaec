/**
 * Commerce-protocol door: the UCP business profile (/.well-known/ucp) and the MCP endpoint (/api/ucp/mcp).
 * Its own plugin scope holds what only this door needs: Host/Origin checks and JSON-RPC error bodies (the rate
 * limits are the app's, src/http/rate-limit.ts; their 429 is answered here as a JSON-RPC error on the endpoint).
 */
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { RateLimited } from '../http/rate-limit.js';
import type { Store } from '../store.js';
import { AgentProfiles } from './agent/agent-profiles.js';
import { JsonRpcCode, rateLimitExceeded } from './jsonrpc-errors.js';
import { allowedHosts, isAllowedHost, isAllowedOrigin } from './mcp/allowed-hosts.js';
import { mcpRoutes } from './mcp/mcp-routes.js';
import { requestId, sendRpcError } from './mcp/rpc-reply.js';
import { SdkServers } from './mcp/sdk-servers.js';
import { profileRoutes } from './profile-routes.js';
import { capabilitiesByRelease, EXTENSION_CAPABILITIES, MCP_PATH } from './protocol.js';
import { cartTools } from './tools/cart-tools.js';
import { checkoutTools } from './tools/checkout-tools.js';
import { paymentHandlersEntry } from './checkout/ucp-checkout.js';
import { catalogTools } from './tools/catalog-tools.js';
import { ToolCalls } from './tools/tool-calls.js';

const isJsonBodyError = (error: FastifyError) =>
  error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY';

export const ucpRoutes: FastifyPluginAsync<{ store: Store }> = async (app, { store }) => {
  const { config } = store;
  const tools = [...catalogTools, ...cartTools, ...checkoutTools];
  const advertised = [...new Set([...tools.map((t) => t.capability), ...EXTENSION_CAPABILITIES])];
  const agentProfiles = new AgentProfiles({
    capabilities: capabilitiesByRelease(advertised),
    allowInsecure: config.allowInsecureProfiles,
    timeoutMs: config.agentProfileTimeoutMs,
  });
  const toolCalls = new ToolCalls(store, tools, agentProfiles);
  const hosts = allowedHosts(config.baseUrl, config.mcpAllowedHosts);

  app.setErrorHandler((error: FastifyError | RateLimited, request: FastifyRequest, reply: FastifyReply) => {
    const onMcp = request.routeOptions.url === MCP_PATH;
    if (error instanceof RateLimited) {
      if (!onMcp) throw error; // the profile: the storefront Error, from the app's handler
      // Counted on arrival, before the body is read, the call's id is not known (null, as for any HTTP-level
      // refusal); counted against the profile its arguments name, it is.
      reply.headers(error.headers);
      const { code, message, data } = rateLimitExceeded(error.retryAfterSeconds);
      return sendRpcError(reply, 429, requestId(request.body), code, message, data);
    }
    if (!onMcp) throw error;
    const status = error.statusCode ?? 500;
    if (isJsonBodyError(error)) return sendRpcError(reply, 200, null, JsonRpcCode.parseError, 'Parse error: the body is not valid JSON');
    if (status === 413) return sendRpcError(reply, 200, null, JsonRpcCode.protocolError, 'Payload too large: the body exceeds the size limit');
    if (status === 415) return sendRpcError(reply, 200, null, JsonRpcCode.protocolError, 'Unsupported Media Type: Content-Type must be application/json');
    if (status >= 400 && status < 500) return sendRpcError(reply, 200, null, JsonRpcCode.invalidRequest, 'Invalid Request');
    request.log.error({ err: error }, 'MCP request failed');
    return sendRpcError(reply, 200, requestId(request.body), JsonRpcCode.internalError, 'Internal error');
  });

  // DNS-rebinding protection, before anything else runs for the endpoint. A refusal names the setting that
  // would accept the name, since the one who reads it is usually the operator trying the endpoint.
  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.url !== MCP_PATH) return;
    const localPort = request.socket?.localPort;
    const { host, origin } = request.headers;
    if (!isAllowedHost(host, hosts, localPort)) {
      return sendRpcError(reply, 200, null, JsonRpcCode.protocolError, 'Forbidden: Host header not allowed (see MCP_ALLOWED_HOSTS)', { code: 'forbidden', content:
        `The Host ${JSON.stringify(String(host ?? '').slice(0, 100))} is not one of this store's names. BASE_URL's host and the loopback names ` +
          'on the listening port are accepted; add this host to MCP_ALLOWED_HOSTS (comma-separated host or host:port) to accept it.' });
    }
    if (!isAllowedOrigin(origin, hosts, localPort)) {
      return sendRpcError(reply, 200, null, JsonRpcCode.protocolError, 'Forbidden: Origin not allowed (see MCP_ALLOWED_HOSTS)', { code: 'forbidden', content:
        `The Origin ${JSON.stringify(String(origin).slice(0, 100))} is not one of this store's names. Add its host[:port] to ` +
          'MCP_ALLOWED_HOSTS (comma-separated) to accept it.' });
    }
  });

  profileRoutes(app, {
    baseUrl: config.baseUrl,
    capabilities: advertised,
    paymentHandlers: paymentHandlersEntry(store.payments),
    signingKeys: store.signingKeys,
    approvalProof: store.buyerProof.mode,
  });
  mcpRoutes(app, { toolCalls, sdk: new SdkServers(toolCalls, config, app.log), baseUrl: config.baseUrl });
};
