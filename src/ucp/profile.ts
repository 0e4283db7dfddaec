/**
 * The business profile at /.well-known/ucp (UCP 2026-04-08 shape): the protocol version, the one MCP
 * service entry, the capabilities the tools implement, the payment handlers approved orders are paid with, and the
 * public keys that verify what the store signs (`signing_keys`, the 2026-04-08 name; later releases say `keys`).
 * Each supported version also has a self-contained leaf profile at /.well-known/ucp/{version}.
 */
import { APPROVAL_PROOF_METHODS, APPROVAL_PROOF_WORDS } from '../checkout/buyer-proof.js';
import type { ApprovalProofMode } from '../config.js';
import {
  Capability,
  IMPLEMENTED_CAPABILITIES,
  MCP_PATH,
  MCP_SERVICE_ENTRY,
  PROFILE_PATH,
  SHOPPING_SERVICE,
  UCP_VERSION,
  type CapabilityEntry,
  type CapabilityName,
} from './protocol.js';
import type { PublishedKey } from './webhooks/signing-keys.js';

export interface BusinessProfile {
  ucp: {
    version: string;
    supported_versions?: Record<string, string>;
    services: Record<string, Array<typeof MCP_SERVICE_ENTRY & { endpoint: string }>>;
    capabilities: Record<string, CapabilityEntry[]>;
    payment_handlers: Record<string, unknown[]>;
  };
  signing_keys?: PublishedKey[];
}

/**
 * The checkout capability with what completing asks of the buyer: `config.buyer_approval` says that every order
 * waits for the buyer on the store's approval page (continue_url) and which proofs the buyer may give there.
 */
function checkoutEntry(mode: ApprovalProofMode): CapabilityEntry & { config: Record<string, unknown> } {
  return {
    ...IMPLEMENTED_CAPABILITIES[Capability.checkout],
    config: { buyer_approval: { required: true, where: 'continue_url', proof: APPROVAL_PROOF_METHODS[mode], description: APPROVAL_PROOF_WORDS[mode] } },
  };
}

/** Versions this store answers, each with its leaf profile. */
export const SUPPORTED_VERSIONS = [UCP_VERSION] as const;

export function businessProfile(
  baseUrl: string,
  capabilities: readonly CapabilityName[],
  options: { leaf?: boolean; paymentHandlers?: Record<string, unknown[]>; signingKeys?: PublishedKey[]; approvalProof?: ApprovalProofMode } = {},
): BusinessProfile {
  const leaf = options.leaf ?? false;
  return {
    ucp: {
      version: UCP_VERSION,
      // Leaf documents must not carry supported_versions (UCP overview, protocol version).
      ...(leaf ? {} : { supported_versions: Object.fromEntries(SUPPORTED_VERSIONS.map((v) => [v, `${baseUrl}${PROFILE_PATH}/${v}`])) }),
      services: { [SHOPPING_SERVICE]: [{ ...MCP_SERVICE_ENTRY, endpoint: `${baseUrl}${MCP_PATH}` }] },
      capabilities: Object.fromEntries(
        capabilities.map((name) => [name, [name === Capability.checkout && options.approvalProof ? checkoutEntry(options.approvalProof) : IMPLEMENTED_CAPABILITIES[name]]]),
      ),
      payment_handlers: options.paymentHandlers ?? {},
    },
    ...(options.signingKeys ? { signing_keys: options.signingKeys } : {}),
  };
}
