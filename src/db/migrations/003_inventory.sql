-- Stock moves out of the catalog into its own table: one row per variant, on hand now (reserved and committed
-- units arrive with checkout). A stock change no longer touches the catalog (no catalog reload): each write
-- takes a number from inventory_change_seq, and every instance reads the rows changed since the last number it saw.
create sequence inventory_change_seq;

create table inventory_levels (
  variant_id bigint primary key references variants(id) on delete cascade,
  on_hand integer not null check (on_hand >= 0),
  change_seq bigint not null default nextval('inventory_change_seq'),
  updated_at timestamptz not null default now()
);
create index inventory_levels_change_seq on inventory_levels (change_seq);

insert into inventory_levels (variant_id, on_hand) select id, inventory_quantity from variants;
alter table variants drop column inventory_quantity;

-- A variant an import no longer lists is archived, not deleted: carts (and orders, later) keep pointing at it.
alter table variants add column archived_at timestamptz;

-- Values the store generates once and every instance shares (the key that signs cart tokens).
create table store_settings (
  name text primary key,
  value text not null
);
