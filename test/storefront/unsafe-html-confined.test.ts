/**
 * Markup taken as it is stays where it is listed (issue 35, build item 9): the project's own ESLint configuration
 * refuses `unsafeHtml()` in any file but the few eslint.config.js names, and `new Html()` (or Html imported as a
 * value) anywhere but html.ts, so a page cannot quietly turn what a buyer typed into markup.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ESLint } from 'eslint';
import { PROJECT_ROOT } from '../helpers/project-root.js';

const root = PROJECT_ROOT;
const eslint = new ESLint({ cwd: root });

/** The no-restricted-syntax messages ESLint gives `code` as if it were the file at `filePath` (relative to the project). */
async function restrictions(code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, filePath) });
  return result!.messages.filter((message) => message.ruleId === 'no-restricted-syntax').map((message) => message.message);
}

const CALLS_UNSAFE_HTML = `import { unsafeHtml } from '../../markup/html.js';
export const note = (text: string) => unsafeHtml(text);
`;

describe('markup taken as it is, confined by the lint rules', () => {
  it('a new unsafeHtml() call in a page not listed fails lint; the same call in a listed file passes', async () => {
    const refused = await restrictions(CALLS_UNSAFE_HTML, 'src/storefront/pages/order-page.ts');
    assert.equal(refused.length, 2, refused.join('\n'));
    for (const message of refused) assert.match(message, /^unsafeHtml\(\) takes text as markup unescaped/);
    assert.deepEqual(await restrictions(CALLS_UNSAFE_HTML, 'src/storefront/pages/shop-parts.ts'), []);
  });

  it('outside the pages too, and through a namespace import', async () => {
    const code = `import * as markup from '../markup/html.js';
export const line = (text: string) => markup.unsafeHtml(text);
`;
    assert.equal((await restrictions(code, 'src/mail/order-mail.ts')).length, 1);
  });

  it('new Html() and Html imported as a value fail lint everywhere but html.ts, listed files included; a type import passes', async () => {
    const code = `import { Html } from '../../markup/html.js';
export const note = (text: string) => new Html(text);
`;
    for (const file of ['src/storefront/pages/cart-page.ts', 'src/storefront/pages/shop-parts.ts']) {
      const refused = await restrictions(code, file);
      assert.equal(refused.length, 2, `${file}: ${refused.join('\n')}`);
    }
    assert.deepEqual(await restrictions(`import type { Html } from '../../markup/html.js';\nexport const same = (a: Html) => a;\n`, 'src/storefront/pages/cart-page.ts'), []);
    assert.deepEqual(await restrictions(`import { html, type Html } from '../../markup/html.js';\nexport const b = (a: string): Html => html\`<b>\${a}</b>\`;\n`, 'src/storefront/pages/cart-page.ts'), []);
  });
});
