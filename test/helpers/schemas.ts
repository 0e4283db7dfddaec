/** Validates what the service emits against its published schemas (the same ones OpenAPI describes). */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { ProductSchema, VariantSchema } from '../../src/storefront/product-schemas.js';
import { ErrorSchema } from '../../src/http/errors.js';

const ajv = new Ajv2020({ allErrors: true, strict: false });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);
ajv.addSchema(VariantSchema, 'Variant');
ajv.addSchema(ErrorSchema, 'Error');
ajv.addSchema(ProductSchema, 'Product');

export function schemaErrors(id: 'Product' | 'Error' | 'Variant', value: unknown): string[] {
  const validate = ajv.getSchema(id)!;
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}
