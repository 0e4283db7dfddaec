// ESLint flat config. `npm run lint` (part of `npm test`) lints src/, test/, bench/ and scripts/ with
// ESLint's and typescript-eslint's recommended rules, and holds src/'s layers (LAYERS below, eslint-plugin-boundaries;
// docs/design.md, Layers), in seconds. `npm run lint:types` adds typescript-eslint's
// type-checked rules (floating promises, misused promises, needless assertions…): they type-check the whole
// project again, about 45 s of CPU on this project against 8 s, so they are a separate command rather than part of every
// test run.
import js from '@eslint/js';
import boundaries from 'eslint-plugin-boundaries';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

const typeChecked = process.env.LINT_TYPE_CHECKED === '1';

/** The Node.js globals the plain JavaScript files use (TypeScript files get theirs from @types/node). */
const nodeGlobals = Object.fromEntries(
  ['process', 'console', 'Buffer', 'URL', 'URLSearchParams', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'fetch'].map(
    (name) => [name, 'readonly'],
  ),
);

/** Where markup is made: `new Html()` anywhere else would make any text markup. */
const HTML_MODULE = 'src/markup/html.ts';

/**
 * The files that may take text as markup as it is (`unsafeHtml()` of src/markup/html.ts), each with why.
 * Everywhere else markup comes from `html` templates, which escape what they are given.
 */
const unsafeHtmlCallers = {
  'src/storefront/pages/layout.ts': 'the page style sheet and the JSON-LD block (JSON with < escaped), both written by this program',
  'src/storefront/pages/shop-parts.ts': "the merchant's description HTML, as sanitize-html returns it",
  'src/admin/admin-layout.ts': "the admin's style sheet, written by this program",
};

const NEW_HTML = [
  { selector: "NewExpression[callee.name='Html']", message: 'new Html() makes any text markup: build markup with html`` (or see unsafeHtml).' },
  {
    selector: "ImportDeclaration[importKind='value'] > ImportSpecifier[importKind='value'][imported.name='Html']",
    message: 'Import Html as a type (import { type Html }): markup is built with html``.',
  },
];
const UNSAFE_HTML_MESSAGE = 'unsafeHtml() takes text as markup unescaped: only the files listed in eslint.config.js (unsafeHtmlCallers) may call it.';
const UNSAFE_HTML = ["ImportSpecifier[imported.name='unsafeHtml']", "CallExpression[callee.name='unsafeHtml']", "MemberExpression[property.name='unsafeHtml']"].map(
  (selector) => ({ selector, message: UNSAFE_HTML_MESSAGE }),
);

/**
 * The layers of src/ (docs/design.md, "Layers"), each a kind of element eslint-plugin-boundaries knows by its path:
 * the domain folders, the two doors and the merchant's admin (a third door, for staff), the request pipeline (src/http/) and the composition root (the files at src/'s
 * top: app.ts, store.ts, config.ts, main.ts, …, and src/cli/).
 */
const DOMAIN_FOLDERS = [
  'audit', 'cart', 'catalog', 'checkout', 'db', 'fields', 'idempotency', 'inventory', 'mail', 'markup', 'orders', 'outbox',
  'payments', 'recommendations', 'reports', 'search', 'staff', 'subscriptions',
];
const LAYERS = [
  { type: 'domain', pattern: `src/{${DOMAIN_FOLDERS.join(',')}}/**`, partialMatch: false },
  { type: 'storefront', pattern: 'src/storefront/**', partialMatch: false },
  { type: 'ucp', pattern: 'src/ucp/**', partialMatch: false },
  { type: 'admin', pattern: 'src/admin/**', partialMatch: false },
  { type: 'pipeline', pattern: 'src/http/**', partialMatch: false },
  { type: 'root', pattern: 'src/cli', partialMatch: false },
  // A folder under src/ not listed above: nothing it holds may import from src/ until it is given its layer here.
  { type: 'unplaced', pattern: 'src/*', partialMatch: false },
  { type: 'root', pattern: 'src', partialMatch: false },
];
const notTo = (types, message) => ({ disallow: { to: { element: { types: { anyOf: types } } } }, message });
/** What each layer may not import (everything else it may); a type-only import, a re-export or an import() counts too. */
const LAYER_RULES = [
  { from: { element: { type: 'unplaced' } }, ...notTo(['domain', 'storefront', 'ucp', 'admin', 'pipeline', 'root', 'unplaced'], 'This folder has no layer yet: add it to LAYERS in eslint.config.js (and to docs/design.md, Layers).') },
  { from: { element: { type: 'domain' } }, ...notTo(['storefront', 'ucp', 'admin', 'pipeline', 'root', 'unplaced'], 'A domain folder imports no door, no src/http/ and not the composition root (the app\'s config, the store): take options and collaborators as arguments (docs/design.md, Layers).') },
  { from: { element: { type: 'storefront' } }, ...notTo(['ucp', 'admin'], 'The storefront door never imports another door (src/ucp/, src/admin/): share through a domain folder (docs/design.md, Layers).') },
  { from: { element: { type: 'ucp' } }, ...notTo(['storefront', 'admin'], 'The commerce door never imports another door (src/storefront/, src/admin/): share through a domain folder (docs/design.md, Layers).') },
  { from: { element: { type: 'admin' } }, ...notTo(['storefront', 'ucp'], 'The admin never imports another door (src/storefront/, src/ucp/): share through a domain folder (docs/design.md, Layers).') },
  { from: { element: { type: 'pipeline' } }, ...notTo(['storefront', 'ucp', 'admin', 'unplaced'], 'src/http/ imports no door: a door registers what the pipeline needs (route config, app.ts) (docs/design.md, Layers).') },
];

