/**
 * What an MCP tool of this store is: a UCP operation with its input and output schemas (bundled from the
 * official UCP schemas), the capability that grants it, and a thin adapter that calls one domain function
 * and shapes the UCP payload. Shared helpers for the `ucp` envelope and business-outcome results.
 */
import type { FastifyBaseLogger } from 'fastify';
import { IdempotencyConflict, IdempotencyInProgress } from '../../idempotency/idempotency-store.js';
import type { Store } from '../../store.js';
import { idempotencyConflict, idempotencyInProgress } from '../jsonrpc-errors.js';
import type { NegotiatedCapabilities } from '../agent/negotiation.js';
import type { CapabilityName } from '../protocol.js';
import { UCP_VERSION } from '../protocol.js';
import { bundledRef, type JsonSchema } from '../schemas/schema-bundle.js';
import type { UcpProducts } from '../catalog/ucp-products.js';

/** What a call knows of the client it serves, built per request by the door. */
export interface ToolCaller {
  /**
   * Counts a new stored cart (or a checkout made from nothing) against the client address's cart-start budget, the
   * storefront's too; throws the JSON-RPC rate-limit error (HTTP 429) when none is left this hour. Call it before
   * storing anything.
   */
  admitCartStart(): Promise<void>;
  /** The request's logger: what a call logs carries the request's id. */
  log: FastifyBaseLogger;
}

export interface ToolContext extends ToolCaller {
  store: Store;
  /** Capabilities this caller may use: the negotiated intersection, or everything for an anonymous caller. */
  capabilities: NegotiatedCapabilities;
  /**
   * Where the agent's platform hears of orders (its profile's order capability `config.webhook_url`, checked as
   * profile URLs are): absent for an anonymous caller, or when the order capability was not negotiated.
   */
  orderWebhookUrl?: string;
  /** Each product's UCP JSON, serialised once (again after its stock changes). */
  products: UcpProducts;
}

/** A tool's answer: the UCP payload, already serialised, and whether it reports a business error. */
export interface ToolOutcome {
  json: string;
  /** `json` as a JSON string literal (the text content), when the tool built it alongside; else derived. */
  jsonString?: string;
  isError: boolean;
}

/**
 * Builds a payload's JSON text and, alongside, the same text as a JSON string literal: escaping is
 * compositional, so pieces escaped once (a product's JSON, per catalog snapshot) are reused per call.
 */
export class JsonTextBuilder {
  private readonly raw: string[] = [];
  private readonly escaped: string[] = [];

  add(raw: string, escaped = JSON.stringify(raw).slice(1, -1)): this {
    this.raw.push(raw);
    this.escaped.push(escaped);
    return this;
  }

  outcome(isError = false): ToolOutcome {
    return { json: this.raw.join(''), jsonString: `"${this.escaped.join('')}"`, isError };
  }
}

/** A tool whose arguments have the type `Args`: what its `inputSchema` admits (checked before `run`). */
export interface ToolDefinition<Args = unknown> {
  name: string;
  title: string;
  description: string;
  capability: CapabilityName;
  inputSchema: JsonSchema;
  outputSchema: JsonSchema;
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
  run(args: Args, context: ToolContext): Promise<ToolOutcome>;
}

/**
 * A tool as the registry holds it. The dispatcher validates the arguments against `inputSchema` before it
 * calls `run`, which is what makes them `Args`: this is the one place that says so.
 */
export function defineTool<Args>(tool: ToolDefinition<Args>): ToolDefinition {
  return tool as unknown as ToolDefinition;
}

/**
 * `meta` as the UCP MCP binding defines it, except that `ucp-agent` is optional: without an agent profile
 * the caller is anonymous and may use the catalog and cart tools.
 */
