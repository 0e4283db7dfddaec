/**
 * Numbers as clients write them in a query string or a form: decimal digits only. Ajv's type coercion reads
 * a string with Number(), so `0x3`, `0b11`, `3e0`, `+3`, ` 3` and `Infinity` would pass as numbers; this
 * finds such a string wherever the schema expects an integer or a number, before coercion runs, so the
 * request is refused naming the parameter. Values of any other type are left to the schema.
 */
type Schema = Record<string, unknown>;

const INTEGER = /^-?[0-9]+$/;
const NUMBER = /^-?[0-9]+(\.[0-9]+)?$/;

function types(schema: Schema): string[] {
  const type = schema.type;
  return Array.isArray(type) ? (type as string[]) : typeof type === 'string' ? [type] : [];
}

/** A plain number string for this schema, or undefined when the schema wants no number here. */
function numericPattern(schema: Schema): RegExp | undefined {
  const own = types(schema);
  if (own.includes('string')) return undefined;
  if (own.includes('integer')) return INTEGER;
  if (own.includes('number')) return NUMBER;
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = schema[key];
    if (Array.isArray(options)) {
      if (options.some((option) => isObject(option) && types(option).includes('string'))) return undefined;
      const patterns = options.map((option) => numericPattern(option as Schema)).filter((p): p is RegExp => p !== undefined);
      if (patterns.includes(NUMBER)) return NUMBER;
      if (patterns.includes(INTEGER)) return INTEGER;
    }
  }
  return undefined;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The schema of an object's member: named, matched by a pattern (a record), or the additional properties'. */
function propertySchema(schema: Schema, key: string): unknown {
  if (isObject(schema.properties) && key in schema.properties) return schema.properties[key];
  if (isObject(schema.patternProperties)) {
    for (const [pattern, member] of Object.entries(schema.patternProperties)) if (new RegExp(pattern, 'u').test(key)) return member;
  }
  return isObject(schema.additionalProperties) ? schema.additionalProperties : undefined;
}

/** The name of the first parameter whose string is not a plain decimal number where the schema wants one. */
export function nonDecimalNumber(schema: unknown, value: unknown, name = ''): string | undefined {
  if (!isObject(schema)) return undefined;
  if (typeof value === 'string') {
    const pattern = numericPattern(schema);
    return pattern && !pattern.test(value) ? name || 'body' : undefined;
  }
  if (Array.isArray(value)) {
    const items = isObject(schema.items) ? schema.items : undefined;
    for (const [index, item] of value.entries()) {
      // A lone value coerced into an array is checked against the items' schema, and so is each item.
      const found = nonDecimalNumber(items ?? schema, item, `${name}[${index}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (isObject(value)) {
    for (const [key, item] of Object.entries(value)) {
      const found = nonDecimalNumber(propertySchema(schema, key), item, name ? `${name}.${key}` : key);
      if (found) return found;
    }
    for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
      const options = schema[key];
      if (!Array.isArray(options)) continue;
      for (const option of options) {
        const found = nonDecimalNumber(option, value, name);
        if (found) return found;
      }
    }
  }
  return undefined;
}
