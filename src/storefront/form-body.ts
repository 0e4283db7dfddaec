/**
 * Form bodies as Shopify themes post them (urlencoded from jQuery.serialize / Timber, multipart from
 * `new FormData(form)` in Dawn and Horizon), with Rack-style bracket keys:
 *   `items[0][id]=1&items[0][quantity]=2&properties[Size]=XL&updates[]=3`
 *   -> { items: { 0: { id: '1', quantity: '2' } }, properties: { Size: 'XL' }, updates: ['3'] }
 * Values stay strings; the routes coerce them for their schemas (validation.ts). Numbered keys stay objects (`updates[123]` is a variant id);
 * the add route turns a numbered `items` object into an array.
 */

const MAX_DEPTH = 4;
/** Names that would reach Object.prototype; a pair using one is dropped. */
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

type Container = Record<string, unknown> | unknown[];

function keySegments(key: string): string[] | undefined {
  const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
  if (!match) return undefined;
  const brackets = [...match[2]!.matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1]!);
  return [match[1]!, ...brackets];
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function assign(root: Record<string, unknown>, segments: string[], value: string): void {
  let container: Container = root;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    const last = i === segments.length - 1;
    const nextIsPush = segments[i + 1] === '';
    if (Array.isArray(container)) {
      // `[]` in the middle (`items[][id]`): fill the newest element until it already has this key, then start another.
      if (last) {
        container.push(value);
        return;
      }
      const nextKey = segments[i + 1]!;
      const newest: unknown = container[container.length - 1];
      if (isRecord(newest) && !(nextKey in newest) && i + 1 === segments.length - 1) {
        container = newest;
      } else {
        const fresh: Record<string, unknown> = {};
        container.push(fresh);
        container = fresh;
      }
      continue;
    }
    if (last) {
      container[segment] = value;
      return;
    }
    const existing: unknown = container[segment];
    if (nextIsPush) {
      container = Array.isArray(existing) ? existing : (container[segment] = []);
    } else {
      container = isRecord(existing) ? existing : (container[segment] = {});
    }
  }
}

/** Pairs in order -> nested fields; a repeated plain key keeps its last value, as Rack does. */
export function formFields(pairs: Iterable<[string, string]>): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [key, value] of pairs) {
    const segments = keySegments(key);
    if (!segments || segments.length > MAX_DEPTH + 1) {
      if (!FORBIDDEN.has(key)) fields[key] = value;
      continue;
    }
    if (segments.some((segment) => FORBIDDEN.has(segment))) continue;
    assign(fields, segments, value);
  }
  return fields;
}

/** An object whose keys are all indexes (`{0: …, 1: …}`, from `items[0][id]`) -> an array in index order. */
export function indexedArray(value: unknown): unknown {
  if (!isRecord(value)) return value;
  const keys = Object.keys(value);
  if (keys.length === 0 || !keys.every((key) => /^\d{1,4}$/.test(key))) return value;
  return keys.sort((a, b) => Number(a) - Number(b)).map((key) => value[key]);
}

export function urlencodedFields(text: string): Record<string, unknown> {
  return formFields(new URLSearchParams(text));
}
