-- Instances follow each other's catalog and stock changes by LISTEN/NOTIFY instead of polling for them. The
-- triggers cover every writer (an import, the stock command, an approval taking stock); NOTIFY is delivered on
-- commit, so a change rolled back announces nothing. The payload is the new catalog version or change number.
create function storefront_notify_catalog() returns trigger language plpgsql as $$
begin
  perform pg_notify('storefront_catalog', new.version::text);
  return null;
end $$;

create trigger catalog_version_notify after update on catalog_version
  for each row execute function storefront_notify_catalog();

-- Once per statement, not per row: an import writing 10,000 levels sends one notification.
create function storefront_notify_stock() returns trigger language plpgsql as $$
declare
  seq bigint;
begin
  select max(change_seq) into seq from changed_levels;
  if seq is not null then
    perform pg_notify('storefront_stock', seq::text);
  end if;
  return null;
end $$;

-- A transition table serves one event per trigger: one trigger for inserts (new variants), one for updates.
create trigger inventory_levels_insert_notify after insert on inventory_levels
  referencing new table as changed_levels for each statement execute function storefront_notify_stock();
create trigger inventory_levels_update_notify after update on inventory_levels
  referencing new table as changed_levels for each statement execute function storefront_notify_stock();
