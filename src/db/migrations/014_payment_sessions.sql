-- The approval with a hosted payment page (PAYMENT_PROVIDER=stripe): the buyer's proof is given before the buyer is
-- sent to pay, so the approval keeps that it was proven (how, when), and the payment session it sent the buyer to
-- (the provider's session id, its page's URL, when it stops taking payment). When the buyer comes back, or the
-- provider's event says the session completed, the order is placed with the proof already given.
alter table checkout_approvals add column proven_by text check (proven_by in ('passkey', 'code', 'link'));
alter table checkout_approvals add column proven_at timestamptz;
alter table checkout_approvals add column payment_session_id text;
alter table checkout_approvals add column payment_session_url text;
alter table checkout_approvals add column payment_session_expires_at timestamptz;
-- Payment sessions begun for this approval (each with an idempotency key of its own: a retry of one gives the same session).
alter table checkout_approvals add column payment_attempts integer not null default 0 check (payment_attempts >= 0);
create unique index checkout_approvals_by_payment_session on checkout_approvals (payment_session_id) where payment_session_id is not null;
