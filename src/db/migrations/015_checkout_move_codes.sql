-- Why a checkout moved, as a stable code beside the words (`reason`): the buyer declined it, it expired, someone
-- canceled it, the items sold out as the buyer approved. Both doors tell the agent or the buyer why from the code.
alter table checkout_transitions add column code text;
-- Moves recorded before the codes: a cancel by the buyer was a decline on the approval page, the store's own was the expiry.
update checkout_transitions
   set code = case when actor = 'buyer' then 'checkout_declined' when reason = 'expired' then 'checkout_expired' else 'checkout_canceled' end
 where to_status = 'canceled';
-- The checkouts of a cart, whatever their status: a cart that was checked out says which checkout placed its order.
create index checkouts_by_cart on checkouts (cart_token) where cart_token is not null;
