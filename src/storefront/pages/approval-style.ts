/** The approval pages' style rules (joined into the pages' one sheet by ./styles.ts). */
export const APPROVAL_STYLE: readonly string[] = [];
