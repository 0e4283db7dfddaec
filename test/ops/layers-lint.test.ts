/**
 * The layers are held by the linter (issue 37, build item 5): `npm run lint` runs ESLint with eslint.config.js, whose
 * eslint-plugin-boundaries rules refuse a domain folder importing a door, src/http/ or the composition root, a door
 * importing the other door, and src/http/ importing a door (docs/design.md, Layers). Each case lints a forbidden
 * import as if it were a file at that path, with the project's own configuration; one runs the ESLint command that
 * `npm run lint` runs, and expects it to fail. Nothing is written into the tree.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ESLint } from 'eslint';
import { PROJECT_ROOT } from '../helpers/project-root.js';

const root = PROJECT_ROOT;
const eslint = new ESLint({ cwd: root });

/** The layer rules' messages ESLint gives `code` as if it were the file at `filePath` (relative to the project). */
async function layerFaults(code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, filePath) });
  return result!.messages.filter((message) => message.ruleId === 'boundaries/dependencies').map((message) => message.message);
}

/** An import of `target` (a module path, relative to the importing file) that uses what it imports. */
const importing = (target: string, kind: 'value' | 'type' = 'value') =>
  kind === 'type' ? `import type * as imported from '${target}';\nexport type Imported = typeof imported;\n` : `import * as imported from '${target}';\nexport const used = imported;\n`;

describe('the layers, held by npm run lint', () => {
  it('a domain folder may not import a door, src/http/ or the composition root (the config, the store), not even a type', async () => {
    const refused: [file: string, code: string][] = [
      ['src/checkout/layer-probe.ts', importing('../storefront/cart-cookie.js')],
      ['src/orders/layer-probe.ts', importing('../ucp/webhooks/order-webhooks.js')],
      ['src/mail/layer-probe.ts', importing('../http/errors.js')],
      ['src/payments/layer-probe.ts', importing('../config.js', 'type')],
      ['src/cart/layer-probe.ts', importing('../store.js', 'type')],
      ['src/markup/layer-probe.ts', `export const later = () => import('../storefront/pages/layout.js');\n`],
      ['src/fields/layer-probe.ts', `export { CART_COOKIE } from '../storefront/cart-cookie.js';\n`],
    ];
    for (const [file, code] of refused) {
      const faults = await layerFaults(code, file);
      assert.equal(faults.length, 1, `${file}: ${code}`);
      assert.match(faults[0]!, /^A domain folder imports no door, no src\/http\/ and not the composition root/);
    }
    assert.deepEqual(await layerFaults(importing('../cart/cart.js'), 'src/checkout/layer-probe.ts'), [], 'a domain folder imports another');
  });

  it('a door may not import another door; it may import the domain, src/http/ and the composition root', async () => {
    assert.match((await layerFaults(importing('../ucp/protocol.js'), 'src/storefront/layer-probe.ts'))[0] ?? '', /^The storefront door never imports another door/);
    assert.match((await layerFaults(importing('../../storefront/cart-cookie.js'), 'src/ucp/tools/layer-probe.ts'))[0] ?? '', /^The commerce door never imports another door/);
    assert.match((await layerFaults(importing('../admin/admin-kit.js'), 'src/storefront/layer-probe.ts'))[0] ?? '', /^The storefront door never imports another door/);
    assert.match((await layerFaults(importing('../storefront/cart-cookie.js'), 'src/admin/layer-probe.ts'))[0] ?? '', /^The admin never imports another door/);
    assert.match((await layerFaults(importing('../ucp/protocol.js'), 'src/admin/layer-probe.ts'))[0] ?? '', /^The admin never imports another door/);
    for (const target of ['../../checkout/shipping.js', '../../http/errors.js', '../../store.js', '../protocol.js']) {
      assert.deepEqual(await layerFaults(importing(target), 'src/ucp/tools/layer-probe.ts'), [], target);
    }
  });

  it('src/http/ may not import a door; the composition root may import anything', async () => {
    assert.match((await layerFaults(importing('../storefront/cart-cookie.js'), 'src/http/layer-probe.ts'))[0] ?? '', /^src\/http\/ imports no door/);
    assert.match((await layerFaults(importing('../ucp/protocol.js'), 'src/http/layer-probe.ts'))[0] ?? '', /^src\/http\/ imports no door/);
    assert.deepEqual(await layerFaults(importing('../db/database.js'), 'src/http/layer-probe.ts'), []);
    for (const file of ['src/layer-probe.ts', 'src/cli/layer-probe.ts']) {
      const target = file.startsWith('src/cli/') ? '../ucp/protocol.js' : './storefront/cart-cookie.js';
      assert.deepEqual(await layerFaults(importing(target), file), [], file);
    }
  });

  it('a folder under src/ that no layer names may import nothing from src/ until it is given one', async () => {
    const faults = await layerFaults(importing('../cart/cart.js'), 'src/unplaced-folder/layer-probe.ts');
    assert.match(faults[0] ?? '', /^This folder has no layer yet/);
  });

  it('the ESLint command npm run lint runs fails on a forbidden import', () => {
    const run = spawnSync(process.execPath, [path.join(root, 'node_modules/eslint/bin/eslint.js'), '--stdin', '--stdin-filename', 'src/checkout/layer-probe.ts'], {
      cwd: root,
      input: importing('../storefront/cart-cookie.js'),
      encoding: 'utf8',
    });
    assert.equal(run.status, 1, run.stderr);
    assert.match(run.stdout, /boundaries\/dependencies/);
  });
});
