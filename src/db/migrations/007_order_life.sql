-- After the sale: what the merchant does to an order (capture, fulfil, cancel, refund), backorders, the store's
-- signing keys, and an outbox that delivers (mail, webhooks) with retries, a deadline, and what went wrong kept.

-- Money the merchant received and gave back; a refund can never exceed what was captured, whatever runs at once.
alter table orders add column captured integer not null default 0 check (captured >= 0);
alter table orders add column refunded integer not null default 0 check (refunded >= 0);
alter table orders add constraint orders_refunds_within_capture check (refunded <= captured);
alter table orders add column canceled_at timestamptz;
alter table orders add column cancel_reason text;
-- Where the agent's platform hears of this order (its profile's order capability config.webhook_url), if anywhere.
alter table orders add column webhook_url text;
alter table checkouts add column webhook_url text;

-- Per line: units shipped, units canceled (never shipped, back in stock), units sold beyond stock (backordered).
alter table order_lines add column fulfilled integer not null default 0 check (fulfilled >= 0);
alter table order_lines add column canceled integer not null default 0 check (canceled >= 0);
alter table order_lines add column backordered integer not null default 0 check (backordered >= 0);
alter table order_lines add constraint order_lines_quantities check (fulfilled + canceled <= quantity and backordered <= quantity);

-- Fulfillment events (UCP fulfillment.events): append-only.
create table order_fulfillments (
  id text primary key,
  order_id text not null references orders(id) on delete cascade,
  type text not null,
  -- [{ "id": line id, "quantity": units }]
  line_items jsonb not null,
  tracking_number text,
  tracking_url text,
  carrier text,
  description text,
  occurred_at timestamptz not null default now()
);
create index order_fulfillments_by_order on order_fulfillments (order_id, occurred_at);

-- Adjustments (UCP adjustments): refunds, captures, cancellations; amounts signed (a refund is negative). Append-only.
create table order_adjustments (
  id text primary key,
  order_id text not null references orders(id) on delete cascade,
  type text not null,
  amount integer not null,
  line_items jsonb not null default '[]',
  reason text,
  occurred_at timestamptz not null default now()
);
create index order_adjustments_by_order on order_adjustments (order_id, occurred_at);

-- The outbox delivers: a row is one message to one place (kind 'mail' or 'webhook'), tried until delivered or
-- its deadline passes. A delivery under way is held by its instance until claimed_until (a process that died
-- mid-send is taken over after that); every instance delivers, and two never hold one row at once.
alter table outbox add column kind text;
alter table outbox add column event_id text;
alter table outbox add column order_id text;
alter table outbox add column next_attempt_at timestamptz not null default now();
alter table outbox add column deadline_at timestamptz;
alter table outbox add column claimed_until timestamptz;
alter table outbox add column last_error text;
alter table outbox add column failed_at timestamptz;
-- Rows written before this version announced orders no dispatcher knew how to deliver: kept, shown as given up.
update outbox set kind = 'legacy', failed_at = now(), deadline_at = now(),
       last_error = 'written before this version of the store delivered messages'
 where sent_at is null;
update outbox set kind = 'legacy', deadline_at = created_at where kind is null;
alter table outbox alter column kind set not null;
alter table outbox alter column deadline_at set not null;
drop index outbox_unsent;
create index outbox_due on outbox (next_attempt_at) where sent_at is null and failed_at is null;
create index outbox_by_order on outbox (order_id);

-- Committing an outbox row wakes the dispatchers of every instance at once (the poll is the safety net).
create function storefront_notify_outbox() returns trigger language plpgsql as $$
begin
  perform pg_notify('storefront_outbox', '');
  return null;
end $$;
create trigger outbox_insert_notify after insert on outbox
  for each statement execute function storefront_notify_outbox();

-- The store's keys for signing what it sends (webhooks): ES256, shared by every instance. A retired key stays
-- published in the profile for a while, so every event signed with it can still be verified.
create table signing_keys (
  kid text primary key,
  private_jwk jsonb not null,
  public_jwk jsonb not null,
  created_at timestamptz not null default now(),
  retired_at timestamptz
);
create unique index signing_keys_one_active on signing_keys ((true)) where retired_at is null;
