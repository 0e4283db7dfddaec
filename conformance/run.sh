#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance 0.1.16) against the commerce
# endpoint. Starts the storefront on a free loopback port (embedded PostgreSQL in a temporary directory,
# RATE_LIMIT=off), runs every active server scenario with the baseline conformance/expected-failures.yml,
# stops the server, and exits non-zero on any unexpected result (a new failure, or a baseline entry that
# now passes). The suite needs Node >= 22; npx brings Node 22 from the npm registry (`-p node@22`).
#   CONFORMANCE_RESULTS=DIR keeps the per-scenario checks.json files there (default: a temporary directory).
#   CONFORMANCE_EXPECTED_FAILURES=FILE uses another baseline (default: conformance/expected-failures.yml).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BASELINE="${CONFORMANCE_EXPECTED_FAILURES:-$ROOT/conformance/expected-failures.yml}"

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

echo "conformance: running the suite against $URL"
status=0
npx -y -p node@22 -p @modelcontextprotocol/conformance@0.1.16 conformance server \
  --url "$URL" --expected-failures "$BASELINE" -o "$RESULTS" || status=$?

if [ "$status" -ne 0 ]; then
  echo "conformance: FAILED (exit $status); per-scenario results in $RESULTS" >&2
  [ -n "${CONFORMANCE_RESULTS:-}" ] || { echo "(set CONFORMANCE_RESULTS=DIR to keep them)" >&2; }
  echo "--- server log ---" >&2
  cat "$WORK/server.log" >&2
else
  echo "conformance: passed (baseline $BASELINE)"
fi
exit "$status"
