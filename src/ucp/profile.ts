/**
 * The business profiles: /.well-known/ucp is a profile of the newest release this store speaks (its public keys in
 * `keys`, a JWK Set, and `supported_versions` naming a complete leaf profile for each older release); each older
 * release's leaf carries its entries at that release and its keys as that release names them (`signing_keys` in
 * 2026-04-08), and no `supported_versions` (UCP overview, "Protocol Version").
 */
import { APPROVAL_PROOF_METHODS, APPROVAL_PROOF_WORDS } from './checkout/ucp-messages.js';
import type { ApprovalProofMode } from '../config.js';
import {
  Capability,
  capabilityEntry,
  LATEST_UCP_RELEASE,
  MCP_PATH,
  mcpServiceEntry,
  OLDER_UCP_RELEASES,
  PROFILE_PATH,
  SHOPPING_SERVICE,
  type CapabilityEntry,
  type CapabilityName,
  type UcpRelease,
} from './protocol.js';
import type { PublishedKey } from './webhooks/signing-keys.js';

export interface BusinessProfile {
  ucp: {
    version: string;
    supported_versions?: Record<string, string>;
    services: Record<string, Array<ReturnType<typeof mcpServiceEntry> & { endpoint: string }>>;
    capabilities: Record<string, CapabilityEntry[]>;
    payment_handlers: Record<string, unknown[]>;
  };
  /** 2026-08-25 and later: the profile is a JWK Set. */
  keys?: PublishedKey[];
  /** 2026-04-08. */
  signing_keys?: PublishedKey[];
}

export const leafProfilePath = (release: UcpRelease) => `${PROFILE_PATH}/${release}`;

/**
 * The checkout capability with what completing asks of the buyer: `config.buyer_approval` says that every order
 * waits for the buyer on the store's approval page (continue_url) and which proofs the buyer may give there.
 */
function checkoutEntry(release: UcpRelease, mode: ApprovalProofMode): CapabilityEntry & { config: Record<string, unknown> } {
  return {
    ...capabilityEntry(Capability.checkout, release),
    config: { buyer_approval: { required: true, where: 'continue_url', proof: APPROVAL_PROOF_METHODS[mode], description: APPROVAL_PROOF_WORDS[mode] } },
  };
}

export interface ProfileOptions {
  paymentHandlers?: Record<string, unknown[]>;
  signingKeys?: PublishedKey[];
  approvalProof?: ApprovalProofMode;
  /** The newest release's profile as a leaf too (served at /.well-known/ucp/{release}): without supported_versions. */
  leaf?: boolean;
}

/** The profile of `release`: the newest release's links the older ones' leaves; an older release's is a leaf. */
export function businessProfile(baseUrl: string, capabilities: readonly CapabilityName[], release: UcpRelease, options: ProfileOptions = {}): BusinessProfile {
  const newest = release === LATEST_UCP_RELEASE;
  const keys = options.signingKeys ? (newest ? { keys: options.signingKeys } : { signing_keys: options.signingKeys }) : {};
  return {
    ucp: {
      version: release,
      // Leaf documents must not carry supported_versions.
      ...(newest && !options.leaf && OLDER_UCP_RELEASES.length > 0
        ? { supported_versions: Object.fromEntries(OLDER_UCP_RELEASES.map((older) => [older, `${baseUrl}${leafProfilePath(older)}`])) }
        : {}),
      services: { [SHOPPING_SERVICE]: [{ ...mcpServiceEntry(release), endpoint: `${baseUrl}${MCP_PATH}` }] },
      capabilities: Object.fromEntries(
        capabilities.map((name) => [
          name,
          [name === Capability.checkout && options.approvalProof ? checkoutEntry(release, options.approvalProof) : capabilityEntry(name, release)],
        ]),
      ),
      payment_handlers: options.paymentHandlers ?? {},
    },
    ...keys,
  };
}
