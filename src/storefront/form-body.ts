/**
 * Form bodies as Shopify themes post them (urlencoded from jQuery.serialize / Timber, multipart from
 * `new FormData(form)` in Dawn and Horizon), with Rack-style bracket keys, read by qs:
 *   `items[0][id]=1&items[0][quantity]=2&properties[Size]=XL&updates[]=3`
 *   -> { items: [{ id: '1', quantity: '2' }], properties: { Size: 'XL' }, updates: ['3'] }
 * Values stay strings; the routes coerce them for their schemas (body-validation.ts). A numbered key below
 * MAX_LIST_ITEMS is a list index; a larger one (`updates[42100000001]`, a variant id: ids start at 42100000001)
 * stays an object key, and the add route turns a numbered `items` object into an array.
 */
import qs from 'qs';
import { ErrorMessage, StorefrontError } from '../http/errors.js';

/** Brackets a field name may nest (`items[0][properties][Name]` is three). */
const MAX_DEPTH = 4;
/** Fields one form may have: the multipart limit of the cart (cart-routes.ts), which is more than any theme posts. */
export const MAX_FORM_FIELDS = 300;
/** The cart takes at most 100 items or updates; a longer list is read as a numbered object, which its schema refuses. */
const MAX_LIST_ITEMS = 100;

const PARSE_OPTIONS: qs.IParseOptions = {
  depth: MAX_DEPTH,
  strictDepth: true,
  arrayLimit: MAX_LIST_ITEMS,
  parameterLimit: MAX_FORM_FIELDS,
  // A repeated plain key keeps its last value, as Rack does; `[]` keys still append.
  duplicates: 'last',
};

/**
 * Rack's rule for `[]` before more brackets (`items[][id]=1&items[][quantity]=2&items[][id]=3`): fields go to the
 * newest element until it already has that field, then another starts. qs would merge them into one element, so
 * these keys are numbered first (`items[0][id]`, `items[0][quantity]`, `items[1][id]`).
 */
function numberAppendedElements(pairs: Iterable<[string, string]>): [string, string][] {
  const newest = new Map<string, { index: number; fields: Set<string> }>();
  return Array.from(pairs, ([key, value]): [string, string] => {
    const at = key.indexOf('[][');
    if (at < 0) return [key, value];
    const list = key.slice(0, at);
    const field = key.slice(at + 2);
    let element = newest.get(list);
    if (!element || element.fields.has(field)) newest.set(list, (element = { index: (element?.index ?? -1) + 1, fields: new Set() }));
    element.fields.add(field);
    return [`${list}[${element.index}]${field}`, value];
  });
}

/**
 * Pairs in order -> nested fields. Keys reaching Object.prototype are dropped (qs). More than MAX_FORM_FIELDS
 * fields, or a name nested deeper than MAX_DEPTH brackets, is a 400: a hostile form cannot make large structures.
 */
export function formFields(pairs: Iterable<[string, string]>): Record<string, unknown> {
  const numbered = numberAppendedElements(pairs);
  if (numbered.length > MAX_FORM_FIELDS) {
    throw new StorefrontError(400, ErrorMessage.badRequest, `The form has more than ${MAX_FORM_FIELDS} fields.`);
  }
  try {
    return qs.parse(new URLSearchParams(numbered).toString(), PARSE_OPTIONS);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw new StorefrontError(400, ErrorMessage.badRequest, `A form field name nests deeper than ${MAX_DEPTH} brackets.`);
  }
}

/** An object whose keys are all indexes (`{0: …, 1: …}`, from `items[0][id]`) -> an array in index order. */
export function indexedArray(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const entries = Object.entries(value);
  if (entries.length === 0 || !entries.every(([key]) => /^\d{1,4}$/.test(key))) return value;
  return entries.sort(([a], [b]) => Number(a) - Number(b)).map(([, item]) => item);
}

export function urlencodedFields(text: string): Record<string, unknown> {
  return formFields(new URLSearchParams(text));
}
