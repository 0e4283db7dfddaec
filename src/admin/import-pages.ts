/**
 * Importing a catalog from the admin: upload a Shopify product CSV export or the store's JSON catalog, see every
 * change it would make (products added, fields was → now, images removed, variants archived, stock set) before
 * anything is applied, then apply exactly that file. The upload is kept in the database (import_drafts, an hour) under
 * a random id, so whichever instance answers the Apply imports the file previewed, and only onto the catalog the
 * preview saw: a catalog changed meanwhile refuses the apply (409) until the file is previewed again. The preview is
 * a dry run of the import itself (importCatalog, rolled back); the apply is the import, as `storefront import` runs
 * it, written to the audit log. The owner's (the 'import' permission).
 */
import multipart from '@fastify/multipart';
import { ErrorMessage, sendError } from '../http/errors.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { recordAudit } from '../audit/audit-log.js';
import { ImportError } from '../catalog/import/catalog-document.js';
import { CatalogStream, type CatalogFormat } from '../catalog/import/catalog-stream.js';
import { importCatalog, importSummary, previewImport, type ImportReport } from '../catalog/import/import-catalog.js';
import { fieldChangeText, type ImportChanges, type ProductChange, type VariantChange } from '../catalog/import/import-changes.js';
import { isDraftId, markDraftApplied, readImportDraft, replaceDraftPreview, saveImportDraft, type ImportDraft } from '../catalog/import/import-drafts.js';
import { html, typed, type Html } from '../markup/html.js';
import { actorOf, allowed, csrfField, field, notice, postForm, seeOther, sendPage, staffOf, SECTIONS, type AdminContext, doneOf } from './admin-kit.js';
import { scrollingTable } from './admin-page-parts.js';

const IMPORT = SECTIONS.import.path;
/** The largest file the admin takes; a larger catalog is imported from the terminal, where it streams. */
const MAX_UPLOAD_BYTES = 20 * 1024 * 1024;
const MAX_UPLOAD_TEXT = '20 MB';

const draftPath = (id: string) => `${IMPORT}/${id}`;

/** The uploaded file as the multipart parser hands it to the route (onFile below). */
interface UploadedFile {
  filename: string;
  content: Buffer;
  truncated: boolean;
}

const DONE: Record<string, string> = {
  applied: 'The import was applied: the catalog now holds the file, live on the shop, its JSON and the commerce door.',
  previewed: 'Previewed again against the catalog as it now is. Nothing has been changed yet.',
};

/** The format of an upload: by its name, else by its first character (a JSON catalog is an object). */
function formatOf(file: UploadedFile, text: string): CatalogFormat {
  if (/\.csv$/i.test(file.filename)) return 'csv';
  if (/\.json$/i.test(file.filename)) return 'json';
  return text.trimStart().startsWith('{') ? 'json' : 'csv';
}

/** A file's name as the page shows it: its last part, printable, not too long. */
const shownName = (name: string) => (name.split(/[\\/]/).pop() ?? '').replace(/[\p{Cc}\p{Cf}]/gu, '').slice(0, 120) || 'catalog';

function uploadPage(request: FastifyRequest, reply: FastifyReply, ctx: AdminContext, state: { status?: number; refusal?: string } = {}): FastifyReply {
  const staff = staffOf(request);
  return sendPage(reply, ctx, staff, {
    title: 'Import a catalog',
    section: 'import',
    status: state.status,
    body: html`<h1>Import a catalog</h1>
<p>Upload a Shopify product CSV export or the store's JSON catalog. You see every change it would make before anything is changed; then apply it.</p>
<section class="panel" aria-labelledby="upload-heading">
<h2 id="upload-heading">The file</h2>
<form method="post" action="${IMPORT}" enctype="multipart/form-data" aria-label="Upload a catalog to preview">
${csrfField(staff)}
<div class="field"><label for="catalog-file">Catalog file (.csv or .json, at most ${MAX_UPLOAD_TEXT})</label>
<input id="catalog-file" name="file" type="file" accept=".csv,.json,text/csv,application/json" required${state.refusal ? html` aria-invalid="true" aria-describedby="upload-problem"` : ''}></div>
${state.refusal ? html`<p class="problem" id="upload-problem" role="alert">${state.refusal}</p>` : ''}
<div class="field"><label><input type="checkbox" name="set_stock" value="yes"> Set existing variants' units on hand to the file's quantities (a stock count)</label>
<span class="muted">Without it, new variants start at the file's quantity and existing ones keep theirs: sales since the export stay counted.</span></div>
<button type="submit">Preview the changes</button>
</form>
<p class="muted">A larger catalog imports from the terminal, where it streams: <code>storefront import FILE --dry-run</code> shows the same changes, then <code>storefront import FILE</code>.</p>
</section>`,
  });
}

