/**
 * Input the store can keep, checked once at each door before anything reads it. PostgreSQL text cannot hold a NUL
 * ("\u0000"), and a string with an unpaired UTF-16 surrogate ("\ud800") is not Unicode (a text column stores U+FFFD
 * in its place, jsonb refuses it): a request carrying either, in any value or member name, is refused naming where.
 * So is one nested deeper than any real request, which recursive code further on could not walk.
 *
 * The walk keeps its own stack, so no input, however deep, can overflow the call stack here.
 */

import { invalidParameter, type StorefrontError } from './errors.js';

/**
 * The deepest nesting a request may have: objects and arrays inside one another, the outermost counting as 1. A
 * UCP checkout is under 10 levels, with the JSON-RPC envelope around it under 15; 32 leaves room for extensions.
 */
export const MAX_INPUT_DEPTH = 32;

export type UnstorableProblem = 'nul' | 'lone_surrogate' | 'too_deep';

/** Member names and array indexes from the top of the value. */
export type InputPath = (string | number)[];

export interface UnstorableInput {
  /** Where the problem is; for a problem in a member's name, the object holding that member (see `inKey`). */
  path: InputPath;
  problem: UnstorableProblem;
  /** Set when the problem is in a member's name rather than in a value (the name itself is left out of `path`). */
  inKey?: true;
}

/** In a regular expression with the `u` flag a surrogate pair is one code point: only an unpaired half is `\p{Cs}`. */
const LONE_SURROGATE = /\p{Cs}/u;

/** What is wrong with a string: a NUL, an unpaired surrogate, or nothing. */
export function textProblem(text: string): 'nul' | 'lone_surrogate' | undefined {
  if (text.includes('\u0000')) return 'nul';
  return LONE_SURROGATE.test(text) ? 'lone_surrogate' : undefined;
}

/** A container still to look into, with the way back to the top (paths are built only for the problem found). */
interface Frame {
  value: object;
  depth: number;
  parent: Frame | undefined;
  key: string | number | undefined;
}

function pathOf(frame: Frame | undefined): InputPath {
  const path: InputPath = [];
  for (let at = frame; at?.parent !== undefined; at = at.parent) path.push(at.key!);
  return path.reverse();
}

/**
 * The first problem in a parsed JSON value, or undefined when every string, value or member name, can be stored
 * and nothing is nested deeper than `maxDepth`. An object's or array's own members are looked at before what is
 * inside them, each in order, a member's name before its value.
 */
export function findUnstorable(value: unknown, options: { maxDepth?: number } = {}): UnstorableInput | undefined {
  const maxDepth = options.maxDepth ?? MAX_INPUT_DEPTH;
  if (typeof value === 'string') {
    const problem = textProblem(value);
    return problem ? { path: [], problem } : undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const stack: Frame[] = [{ value, depth: 1, parent: undefined, key: undefined }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (frame.depth > maxDepth) return { path: pathOf(frame), problem: 'too_deep' };
    const children: Frame[] = [];
    if (Array.isArray(frame.value)) {
      for (let index = 0; index < frame.value.length; index++) {
        const found = visit(frame, index, frame.value[index], children);
        if (found) return found;
      }
    } else {
      const record = frame.value as Record<string, unknown>;
      for (const key of Object.keys(record)) {
        const problem = textProblem(key);
        if (problem) return { path: pathOf(frame), problem, inKey: true };
        const found = visit(frame, key, record[key], children);
        if (found) return found;
      }
    }
    // Last pushed is looked into first: reversed, the children keep their document order.
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return undefined;
}

/** Checks a string member at once; a container member is queued in `children`. */
function visit(parent: Frame, key: string | number, member: unknown, children: Frame[]): UnstorableInput | undefined {
  if (typeof member === 'string') {
    const problem = textProblem(member);
    return problem ? { path: [...pathOf(parent), key], problem } : undefined;
  }
  if (typeof member === 'object' && member !== null) children.push({ value: member, depth: parent.depth + 1, parent, key });
  return undefined;
}

/** A path as messages show it: `$.checkout.buyer.email`, `$.line_items[0].item.id`, `$['a b']` (`root` '' drops the `$`). */
export function inputPathText(path: InputPath, root = '$'): string {
  let text = root;
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(segment)) text += text === '' ? segment : `.${segment}`;
    else text += `[${JSON.stringify(segment)}]`;
  }
  return text;
}

/** The problem as the end of a sentence about the field: "…is invalid: it contains a NUL character". */
export function unstorableProblemText(found: Pick<UnstorableInput, 'problem' | 'inKey'>, maxDepth = MAX_INPUT_DEPTH): string {
  switch (found.problem) {
    case 'nul':
      return found.inKey ? 'has a member name that contains a NUL character' : 'contains a NUL character';
    case 'lone_surrogate':
      return found.inKey
        ? 'has a member name that contains an unpaired surrogate (not valid Unicode)'
        : 'contains an unpaired surrogate (not valid Unicode)';
    case 'too_deep':
      return `is nested more than ${maxDepth} levels deep`;
  }
}

/** Parameter names in descriptions are cut to this (a path 32 levels deep, of long names, would be kilobytes). */
const MAX_NAMED_LENGTH = 200;

function unstorableDescription(found: UnstorableInput, part: 'body' | 'query'): string {
  const name = inputPathText(found.path, '') || (part === 'body' ? 'body' : 'query string');
  const shown = name.length > MAX_NAMED_LENGTH ? `${name.slice(0, MAX_NAMED_LENGTH)}…` : name;
  return `Parameter ${shown} is invalid: it ${unstorableProblemText(found, MAX_INPUT_DEPTH)}.`;
}

/**
 * The refusal of a request whose query string or body (as parsed: JSON, or form fields) holds text PostgreSQL cannot
 * store or is nested too deep: 422 Invalid parameter error naming the field; undefined when all of it can be kept.
 * Each door runs it before its handlers read anything (the storefront's body-validation.ts, the admin's routes).
 */
export function unstorableRequest(query: unknown, body: unknown): StorefrontError | undefined {
  const inQuery = findUnstorable(query);
  const found = inQuery ?? findUnstorable(body);
  return found ? invalidParameter(unstorableDescription(found, inQuery ? 'query' : 'body')) : undefined;
}
