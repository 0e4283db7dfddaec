-- The tokens of carts that were closed (their order was placed) or canceled. A token the store signed may start a
-- cart while it has none (the empty cart a new visitor is shown keeps its token at the first change), but never
-- again once its cart is gone: whoever held it (an agent given the cart, the link in a continue_url) must not see
-- the next cart the buyer's browser starts under the same cookie. Kept for the cart lifetime after closing, by
-- which time the cookie has expired.
create table closed_cart_tokens (
  token text primary key,
  closed_at timestamptz not null default now()
);
