/**
 * `npm start` builds only when something the build reads changed (scripts/build-if-changed.mjs). Run in a scratch
 * project whose compiler and asset copier are stand-ins that count their runs.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';

const project = mkdtempSync(path.join(tmpdir(), 'storefront-build-'));
after(() => rmSync(project, { recursive: true, force: true }));

const at = (...parts: string[]) => path.join(project, ...parts);
const runs = () => readFileSync(at('runs.log'), 'utf8').trim().split('\n').filter(Boolean).length;
/** Dates the last build 30 s back (after the sources' dates), so a file written now is newer whatever the file system's timestamp resolution. */
const builtEarlier = () => {
  const earlier = new Date(Date.now() - 30_000);
  utimesSync(at('dist', '.built'), earlier, earlier);
};
const start = () => execFileSync(process.execPath, [at('scripts', 'build-if-changed.mjs')], { cwd: project, stdio: 'pipe' });

describe('npm start builds only when its sources changed', () => {
  mkdirSync(at('scripts'), { recursive: true });
  mkdirSync(at('src', 'catalog'), { recursive: true });
  mkdirSync(at('node_modules', 'typescript', 'bin'), { recursive: true });
  copyFileSync('scripts/build-if-changed.mjs', at('scripts', 'build-if-changed.mjs'));
  writeFileSync(at('node_modules', 'typescript', 'bin', 'tsc'), "require('node:fs').mkdirSync('dist', { recursive: true }); require('node:fs').appendFileSync('runs.log', 'tsc\\n');\n");
  writeFileSync(at('scripts', 'copy-assets.mjs'), '');
  writeFileSync(at('src', 'main.ts'), 'export {};\n');
  writeFileSync(at('src', 'catalog', 'catalog.ts'), 'export {};\n');
  writeFileSync(at('runs.log'), '');
  writeFileSync(at('package.json'), '{"type":"commonjs"}\n');
  const past = new Date(Date.now() - 60_000);
  for (const file of ['src/main.ts', 'src/catalog/catalog.ts', 'src/catalog', 'src', 'package.json', 'scripts/copy-assets.mjs']) utimesSync(at(file), past, past);

  it('builds when there is no build yet', () => {
    start();
    assert.equal(runs(), 1);
  });

  it('does not build again when nothing changed', () => {
    builtEarlier();
    start();
    start();
    assert.equal(runs(), 1);
  });

  it('builds again when a source file changed, then not again', () => {
    builtEarlier();
    writeFileSync(at('src', 'catalog', 'catalog.ts'), 'export const changed = true;\n');
    start();
    assert.equal(runs(), 2);
    start();
    assert.equal(runs(), 2);
  });

  it('builds again when package.json changed', () => {
    builtEarlier();
    writeFileSync(at('package.json'), '{"type":"commonjs","name":"x"}\n');
    start();
    assert.equal(runs(), 3);
  });
});
