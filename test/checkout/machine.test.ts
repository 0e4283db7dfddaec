/** The checkout's transition table (src/checkout/machine.ts), without a database: what may move where, and why not. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CHECKOUT_STATUSES,
  isTerminal,
  refusal,
  statusForInformation,
  TRANSITIONS,
  type Actor,
  type CheckoutStatus,
  type Refusal,
  type TransitionContext,
} from '../../src/checkout/machine.js';

const ACTORS: Actor[] = ['agent', 'buyer', 'system', 'merchant'];
const OPEN: CheckoutStatus[] = ['incomplete', 'ready_for_complete', 'requires_escalation'];

const context = (overrides: Partial<TransitionContext> = {}): TransitionContext => ({
  actor: 'agent',
  blockers: [],
  approvedByBuyer: false,
  expired: false,
  ...overrides,
});

const missingEmail: Refusal = { code: 'missing', content: "The buyer's email is needed.", field: ['buyer', 'email'] };
const missingAddress: Refusal = { code: 'missing', content: 'A US shipping address is needed.', field: ['destination'] };

/** The spec's table: every allowed move, with a context its guard lets through. */
const ALLOWED: [CheckoutStatus, CheckoutStatus, TransitionContext][] = [
  ['incomplete', 'incomplete', context({ blockers: [missingEmail] })],
  ['incomplete', 'ready_for_complete', context()],
  ['incomplete', 'canceled', context({ actor: 'merchant' })],
  ['ready_for_complete', 'incomplete', context({ blockers: [missingEmail] })],
  ['ready_for_complete', 'ready_for_complete', context()],
  ['ready_for_complete', 'requires_escalation', context({ actor: 'agent' })],
  ['ready_for_complete', 'complete_in_progress', context({ actor: 'buyer', approvedByBuyer: true })],
  ['ready_for_complete', 'canceled', context({ actor: 'buyer' })],
  ['requires_escalation', 'incomplete', context({ actor: 'system', blockers: [missingAddress] })],
  ['requires_escalation', 'ready_for_complete', context({ actor: 'system' })],
  ['requires_escalation', 'requires_escalation', context({ actor: 'agent' })],
  ['requires_escalation', 'complete_in_progress', context({ actor: 'buyer', approvedByBuyer: true })],
  ['requires_escalation', 'canceled', context({ actor: 'buyer' })],
  ['complete_in_progress', 'completed', context({ actor: 'system' })],
  // A hosted payment page: the buyer left it without paying (or it expired, or the hold was released).
  ['complete_in_progress', 'requires_escalation', context({ actor: 'buyer' })],
  ['complete_in_progress', 'canceled', context({ actor: 'system' })],
];

const key = (from: CheckoutStatus, to: CheckoutStatus) => `${from} -> ${to}`;

function assertRefusal(value: Refusal | undefined, code: string, message: string): asserts value is Refusal {
  assert.ok(value, `${message}: expected a refusal`);
  assert.equal(value.code, code, message);
  assert.equal(typeof value.content, 'string');
  assert.ok(value.content.trim().length > 10, `${message}: the refusal says why in words`);
}

describe('checkout machine: the transition table', () => {
  it('the table holds exactly the allowed moves of the spec, no more', () => {
    const inTable = Object.entries(TRANSITIONS).flatMap(([from, moves]) => Object.keys(moves).map((to) => key(from as CheckoutStatus, to as CheckoutStatus)));
    assert.deepEqual(inTable.sort(), ALLOWED.map(([from, to]) => key(from, to)).sort());
    assert.deepEqual(Object.keys(TRANSITIONS).sort(), [...CHECKOUT_STATUSES].sort());
  });

  for (const [from, to, allowing] of ALLOWED) {
    it(`${key(from, to)} is allowed for ${allowing.actor} when its guard is satisfied`, () => {
      assert.equal(refusal(from, to, allowing), undefined);
    });
  }

  it('every move not in the table is refused with a code and words, whoever asks and whatever is present', () => {
    const allowed = new Set(ALLOWED.map(([from, to]) => key(from, to)));
    let refused = 0;
    for (const from of CHECKOUT_STATUSES) {
      for (const to of CHECKOUT_STATUSES) {
        if (allowed.has(key(from, to))) continue;
        for (const actor of ACTORS) {
          const answer = refusal(from, to, context({ actor, approvedByBuyer: true }));
          assertRefusal(answer, isTerminal(from) ? 'checkout_closed' : 'not_allowed', `${key(from, to)} by ${actor}`);
          refused++;
        }
      }
    }
    // 36 pairs, 16 allowed: 20 refused, for each of 4 actors.
    assert.equal(refused, 20 * ACTORS.length);
  });

  it('a move out of the table names both statuses in words', () => {
    const answer = refusal('incomplete', 'complete_in_progress', context({ actor: 'buyer', approvedByBuyer: true }));
    assertRefusal(answer, 'not_allowed', 'incomplete -> complete_in_progress');
    assert.match(answer.content, /incomplete/);
    assert.match(answer.content, /complete in progress/);
  });

  it('complete_in_progress cannot be changed by an agent or sent back to its information: only the store completes it', () => {
    for (const to of ['incomplete', 'ready_for_complete'] as const) {
      assertRefusal(refusal('complete_in_progress', to, context({ actor: 'system' })), 'not_allowed', `complete_in_progress -> ${to}`);
    }
    for (const to of ['canceled', 'requires_escalation'] as const) {
      for (const actor of ['agent', 'merchant'] as const) {
        assertRefusal(refusal('complete_in_progress', to, context({ actor })), 'payment_in_progress', `complete_in_progress -> ${to} by ${actor}`);
      }
    }
    for (const actor of ['agent', 'buyer', 'merchant'] as const) {
      assertRefusal(refusal('complete_in_progress', 'completed', context({ actor, approvedByBuyer: true })), 'not_allowed', `completed by ${actor}`);
    }
  });
});

