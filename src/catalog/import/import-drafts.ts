/**
 * A catalog file uploaded in the admin, kept in the database between its preview and its apply, so that any
 * instance applies exactly the file the merchant previewed (migration 018). A draft lives an hour; its id is random
 * (it names the preview page). No secret is in it: it is the merchant's own catalog.
 */
import { randomBytes } from 'node:crypto';
import type { Queryable } from '../../db/database.js';
import type { CatalogFormat } from './catalog-stream.js';
import type { ImportPreview, ImportReport } from './import-catalog.js';

/** How long an uploaded file waits for its apply. */
export const DRAFT_LIFETIME_MS = 60 * 60 * 1000;

export interface ImportDraft {
  id: string;
  staffId: string;
  fileName: string;
  format: CatalogFormat;
  setStock: boolean;
  document: string;
  preview: ImportPreview;
  appliedAt: Date | null;
  report: ImportReport | null;
  createdAt: Date;
  expiresAt: Date;
}

/** A draft id as the page's address names it: 22 base64url characters (16 random bytes). */
export const isDraftId = (id: string) => /^[A-Za-z0-9_-]{22}$/.test(id);

/** Keeps an uploaded file with its preview; answers its id. Drafts past their hour are dropped first. */
export async function saveImportDraft(
  db: Queryable,
  draft: { staffId: string; fileName: string; format: CatalogFormat; setStock: boolean; document: string; preview: ImportPreview },
): Promise<string> {
  await db.query('delete from import_drafts where expires_at < now()');
  const id = randomBytes(16).toString('base64url');
  await db.query(
    `insert into import_drafts (id, staff_id, file_name, format, set_stock, document, catalog_version, preview, expires_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, now() + make_interval(secs => $9))`,
    [id, draft.staffId, draft.fileName, draft.format, draft.setStock, draft.document, draft.preview.catalogVersion, JSON.stringify(draft.preview), DRAFT_LIFETIME_MS / 1000],
  );
  return id;
}

type DraftRow = {
  id: string;
  staff_id: string;
  file_name: string;
  format: CatalogFormat;
  set_stock: boolean;
  document: string;
  preview: ImportPreview | string;
  applied_at: Date | string | null;
  report: ImportReport | string | null;
  created_at: Date | string;
  expires_at: Date | string;
};

const date = (value: Date | string) => (value instanceof Date ? value : new Date(value));
const json = <T>(value: T | string): T => (typeof value === 'string' ? (JSON.parse(value) as T) : value);

/** A draft not past its hour; undefined when there is none. `withDocument: false` leaves the file's text out (a page). */
export async function readImportDraft(db: Queryable, id: string, options: { withDocument?: boolean } = {}): Promise<ImportDraft | undefined> {
  if (!isDraftId(id)) return undefined;
  const [row] = await db.query<DraftRow>(
    `select id, staff_id, file_name, format, set_stock, ${options.withDocument === false ? "''" : 'document'} as document, preview, applied_at, report,
       created_at, expires_at from import_drafts where id = $1 and expires_at >= now()`,
    [id],
  );
  if (!row) return undefined;
  return {
    id: row.id,
    staffId: row.staff_id,
    fileName: row.file_name,
    format: row.format,
    setStock: row.set_stock,
    document: row.document,
    preview: json(row.preview),
    appliedAt: row.applied_at === null ? null : date(row.applied_at),
    report: row.report === null ? null : json(row.report),
    createdAt: date(row.created_at),
    expiresAt: date(row.expires_at),
  };
}

/** A new preview of the same file (the catalog changed since the first): the apply then insists on its version. */
export async function replaceDraftPreview(db: Queryable, id: string, preview: ImportPreview): Promise<void> {
  await db.query('update import_drafts set preview = $2::jsonb, catalog_version = $3 where id = $1 and applied_at is null', [id, JSON.stringify(preview), preview.catalogVersion]);
}

/**
 * Records the apply's report; false when the draft was applied already. Two applies of one draft import it once: the
 * apply insists on the preview's catalog version, which the first moves.
 */
export async function markDraftApplied(db: Queryable, id: string, report: ImportReport): Promise<boolean> {
  const rows = await db.query('update import_drafts set applied_at = now(), report = $2::jsonb where id = $1 and applied_at is null returning id', [id, JSON.stringify(report)]);
  return rows.length > 0;
}