// ---------------------------------------------------------------------------------------------------------------
// The changes, as the preview and the applied report show them

const variantName = (variant: Pick<VariantChange, 'sku' | 'title'>) => variant.sku ?? variant.title;

function variantItems(variant: VariantChange): Html[] {
  const name = typed(variantName(variant));
  const stock = variant.stock;
  if (variant.change === 'removed') return [html`<li>Variant removed: ${name} (it leaves the catalog; orders keep it)</li>`];
  if (variant.change === 'added') return [html`<li>Variant added: ${name}${stock ? html`, ${stock.to} on hand` : ''}</li>`];
  const items = variant.fields.map((change) => html`<li>${name}: ${typed(fieldChangeText(change))}</li>`);
  if (stock && stock.fileQuantity === undefined) items.push(html`<li>${name}: units on hand ${stock.from ?? 0} → ${stock.to}</li>`);
  if (stock?.fileQuantity !== undefined) items.push(html`<li class="muted">${name}: units on hand stay ${stock.to} (the file says ${stock.fileQuantity})</li>`);
  return items;
}

function productBlock(product: ProductChange, index: number): Html {
  const headingId = `change-${index}`;
  const items: Html[] = [
    ...product.fields.map((change) => html`<li>${typed(fieldChangeText(change))}</li>`),
    ...product.images.map((image) =>
      image.change === 'removed'
        ? html`<li><strong>Image removed:</strong> ${typed(image.src)}</li>`
        : image.change === 'added'
          ? html`<li>Image added: ${typed(image.src)}</li>`
          : html`<li>Image ${typed(image.src)}: ${typed((image.fields ?? []).map(fieldChangeText).join('; '))}</li>`,
    ),
    ...product.variants.flatMap(variantItems),
  ];
  const what = product.change === 'added' ? 'Added' : 'Changed';
  return html`<section class="panel" aria-labelledby="${headingId}">
<h3 id="${headingId}">${what}: ${typed(product.title)} <span class="muted">(${product.handle})</span></h3>
${items.length ? html`<ul>${items}</ul>` : ''}
</section>`;
}

function tallyTable(report: ImportReport, captionId: string, caption: string): Html {
  const row = (name: string, t: ImportReport['products']) =>
    html`<tr><th scope="row">${name}</th><td class="n">${t.created}</td><td class="n">${t.updated}</td><td class="n">${t.unchanged}</td><td class="n">${t.removed}</td></tr>`;
  return scrollingTable(
    captionId,
    caption,
    html`<tr><th scope="col">Of the file</th><th scope="col" class="n">Added</th><th scope="col" class="n">Changed</th><th scope="col" class="n">Unchanged</th><th scope="col" class="n">Removed</th></tr>`,
    [row('Products', report.products), row('Variants', report.variants), row('Collections', report.collections)],
  );
}

function changesBody(report: ImportReport): Html {
  const changes: ImportChanges = report.changes;
  const stock = report.stock;
  const stockLine =
    stock.set.length > 0
      ? html`<p>Units on hand set to the file's quantity: ${stock.set.length} existing ${stock.set.length === 1 ? 'variant' : 'variants'}.</p>`
      : stock.keptExisting > 0
        ? html`<p>Units on hand kept: ${stock.keptExisting} existing ${stock.keptExisting === 1 ? 'level differs' : 'levels differ'} from the file and ${stock.keptExisting === 1 ? 'stays' : 'stay'} (sales since the export stay counted).</p>`
        : '';
  const collections = changes.collections.length
    ? html`<h2>Collections</h2><ul>${changes.collections.map(
        (collection) => html`<li>${collection.change === 'added' ? 'Added' : 'Changed'}: ${typed(collection.title)} <span class="muted">(${collection.handle})</span>${
          collection.fields.length ? html`; ${typed(collection.fields.map(fieldChangeText).join('; '))}` : ''
        }${collection.productsAdded.length ? html`; products added: ${collection.productsAdded.join(', ')}` : ''}${
          collection.productsRemoved.length ? html`; products removed: ${collection.productsRemoved.join(', ')}` : ''
        }</li>`,
      )}</ul>`
    : '';
  return html`${tallyTable(report, 'tally-caption', 'What the file holds, against the catalog')}
<p>Images: <strong>${changes.images.added}</strong> added, <strong>${changes.images.removed}</strong> removed.</p>
${stockLine}
<h2>Products</h2>
${changes.products.length ? changes.products.map(productBlock) : html`<p>No product changes: the catalog already holds them as the file has them.</p>`}
${changes.unlisted > 0 ? html`<p class="muted">And ${changes.unlisted} more ${changes.unlisted === 1 ? 'product' : 'products'} added or changed, counted above and not listed.</p>` : ''}
${collections}`;
}

