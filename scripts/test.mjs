// `npm test`: starts or installs what the tests need and is missing (scripts/start-services.sh: PostgreSQL, Redis,
// Chromium), then runs every test file under test/ with Node's own test runner (or only the files whose path
// contains one of the arguments: `node scripts/test.mjs cart/ ucp/profile`); `npm test` adds `--checks`, the type
// check and the linter run beside the tests.
//
// The tests run on JavaScript: src/, test/ and bench/ are first compiled file by file with esbuild (types stripped, the
// lines kept by an inline source map, in about a second) into node_modules/.test-build/RUN/, beside copies of their
// other files (migrations, assets, fixtures). Loading TypeScript through tsx's module hooks instead cost every test
// process about 2 s of CPU more to start, about 150 s of the suite's time on this machine's two cores (see
// docs/performance.md). `npm run typecheck` checks the types; the tests that start the CLI in processes of their
// own run the compiled src/main.js, as `npm start` runs dist/main.js.
//
// Test stores start from a copy of a migrated template database, with the demo catalog where the store has it (see
// test/helpers/store.ts). For a run of several files they are made here, once, from the migrations as they are now:
// PGlite's handed to the test processes as files, PostgreSQL's as databases on the test server, all deleted
// afterwards; for one or two files each process makes its own PGlite templates (quicker than waiting for shared ones)
// and migrates each new PostgreSQL database. For a run of several files the CLI tests also start on a copy of an
// embedded database's DATA_DIR migrated once here where they need a new one.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import pg from 'pg';

const url = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Runs one statement on the test server; whether it answered (a failure is the caller's to report or shrug off). */
async function postgresQuery(sql) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query(sql);
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

// What the tests need and a fresh machine may lack (PostgreSQL or Redis not running, Chromium for the browser tests
// not installed) is started or installed first; the script does nothing for what is already there.
spawnSync('bash', ['scripts/start-services.sh'], { stdio: 'inherit' });
if (!(await postgresQuery('select 1'))) {
  console.error(`PostgreSQL at ${url} does not answer; the tests run on both backends and need it (set TEST_DATABASE_URL).`);
  process.exit(1);
}

const typescript = (folder) =>
  readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => path.join(folder, file));
const files = typescript('test')
  .filter((file) => file.endsWith('.test.ts'))
  .sort();
// `--checks` (npm test) also runs the type check and the linter, beside the tests rather than before them: the
// tests leave a core idle often enough (waiting on timers, sockets, processes) that they cost the run little. Their
// output is printed after the tests', and either failing fails the run.
const withChecks = process.argv.includes('--checks');
const only = process.argv.slice(2).filter((arg) => arg !== '--checks');
const selected = only.length ? files.filter((file) => only.some((part) => file.includes(part))) : files;

