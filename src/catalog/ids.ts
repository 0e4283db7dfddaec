/**
 * Ids as clients write them (a variant id in a form field, a product id in a query, an MCP item id): decimal
 * digits only, no sign, no exponent, no hex, within JavaScript's safe integers. One rule for every door.
 */
const DECIMAL_ID = /^[0-9]{1,16}$/;

/** The id a string or number names, or undefined when it is not a plain decimal id. */
export function parseId(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string' || !DECIMAL_ID.test(value)) return undefined;
  const id = Number(value);
  return Number.isSafeInteger(id) ? id : undefined;
}
