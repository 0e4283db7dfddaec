// ESLint flat config. `npm run lint` (part of `npm test`) lints src/, test/, bench/ and scripts/ with
// ESLint's and typescript-eslint's recommended rules, in seconds. `npm run lint:types` adds typescript-eslint's
// type-checked rules (floating promises, misused promises, needless assertions…): they type-check the whole
// project again, about 45 s of CPU on this project against 8 s, so they are a separate command rather than part of every
// test run.
import js from '@eslint/js';
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
  typeChecked ? typeCheckedRules : [],
  {
    files: ['**/*.js', '**/*.mjs'],
    extends: typeChecked ? [tseslint.configs.disableTypeChecked] : [],
    languageOptions: { globals: nodeGlobals },
  },
);
