/**
 * Body validation for the cart routes. JSON bodies are validated strictly: the app's Ajv coerces types, which
 * turned `"quantity": false` (or null, or "") into 0 and removed a line. Form bodies (urlencoded, multipart)
 * carry every value as a string, so they alone are coerced, before validation, by a coercing Ajv with the
 * app's options. Querystrings and params keep the app's coercion.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { nonDecimalNumber } from '../http/decimal-numbers.js';
import { invalidParameter } from '../http/errors.js';

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
