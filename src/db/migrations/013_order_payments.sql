-- The order's payment, held by a provider (src/payments/payment-provider.ts): `manual` (the merchant's instructions,
-- the merchant says when the money arrived) or `stripe` (a hold on the buyer's card, captured later). Orders placed
-- before this version were all manual.
alter table orders add column payment_provider text not null default 'manual' check (payment_provider in ('manual', 'stripe'));
-- Cents the provider holds for the order (0 for manual), and when that hold lapses (Stripe: 7 days after authorization).
alter table orders add column payment_authorized integer not null default 0 check (payment_authorized >= 0);
alter table orders add column payment_authorized_until timestamptz;
-- Manual: when payment is due, and the merchant's PAYMENT_INSTRUCTIONS as they were when the order was placed.
alter table orders add column payment_due_at timestamptz;
alter table orders add column payment_instructions text;
-- The provider's reference of the payment (a Stripe PaymentIntent id): for the store and the merchant, never buyers.
alter table orders add column payment_reference text;
create unique index orders_by_payment_reference on orders (payment_provider, payment_reference) where payment_reference is not null;
-- The buyer's bank disputed the payment (a chargeback): kept once raised, whatever the dispute's outcome.
alter table orders add column payment_disputed boolean not null default false;
-- Cents reserved by a capture or refund the provider is being asked for (payment_operations 'requested'): they
-- count against what may still be captured or refunded, so two racing refunds never give back more than captured.
alter table orders add column capturing integer not null default 0 check (capturing >= 0);
alter table orders add column refunding integer not null default 0 check (refunding >= 0);
-- When the merchant was warned that the provider's hold lapses soon (one warning per order).
alter table orders add column payment_expiry_warned_at timestamptz;

update orders set payment_due_at = created_at + interval '7 days' where payment_state = 'pending';

alter table orders add constraint orders_payment_state check (
  payment_state in ('pending', 'authorized', 'captured', 'partially_refunded', 'refunded', 'voided', 'failed', 'disputed')
);
alter table orders drop constraint orders_refunds_within_capture;
alter table orders add constraint orders_refunds_within_capture check (refunded + refunding <= captured);
alter table orders add constraint orders_capture_within_total check (captured + capturing <= total);

alter table payments drop constraint payments_state_check;
alter table payments add constraint payments_state_check check (
  state in ('pending', 'authorized', 'captured', 'partially_refunded', 'refunded', 'voided', 'failed', 'disputed')
);

-- Each call to the provider that moves money (capture, refund, cancel): reserved `requested` with its amount and
-- idempotency key in one transaction, the provider called outside any transaction with that key, then `succeeded`
-- or `failed` in a second one. A `requested` row left by a process that stopped mid-call is asked again with the
-- same key (the provider answers what it did the first time).
create table payment_operations (
  id text primary key,
  order_id text not null references orders(id) on delete cascade,
  kind text not null check (kind in ('capture', 'refund', 'cancel')),
  amount integer not null check (amount >= 0),
  state text not null check (state in ('requested', 'succeeded', 'failed')),
  idempotency_key text not null unique,
  -- The provider's id of what it did (a Stripe refund id), when it has one.
  provider_reference text,
  reason text,
  failure text,
  requested_at timestamptz not null default now(),
  settled_at timestamptz
);
create index payment_operations_by_order on payment_operations (order_id, requested_at);
create index payment_operations_requested on payment_operations (requested_at) where state = 'requested';

-- Provider events (webhooks) already applied: an event delivered twice is applied once.
create table payment_provider_events (
  provider text not null,
  event_id text not null,
  type text not null,
  order_id text references orders(id) on delete set null,
  received_at timestamptz not null default now(),
  primary key (provider, event_id)
);
