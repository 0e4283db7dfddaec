// `npm test`: starts or installs what the tests need and is missing (scripts/start-services.sh: PostgreSQL, Redis,
// Chromium), then runs every test file under test/ with Node's own test runner and tsx (or only the files whose
// path contains one of the arguments: `node scripts/test.mjs cart/ ucp/profile`).
//
// Test stores on PGlite start from a copy of a migrated template database (see test/helpers/store.ts). For a
// run of several files it is made here, once, from the migrations as they are now, handed to the test
// processes as a file and deleted afterwards; for one or two files each process makes its own (quicker than
// waiting for the shared one). For such a run the project is also built (dist/, as `npm start` does), and the
// tests that run the CLI in processes of their own run that build (test/helpers/cli.ts), on a copy of an embedded
// database's DATA_DIR migrated once here where they need a new one.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';

const url = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

async function postgresAnswers() {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
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
if (!(await postgresAnswers())) {
  console.error(`PostgreSQL at ${url} does not answer; the tests run on both backends and need it (set TEST_DATABASE_URL).`);
  process.exit(1);
}

const files = readdirSync('test', { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.test.ts'))
  .map((file) => path.join('test', file))
  .sort();
const only = process.argv.slice(2);
const selected = only.length ? files.filter((file) => only.some((part) => file.includes(part))) : files;

const TEMPLATE_ENV = 'STOREFRONT_TEST_PGLITE_TEMPLATE'; // read by test/helpers/store.ts
const BUILT_MAIN_ENV = 'STOREFRONT_TEST_BUILT_MAIN'; // read by test/helpers/cli.ts
const DATA_DIR_TEMPLATE_ENV = 'STOREFRONT_TEST_DATA_DIR_TEMPLATE'; // read by test/helpers/cli.ts
const SHARED_TEMPLATE_FROM_FILES = 3;
const scratch = mkdtempSync(path.join(tmpdir(), 'storefront-test-run-'));
const env = { ...process.env };
delete env[TEMPLATE_ENV];
delete env[BUILT_MAIN_ENV];
delete env[DATA_DIR_TEMPLATE_ENV];
let status = 0;
try {
  if (selected.length >= SHARED_TEMPLATE_FROM_FILES) {
    // The build `npm start` runs, made once: the tests that start the storefront CLI in processes of its own start it
    // from here, about a second sooner each than through tsx.
    execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
    execFileSync(process.execPath, ['scripts/copy-assets.mjs'], { stdio: 'inherit' });
    env[BUILT_MAIN_ENV] = path.resolve('dist/main.js');
    // An embedded database created and migrated once, which the tests that start the CLI on a new DATA_DIR copy
    // (made while the template below is).
    const dataDirTemplate = path.join(scratch, 'data-dir-template');
    const migrating = spawn(process.execPath, ['dist/main.js', 'migrate'], { stdio: 'ignore', env: { ...env, DATA_DIR: dataDirTemplate, LOG_LEVEL: 'silent' } });
    const migrated = new Promise((resolve) => migrating.once('exit', (code) => resolve(code === 0)));
    const template = path.join(scratch, 'pglite-template.tar');
    const write = `const { writePgliteTemplate } = await import('./test/helpers/store.ts'); await writePgliteTemplate(process.argv[1]);`;
    execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', write, template], { stdio: 'inherit' });
    env[TEMPLATE_ENV] = template;
    if (await migrated) env[DATA_DIR_TEMPLATE_ENV] = dataDirTemplate; // else each test's store creates its own
  }
  execFileSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...selected], {
    stdio: 'inherit',
    env,
  });
} catch (error) {
  status = error.status ?? 1;
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
process.exit(status);
