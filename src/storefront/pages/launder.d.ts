// launder (sanitize-html's own URL check) ships no types; this is the one function the pages use.
declare module 'launder' {
  /** True when sanitize-html would drop this href: a scheme outside `allowedSchemes` (after the characters browsers ignore are removed). */
  export function naughtyHref(href: string, options?: { allowedSchemes?: string[]; allowProtocolRelative?: boolean }): boolean;
}
