-- The UCP release of the agent that created or last updated a checkout (negotiated from its profile): the order's
-- events go to that agent's platform in that release. The commerce door's own record; the checkout knows nothing of it.
create table ucp_checkout_releases (
  checkout_id text primary key references checkouts (id) on delete cascade,
  release text not null
);
-- Every checkout before this migration was made by an agent speaking 2026-04-08, the one release the store spoke then.
insert into ucp_checkout_releases (checkout_id, release) select id, '2026-04-08' from checkouts where channel = 'agent';

-- A checkout's shipping address is kept in the domain's names (streetAddress, locality, …), not in one protocol's
-- (street_address, address_locality, …): each door maps its own names onto them.
update checkouts
set destination = jsonb_strip_nulls(jsonb_build_object(
  'firstName', destination ->> 'first_name',
  'lastName', destination ->> 'last_name',
  'streetAddress', destination ->> 'street_address',
  'extendedAddress', destination ->> 'extended_address',
  'locality', destination ->> 'address_locality',
  'region', destination ->> 'address_region',
  'postalCode', destination ->> 'postal_code',
  'country', destination ->> 'address_country',
  'phoneNumber', destination ->> 'phone_number'
))
where destination is not null and jsonb_typeof(destination) = 'object';
