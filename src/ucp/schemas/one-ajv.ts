/**
 * The commerce door's one Ajv (JSON Schema 2020-12, formats, all errors): the tools' argument schemas
 * (src/ucp/tools/tool-schemas.ts) are compiled on it, and the MCP SDK's servers validate with it too
 * (`ucpJsonSchemaValidator`), instead of each building its own. The app has one Ajv per distinct option set: this
 * one, and the two of src/storefront/body-validation.ts (draft-07 request schemas that fill defaults and name the
 * first error only; one coerces types, one does not). Neither could be this one: an agent is told every problem
 * of its arguments at once, where the storefront names the first (collecting every error of a hostile body costs),
 * and the SDK hands this one 2020-12 schemas (`prefixItems`), which a draft-07 Ajv does not read.
 */
import type { jsonSchemaValidator } from '@modelcontextprotocol/server';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

export type JsonSchema = { [key: string]: unknown };

let ajv: Ajv2020 | undefined;

/** Made on first use. */
export function ucpAjv(): Ajv2020 {
  if (!ajv) {
    // strictNumbers: a JSON 1e400 (parsed as Infinity) is no quantity; Ajv's default would accept it as an integer.
    // allErrors: an agent is told every problem of its arguments at once, not one per call.
    ajv = new Ajv2020({ strict: false, strictNumbers: true, allErrors: true, validateSchema: false });
    addFormats.default(ajv);
  }
  return ajv;
}

let sdkProvider: AjvJsonSchemaValidator | undefined;

/**
 * The SDK's `jsonSchemaValidator` (its Server validates elicitation answers with it), on the one Ajv: the
 * SDK's own provider class, given this instance rather than left to build a second one (made on first use).
 */
export const ucpJsonSchemaValidator: jsonSchemaValidator = {
  getValidator: (schema) => (sdkProvider ??= new AjvJsonSchemaValidator(ucpAjv())).getValidator(schema),
};

/** A validator for a schema: Ajv compiles a schema object once and answers the same function after. */
export function validatorFor(schema: JsonSchema): ValidateFunction {
  return ucpAjv().compile(schema);
}
