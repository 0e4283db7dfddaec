/** A checkout's totals in integer cents, with no I/O: items, shipping, sales tax, total. */

export interface CheckoutTotals {
  subtotal: number;
  /** Undefined until a shipping option is chosen. */
  shipping: number | undefined;
  /** Undefined until the address (its state) is known. */
  tax: number | undefined;
  total: number;
}

/** Basis points of an amount, rounded half up to the cent, in integers only. */
export function basisPoints(amount: number, bps: number): number {
  return Math.floor((amount * bps + 5000) / 10_000);
}

/** Sales tax is charged on the items (shipping is not taxed here), at the rate of the destination's state. */
export function checkoutTotals(subtotal: number, shipping: number | undefined, taxRateBps: number | undefined): CheckoutTotals {
  const tax = taxRateBps === undefined ? undefined : basisPoints(subtotal, taxRateBps);
  return { subtotal, shipping, tax, total: subtotal + (shipping ?? 0) + (tax ?? 0) };
}
