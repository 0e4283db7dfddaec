/** The shop pages' style rules (joined into the pages' one sheet by ./styles.ts). */
export const SHOP_STYLE: readonly string[] = [];