/** With LINT_TYPE_CHECKED=1 (`npm run lint:types`): type information from tsconfig.json, and the rules' options. */
const typeCheckedRules = {
  files: ['**/*.ts'],
  languageOptions: {
    parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
  },
  rules: {
    // `any` is already kept to a few visible places (see no-explicit-any); tracing it through every use adds noise.
    '@typescript-eslint/no-unsafe-argument': 'off',
    '@typescript-eslint/no-unsafe-assignment': 'off',
    '@typescript-eslint/no-unsafe-call': 'off',
    '@typescript-eslint/no-unsafe-member-access': 'off',
    '@typescript-eslint/no-unsafe-return': 'off',
    // Fastify handlers and interface implementations are async without always awaiting.
    '@typescript-eslint/require-await': 'off',
    // Promises are awaited, returned, or dropped with `void` on purpose; node:test waits for describe() and it() itself.
    '@typescript-eslint/no-floating-promises': [
      'error',
      {
        ignoreVoid: true,
        allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite'] }],
      },
    ],
    // Numbers (ids, counts, ports) read fine in messages; anything else is turned into text explicitly.
    '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
  },
};

export default defineConfig(
  {
    ignores: ['dist/', 'node_modules/', 'data/', '.bench/', 'vendor/', 'src/ucp/schemas/ucp-schemas.generated.ts'],
  },
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },
  js.configs.recommended,
  typeChecked ? tseslint.configs.recommendedTypeChecked : tseslint.configs.recommended,
  {
    rules: {
      // `_name` marks a parameter or binding kept on purpose (a callback's position, a destructured rest).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      // verbatimModuleSyntax already demands `type` on type-only imports; `import { type A }` alone would
      // still load the module at run time.
      '@typescript-eslint/no-import-type-side-effects': 'error',
      // Text handling matches ASCII ranges on purpose (`[^\x00-\x7f]`); a stray control character is no risk here.
      'no-control-regex': 'off',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    // Tests read JSON answers as `any` on purpose: the assertions are the type check.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.ts'],
    ignores: [HTML_MODULE, ...Object.keys(unsafeHtmlCallers)],
    rules: { 'no-restricted-syntax': ['error', ...NEW_HTML, ...UNSAFE_HTML] },
  },
  {
    files: Object.keys(unsafeHtmlCallers),
    rules: { 'no-restricted-syntax': ['error', ...NEW_HTML] },
  },
  {
    // The layers, held by eslint-plugin-boundaries; imports resolved as TypeScript resolves them (`./x.js` is x.ts).
    files: ['src/**/*.ts'],
    plugins: { boundaries },
    settings: {
      'boundaries/elements': LAYERS,
      'boundaries/dependency-nodes': ['import', 'export', 'dynamic-import'],
      'import/resolver': { typescript: { project: 'tsconfig.json' } },
    },
    rules: {
      'boundaries/dependencies': ['error', { default: 'allow', policies: LAYER_RULES }],
    },
  },
  typeChecked ? typeCheckedRules : [],
  {
    files: ['**/*.js', '**/*.mjs'],
    extends: typeChecked ? [tseslint.configs.disableTypeChecked] : [],
    languageOptions: { globals: nodeGlobals },
  },
);
