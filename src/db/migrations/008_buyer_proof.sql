-- What a buyer proves on the approval page before an order is placed: a passkey registered to the checkout's
-- email, or a code mailed to it. Emails are kept lowercased (the proof is for the mailbox, whatever its case).

-- A buyer's passkeys (WebAuthn credentials). A buyer is an email holding at least one.
create table buyer_passkeys (
  -- The credential id the authenticator made, base64url.
  id text primary key,
  email text not null,
  public_key bytea not null,
  -- The authenticator's signature counter (0 when it keeps none); a lower one than stored is refused.
  counter bigint not null default 0 check (counter >= 0),
  transports text[] not null default '{}',
  -- singleDevice or multiDevice (synced); whether it is backed up. For the merchant's listing.
  device_type text not null,
  backed_up boolean not null,
  created_at timestamptz not null default now(),
  last_used_at timestamptz
);
create index buyer_passkeys_by_email on buyer_passkeys (email);

-- Codes mailed to a checkout's buyer, each bound to one approval link. Only a hash of the code is kept.
create table approval_codes (
  id bigserial primary key,
  approval_token text not null references checkout_approvals(token) on delete cascade,
  checkout_id text not null,
  email text not null,
  code_hash bytea not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  -- Wrong codes tried against it; at the limit it is locked and a new code is needed.
  attempts integer not null default 0,
  used_at timestamptz
);
create index approval_codes_by_approval on approval_codes (approval_token, created_at);
-- The sending limits count codes per checkout and per email over the last hour.
create index approval_codes_by_checkout on approval_codes (checkout_id, created_at);
create index approval_codes_by_email on approval_codes (email, created_at);

-- WebAuthn challenges the store issued, single use: for an approval (derived from its digest and a nonce) or for
-- registering a passkey after a code proved the email.
create table webauthn_challenges (
  id text primary key,
  purpose text not null check (purpose in ('approve', 'register')),
  approval_token text references checkout_approvals(token) on delete cascade,
  email text not null,
  challenge text not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);

-- The right to register a passkey, given to the browser that just proved an email with a code (its cookie holds
-- the secret; only its hash is kept), for a short while, on that order's page.
create table passkey_enrollments (
  secret_hash bytea primary key,
  email text not null,
  order_id text not null references orders(id) on delete cascade,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);
