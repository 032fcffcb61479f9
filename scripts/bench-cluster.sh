#!/usr/bin/env bash
# `/v1/calls` (read_file of a 6-byte file, durable audit) on three set-ups, in one run, driven
# by the same load generator: one replica on the embedded store (SQLite + JSONL), one replica
# on PostgreSQL, and two replicas on PostgreSQL with the generator's workers spread over both.
# Prints the markdown table and the ratios against the embedded replica.
#
# Usage: scripts/bench-cluster.sh [--duration 10s] [--warmup 2s] [--concurrency 1,16,32,64]
#                                 [--pg URL] [--no-build] [--out DIR]
# PostgreSQL: --pg, else TOOLGATE_TEST_PG_URL, else postgres://postgres@127.0.0.1:5432/test;
# each set-up gets a fresh schema, dropped at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

DURATION=10s WARMUP=2s CONCURRENCY=1,16,32,64 BUILD=1 OUT="" PG=${TOOLGATE_TEST_PG_URL:-postgres://postgres@127.0.0.1:5432/test}
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) DURATION=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --concurrency) CONCURRENCY=$2; shift 2 ;;
    --pg) PG=$2; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    --out) OUT=$2; shift 2 ;;
    *) echo "error: unknown argument $1 (see the usage at the top of $0)" >&2; exit 2 ;;
  esac
done
command -v psql >/dev/null || { echo "error: psql is needed (apt-get install postgresql-client)" >&2; exit 1; }
psql "$PG" -Atqc 'SELECT 1' >/dev/null || { echo "error: PostgreSQL at $PG does not answer" >&2; exit 1; }

TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
if [ "$BUILD" = 1 ]; then
  cargo build --release --locked -p toolgate-cli -p toolgate-loadgen >&2
fi
TOOLGATE=$TARGET/release/toolgate
LOADGEN=$TARGET/release/toolgate-loadgen

WORK=$(mktemp -d "${TMPDIR:-/tmp}/bench-cluster.XXXXXX")
OUT=${OUT:-$WORK/results}
mkdir -p "$OUT" "$WORK/keys" && chmod 700 "$WORK/keys"
export TOOLGATE_KEY_DIR=$WORK/keys
PIDS=() SCHEMAS=()
stop_all() {
  local i
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
    kill "${PIDS[i]}" 2>/dev/null && wait "${PIDS[i]}" 2>/dev/null || true
  done
  PIDS=()
}
cleanup() {
  stop_all
  for s in "${SCHEMAS[@]}"; do psql "$PG" -qc "DROP SCHEMA IF EXISTS $s CASCADE" >/dev/null 2>&1 || true; done
  rm -rf "$WORK/ws"* "$WORK/keys"
}
trap cleanup EXIT

# A fresh schema; sets STORE to the store URL that works in it. (No command substitution
# here or below: a subshell would lose what PIDS and SCHEMAS record for the cleanup.)
new_store() {
  local schema="bench_$1_$$"
  psql "$PG" -qc "CREATE SCHEMA $schema" >/dev/null
  SCHEMAS+=("$schema")
  case "$PG" in *\?*) sep='&' ;; *) sep='?' ;; esac
  STORE="${PG}${sep}options=-c%20search_path%3D${schema}"
}

# Starts a replica on workspace $1 with store URL $2 ("" for embedded); sets ADDR.
start_replica() {
  local ws=$1 url=$2 name
  name=$(basename "$ws")-$RANDOM
  mkdir -p "$ws" && printf 'hello\n' >"$ws/hello.txt"
  (cd "$ws" && TOOLGATE_STORE_URL="$url" exec "$TOOLGATE" --workspace . --data-dir "$WORK/data-$name" \
     serve --listen 127.0.0.1:0 >"$WORK/$name.out" 2>"$WORK/$name.err") &
  PIDS+=("$!")
  for _ in $(seq 100); do
    ADDR=$(grep -o 'serving at http://[^/]*' "$WORK/$name.out" 2>/dev/null | sed 's|.*http://||') || true
    [ -n "$ADDR" ] && return
    sleep 0.1
  done
  echo "error: a replica did not start; its stderr:" >&2; cat "$WORK/$name.err" >&2; exit 1
}

{
  echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), Linux $(uname -r)"
  echo "PostgreSQL: $(psql "$PG" -Atqc 'SHOW server_version') (same machine), synchronous_commit=$(psql "$PG" -Atqc 'SHOW synchronous_commit')"
  echo "command: scripts/bench-cluster.sh --duration $DURATION --warmup $WARMUP --concurrency $CONCURRENCY"
} | tee "$OUT/machine.txt" >&2

file=$OUT/run.jsonl; : >"$file"
common=(--protocol v1 --tool read_file --arguments '{"path":"hello.txt"}'
        --concurrency "$CONCURRENCY" --duration "$DURATION" --warmup "$WARMUP")

start_replica "$WORK/ws-embedded" ""
"$LOADGEN" run --label embedded-1 --url "http://$ADDR" --pid "${PIDS[-1]}" "${common[@]}" >>"$file"
stop_all

new_store one
start_replica "$WORK/ws-pg1" "$STORE"
"$LOADGEN" run --label postgres-1 --url "http://$ADDR" --pid "${PIDS[-1]}" "${common[@]}" >>"$file"
stop_all

new_store two
start_replica "$WORK/ws-pg2a" "$STORE"; a=$ADDR
start_replica "$WORK/ws-pg2b" "$STORE"; b=$ADDR
"$LOADGEN" run --label postgres-2 --url "http://$a" --url "http://$b" "${common[@]}" >>"$file"
# One verify over both replicas' chains after the load (exit 4 on any problem).
TOOLGATE_STORE_URL="$STORE" "$TOOLGATE" --workspace "$WORK/ws-pg2a" audit verify | tee -a "$OUT/machine.txt" >&2
stop_all

echo >&2
echo "results: $OUT" >&2
"$LOADGEN" report --baseline embedded-1 "$file" | tee "$OUT/report.md"
