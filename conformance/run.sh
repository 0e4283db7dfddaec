#!/usr/bin/env bash
# Runs the official MCP conformance suite against the commerce endpoint, three ways: 0.1.16's active server
# scenarios (the baseline), and the newest prerelease (0.2.0-alpha.12) with the scenarios each MCP revision requires,
# frozen at its release: 2025-11-25 and 2026-07-28. Starts the storefront on a free loopback port (embedded
# PostgreSQL in a temporary directory, RATE_LIMIT=off), runs the three, stops the server, and exits non-zero on any
# unexpected result. What is expected to fail is listed check by check, with the reason, in conformance/waivers.json;
# conformance/verdict.mjs judges each check against it (a failing check not listed, or a listed one that passes,
# fails the run), beside the suite's own scenario-level baseline. The suite needs Node >= 22; npx brings Node 22 from
# the npm registry (`-p node@22`).
#   CONFORMANCE_RESULTS=DIR keeps the per-scenario checks.json files there (default: a temporary directory).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

WORK="$(mktemp -d)"
RESULTS="${CONFORMANCE_RESULTS:-$WORK/results}"
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK/data"
  [ -n "${CONFORMANCE_RESULTS:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT

PORT="$(node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")"
URL="http://localhost:$PORT/api/ucp/mcp"

echo "conformance: starting the storefront on localhost:$PORT"
env PORT="$PORT" HOST=localhost BASE_URL="http://localhost:$PORT" DATA_DIR="$WORK/data" DATABASE_URL= \
  RATE_LIMIT=off LOG_LEVEL=warn \
  node --import tsx src/main.ts serve > "$WORK/server.log" 2>&1 &
SERVER_PID=$!

ready() { node -e "fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))" "http://localhost:$PORT/healthz"; }
for _ in $(seq 1 120); do
  if ready; then break; fi
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    echo "conformance: the storefront exited before it was ready:" >&2
    cat "$WORK/server.log" >&2
    exit 1
  fi
  sleep 0.5
done
ready || { echo "conformance: the storefront did not become ready" >&2; cat "$WORK/server.log" >&2; exit 1; }

status=0
# SUITE_KEY (as in waivers.json) | package | arguments
run_suite() {
  local key="$1" package="$2"
  shift 2
  local out="$RESULTS/$(echo "$key" | tr -c 'A-Za-z0-9.\n-' '_')"
  mkdir -p "$out"
  node conformance/verdict.mjs "$key" --expected-failures > "$WORK/baseline.yml"
  echo "conformance: $key against $URL"
  local suite_status=0
  npx -y -p node@22 -p "$package" conformance server --url "$URL" "$@" --expected-failures "$WORK/baseline.yml" -o "$out" \
    > "$WORK/suite.log" 2>&1 || suite_status=$?
  tail -n 4 "$WORK/suite.log"
  if ! node conformance/verdict.mjs "$key" "$out"; then suite_status=1; fi
  if [ "$suite_status" -ne 0 ]; then
    echo "conformance: $key FAILED (exit $suite_status); its output:" >&2
    cat "$WORK/suite.log" >&2
    status=1
  fi
}

run_suite "0.1.16" "@modelcontextprotocol/conformance@0.1.16"
run_suite "0.2.0-alpha.12 --requirements 2025-11-25" "@modelcontextprotocol/conformance@0.2.0-alpha.12" --requirements 2025-11-25
run_suite "0.2.0-alpha.12 --requirements 2026-07-28" "@modelcontextprotocol/conformance@0.2.0-alpha.12" --requirements 2026-07-28

if [ "$status" -ne 0 ]; then
  echo "conformance: FAILED; per-scenario results in $RESULTS" >&2
  [ -n "${CONFORMANCE_RESULTS:-}" ] || { echo "(set CONFORMANCE_RESULTS=DIR to keep them)" >&2; }
  echo "--- server log ---" >&2
  cat "$WORK/server.log" >&2
else
  echo "conformance: passed (every failing check is waived in conformance/waivers.json)"
fi
exit "$status"