function draftPage(request: FastifyRequest, reply: FastifyReply, ctx: AdminContext, draft: ImportDraft, state: { status?: number; refusal?: Html | string } = {}): FastifyReply {
  const staff = staffOf(request);
  const done = doneOf(request, DONE);
  const name = typed(draft.fileName);
  if (draft.appliedAt && draft.report) {
    return sendPage(reply, ctx, staff, {
      title: `Imported ${draft.fileName}`,
      section: 'import',
      status: state.status,
      body: html`<h1>Imported: ${name}</h1>
${done ? notice('done', done) : ''}
<p>Applied ${ctx.moments.moment(draft.appliedAt)}. <a href="${IMPORT}">Import another file</a></p>
${changesBody(draft.report)}`,
    });
  }
  const apply = postForm(staff, `${draftPath(draft.id)}/apply`, html``, 'Apply this import', { label: 'Apply this import' });
  return sendPage(reply, ctx, staff, {
    title: `Preview of ${draft.fileName}`,
    section: 'import',
    status: state.status,
    body: html`<h1>Preview: ${name}</h1>
${done ? notice('done', done) : ''}
<p role="status"><strong>Nothing has been changed yet.</strong> This is what importing the file would change${draft.setStock ? ", units on hand set to the file's quantities" : ''}. Previewed ${ctx.moments.moment(draft.createdAt)}; the file waits until ${ctx.moments.moment(draft.expiresAt)}.</p>
${changesBody(draft.preview)}
<section class="panel" aria-labelledby="apply-heading">
<h2 id="apply-heading">Apply</h2>
<p>Imports exactly this file, making the changes above.</p>
${apply}
${state.refusal ? html`${notice('refused', state.refusal)}${postForm(staff, `${draftPath(draft.id)}/preview`, html``, 'Preview again')}` : ''}
<p><a href="${IMPORT}">Cancel and upload another file</a></p>
</section>`,
  });
}

