/** What the checkout is configured with (src/config.ts reads it from the environment; the checkout owns its shape). */

export const APPROVAL_PROOF_MODES = ['passkey-or-code', 'code', 'link'] as const;
export type ApprovalProofMode = (typeof APPROVAL_PROOF_MODES)[number];

export const POLICY_KINDS = ['terms_of_service', 'privacy_policy', 'refund_policy', 'shipping_policy'] as const;
export type PolicyKind = (typeof POLICY_KINDS)[number];

export interface CheckoutConfig {
  /** How long a checkout lives from creation (CHECKOUT_TTL; UCP's default is 6 hours). */
  ttlSeconds: number;
  /** How long an approval link works once an agent asked to complete (APPROVAL_TTL, default 15 minutes). */
  approvalTtlSeconds: number;
  /** SHIPPING_STANDARD_CENTS, SHIPPING_EXPRESS_CENTS; standard is free from FREE_SHIPPING_OVER_CENTS (0: never). */
  standardShippingCents: number;
  expressShippingCents: number;
  freeShippingOverCents: number;
  /** Sales tax in basis points by US state (TAX_RATES="CA=7.25,NY=4"); none by default. */
  taxRatesBps: Record<string, number>;
  /** Policy pages buyers are shown (POLICY_TERMS_URL, …); by default this store's own /policies pages. */
  policies: Record<PolicyKind, string>;
  /**
   * APPROVAL_PROOF: what the buyer proves on the approval page before an order is placed. `passkey-or-code` (the
   * default): a passkey registered to the checkout's email, or a code mailed to it; `code`: the mailed code only;
   * `link`: nothing beyond holding the link (for development only: an agent holding the link can approve).
   */
  approvalProof: ApprovalProofMode;
}