/** `npm run NAME` with its output kept: resolves to its exit code and output. */
function npmRun(name) {
  const child = spawn('npm', ['run', name, '--silent'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  return new Promise((resolve) => child.once('close', (code) => resolve({ name, code: code ?? 1, output })));
}
const checks = withChecks ? [npmRun('typecheck'), npmRun('lint')] : [];

// The compiled tree of this run (two runs at once each have their own): test/x.test.ts runs as
// node_modules/.test-build/RUN/test/x.test.js, importing ../src/… (and the bench's catalog generator) beside it. Deleted at the end of the run.
// A run stopped by Ctrl-C leaves its tree: those a day old are removed here.
const BUILDS = path.join('node_modules', '.test-build');
mkdirSync(BUILDS, { recursive: true });
for (const old of readdirSync(BUILDS)) {
  const at = path.join(BUILDS, old);
  if (Date.now() - statSync(at).mtimeMs > 24 * 3600 * 1000) rmSync(at, { recursive: true, force: true });
}
const BUILD = mkdtempSync(path.join(BUILDS, 'run-'));
await build({
  entryPoints: [...typescript('src'), ...typescript('test'), ...typescript('bench')],
  outdir: BUILD,
  outbase: '.',
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  sourcemap: 'inline',
  tsconfig: 'tsconfig.json',
  logLevel: 'error',
});
for (const folder of ['src', 'test', 'bench']) cpSync(folder, path.join(BUILD, folder), { recursive: true, filter: (from) => !from.endsWith('.ts') });
// Under node_modules/ no package.json above says these files are ES modules: this one does.
writeFileSync(path.join(BUILD, 'package.json'), '{ "type": "module" }\n');
const compiled = (file) => path.join(BUILD, file.replace(/\.ts$/, '.js'));

// Every test process (and every process a test starts: test/helpers/cli.ts) runs WebAssembly on V8's baseline compiler
// alone. PGlite is 9 MB of it, and V8 otherwise optimizes its hot functions again in every process, on background
// threads: a `storefront serve` in a test cost 7 s of CPU to start and stop, 3.5-4.8 s with this; a run of the commerce
// door's and the checkout's tests 12% less CPU (docs/performance.md). What the tests check does not depend on how V8
// compiles; the store itself runs with V8's defaults.
const WASM_FLAGS = ['--liftoff-only'];
const TEMPLATE_ENV = 'STOREFRONT_TEST_PGLITE_TEMPLATE'; // read by test/helpers/store.ts
const POSTGRES_TEMPLATE_ENV = 'STOREFRONT_TEST_POSTGRES_TEMPLATE'; // read by test/helpers/store.ts
// A migrated database on the test server that the run's stores on PostgreSQL are created from, and one with the demo
// catalog seeded too (its name and `_demo`, test/helpers/store.ts); both dropped at the end.
const postgresTemplate = `sf_template_${process.pid}_${Date.now().toString(36)}`;
const PROJECT_ROOT_ENV = 'STOREFRONT_PROJECT_ROOT'; // read by test/helpers/project-root.ts
const BUILT_MAIN_ENV = 'STOREFRONT_TEST_BUILT_MAIN'; // read by test/helpers/cli.ts
const DATA_DIR_TEMPLATE_ENV = 'STOREFRONT_TEST_DATA_DIR_TEMPLATE'; // read by test/helpers/cli.ts
const SHARED_TEMPLATE_FROM_FILES = 3;
const scratch = mkdtempSync(path.join(tmpdir(), 'storefront-test-run-'));
const env = { ...process.env, [PROJECT_ROOT_ENV]: process.cwd() };
delete env[TEMPLATE_ENV];
delete env[POSTGRES_TEMPLATE_ENV];
delete env[BUILT_MAIN_ENV];
delete env[DATA_DIR_TEMPLATE_ENV];
let status = 0;

/**
 * The files each test process runs. The runner starts one process per file it is given, and each start costs about
 * three seconds of CPU before the first test (Node, the app's modules, PGlite's WebAssembly compiled): about 150
 * files made that a fifth of the suite's time on two cores. A run of many files is given groups instead: a group is a
 * file importing FILES_PER_GROUP test files, whose tests then run one file after another in one process, as a
 * file's own do (top-level `before` hooks all run before its first test, `after` hooks after its last). The files are
 * dealt in turn, heaviest first by a rough guess (the file's length, times three for a Chromium walk, two for a test
 * that starts processes): each group gets one of the heaviest, the first groups (run first) the heavier ones, so the
 * run does not end on one long group while a core idles.
 */
const FILES_PER_GROUP = 6;
// A test of the process itself (what a whole app made in it, say) says so in its file and keeps a process of its own.
const OWN_PROCESS = '// test-runner: own process';
function processes(files) {
  const run = (file) => path.resolve(compiled(file));
  if (files.length < 2 * FILES_PER_GROUP) return files.map(run);
  const source = new Map(files.map((file) => [file, readFileSync(file, 'utf8')]));
  const weight = (file) => {
    const text = source.get(file);
    return text.length * (text.includes('launchChromium') ? 3 : text.includes('node:child_process') ? 2 : 1);
  };
  const alone = files.filter((file) => source.get(file).includes(OWN_PROCESS));
  const groups = Array.from({ length: Math.ceil((files.length - alone.length) / FILES_PER_GROUP) }, () => []);
  files
    .filter((file) => !alone.includes(file))
    .sort((a, b) => weight(b) - weight(a))
    .forEach((file, i) => groups[i % groups.length].push(run(file)));
  const folder = path.join(BUILD, 'test-groups');
  mkdirSync(folder);
  const grouped = groups.map((group, i) => {
    const file = path.resolve(folder, `group-${String(i + 1).padStart(2, '0')}.test.js`);
    writeFileSync(file, group.map((member) => `import ${JSON.stringify(pathToFileURL(member).href)};\n`).join(''));
    return file;
  });
  return [...grouped, ...alone.map(run)];
}

try {
  // The tests that start the storefront CLI in processes of its own start it compiled, about a second sooner each
  // than through tsx.
  const main = path.resolve(compiled('src/main.ts'));
  env[BUILT_MAIN_ENV] = main;
  if (selected.length >= SHARED_TEMPLATE_FROM_FILES) {
    // An embedded database created and migrated once, which the tests that start the CLI on a new DATA_DIR copy
    // (made while the template below is).
    const dataDirTemplate = path.join(scratch, 'data-dir-template');
    const migrating = spawn(process.execPath, [...WASM_FLAGS, main, 'migrate'], { stdio: 'ignore', env: { ...env, DATA_DIR: dataDirTemplate, LOG_LEVEL: 'silent' } });
    const migrated = new Promise((resolve) => migrating.once('exit', (code) => resolve(code === 0)));
    const template = path.join(scratch, 'pglite-template.tar');
    const write =
      `const { writePgliteTemplate, writePostgresTemplate } = await import('./${compiled('test/helpers/store.ts')}');` +
      'await Promise.all([writePgliteTemplate(process.argv[1]), writePostgresTemplate(process.argv[2])]);';
    execFileSync(process.execPath, [...WASM_FLAGS, '--input-type=module', '--eval', write, template, postgresTemplate], { stdio: 'inherit', env: { ...env, TEST_DATABASE_URL: url } });
    env[TEMPLATE_ENV] = template;
    env[POSTGRES_TEMPLATE_ENV] = postgresTemplate;
    if (await migrated) env[DATA_DIR_TEMPLATE_ENV] = dataDirTemplate; // else each test's store creates its own
  }
  // Absolute paths: from Node 22 on, the test runner takes its arguments as glob patterns, and a relative pattern
  // under node_modules/ matches nothing ("Could not find …" on Node 24).
  const tests = spawn(process.execPath, [...WASM_FLAGS, '--enable-source-maps', '--test', '--test-concurrency=2', '--test-reporter=spec', ...processes(selected)], {
    stdio: 'inherit',
    env,
  });
  status = await new Promise((resolve) => tests.once('close', (code) => resolve(code ?? 1)));
} catch (error) {
  status = error.status ?? 1;
} finally {
  // A template the drop could not remove is left for a hand; the run's result stands.
  if (selected.length >= SHARED_TEMPLATE_FROM_FILES) {
    for (const database of [postgresTemplate, `${postgresTemplate}_demo`]) await postgresQuery(`drop database if exists ${database} with (force)`);
  }
  rmSync(scratch, { recursive: true, force: true });
  rmSync(BUILD, { recursive: true, force: true });
}
for (const check of await Promise.all(checks)) {
  process.stdout.write(check.output);
  console.log(`npm run ${check.name}: ${check.code === 0 ? 'passed' : `failed (exit ${check.code})`}`);
  if (check.code !== 0) status ||= 1;
}
process.exit(status);