export function register(admin: FastifyInstance, ctx: AdminContext): void {
  const { store } = ctx;
  const noDraft = (request: FastifyRequest, reply: FastifyReply) =>
    sendPage(reply, ctx, request.staff, {
      title: 'No such import',
      section: 'import',
      status: 404,
      body: html`<h1>No such import</h1><p>The file was not found: an uploaded file waits an hour for its apply. <a href="${IMPORT}">Upload it again</a>.</p>`,
    });

  admin.get(IMPORT, { config: { rateLimit: 'admin' } }, async (request, reply) => {
    if (!allowed(request, reply, ctx, 'import')) return reply;
    return uploadPage(request, reply, ctx);
  });

  // The upload is multipart (a file): its parser lives in this scope alone, beside the admin's form parser. Its fields
  // come as the kit's checks read a form (`_csrf` a string); the file as its name and bytes, cut at the limit.
  admin.register(async (uploads) => {
    await uploads.register(multipart, {
      attachFieldsToBody: 'keyValues',
      throwFileSizeLimit: false,
      limits: { fileSize: MAX_UPLOAD_BYTES, files: 1, fields: 5, fieldSize: 1024, parts: 8 },
      async onFile(part) {
        const content = await part.toBuffer();
        (part as unknown as { value: UploadedFile }).value = { filename: part.filename, content, truncated: part.file.truncated };
      },
    });
    // The upload is read before the handler runs: what fails then (a malformed multipart body, cut short or without its
    // boundary) is the client's, answered 400 with nothing stored; what fails in the handler goes on to the app's handler.
    const handled = new WeakSet<object>();
    uploads.setErrorHandler((error: Error & { statusCode?: number }, request, reply) => {
      if (handled.has(request) || (typeof error.statusCode === 'number' && error.statusCode !== 500)) throw error;
      return sendError(reply, 400, ErrorMessage.badRequest, 'The upload could not be read as a form with a file: nothing was stored.');
    });
    uploads.post(IMPORT, { config: { rateLimit: 'admin' }, bodyLimit: MAX_UPLOAD_BYTES + 64 * 1024 }, async (request, reply) => {
      handled.add(request);
      if (!allowed(request, reply, ctx, 'import')) return reply;
      const body = (request.body ?? {}) as Record<string, unknown>;
      const file = body.file as UploadedFile | undefined;
      if (!file || typeof file !== 'object' || !Buffer.isBuffer(file.content) || file.content.length === 0) {
        return uploadPage(request, reply, ctx, { status: 400, refusal: 'Choose a catalog file (.csv or .json) to preview.' });
      }
      if (file.truncated) return uploadPage(request, reply, ctx, { status: 400, refusal: `The file is larger than ${MAX_UPLOAD_TEXT}: import it from the terminal, where it streams.` });
      const text = file.content.toString('utf8');
      if (text.includes('\u0000')) return uploadPage(request, reply, ctx, { status: 400, refusal: 'The file is not a catalog: it holds binary data (a NUL byte).' });
      const format = formatOf(file, text);
      const setStock = field(body, 'set_stock') === 'yes';
      try {
        const preview = await previewImport(store.db, CatalogStream.ofText(text, format), { setStock });
        const id = await saveImportDraft(store.db, { staffId: staffOf(request).staffId, fileName: shownName(file.filename), format, setStock, document: text, preview });
        return seeOther(reply, draftPath(id));
      } catch (error) {
        if (!(error instanceof ImportError)) throw error;
        return uploadPage(request, reply, ctx, { status: 400, refusal: `Not previewed, nothing was changed: the file cannot be imported: ${error.message}` });
      }
    });
  });

  admin.get<{ Params: { id: string } }>(`${IMPORT}/:id`, { config: { rateLimit: 'admin' } }, async (request, reply) => {
    if (!allowed(request, reply, ctx, 'import')) return reply;
    const draft = isDraftId(request.params.id) ? await readImportDraft(store.db, request.params.id, { withDocument: false }) : undefined;
    if (!draft) return noDraft(request, reply);
    return draftPage(request, reply, ctx, draft);
  });

  admin.post<{ Params: { id: string } }>(`${IMPORT}/:id/apply`, { config: { rateLimit: 'admin' } }, async (request, reply) => {
    if (!allowed(request, reply, ctx, 'import')) return reply;
    const draft = await readImportDraft(store.db, request.params.id);
    if (!draft) return noDraft(request, reply);
    if (draft.appliedAt) return seeOther(reply, `${draftPath(draft.id)}?done=applied`);
    try {
      const actor = actorOf(request);
      await importCatalog(store.db, CatalogStream.ofText(draft.document, draft.format), {
        setStock: draft.setStock,
        expectCatalogVersion: draft.preview.catalogVersion,
        // In the import's transaction: the draft is applied, and audited, exactly when the catalog changes.
        beforeCommit: async (tx, written) => {
          if (!(await markDraftApplied(tx, draft.id, written))) throw new ImportError('draft', 'this file was applied already');
          await recordAudit(tx, actor, { action: 'catalog.import', summary: importSummary(draft.fileName, written) });
        },
      });
    } catch (error) {
      if (!(error instanceof ImportError)) throw error;
      const now = await readImportDraft(store.db, draft.id, { withDocument: false });
      if (now?.appliedAt) return seeOther(reply, `${draftPath(draft.id)}?done=applied`);
      const refusal =
        error.where === 'catalog'
          ? 'Not applied, nothing was changed: the catalog changed since this preview (an edit or another import). Preview the file again to see what it would change now.'
          : `Not applied, nothing was changed: ${error.message}`;
      return draftPage(request, reply, ctx, now ?? draft, { status: 409, refusal });
    }
    // This instance takes the import in before answering; the others hear of it on commit (NOTIFY) or their poll.
    await store.inventory.refresh(store.db);
    await store.catalog.refresh(store.db);
    return seeOther(reply, `${draftPath(draft.id)}?done=applied`);
  });

  admin.post<{ Params: { id: string } }>(`${IMPORT}/:id/preview`, { config: { rateLimit: 'admin' } }, async (request, reply) => {
    if (!allowed(request, reply, ctx, 'import')) return reply;
    const draft = await readImportDraft(store.db, request.params.id);
    if (!draft) return noDraft(request, reply);
    if (draft.appliedAt) return seeOther(reply, `${draftPath(draft.id)}?done=applied`);
    try {
      await replaceDraftPreview(store.db, draft.id, await previewImport(store.db, CatalogStream.ofText(draft.document, draft.format), { setStock: draft.setStock }));
    } catch (error) {
      if (!(error instanceof ImportError)) throw error;
      return draftPage(request, reply, ctx, draft, { status: 409, refusal: `Not previewed: ${error.message}` });
    }
    return seeOther(reply, `${draftPath(draft.id)}?done=previewed`);
  });
}