export function metaSchema(options: { idempotencyKey: boolean }): JsonSchema {
  return {
    type: 'object',
    description:
      'UCP request metadata. `ucp-agent.profile` is the URL of the calling platform\'s UCP profile (https); the store ' +
      'fetches it and negotiates capabilities. Without it the call is anonymous (catalog and cart tools only).' +
      (options.idempotencyKey ? ' `idempotency-key` (a UUID) is required: a retry with the same key is safe.' : ''),
    additionalProperties: true,
    properties: {
      'ucp-agent': {
        type: 'object',
        required: ['profile'],
        // No `format: uri` here: a malformed or non-https URL is a -32001 invalid_profile_url (UCP), which
        // AgentProfiles.profileUrlOf raises before the arguments are validated.
        properties: { profile: { type: 'string', description: "URL of the platform's UCP profile (https)." } },
      },
      'idempotency-key': { type: 'string', format: 'uuid', description: 'Unique key for retry safety.' },
    },
    ...(options.idempotencyKey ? { required: ['idempotency-key'] } : {}),
  };
}

/** A tool's input: `meta` plus its named UCP arguments, each a bundled schema or a plain one. */
export function toolInput(properties: Record<string, JsonSchema>, required: string[], options = { idempotencyKey: false }): JsonSchema {
  return {
    type: 'object',
    properties: { meta: metaSchema(options), ...properties },
    required: options.idempotencyKey ? ['meta', ...required] : required,
  };
}

/** A tool's output: the UCP response, or the UCP error response when no resource could be produced. */
export function toolOutput(responseSchema: string): JsonSchema {
  return { type: 'object', oneOf: [bundledRef(responseSchema), bundledRef('error_response')] };
}

export interface UcpEnvelope {
  version: string;
  status: 'success';
  capabilities: Record<string, { version: string }[]>;
}

/** The `ucp` member of a successful response: the version and the capability this operation used, at its negotiated version. */
export function ucpEnvelope(context: ToolContext, capability: CapabilityName): UcpEnvelope {
  const version = context.capabilities.get(capability) ?? UCP_VERSION;
  return { version: UCP_VERSION, status: 'success', capabilities: { [capability]: [{ version }] } };
}

export interface UcpMessage {
  type: 'error' | 'warning' | 'info';
  code?: string;
  content: string;
  severity?: 'recoverable' | 'requires_buyer_input' | 'requires_buyer_review' | 'unrecoverable';
  path?: string;
}

/** A business outcome that produced no resource (UCP error_response): not found, capabilities incompatible, … */
export function errorOutcome(messages: UcpMessage[], continueUrl?: string): ToolOutcome {
  return {
    json: JSON.stringify({ ucp: { version: UCP_VERSION, status: 'error' }, messages, ...(continueUrl ? { continue_url: continueUrl } : {}) }),
    isError: true,
  };
}

export function outcome(payload: object): ToolOutcome {
  return { json: JSON.stringify(payload), isError: false };
}

/** How a tool's answer is kept for an idempotency key. */
const outcomeCodec = {
  encode: (answer: ToolOutcome) => JSON.stringify({ json: answer.json, isError: answer.isError }),
  decode: (text: string) => JSON.parse(text) as ToolOutcome,
};

/**
 * Runs a tool whose `meta` carries an idempotency key, through the store's durable keys: the same key and payload
 * (the arguments without `meta`) replay the first answer on any instance; another payload under the key is HTTP 409
 * with JSON-RPC -32000; a call racing one still running with the key waits for its answer.
 */
export async function runIdempotently(
  tool: string,
  args: { id: string; meta: { 'idempotency-key': string } },
  context: ToolContext,
  run: () => Promise<ToolOutcome>,
): Promise<ToolOutcome> {
  const { meta, ...payload } = args;
  const { db, idempotency } = context.store;
  try {
    return await idempotency.run(db, { key: meta['idempotency-key'], tool, resource: args.id, payload }, run, outcomeCodec);
  } catch (error) {
    if (error instanceof IdempotencyConflict) throw idempotencyConflict();
    if (error instanceof IdempotencyInProgress) throw idempotencyInProgress();
    throw error;
  }
}
