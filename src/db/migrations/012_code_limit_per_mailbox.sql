-- The hourly code limit counts a mailbox, not an address: `Ann+1@Example.com` and `ann@example.com` reach one inbox
-- (fields/mailbox.ts mailboxKey). Codes sent before this change get the same key, so the hour under way still counts.
alter table approval_codes add column mailbox text;
update approval_codes set mailbox = lower(regexp_replace(email, '^([^+@]+)\+[^@]*@', '\1@'));
alter table approval_codes alter column mailbox set not null;
drop index approval_codes_by_email;
create index approval_codes_by_mailbox on approval_codes (mailbox, created_at);
