// `npm start` (prestart): builds dist/ as `npm run build` does, but only when something it is built from changed
// since the last build (a file under src/, a tsconfig, package.json or the lockfile is newer than the stamp the last
// build left), so a start with nothing changed does not wait for tsc.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

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

const built = existsSync(STAMP) ? statSync(STAMP).mtimeMs : 0;
if (built === 0 || Math.max(...INPUTS.map(newest)) > built) {
  const started = Date.now();
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
  execFileSync(process.execPath, ['scripts/copy-assets.mjs'], { stdio: 'inherit' });
  writeFileSync(STAMP, `${new Date().toISOString()}\n`);
  if (process.stderr.isTTY) process.stderr.write(`built dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}
