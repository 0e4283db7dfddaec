-- Checkouts, the buyer's approval, orders, payments and the outbox. A checkout is completed only on a human's
-- approval (never by an agent alone): approving takes stock, places the order, records the payment and writes
-- the outbox row in one transaction.

create table checkouts (
  id text primary key,
  status text not null check (status in ('incomplete', 'requires_escalation', 'ready_for_complete', 'complete_in_progress', 'completed', 'canceled')),
  -- The cart it was made from: one open checkout per cart (create_checkout with that cart answers it again).
  cart_token text,
  -- Lines as the agent or buyer set them: variant, quantity, selling plan, properties, and the unit price quoted then.
  lines jsonb not null,
  buyer jsonb not null default '{}',
  destination jsonb,
  shipping_option text,
  channel text not null check (channel in ('agent', 'browser')),
  version integer not null default 0,
  order_id text,
  expires_at timestamptz not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index checkouts_one_open_per_cart on checkouts (cart_token)
  where cart_token is not null and status not in ('completed', 'canceled');
create index checkouts_open_by_expiry on checkouts (expires_at) where status not in ('completed', 'canceled');

-- Every change of status: from, to, who (agent, buyer, system, merchant), why, when.
create table checkout_transitions (
  id bigint generated always as identity primary key,
  checkout_id text not null references checkouts(id) on delete cascade,
  from_status text,
  to_status text not null,
  actor text not null check (actor in ('agent', 'buyer', 'system', 'merchant')),
  reason text,
  at timestamptz not null default now()
);
create index checkout_transitions_by_checkout on checkout_transitions (checkout_id, id);

-- A request for the buyer's approval: the link's secret (256 random bits; get_checkout shows the link again while
-- it is pending), bound to the digest of the exact checkout it shows, used once, and expiring.
create table checkout_approvals (
  token text primary key,
  checkout_id text not null references checkouts(id) on delete cascade,
  digest text not null,
  -- What the buyer is shown (lines, address, option, totals), to say what changed if the checkout moves on.
  summary jsonb not null,
  -- Signs the approval form's token (no cross-site submission).
  form_secret text not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz,
  voided_at timestamptz,
  void_reason text
);
create index checkout_approvals_by_checkout on checkout_approvals (checkout_id);

create sequence order_number_seq start 1001;

create table orders (
  id text primary key,
  number bigint not null unique default nextval('order_number_seq'),
  checkout_id text not null unique references checkouts(id),
  status text not null check (status in ('placed', 'canceled')),
  channel text not null check (channel in ('agent', 'browser')),
  currency text not null,
  buyer_email text not null,
  buyer jsonb not null,
  shipping_address jsonb not null,
  shipping_option jsonb not null,
  subtotal integer not null check (subtotal >= 0),
  shipping integer not null check (shipping >= 0),
  tax integer not null check (tax >= 0),
  total integer not null check (total >= 0),
  payment_state text not null,
  created_at timestamptz not null default now()
);
create index orders_newest_first on orders (created_at desc, number desc);

-- Order lines copy what the buyer approved: a later catalog change never rewrites an order.
create table order_lines (
  order_id text not null references orders(id) on delete cascade,
  line_id text not null,
  position integer not null,
  variant_id bigint not null,
  product_id bigint not null,
  sku text,
  product_title text not null,
  variant_title text not null,
  title text not null,
  quantity integer not null check (quantity > 0),
  unit_price integer not null check (unit_price >= 0),
  line_total integer not null check (line_total >= 0),
  selling_plan_id bigint,
  properties jsonb not null default '{}',
  primary key (order_id, line_id)
);

-- What a payment handler did for an order. No card data, ever.
create table payments (
  id text primary key,
  order_id text not null references orders(id) on delete cascade,
  handler text not null,
  state text not null check (state in ('pending', 'authorized', 'captured', 'voided', 'failed')),
  amount integer not null check (amount >= 0),
  currency text not null,
  created_at timestamptz not null default now()
);
create index payments_by_order on payments (order_id);

-- Messages for the world outside the database (confirmation email, order events), written in the transaction that
-- caused them and sent after commit.
create table outbox (
  id bigint generated always as identity primary key,
  topic text not null,
  payload jsonb not null,
  created_at timestamptz not null default now(),
  attempts integer not null default 0,
  sent_at timestamptz
);
create index outbox_unsent on outbox (id) where sent_at is null;
