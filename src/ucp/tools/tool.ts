/**
 * What an MCP tool of this store is: a UCP operation with its input and output schemas (the lean ones of
 * tool-schemas.ts), the capability that grants it, and a thin adapter that calls one domain function
 * and shapes the UCP payload. Shared helpers for the `ucp` envelope and business-outcome results.
 */
import type { FastifyBaseLogger } from 'fastify';
import { IdempotencyConflict, IdempotencyInProgress } from '../../idempotency/idempotency-store.js';
import type { Store } from '../../store.js';
import { idempotencyConflict, idempotencyInProgress } from '../jsonrpc-errors.js';
import type { NegotiatedCapabilities } from '../agent/negotiation.js';
import type { CapabilityName, UcpRelease } from '../protocol.js';
import type { JsonSchema } from '../schemas/one-ajv.js';
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
  /** The UCP release this caller's answers are shaped for: negotiated from its profile, else the newest. */
  release: UcpRelease;
  /** Capabilities this caller may use: the negotiated intersection, or the catalog and cart for an anonymous caller. */
  capabilities: NegotiatedCapabilities;
  /**
   * Where the agent's platform hears of orders (its profile's order capability `config.webhook_url`, checked as
   * profile URLs are): absent for an anonymous caller, or when the order capability was not negotiated.
   */
  orderWebhookUrl?: string;
  /** The host of the agent's profile URL (its platform, for the merchant's reports): absent for an anonymous caller. */
  agentPlatform?: string;
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
 * `meta`, a tool's input (meta plus its named arguments) and a tool's output: the lean schemas of tool-schemas.ts
 * (what each tool reads, open to both UCP releases' request shapes; the output names the UCP response).
 */
export { metaSchema, toolInput, toolOutput } from './tool-schemas.js';

export interface UcpEnvelope {
  version: string;
  status: 'success';
  capabilities: Record<string, { version: string }[]>;
}

/** The `ucp` member of a successful response: the version and the capability this operation used, at its negotiated version. */
export function ucpEnvelope(context: ToolContext, capability: CapabilityName): UcpEnvelope {
  const version = context.capabilities.get(capability) ?? context.release;
  return { version: context.release, status: 'success', capabilities: { [capability]: [{ version }] } };
}

export interface UcpMessage {
  type: 'error' | 'warning' | 'info';
  code?: string;
  content: string;
  severity?: 'recoverable' | 'requires_buyer_input' | 'requires_buyer_review' | 'unrecoverable';
  path?: string;
}

/** A business outcome that produced no resource (UCP error_response): not found, capabilities incompatible, … */
export function errorOutcome(release: UcpRelease, messages: UcpMessage[], continueUrl?: string): ToolOutcome {
  return {
    json: JSON.stringify({ ucp: { version: release, status: 'error' }, messages, ...(continueUrl ? { continue_url: continueUrl } : {}) }),
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
 * Runs a state-changing tool through the store's durable idempotency keys when its `meta` carries one (UCP replay
 * protection; complete_checkout, cancel_checkout and cancel_cart require one, the create and update tools take one);
 * without a key the tool runs once. What binds the key is the tool's whole `arguments` without `meta` (canonical
 * JSON: key order ignored) and the release the answer is shaped for: the same key, arguments and release replay the
 * first answer on any instance; the same key with other arguments, or from an agent of another release, is HTTP 409
 * with JSON-RPC -32000 (UCP: a key reused with different parameters); a call racing one still running with the key
 * waits for its answer. `resource` names what the key acts on (a cart or checkout id; '' for a create).
 */
/** `meta` of a call that may carry an idempotency key. */
export type KeyedMeta = { 'idempotency-key'?: string };

export async function runIdempotently(
  tool: string,
  args: { meta?: KeyedMeta } & Record<string, unknown>,
  resource: string,
  context: ToolContext,
  run: () => Promise<ToolOutcome>,
): Promise<ToolOutcome> {
  const { meta, ...payload } = args;
  const key = meta?.['idempotency-key'];
  if (key === undefined) return run();
  const { db, idempotency } = context.store;
  try {
    return await idempotency.run(db, { key, tool, resource, payload: { release: context.release, arguments: payload } }, run, outcomeCodec);
  } catch (error) {
    if (error instanceof IdempotencyConflict) throw idempotencyConflict();
    if (error instanceof IdempotencyInProgress) throw idempotencyInProgress();
    throw error;
  }
}
