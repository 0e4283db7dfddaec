-- The UCP release of the agent that created or last updated a checkout (negotiated from its profile): the order's
-- events go to that agent's platform in that release. The commerce door's own record; the checkout knows nothing of it.
create table ucp_checkout_releases (
  checkout_id text primary key references checkouts (id) on delete cascade,
  release text not null
);
