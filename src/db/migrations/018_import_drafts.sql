-- Catalog files uploaded in the admin, kept between their preview and their apply: whichever instance answers the
-- "Apply" applies exactly the file previewed, onto the catalog version the preview was made against. Dropped an
-- hour after the upload (an applied one keeps its report until then).
create table import_drafts (
  id text primary key,                       -- random, the preview page's address
  staff_id text not null,
  file_name text not null,
  format text not null check (format in ('csv', 'json')),
  set_stock boolean not null,
  document text not null,
  catalog_version bigint not null,           -- the catalog's version the preview was worked out against
  preview jsonb not null,                    -- the preview's report, as the page shows it
  applied_at timestamptz,
  report jsonb,                              -- the import's report, once applied
  created_at timestamptz not null default now(),
  expires_at timestamptz not null
);
create index import_drafts_expiry on import_drafts (expires_at);