describe('checkout machine: completed and canceled are immutable', () => {
  for (const from of ['completed', 'canceled'] as const) {
    it(`a ${from} checkout refuses every move, even to itself, with checkout_closed`, () => {
      assert.equal(isTerminal(from), true);
      for (const to of CHECKOUT_STATUSES) {
        for (const actor of ACTORS) {
          const answer = refusal(from, to, context({ actor, approvedByBuyer: true }));
          assertRefusal(answer, 'checkout_closed', `${key(from, to)} by ${actor}`);
          assert.match(answer.content, new RegExp(from));
        }
      }
    });
  }

  it('no open status is terminal', () => {
    for (const status of [...OPEN, 'complete_in_progress'] as const) assert.equal(isTerminal(status), false, status);
  });
});

describe('checkout machine: completing needs the buyer', () => {
  for (const from of ['ready_for_complete', 'requires_escalation'] as const) {
    it(`an agent asking ${from} -> complete_in_progress is refused with buyer_approval_required, even with everything present`, () => {
      const answer = refusal(from, 'complete_in_progress', context({ actor: 'agent', blockers: [], approvedByBuyer: true, expired: false }));
      assertRefusal(answer, 'buyer_approval_required', from);
      assert.match(answer.content, /approv/);
    });
  }

  it('the system and the merchant cannot complete for the buyer either', () => {
    for (const actor of ['system', 'merchant'] as const) {
      assertRefusal(refusal('ready_for_complete', 'complete_in_progress', context({ actor, approvedByBuyer: true })), 'buyer_approval_required', actor);
    }
  });

  it('the buyer without an approval of exactly this checkout is refused with buyer_approval_required', () => {
    assertRefusal(refusal('requires_escalation', 'complete_in_progress', context({ actor: 'buyer', approvedByBuyer: false })), 'buyer_approval_required', 'buyer');
  });

  it("only an agent's or the buyer's own request (the browser checkout) asks the buyer for approval", () => {
    for (const from of ['ready_for_complete', 'requires_escalation'] as const) {
      assert.equal(refusal(from, 'requires_escalation', context({ actor: 'buyer' })), undefined);
      assert.equal(refusal(from, 'requires_escalation', context({ actor: 'agent' })), undefined);
    }
    for (const actor of ['system', 'merchant'] as const) {
      assertRefusal(refusal('ready_for_complete', 'requires_escalation', context({ actor })), 'not_allowed', actor);
    }
  });
});

describe('checkout machine: missing information and expiry', () => {
  it('the first blocker is the reason when information is missing', () => {
    const blockers = [missingEmail, missingAddress];
    assert.deepEqual(refusal('incomplete', 'ready_for_complete', context({ blockers })), missingEmail);
    assert.deepEqual(refusal('requires_escalation', 'ready_for_complete', context({ blockers })), missingEmail);
    assert.deepEqual(refusal('ready_for_complete', 'requires_escalation', context({ actor: 'agent', blockers })), missingEmail);
    // Missing information comes before the buyer's approval: an agent is told what is missing, not to ask the buyer.
    assert.deepEqual(refusal('ready_for_complete', 'complete_in_progress', context({ actor: 'agent', blockers })), missingEmail);
    assert.deepEqual(refusal('requires_escalation', 'complete_in_progress', context({ actor: 'buyer', approvedByBuyer: true, blockers: [missingAddress] })), missingAddress);
  });

  it('an expired checkout refuses every move but cancel, before looking at anything else', () => {
    const expired = context({ expired: true, blockers: [missingEmail] });
    for (const [from, to] of ALLOWED) {
      const answer = refusal(from, to, { ...expired, actor: to === 'requires_escalation' ? 'agent' : to === 'completed' ? 'system' : 'buyer', approvedByBuyer: true });
      if (to === 'canceled' || to === 'completed') {
        assert.equal(answer, undefined, `${key(from, to)} stays possible when expired`);
      } else {
        assertRefusal(answer, 'checkout_expired', key(from, to));
        assert.match(answer.content, /expired/);
      }
    }
  });

  it('information alone makes an open checkout ready or incomplete', () => {
    assert.equal(statusForInformation([]), 'ready_for_complete');
    assert.equal(statusForInformation([missingEmail]), 'incomplete');
  });
});
