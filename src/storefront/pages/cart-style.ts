/** The cart pages' style rules (joined into the pages' one sheet by ./styles.ts). */
export const CART_STYLE: readonly string[] = [];
