/**
 * The storefront CLI as a merchant runs it: in this process through the function the binary runs (runCommand, for
 * most commands), or in a process of its own (runCli, for what only a process shows: exit codes, signals, a start).
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { runCommandLine } from '../../src/cli/command-line.js';
import { loadConfig } from '../../src/config.js';
import { DatabaseInUseError, openDatabase, type Database } from '../../src/db/database.js';
import { POSTGRES_URL } from './store.js';

/** Set by scripts/test.mjs to the build it made for the run (`npm run build`): the CLI starts from it. */
export const BUILT_MAIN_ENV = 'STOREFRONT_TEST_BUILT_MAIN';
/** Set by scripts/test.mjs to an embedded database's DATA_DIR it made and migrated once for the run (`storefront migrate`). */
export const DATA_DIR_TEMPLATE_ENV = 'STOREFRONT_TEST_DATA_DIR_TEMPLATE';

/**
 * `dir` as a new store's DATA_DIR: a copy of the run's migrated template when scripts/test.mjs made one (creating and
 * migrating an embedded database costs a process several seconds of CPU; a copy of its files, a fraction of one),
 * else left for the store to create. Either way the store is empty: `serve` seeds the demo catalog as on a new machine.
 * A `dir` that exists already is a store's and is left as it is.
 */
export function newDataDir(dir: string): string {
  const template = process.env[DATA_DIR_TEMPLATE_ENV];
  if (template && !existsSync(dir)) cpSync(template, dir, { recursive: true });
  return dir;
}

/**
 * The processes a test starts run WebAssembly as the test's own process does: scripts/test.mjs runs the tests with
 * V8's baseline WebAssembly compiler alone (`--liftoff-only`, see there), and a CLI process, seconds long, gains the
 * most from it.
 */
const WASM_FLAGS = process.execArgv.filter((flag) => flag === '--liftoff-only');

/**
 * The node arguments that run the storefront CLI with `args`: the run's build when scripts/test.mjs made one (a
 * process starts about a second sooner than through tsx, and it is what `npm start` runs), else src/ through tsx.
 */
export function storefrontArgs(...args: string[]): string[] {
  const built = process.env[BUILT_MAIN_ENV];
  return [...WASM_FLAGS, ...(built ? [built, ...args] : ['--import', 'tsx', 'src/main.ts', ...args])];
}

/**
 * The node arguments that run `script`, an ES module's text, in a process of its own (a store built with a route of
 * the test's own, say). It loads the storefront's modules through `from`: `await import(${JSON.stringify(from('config'))})`
 * loads src/config.ts. Like storefrontArgs, it runs on the run's build when scripts/test.mjs made one (without tsx's
 * module hooks, which cost a process about 2 s of CPU to start: see scripts/test.mjs), else on src/ through tsx.
 */
export function scriptArgs(script: (from: (name: string) => string) => string): string[] {
  const built = process.env[BUILT_MAIN_ENV];
  if (built) return [...WASM_FLAGS, '--input-type=module', '--eval', script((name) => pathToFileURL(path.join(path.dirname(built), `${name}.js`)).href)];
  return [...WASM_FLAGS, '--import', 'tsx', '--input-type=module', '--eval', script((name) => `./src/${name}.ts`)];
}

/** What a command printed and its exit code. */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `storefront ...args` in a process of its own, as a merchant's shell does. */
export function runCli(args: string[], env: Record<string, string>): CliResult {
  const result = spawnSync(process.execPath, storefrontArgs(...args), {
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * Runs `storefront ...args` in this process, through the function src/main.ts runs (the same arguments, configuration
 * from `env` over this process's environment, the same output), a second or more sooner than a process of its own;
 * on `database` when given (see commandSession), else on the database it opens and closes as the binary does.
 * Not for `serve`, which takes over the process's signals: runCli and a spawned process run that.
 */
export async function runCommand(args: string[], env: Record<string, string>, database?: Database): Promise<CliResult> {
  if (args[0] === undefined || args[0] === 'serve') throw new Error('serve runs in a process of its own (runCli, or spawn storefrontArgs)');
  const stdout: string[] = [];
  const stderr: string[] = [];
  const code = await runCommandLine(args, {
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    stdout: { write: (text: string) => stdout.push(text) },
    stderr: { write: (text: string) => stderr.push(text) },
    ...(database ? { database } : {}),
  });
  return { code, stdout: stdout.join(''), stderr: stderr.join('') };
}

/**
 * Commands run in this process (runCommand) on the database of `env`, held open from one command to the next: an
 * embedded database takes a second or more to open, which the binary spends on every command. While a running store
 * holds it, each command goes where the binary's would (through the store's control socket). close() it before
 * anything else opens the same embedded database (a store placing orders here, a serve process): the next command
 * opens it again.
 */
export function commandSession(env: () => Record<string, string>): { run(...args: string[]): Promise<CliResult>; close(): Promise<void> } {
  let held: Promise<Database | undefined> | undefined;
  return {
    async run(...args) {
      held ??= openDatabase(loadConfig({ ...process.env, LOG_LEVEL: 'silent', ...env() })).catch((error: unknown) => {
        if (error instanceof DatabaseInUseError) return undefined;
        throw error;
      });
      const database = await held;
      if (!database) held = undefined; // a running store holds it: looked for again at the next command
      return runCommand(args, env(), database);
    },
    async close() {
      const closing = held;
      held = undefined;
      await (await closing)?.close();
    },
  };
}

/**
 * Where a CLI test runs its commands: the embedded database in a scratch DATA_DIR, and a fresh PostgreSQL database
 * (its name pushed onto `databases`, which the test drops afterwards). Orders are placed there as in the other
 * tests of what an approval does, with APPROVAL_PROOF=link (test/helpers/store.ts says why).
 */
export function cliTargets(scratch: string, prefix: string, databases: string[]): { name: string; env: () => Promise<Record<string, string>> }[] {
  return [
    { name: 'embedded database', env: async () => ({ DATA_DIR: newDataDir(path.join(scratch, 'data')), APPROVAL_PROOF: 'link' }) },
    {
      name: 'PostgreSQL',
      env: async () => {
        const database = `${prefix}_${randomBytes(6).toString('hex')}`;
        const admin = new pg.Client({ connectionString: POSTGRES_URL });
        await admin.connect();
        await admin.query(`create database ${database}`);
        await admin.end();
        databases.push(database);
        const url = new URL(POSTGRES_URL);
        url.pathname = `/${database}`;
        return { DATABASE_URL: url.toString(), APPROVAL_PROOF: 'link' };
      },
    },
  ];
}

/**
 * A scratch folder for a CLI test file and the list its PostgreSQL databases go on (see cliTargets): after the file's
 * tests the folder is removed and the databases dropped.
 */
export function cliScratch(prefix: string): { scratch: string; databases: string[] } {
  const scratch = mkdtempSync(path.join(tmpdir(), `${prefix}-`));
  const databases: string[] = [];
  after(async () => {
    rmSync(scratch, { recursive: true, force: true });
    if (databases.length === 0) return;
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    for (const database of databases) await admin.query(`drop database if exists ${database} with (force)`).catch(() => {});
    await admin.end();
  });
  return { scratch, databases };
}
