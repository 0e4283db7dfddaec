-- Reporting for the merchant's admin: which platform's agent prepared an order, and the indexes the dashboard and
-- the orders list (filters, search, newest first) read through, so both stay fast over many orders.

-- The host of the agent's UCP profile URL (chat.example, agent.example:8443) that created or last updated the
-- checkout; null for a checkout a browser made. Copied onto the order when it is placed.
alter table checkouts add column agent_platform text;
alter table orders add column agent_platform text;

-- Orders placed before this version: their platform is not known (an agent's order says only "agent").

-- How the buyer proved it was them is kept on the approval that placed the order, whatever the payment (before,
-- only a hosted payment page's approvals kept it). Approvals used before this version: from their checkout's move.
update checkout_approvals a
   set proven_by = case when t.reason like '%(proven with a passkey)%' then 'passkey'
                        when t.reason like '%(proven with a mailed code)%' then 'code'
                        else 'link' end,
       proven_at = t.at
  from checkout_transitions t
 where a.used_at is not null and a.proven_by is null
   and t.checkout_id = a.checkout_id and t.to_status = 'complete_in_progress';

-- The dashboard's periods and the list's date range (orders_newest_first already orders by created_at desc).
create index orders_by_status_created on orders (status, created_at desc);
create index orders_by_channel_created on orders (channel, agent_platform, created_at desc);
create index orders_by_payment_state_created on orders (payment_state, created_at desc);
-- Search by email, exact or by its start, whatever its case.
create index orders_by_buyer_email on orders (lower(buyer_email) text_pattern_ops, created_at desc);
-- Orders past their due date, or whose card hold lapses soon: few, read by the dashboard on every visit.
create index orders_payment_due on orders (payment_due_at) where payment_state = 'pending' and status = 'placed';
create index orders_authorized_until on orders (payment_authorized_until) where payment_state = 'authorized' and status = 'placed';
-- Each order's units to ship (neither shipped nor canceled), shipped and canceled, kept by its lines' writers through a
-- trigger (whatever writes them: the approval, a shipment, a cancel), so the list filters by fulfilment and the
-- dashboard counts what waits for shipment without summing every order's lines.
alter table orders add column units_to_ship integer not null default 0;
alter table orders add column units_shipped integer not null default 0;
alter table orders add column units_canceled integer not null default 0;
update orders o set units_to_ship = s.to_ship, units_shipped = s.shipped, units_canceled = s.canceled
  from (select order_id, sum(quantity - fulfilled - canceled)::int as to_ship, sum(fulfilled)::int as shipped, sum(canceled)::int as canceled
          from order_lines group by order_id) s
 where o.id = s.order_id;

create function storefront_order_units() returns trigger language plpgsql as $$
begin
  update orders o set units_to_ship = s.to_ship, units_shipped = s.shipped, units_canceled = s.canceled
    from (select l.order_id, sum(l.quantity - l.fulfilled - l.canceled)::int as to_ship, sum(l.fulfilled)::int as shipped,
                 sum(l.canceled)::int as canceled
            from order_lines l where l.order_id in (select order_id from changed_lines) group by l.order_id) s
   where o.id = s.order_id;
  return null;
end $$;
create trigger order_lines_insert_units after insert on order_lines
  referencing new table as changed_lines for each statement execute function storefront_order_units();
create trigger order_lines_update_units after update on order_lines
  referencing new table as changed_lines for each statement execute function storefront_order_units();

create index orders_to_ship on orders (created_at) where units_to_ship > 0 and status = 'placed';
-- The dashboard's days before today are kept while no order is canceled (the latest cancel tells).
create index orders_by_canceled_at on orders (canceled_at) where canceled_at is not null;
-- Deliveries given up, newest first.
create index outbox_failed on outbox (failed_at desc) where failed_at is not null;
-- Refunds in a period.
create index order_adjustments_by_time on order_adjustments (occurred_at);
