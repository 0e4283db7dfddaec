// Judges one conformance suite's results check by check against conformance/waivers.json (see there):
//   node conformance/verdict.mjs SUITE RESULTS_DIR            exits 1 on a failing check that is not waived, on a
//                                                            waived check that passes, or on a waived scenario that
//                                                            did not run
//   node conformance/verdict.mjs SUITE --expected-failures   prints the suite's scenario baseline (YAML) for the CLI
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const [suite, target] = process.argv.slice(2);
const waivers = JSON.parse(readFileSync(new URL('./waivers.json', import.meta.url), 'utf8'));
const waived = waivers.suites[suite];
if (!waived) {
  console.error(`verdict: no suite "${suite}" in waivers.json`);
  process.exit(2);
}

if (target === '--expected-failures') {
  console.log(['server:', ...Object.keys(waived).map((scenario) => `  - ${scenario}`)].join('\n'));
  process.exit(0);
}

/** A results directory is named server-SCENARIO-TIMESTAMP and holds checks.json. */
const results = new Map();
for (const entry of readdirSync(target)) {
  const match = /^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(entry);
  if (match) results.set(match[1], JSON.parse(readFileSync(path.join(target, entry, 'checks.json'), 'utf8')));
}

const problems = [];
let failing = 0;
for (const [scenario, checks] of results) {
  const allowed = waived[scenario] ?? {};
  const outcome = new Map();
  for (const check of checks) {
    const bad = check.status === 'FAILURE' || check.status === 'WARNING';
    // A check id may repeat (one per probe): it fails when any of its probes does.
    outcome.set(check.id, (outcome.get(check.id) ?? false) || bad);
    if (bad && !(check.id in allowed)) problems.push(`unexpected ${check.status}: ${scenario} / ${check.id}: ${String(check.errorMessage ?? '').slice(0, 200)}`);
  }
  for (const failed of outcome.values()) if (failed) failing += 1;
  for (const id of Object.keys(allowed)) {
    if (outcome.get(id) === false) problems.push(`stale waiver (it passes now; remove it from waivers.json): ${scenario} / ${id}`);
  }
}
for (const scenario of Object.keys(waived)) if (!results.has(scenario)) problems.push(`waived scenario did not run: ${scenario}`);

if (problems.length > 0) {
  console.error(`verdict (${suite}): ${problems.length} problem(s)\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
const reasons = {};
for (const checks of Object.values(waived)) for (const reason of Object.values(checks)) reasons[reason] = (reasons[reason] ?? 0) + 1;
console.log(`verdict (${suite}): ${results.size} scenarios; every failing check (${failing}) is waived: ${JSON.stringify(reasons)}`);
