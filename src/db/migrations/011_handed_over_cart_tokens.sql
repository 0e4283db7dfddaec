-- A cart handed over (a browser opened its continue_url) lives on under a new token, bound to that browser's
-- cookie; its old token is closed like an ordered cart's, and `handed_to` names the cart's new token, so the old
-- link can say the cart was handed over, and lead only the browser that holds the new token back to it.
alter table closed_cart_tokens add column handed_to text;
