/**
 * Body validation for the cart routes. JSON bodies are validated strictly: the app's Ajv coerces types, which
 * turned `"quantity": false` (or null, or "") into 0 and removed a line. Form bodies (urlencoded, multipart)
 * carry every value as a string, so they alone are coerced, before validation, by a coercing Ajv with the
 * app's options. Querystrings and params keep the app's coercion. Every storefront route also refuses input the
 * store cannot keep (installStorableInputCheck, below).
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance, FastifyRequest, preValidationHookHandler } from 'fastify';
import { nonDecimalNumber } from '../http/decimal-numbers.js';
import { invalidParameter } from '../http/errors.js';
import { MAX_INPUT_DEPTH, findUnstorable, inputPathText, unstorableProblemText, type UnstorableInput } from '../http/storable-input.js';

/** strictNumbers: a JSON number beyond a double (`1e400`, parsed as Infinity) is no integer (Ajv's default says it is). */
const appOptions = { useDefaults: true, removeAdditional: false, allErrors: false, addUsedSchema: false, strict: false, strictNumbers: true } as const;

function newAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({ ...appOptions, coerceTypes: coerce ? 'array' : false });
  (addFormats as unknown as (instance: Ajv) => void)(ajv);
  return ajv;
}

const strictAjv = newAjv(false);
const coercingAjv = newAjv(true);

/** In the plugin scope: bodies validated without coercion, other request parts as the app does. */
export function installStrictBodyValidation(app: FastifyInstance): void {
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? strictAjv : coercingAjv).compile(schema) as ValidateFunction);
}

/** A urlencoded or multipart form post, whose values are all strings. */
export function isFormRequest(request: FastifyRequest): boolean {
  return /^\s*(application\/x-www-form-urlencoded|multipart\/form-data)\b/i.test(request.headers['content-type'] ?? '');
}

/**
 * For a route's body schema: turns a form body's strings into the numbers (and arrays) the schema asks for, in
 * place, as the app's Ajv would; what cannot be coerced is left for the strict validation to refuse.
 */
export function formCoercion(schema: object): (request: FastifyRequest) => void {
  let validate: ValidateFunction | undefined;
  return (request) => {
    if (!isFormRequest(request) || typeof request.body !== 'object' || request.body === null) return;
    // Coercion reads numbers with Number(): `0x3`, `3e0` or `Infinity` would pass as 3 or as a number.
    const notDecimal = nonDecimalNumber(schema, request.body);
    if (notDecimal) throw invalidParameter(`Parameter ${notDecimal} is invalid: expected a whole number in decimal digits.`);
    validate ??= coercingAjv.compile(schema);
    validate(request.body);
  };
}

/** Parameter names in descriptions are cut to this (a path 32 levels deep, of long names, would be kilobytes). */
const MAX_NAMED_LENGTH = 200;

function unstorableDescription(found: UnstorableInput, part: 'body' | 'query'): string {
  const name = inputPathText(found.path, '') || (part === 'body' ? 'body' : 'query string');
  const shown = name.length > MAX_NAMED_LENGTH ? `${name.slice(0, MAX_NAMED_LENGTH)}…` : name;
  return `Parameter ${shown} is invalid: it ${unstorableProblemText(found, MAX_INPUT_DEPTH)}.`;
}

/**
 * Refuses a query string or body (JSON, urlencoded or multipart) holding text PostgreSQL cannot store (a NUL, an
 * unpaired surrogate) in a value or a name, or nested deeper than MAX_INPUT_DEPTH: 422 Invalid parameter error
 * naming the field, as the schemas refuse any other invalid value (a malformed body, that is no JSON at all, is 400).
 */
const refuseUnstorableInput: preValidationHookHandler = (request, _reply, done) => {
  const inQuery = findUnstorable(request.query);
  const found = inQuery ?? findUnstorable(request.body);
  done(found ? invalidParameter(unstorableDescription(found, inQuery ? 'query' : 'body')) : undefined);
};

/**
 * Every route of the scope (the storefront door, src/app.ts) and of the plugins it registers refuses unstorable
 * input before its handler runs, and so before it changes anything. The check is the route's last preValidation:
 * after the scope's parsers (a multipart form is read in a hook) and the route's own normalising (a single item
 * posted to add.js is `items[0]`), so the field is named as the route's schema names it.
 */
export function installStorableInputCheck(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const own = route.preValidation === undefined ? [] : Array.isArray(route.preValidation) ? route.preValidation : [route.preValidation];
    // A GET's HEAD twin is made from the GET's options, check included.
    if (own.includes(refuseUnstorableInput)) return;
    route.preValidation = [...(own as preValidationHookHandler[]), refuseUnstorableInput];
  });
}
