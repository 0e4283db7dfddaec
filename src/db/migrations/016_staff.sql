-- The merchant's staff: who may sign in to the admin (a passkey, or where none can exist a sign-in link the owner
-- prints), their sessions, and the audit log of every admin and terminal action. Emails are kept lowercased.
-- Secrets (links, sessions) are never stored: only their sha256.

create table staff (
  id text primary key,
  email text not null unique,
  role text not null check (role in ('owner', 'staff')),
  added_at timestamptz not null default now(),
  -- Who added them: a staff member's email, or 'terminal'.
  added_by text not null,
  revoked_at timestamptz,
  last_sign_in_at timestamptz
);

-- A staff member's passkeys (WebAuthn credentials, discoverable). Removed when the person is revoked.
create table staff_passkeys (
  -- The credential id the authenticator made, base64url.
  id text primary key,
  staff_id text not null references staff(id) on delete cascade,
  public_key bytea not null,
  counter bigint not null default 0 check (counter >= 0),
  transports text[] not null default '{}',
  device_type text not null,
  backed_up boolean not null,
  created_at timestamptz not null default now(),
  last_used_at timestamptz
);
create index staff_passkeys_by_staff on staff_passkeys (staff_id);

-- Single-use links the store hands out: an enrollment (create a passkey, 30 minutes) or a sign-in (5 minutes).
create table staff_links (
  secret_hash bytea primary key,
  staff_id text not null references staff(id) on delete cascade,
  kind text not null check (kind in ('enroll', 'sign_in')),
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);
create index staff_links_by_staff on staff_links (staff_id);
create index staff_links_by_expiry on staff_links (expires_at);

-- WebAuthn challenges the admin issued, single use: to create a passkey (bound to an enrollment link) or to sign in.
create table staff_challenges (
  id text primary key,
  purpose text not null check (purpose in ('enroll', 'sign_in')),
  link_hash bytea,
  challenge text not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);
create index staff_challenges_by_expiry on staff_challenges (expires_at);

-- Sessions: the cookie holds the secret, the row its sha256. Ended at sign-out, at rotation, or when the person is revoked.
create table staff_sessions (
  id bytea primary key,
  staff_id text not null references staff(id) on delete cascade,
  csrf_token text not null,
  started_at timestamptz not null,
  last_seen_at timestamptz not null,
  expires_at timestamptz not null,
  ended_at timestamptz
);
create index staff_sessions_by_staff on staff_sessions (staff_id) where ended_at is null;
create index staff_sessions_by_expiry on staff_sessions (expires_at);

create table audit_log (
  id bigint generated always as identity primary key,
  at timestamptz not null default now(),
  staff_id text,              -- null: the terminal (CLI)
  actor text not null,        -- the staff member's email, or 'terminal'
  action text not null,       -- 'order.capture' 'order.fulfill' 'order.cancel' 'order.refund' 'product.update'
                              -- 'catalog.import' 'stock.set' 'staff.add' 'staff.revoke' 'outbox.retry' 'buyer.revoke' ...
  order_id text,
  product_id bigint,
  summary text not null       -- one line for a person: "refunded $5.00 (damaged)"
);
create index audit_log_by_order on audit_log (order_id, id) where order_id is not null;
create index audit_log_by_product on audit_log (product_id, id) where product_id is not null;
