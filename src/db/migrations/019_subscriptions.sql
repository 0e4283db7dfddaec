-- Subscribe & save: what was bought on a selling plan is kept, and becomes a subscription whose every renewal is a
-- checkout the buyer approves (no payment is ever taken without them). The cart's note and attributes reach the order.

-- The cart's note and attributes, carried by its checkout to the order (the mails, the merchant).
alter table checkouts add column note text;
alter table checkouts add column attributes jsonb not null default '{}';
alter table orders add column note text;
alter table orders add column attributes jsonb not null default '{}';
-- The plan a line was bought on, as its terms were then (name, interval, saving, the one-time unit price).
alter table order_lines add column selling_plan jsonb;

-- One subscription per order, plan and address: its lines and terms are the buyer's; its renewals are checkouts.
create table subscriptions (
  id bigint generated always as identity primary key,
  state text not null check (state in ('active', 'paused', 'canceled')),
  buyer_email text not null,
  buyer jsonb not null,
  shipping_address jsonb not null,
  shipping_option text not null,
  -- The plan's terms as bought (kept when the catalog drops or changes the plan): name, interval, discount.
  plan jsonb not null,
  -- [{variantId, productId, title, quantity}]
  lines jsonb not null,
  -- The date of the next delivery: its renewal is produced SUBSCRIPTION_NOTICE_DAYS before.
  next_at timestamptz not null,
  origin_order_id text not null references orders(id),
  created_at timestamptz not null,
  updated_at timestamptz not null,
  canceled_at timestamptz,
  cancel_reason text
);
create index subscriptions_due on subscriptions (next_at) where state = 'active';
-- A buyer's subscriptions, whatever the case their address is typed in.
create index subscriptions_by_buyer on subscriptions (lower(buyer_email), id);
create index subscriptions_by_origin on subscriptions (origin_order_id);

-- A renewal: one per subscription and delivery date (produced once, across instances and restarts), its checkout
-- and, once the buyer approved it, its order.
create table subscription_renewals (
  id bigint generated always as identity primary key,
  subscription_id bigint not null references subscriptions(id),
  due_at timestamptz not null,
  state text not null check (state in ('pending', 'approved', 'skipped', 'replaced')),
  checkout_id text not null unique references checkouts(id),
  order_id text references orders(id),
  -- The buyer's link to it (256 random bits), as an approval link is kept: every mail about it carries the same link.
  link_token text not null unique,
  produced_at timestamptz not null,
  remind_at timestamptz not null,
  skip_at timestamptz not null,
  reminded_at timestamptz,
  closed_at timestamptz,
  close_reason text
);
create unique index subscription_renewals_once on subscription_renewals (subscription_id, due_at) where state <> 'replaced';
create index subscription_renewals_pending on subscription_renewals (remind_at) where state = 'pending';
create index subscription_renewals_by_subscription on subscription_renewals (subscription_id, id);

-- What happened to a subscription, by whom: created, renewal mailed, reminded, approved, skipped, changed, canceled.
create table subscription_events (
  id bigint generated always as identity primary key,
  subscription_id bigint not null references subscriptions(id),
  at timestamptz not null,
  actor text not null,
  kind text not null,
  detail text not null default ''
);
create index subscription_events_by_subscription on subscription_events (subscription_id, id);

-- The buyer's links to their subscriptions page: a digest of a 256-bit secret, for one mailbox, expiring.
create table subscription_links (
  digest text primary key,
  buyer_email text not null,
  created_at timestamptz not null,
  expires_at timestamptz not null
);
create index subscription_links_expiry on subscription_links (expires_at);
-- How many links a mailbox was sent in the last hour (a request for one is refused past a few).
create index subscription_links_by_buyer on subscription_links (lower(buyer_email), created_at);

-- A code mailed with a subscriptions link, for the buyer who would rather type it on the page that asked (the same
-- proof: the mailbox). A digest only, for 15 minutes, five tries.
create table subscription_codes (
  id bigint generated always as identity primary key,
  buyer_email text not null,
  code_digest text not null,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  attempts integer not null default 0,
  used_at timestamptz
);
create index subscription_codes_by_buyer on subscription_codes (lower(buyer_email), id);
