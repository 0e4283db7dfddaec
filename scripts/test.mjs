// `npm test`: makes sure PostgreSQL answers (starting the local server when it does not), then runs every
// test file under test/ with Node's own test runner and tsx.
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
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

if (!(await postgresAnswers())) {
  console.log('PostgreSQL does not answer; starting the local services');
  spawnSync('bash', ['scripts/start-services.sh'], { stdio: 'inherit' });
  if (!(await postgresAnswers())) {
    console.error(`PostgreSQL at ${url} does not answer; the tests run on both backends and need it (set TEST_DATABASE_URL).`);
    process.exit(1);
  }
}

const files = readdirSync('test', { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.test.ts'))
  .map((file) => path.join('test', file))
  .sort();
const only = process.argv.slice(2);
const selected = only.length ? files.filter((file) => only.some((part) => file.includes(part))) : files;

try {
  execFileSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...selected], {
    stdio: 'inherit',
  });
} catch (error) {
  process.exit(error.status ?? 1);
}
