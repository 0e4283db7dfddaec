-- Idempotency keys (UCP meta["idempotency-key"]: cancel_cart now, complete_checkout and cancel_checkout next).
-- A key is claimed by the first request ('running'); its answer is stored when it is done and replayed to any
-- instance for 24 hours. The same key with another tool, resource or payload is a conflict.
create table idempotency_keys (
  key text primary key,
  tool text not null,
  resource text not null,
  payload_hash text not null,
  state text not null check (state in ('running', 'done')),
  answer text,
  claimed_at timestamptz not null default now(),
  expires_at timestamptz not null
);
create index idempotency_keys_expires_at on idempotency_keys (expires_at);
