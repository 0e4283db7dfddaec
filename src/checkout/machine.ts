/**
 * The checkout's states and the moves between them, read at a glance: one table of allowed transitions, each
 * with the guard that may refuse it. A guard returns the reason it refuses (a stable code, the field at fault, and
 * default words with no protocol in them), and each door renders that reason for its client. "Needs the buyer's approval" is one such reason: an agent asking
 * to complete is refused with it, and the checkout is escalated to the buyer instead. No I/O here.
 *
 *   incomplete  <->  ready_for_complete     (information complete or missing again)
 *        \            /          \
 *         requires_escalation  <- an agent (or the buyer, on the store's checkout page) asked to complete:
 *                 |                 the buyer must approve on the store's approval page
 *         complete_in_progress   (the buyer approved: stock, order and payment, in one transaction; with a
 *                 |               hosted payment page, also while the buyer pays there, and back to
 *                 |               requires_escalation when they leave it without paying or the hold is released)
 *             completed          (immutable)
 *   canceled from any state before completed; an expired checkout is canceled (immutable).
 */

import type { FactParams, FieldPath } from './fields.js';

export const CHECKOUT_STATUSES = ['incomplete', 'requires_escalation', 'ready_for_complete', 'complete_in_progress', 'completed', 'canceled'] as const;
export type CheckoutStatus = (typeof CHECKOUT_STATUSES)[number];

/** Who moved the checkout: the agent (MCP), the buyer (the approval page), the store itself, or the merchant. */
export type Actor = 'agent' | 'buyer' | 'system' | 'merchant';

/**
 * Why a checkout moved, where a client must be told: the buyer declined it on the approval page, it expired, someone
 * (the move's actor) canceled it, or items sold out while it waited for the buyer's approval (back to what its
 * information says, the approval void).
 * Kept with the move; each door says it in its own words.
 */
export const MOVE_CODES = ['checkout_declined', 'checkout_expired', 'checkout_canceled', 'sold_out_at_approval'] as const;
export type MoveCode = (typeof MOVE_CODES)[number];

/**
 * Why something cannot be done, as a fact: a stable code, the field at fault and the figures a door needs to say
 * it in its own words. `content` is a default sentence with no protocol words in it, kept because refusals are
 * also written down when they happen (the checkout's history, a voided approval's reason) and for a door with
 * nothing better to say.
 */
export interface Refusal {
  code: string;
  content: string;
  field?: FieldPath;
  params?: FactParams;
}

/** A request the checkout refuses (a closed checkout, an unknown variant): nothing changed. `field`: the one at fault. */
export class CheckoutRefused extends Error {
  readonly field: FieldPath | undefined;

  constructor(readonly reason: Refusal) {
    super(reason.content);
    this.name = 'CheckoutRefused';
    this.field = reason.field;
  }
}

/** What a guard may look at. */
export interface TransitionContext {
  actor: Actor;
  /** Why the checkout cannot be completed yet (missing buyer email, address, option; unavailable lines), if anything. */
  blockers: readonly Refusal[];
  /** The buyer approved, on the store's page, exactly what the checkout is now. */
  approvedByBuyer: boolean;
  expired: boolean;
}

type Guard = (context: TransitionContext) => Refusal | undefined;

const TERMINAL: ReadonlySet<CheckoutStatus> = new Set(['completed', 'canceled']);

export function isTerminal(status: CheckoutStatus): boolean {
  return TERMINAL.has(status);
}

const notExpired: Guard = ({ expired }) =>
  expired ? { code: 'checkout_expired', content: 'This checkout has expired; start a new one.' } : undefined;

const informationComplete: Guard = (context) => notExpired(context) ?? context.blockers[0];

const anyone: Guard = () => undefined;

/** Completing is the buyer's act, on the store's approval page; an agent is always refused, whatever it sends. */
const approvedByBuyer: Guard = (context) => {
  const refused = informationComplete(context);
  if (refused) return refused;
  if (context.actor !== 'buyer' || !context.approvedByBuyer) {
    return { code: 'buyer_approval_required', content: "The buyer must approve this order on the store's approval page before it is placed; nothing is charged until then." };
  }
  return undefined;
};

/**
 * An agent's request to complete, or the buyer's own from the store's checkout page, asks the buyer to approve:
 * either way the order is placed only by the approval, with the buyer's proof.
 */
const askTheBuyer: Guard = (context) => {
  const refused = informationComplete(context);
  if (refused) return refused;
  return context.actor === 'agent' || context.actor === 'buyer'
    ? undefined
    : { code: 'not_allowed', content: "Only the agent's or the buyer's request to complete asks the buyer for approval." };
};

const onlyTheStore: Guard = ({ actor }) =>
  actor === 'system' ? undefined : { code: 'not_allowed', content: 'Only the store completes an approved checkout.' };

/** The buyer left the payment page without paying (or it expired, or the hold was released): the approval waits again. */
const notWhilePaying: Guard = ({ actor }) =>
  actor === 'buyer' || actor === 'system'
    ? undefined
    : { code: 'payment_in_progress', content: 'The buyer is paying for this checkout on the payment page; it cannot change until they finish or leave that page.' };

const backToTheBuyer: Guard = (context) => notExpired(context) ?? notWhilePaying(context);

/** Every allowed move, and its guard. A move not in this table is refused. */
export const TRANSITIONS: Readonly<Record<CheckoutStatus, Partial<Record<CheckoutStatus, Guard>>>> = {
  incomplete: {
    incomplete: notExpired,
    ready_for_complete: informationComplete,
    canceled: anyone,
  },
  ready_for_complete: {
    incomplete: notExpired,
    ready_for_complete: informationComplete,
    requires_escalation: askTheBuyer,
    complete_in_progress: approvedByBuyer,
    canceled: anyone,
  },
  requires_escalation: {
    incomplete: notExpired,
    ready_for_complete: informationComplete,
    requires_escalation: askTheBuyer,
    complete_in_progress: approvedByBuyer,
    canceled: anyone,
  },
  complete_in_progress: {
    completed: onlyTheStore,
    requires_escalation: backToTheBuyer,
    // Expired while the buyer pays: a hold made meanwhile is released when the buyer comes back (an agent cannot).
    canceled: notWhilePaying,
  },
  completed: {},
  canceled: {},
};

/** Why `from -> to` is refused in this context, or undefined when it is allowed. */
export function refusal(from: CheckoutStatus, to: CheckoutStatus, context: TransitionContext): Refusal | undefined {
  if (isTerminal(from)) {
    return { code: 'checkout_closed', content: `This checkout is ${from} and can no longer change.`, params: { status: from } };
  }
  const guard = TRANSITIONS[from][to];
  if (!guard) return { code: 'not_allowed', content: `A checkout that is ${from.replace(/_/g, ' ')} cannot become ${to.replace(/_/g, ' ')}.`, params: { from, to } };
  return guard(context);
}

/** Where information alone puts an open checkout: ready when nothing blocks completion. */
export function statusForInformation(blockers: readonly Refusal[]): 'incomplete' | 'ready_for_complete' {
  return blockers.length === 0 ? 'ready_for_complete' : 'incomplete';
}
