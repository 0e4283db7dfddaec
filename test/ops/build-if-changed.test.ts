/**
 * `npm start` builds only when something the build reads changed (scripts/build-if-changed.mjs), and says so before
 * the silence of a build and after it. Run in a scratch project whose compiler and asset copier are stand-ins that
 * count their runs.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
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
/** Runs the prestart script; answers what it wrote on stderr. */
const start = () => {
  const run = spawnSync(process.execPath, [at('scripts', 'build-if-changed.mjs')], { cwd: project, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout, '', 'stdout is left to the store');
  return run.stderr;
};

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

  it('builds when there is no build yet, saying so before (it takes about a minute) and after', () => {
    const said = start();
    assert.equal(runs(), 1);
    assert.match(said, /^Building the store \(first start, about a minute; later starts skip this unless the code changed\)…\nBuilt in \d+ s\. Starting the store: a first start also creates its database, so the banner may take up to half a minute more\.\n$/);
  });

  it('does not build again when nothing changed, and says nothing', () => {
    builtEarlier();
    assert.equal(start(), '');
    assert.equal(start(), '');
    assert.equal(runs(), 1);
  });

  it('builds again when a source file changed, saying it rebuilds; then not again', () => {
    builtEarlier();
    writeFileSync(at('src', 'catalog', 'catalog.ts'), 'export const changed = true;\n');
    assert.match(start(), /^Rebuilding the store \(its code changed since the last build, about a minute\)…\nBuilt in \d+ s; starting the store\.\n$/);
    assert.equal(runs(), 2);
    assert.equal(start(), '');
    assert.equal(runs(), 2);
  });

  it('builds again when package.json changed', () => {
    builtEarlier();
    writeFileSync(at('package.json'), '{"type":"commonjs","name":"x"}\n');
    start();
    assert.equal(runs(), 3);
  });

  it("a failed build: one line after the compiler's own errors, exit 1, and the next start tries again", () => {
    builtEarlier();
    writeFileSync(at('src', 'main.ts'), 'export const broken = true;\n');
    const compiler = at('node_modules', 'typescript', 'bin', 'tsc');
    const working = readFileSync(compiler, 'utf8');
    writeFileSync(compiler, "console.error('src/main.ts(1,1): error TS1005'); process.exit(2);\n");
    const failed = spawnSync(process.execPath, [at('scripts', 'build-if-changed.mjs')], { cwd: project, encoding: 'utf8' });
    assert.equal(failed.status, 1);
    assert.equal(failed.stderr, 'Rebuilding the store (its code changed since the last build, about a minute)…\nsrc/main.ts(1,1): error TS1005\nThe build failed (the errors are above), so the store was not started.\n');
    writeFileSync(compiler, working);
    assert.match(start(), /^Rebuilding the store/);
    assert.equal(runs(), 4);
  });
});
