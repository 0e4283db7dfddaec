// `npm start` (prestart): builds dist/ as `npm run build` does, but only when something it is built from changed
// since the last build (a file under src/, a tsconfig, package.json or the lockfile is newer than the stamp the last
// build left), so a start with nothing changed does not wait for tsc. A build says so on stderr before it starts (it
// takes about 50 s on an idle 2-core machine, 70 s on a busy one, with nothing printed meanwhile) and how long it took
// after; the first start then creates the database (about 20 to 30 s more on that busy machine) before the banner.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const STAMP = path.join('dist', '.built');
const INPUTS = ['src', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json', path.join('scripts', 'copy-assets.mjs')];

function newest(entry) {
  if (!existsSync(entry)) return 0;
  const stat = statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const name of readdirSync(entry)) latest = Math.max(latest, newest(path.join(entry, name)));
  return latest;
}

/** Why `root` needs a build: 'first' (no build yet), 'changed' (an input is newer than the last build), or undefined. */
export function buildReason(root = '.') {
  const stamp = path.join(root, STAMP);
  if (!existsSync(stamp)) return 'first';
  const built = statSync(stamp).mtimeMs;
  return Math.max(...INPUTS.map((input) => newest(path.join(root, input)))) > built ? 'changed' : undefined;
}

/** The line printed before a build: what is happening and how long it takes, so the silence that follows is expected. */
export function buildingLine(reason) {
  return reason === 'first'
    ? 'Building the store (first start, about a minute; later starts skip this unless the code changed)…'
    : 'Rebuilding the store (its code changed since the last build, about a minute)…';
}

/** The line printed after: how long it took, and that the store starts now (a first start also makes its database). */
export function builtLine(ms, reason) {
  const took = `Built in ${Math.round(ms / 1000)} s`;
  return reason === 'first'
    ? `${took}. Starting the store: a first start also creates its database, so the banner may take up to half a minute more.`
    : `${took}; starting the store.`;
}

/** tsc and the assets, as `npm run build`; a failure's own messages are already on the terminal. */
function build(root) {
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  execFileSync(process.execPath, ['scripts/copy-assets.mjs'], { cwd: root, stdio: 'inherit' });
}

/**
 * Builds `root` when it needs it, saying so on `out` before and after; answers whether it built. A failed build
 * leaves no stamp (the next start tries again) and throws.
 */
export function buildIfChanged({ root = '.', out = process.stderr, run = build, now = () => Date.now() } = {}) {
  const reason = buildReason(root);
  if (!reason) return false;
  out.write(`${buildingLine(reason)}\n`);
  const started = now();
  run(root);
  writeFileSync(path.join(root, STAMP), `${new Date().toISOString()}\n`);
  out.write(`${builtLine(now() - started, reason)}\n`);
  return true;
}

// Run as a script (prestart), not imported.
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  try {
    buildIfChanged();
  } catch {
    // tsc printed what is wrong; a stack trace of this script would only bury it.
    process.stderr.write('The build failed (the errors are above), so the store was not started.\n');
    process.exit(1);
  }
}
