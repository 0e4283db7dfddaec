/**
 * `node --import tsx bench/ab.ts NAME=MAIN[,SETTING=VALUE...] ...`: the read table's "npm start defaults" row (run.ts)
 * for several builds or settings of the store side by side, in paired rounds. One run of `npm run bench` cannot tell
 * a 10 % change from this shared machine's drift; rounds taken in turn, against a bare server loaded in the same
 * rounds, can.
 *
 * MAIN is a build's main.js inside the project (so that it finds node_modules). To compare a change with what was
 * before it: `mkdir -p node_modules/.ab/before && cp -r dist node_modules/.ab/before/` before the change, then after it
 * `npm run build && node --import tsx bench/ab.ts before=node_modules/.ab/before/dist/main.js after=dist/main.js`.
 * Settings after a comma are added to that store's environment: `silent=dist/main.js,LOG_LEVEL=silent`.
 *
 * Each store serves its own copy of the bench's catalog (imported by this checkout's build), all of them at once,
 * with the defaults row's settings (TRUST_PROXY=loopback, requests over BENCH_CLIENT_ADDRESSES addresses). After a
 * warm-up, AB_ROUNDS rounds (default 6) load each store and the bare server in turn for BENCH_SECONDS / 2, the order
 * reversed every other round. Printed for each: req/s per round, the ratio to the bare server in the same round, and
 * the CPU µs its process used per answer.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { load, startTarget, type Target } from './harness.js';
import { runStorefront, startServe, writeBenchCatalog } from './serve-process.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.AB_ROUNDS ?? 6);
const CATALOG_SIZE = Number(process.env.BENCH_PRODUCTS ?? 10_000);
const CLIENT_ADDRESSES = Number(process.env.BENCH_CLIENT_ADDRESSES ?? 10_000);
const PRODUCT = '/products/hydration-drink-stick.js';
const WARMUP_SECONDS = 2;

interface Contender {
  name: string;
  target: Target;
  path: string;
  rps: number[];
  cpuSeconds: number;
  answers: number;
}

/** NAME=VALUE split at its first "=" (a name is never empty). */
function pairOf(text: string, argument: string): [string, string] {
  const at = text.indexOf('=');
  if (at < 1) throw new Error(`expected NAME=MAIN[,SETTING=VALUE...], got "${argument}"`);
  return [text.slice(0, at), text.slice(at + 1)];
}

function parse(argument: string): { name: string; main: string; settings: Record<string, string> } {
  const [head = '', ...rest] = argument.split(',');
  const [name, main] = pairOf(head, argument);
  return { name, main, settings: Object.fromEntries(rest.map((pair) => pairOf(pair, argument))) };
}

async function main(): Promise<void> {
  const builds = process.argv.slice(2).map(parse);
  if (builds.length === 0) throw new Error('usage: bench/ab.ts NAME=MAIN[,SETTING=VALUE...] ... (see the comment at its top)');
  const catalog = writeBenchCatalog(CATALOG_SIZE);
  const dataDirs: string[] = [];
  const contenders: Contender[] = [];
  try {
    for (const build of builds) {
      const dataDir = mkdtempSync(path.join(tmpdir(), 'sf-bench-ab-'));
      dataDirs.push(dataDir);
      await runStorefront(['import', catalog.file], { DATA_DIR: dataDir });
      const target = await startServe({ DATA_DIR: dataDir, TRUST_PROXY: 'loopback', ...build.settings }, { main: build.main });
      // A first search finishes the search index a store builds after its start (as run.ts does).
      await (await fetch(`http://127.0.0.1:${target.port}/search/suggest.json?q=a`)).arrayBuffer();
      contenders.push({ name: build.name, target, path: PRODUCT, rps: [], cpuSeconds: 0, answers: 0 });
    }
    const size = (await (await fetch(`http://127.0.0.1:${contenders[0]!.target.port}${PRODUCT}`)).arrayBuffer()).byteLength;
    contenders.unshift({ name: 'bare', target: await startTarget(['bare', String(size)]), path: '/', rps: [], cpuSeconds: 0, answers: 0 });
    for (const one of contenders) await load(`http://127.0.0.1:${one.target.port}${one.path}`, { seconds: WARMUP_SECONDS, clientAddresses: CLIENT_ADDRESSES });
    for (let round = 0; round < ROUNDS; round++) {
      for (const one of round % 2 === 0 ? contenders : [...contenders].reverse()) {
        const before = one.target.cpuSeconds() ?? 0;
        const result = await load(`http://127.0.0.1:${one.target.port}${one.path}`, { seconds: SECONDS / 2, clientAddresses: CLIENT_ADDRESSES });
        one.cpuSeconds += (one.target.cpuSeconds() ?? 0) - before;
        one.answers += result.responses;
        one.rps.push(result.requestsPerSecond);
        if (result.non2xx || result.errors) console.log(`${one.name}: ${result.non2xx} non-2xx, ${result.errors} errors in round ${round + 1}`);
      }
    }
    const bare = contenders[0]!.rps;
    const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
    console.table(
      contenders.map((one) => ({
        name: one.name,
        'req/s by round': one.rps.map(Math.round).join(' '),
        'ratio by round': one.rps.map((rps, round) => (rps / bare[round]!).toFixed(2)).join(' '),
        ratio: Number((sum(one.rps) / sum(bare)).toFixed(2)),
        'CPU µs per answer': Number(((1e6 * one.cpuSeconds) / Math.max(1, one.answers)).toFixed(1)),
      })),
    );
  } finally {
    await Promise.all(contenders.map((one) => one.target.stop()));
    catalog.remove();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  }
}

await main();
