/**
 * Request validation, one Ajv per distinct option set (the pattern Fastify documents for per-part compilers):
 * - the app's: every route's querystring, params and headers, and bodies outside the cart. It coerces types (a
 *   query's `limit=5` is 5) and fills defaults. src/app.ts gives it to Fastify (`appSchemaController`) in place of
 *   Fastify's own instance, and the cart's form coercion (formCoercion) uses it too.
 * - the cart's JSON bodies: the same options without coercion, which turned `"quantity": false` (or null, or "")
 *   into 0 and removed a line. Coercion is an option of the whole instance, hence the second one. Form bodies
 *   (urlencoded, multipart) carry every value as a string, so they alone are coerced, before validation.
 * The commerce door's schemas are JSON Schema 2020-12 reported with every error (src/ucp/schemas/one-ajv.ts): a
 * third option set. Every storefront route also refuses input the store cannot keep (installStorableInputCheck).
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance, FastifyRequest, FastifySchema, FastifySchemaCompiler, FastifyServerOptions, preValidationHookHandler } from 'fastify';
import { nonDecimalNumber } from '../http/decimal-numbers.js';
import { invalidParameter } from '../http/errors.js';
import { sharedSerializers } from '../http/shared-serializers.js';
import { unstorableRequest } from '../http/storable-input.js';

/**
 * strictNumbers: a JSON number beyond a double (`1e400`, parsed as Infinity) is no integer (Ajv's default says it
 * is). allErrors off: the first problem is named, and a hostile body cannot make Ajv collect thousands.
 * addUsedSchema off: two routes' schemas may carry one $id without clashing in the shared instance.
 */
const appOptions = { useDefaults: true, removeAdditional: false, allErrors: false, addUsedSchema: false, strict: false, strictNumbers: true } as const;

function newAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({ ...appOptions, coerceTypes: coerce ? 'array' : false });
  addFormats.default(ajv);
  return ajv;
}

const coercingAjv = newAjv(true);
const strictAjv = newAjv(false);

/** The app's validator compiler (coercing): request schemas are inline, so Fastify's shared schemas are not needed. */
const appValidatorCompiler: FastifySchemaCompiler<FastifySchema> = ({ schema }) => coercingAjv.compile(schema);

type ValidatorFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildValidator'];

/**
 * Fastify's schemaController option (src/app.ts): every scope validates on the app's Ajv, also a scope that adds
 * shared schemas (setValidatorCompiler at the root would leave such a scope to a new instance of Fastify's own).
 * @fastify/ajv-compiler's types describe a compiler as taking a bare schema; Fastify calls it with the route
 * definition, as its own FastifySchemaCompiler type says, hence the cast. Responses are serialized by Fastify's own
 * compiler, each distinct schema compiled once per process (src/http/shared-serializers.ts).
 */
export const appSchemaController: FastifyServerOptions['schemaController'] = {
  compilersFactory: { buildValidator: (() => appValidatorCompiler) as unknown as ValidatorFactory, buildSerializer: sharedSerializers },
};

/** In the plugin scope: bodies validated without coercion, other request parts as the app does. */
export function installStrictBodyValidation(app: FastifyInstance): void {
  app.setValidatorCompiler((route) => (route.httpPart === 'body' ? strictAjv.compile(route.schema) : appValidatorCompiler(route)));
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


/**
 * Refuses a query string or body (JSON, urlencoded or multipart) holding text PostgreSQL cannot store (a NUL, an
 * unpaired surrogate) in a value or a name, or nested deeper than MAX_INPUT_DEPTH: 422 Invalid parameter error
 * naming the field, as the schemas refuse any other invalid value (a malformed body, that is no JSON at all, is 400).
 */
const refuseUnstorableInput: preValidationHookHandler = (request, _reply, done) => {
  done(unstorableRequest(request.query, request.body));
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
    route.preValidation = [...own, refuseUnstorableInput];
  });
}
