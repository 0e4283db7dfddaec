#!/usr/bin/env bash
# Instructions per answer, counted by valgrind's callgrind: repeatable where the bench's throughput is not (the count
# does not depend on what else the machine runs). A server (bench/target.ts: the bench's store, or the bare node:http
# server) runs under callgrind with counting off while it starts and while a sequential client warms it up (20,000
# requests), then on for COUNTED requests. User-space instructions only: the kernel's socket work is not counted.
#   bash bench/instructions.sh store [PATH]    the store (PostgreSQL at TEST_DATABASE_URL, demo catalog), PATH
#                                              default /products/hydration-drink-stick.js
#   bash bench/instructions.sh bare [BYTES]    the bare server answering BYTES (default 7433, that product's size)
# COUNTED (default 5000) and WARM (default 20000) change the loads. Each run takes one to three minutes.
# The totals are for the whole process, TurboFan's compiling included; the line also says how much of it was compiling
# (a count with much of it was taken while the server was still warming up: run it again or raise WARM).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:?usage: instructions.sh store [PATH] | bare [BYTES]}
counted=${COUNTED:-5000}
warm=${WARM:-20000}
case "$mode" in
  store) target=(store 0 postgres); path=${2:-/products/hydration-drink-stick.js} ;;
  bare) target=(bare "${2:-7433}"); path=/ ;;
  *) echo "usage: instructions.sh store [PATH] | bare [BYTES]" >&2; exit 2 ;;
esac
command -v valgrind > /dev/null || { echo "valgrind is not installed (Debian: apt-get install valgrind)" >&2; exit 1; }
work=$(mktemp -d)
server=''
trap '[ -z "$server" ] || kill "$server" 2> /dev/null || true; rm -rf "$work"' EXIT
# One thread: V8 compiles and collects garbage on the main thread, where the count sees it in order.
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$work/out" \
  node --single-threaded --import tsx bench/target.ts "${target[@]}" > "$work/stdout" 2> "$work/stderr" &
server=$!
for _ in $(seq 1 600); do grep -aq '^READY ' "$work/stdout" && break; sleep 1; done
port=$(sed -n 's/^READY //p' "$work/stdout" | head -1)
[ -n "$port" ] || { echo "the server did not start under valgrind:" >&2; tail -5 "$work/stderr" >&2; exit 1; }
node --import tsx bench/sequential-client.ts "$port" "$path" "$warm" "$counted" \
  "callgrind_control -i on $server" "callgrind_control -i off $server"
callgrind_control -d "$server" > /dev/null 2>&1
# The dump is written once the server next runs: wait for it before stopping the server.
for _ in $(seq 1 60); do [ -s "$work/out.1" ] && grep -q "^totals:" "$work/out.1" && break; sleep 1; done
kill "$server"; wait "$server" 2> /dev/null || true
report=$(callgrind_annotate "$work/out.1" 2> /dev/null)
total=$(grep -m1 'PROGRAM TOTALS' <<< "$report" | awk '{ gsub(",", "", $1); print $1 }')
compiling=$({ grep 'compiler::' <<< "$report" || true; } | awk '{ gsub(",", "", $1); sum += $1 } END { print sum + 0 }')
echo "$mode $path: $((total / counted)) instructions per answer over $counted answers ($((compiling / counted)) of them TurboFan compiling)"
