/**
 * Calling a tool, the same way for the SDK server and the fast path: find the tool; refuse arguments holding text
 * PostgreSQL cannot store or nested deeper than MAX_INPUT_DEPTH (-32602); validate them against the tool's schema
 * (-32602, every problem at once; a bad agent profile URL is -32001 invalid_profile_url, checked before the schema); refuse a
 * checkout or order tool to a caller without an agent profile (-32001 invalid_profile_url); negotiate the release
 * and capabilities with the agent's profile (-32001 on failure); check that they grant the tool; run it, its answer
 * shaped for the negotiated release. A database that cannot be reached is
 * -32000 "Service unavailable" with `data.retry_after` (UCP: 503); an unexpected failure becomes -32603 "Internal
 * error" and is logged; nothing internal reaches the client.
 */
import { isDatabaseUnavailable } from '../../db/database.js';
import { findUnstorable, inputPathText, unstorableProblemText } from '../../http/storable-input.js';
import { databaseErrorName } from '../../http/errors.js';
import type { Store } from '../../store.js';
import type { AgentProfiles } from '../agent/agent-profiles.js';
import type { Negotiation } from '../agent/negotiation.js';
import { discoveryFailed, internalError, JsonRpcError, storeUnavailable, unknownTool } from '../jsonrpc-errors.js';
import { Capability, LATEST_UCP_RELEASE, type CapabilityName } from '../protocol.js';
import type { JsonSchema } from '../schemas/one-ajv.js';
import { UcpProducts } from '../catalog/ucp-products.js';
import { errorOutcome, type ToolCaller, type ToolDefinition, type ToolOutcome } from './tool.js';
import { argumentProblems, invalidArguments } from './tool-schemas.js';

/** A tool as `tools/list` shows it. */
export interface ListedTool {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema & { type: 'object' };
  outputSchema: JsonSchema & { type: 'object' };
  annotations: ToolDefinition['annotations'];
}

/**
 * What a caller that names no agent profile may use: finding products and keeping a cart. Checkout and order tools need
 * a profile: without one there is no negotiation, and the scopes that write or complete a checkout belong to a
 * commerce-protocol session only.
 */
const ANONYMOUS_CAPABILITIES: ReadonlySet<CapabilityName> = new Set([Capability.catalogSearch, Capability.catalogLookup, Capability.cart]);

export class ToolCalls {
  private readonly byName: Map<string, ToolDefinition>;
  /** An anonymous caller is answered in the newest release and may use the catalog and cart capabilities, no order webhook. */
  private readonly anonymous: Negotiation;
  private readonly products: UcpProducts;
  readonly listed: ListedTool[];

  constructor(
    private readonly store: Store,
    tools: readonly ToolDefinition[],
    private readonly agentProfiles: AgentProfiles,
  ) {
    this.byName = new Map(tools.map((tool) => [tool.name, tool]));
    this.products = new UcpProducts(store.catalog, store.inventory, store.config.cartMaxLineQuantity);
    this.anonymous = {
      release: LATEST_UCP_RELEASE,
      capabilities: new Map(this.capabilities.filter((name) => ANONYMOUS_CAPABILITIES.has(name)).map((name) => [name, LATEST_UCP_RELEASE])),
    };
    this.listed = tools.map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      // Every tool's schemas are objects that stand alone (tool-schemas.ts): listed as they are.
      inputSchema: tool.inputSchema as ListedTool['inputSchema'],
      outputSchema: tool.outputSchema as ListedTool['outputSchema'],
      annotations: tool.annotations,
    }));
  }

  /** The capabilities the tools implement: what the profile advertises. */
  get capabilities(): CapabilityName[] {
    return [...new Set([...this.byName.values()].map((tool) => tool.capability))];
  }

  /** `caller`: the client the call serves (its rate budgets), from the request. */
  async call(name: string, args: unknown, caller: ToolCaller): Promise<ToolOutcome> {
    const tool = this.byName.get(name);
    if (!tool) throw unknownTool(name);
    const input = args ?? {};
    // Before anything reads the arguments: text PostgreSQL cannot store (NUL, an unpaired surrogate), anywhere, or
    // nesting deeper than any real call is -32602 naming where; nothing further on has to walk such input.
    const unstorable = findUnstorable(input);
    if (unstorable) {
      const path = inputPathText(unstorable.path);
      throw invalidArguments(name, [{ path, message: `${path} ${unstorableProblemText(unstorable)}.` }]);
    }
    const profile = this.agentProfiles.profileUrlOf(input);
    const problems = argumentProblems(tool.inputSchema, input);
    if (problems.length > 0) throw invalidArguments(name, problems);
    if (profile === undefined && !ANONYMOUS_CAPABILITIES.has(tool.capability)) {
      // UCP: a missing profile URL is invalid_profile_url. Nothing is read or stored.
      throw discoveryFailed(
        'invalid_profile_url',
        `${name} needs an agent profile: pass meta["ucp-agent"].profile (your platform's UCP profile URL). Anonymous callers may use the catalog and cart tools only.`,
      );
    }
    try {
      const { release, capabilities, orderWebhookUrl } = profile === undefined ? this.anonymous : await this.agentProfiles.negotiate(profile);
      if (!capabilities.has(tool.capability)) {
        return errorOutcome(release, [
          {
            type: 'error',
            code: 'capabilities_incompatible',
            content: `${name} needs the capability ${tool.capability} (version ${release}), which the agent profile does not declare.`,
            severity: 'unrecoverable',
          },
        ]);
      }
      return await tool.run(input, {
        store: this.store,
        release,
        capabilities,
        orderWebhookUrl,
        ...(profile === undefined ? {} : { agentPlatform: new URL(profile).host }),
        products: this.products,
        admitCartStart: caller.admitCartStart,
        log: caller.log,
      });
    } catch (error) {
      if (error instanceof JsonRpcError) throw error;
      if (isDatabaseUnavailable(error)) {
        caller.log.warn({ tool: name, cause: databaseErrorName(error) }, 'database unavailable: tool call refused');
        throw storeUnavailable();
      }
      caller.log.error({ err: error, tool: name }, 'tool call failed');
      throw internalError();
    }
  }
}
