#!/usr/bin/env bash
# toolgate as an MCP client (issue 3's benchmark): `echo` of the reference server
# server-everything over stdio, sequentially and 16-way concurrently, in one run:
#   rmcp-direct       a bare rmcp client (the floor)
#   gateway-buffered  Gateway::call of mcp__bench__echo in process (McpHub → the whole
#                     pipeline), audit queued
#   gateway-durable   the same with the default durable audit (fsync before each answer)
#   python-mcp        the Python SDK's client (mcp 2.3.0) calling the server directly
# Prints one JSON line per target and concurrency, then a markdown table and what the
# gateway path adds over rmcp-direct (target: < 50 µs p50).
#
# Usage: scripts/bench-mcp-client.sh [--calls 5000] [--warmup 500] [--concurrency 1,16] [--no-build]
# Needs: tests/peers (node 22 + server-everything) and .venv (mcp 2.3.0): scripts/test.sh installs both.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

CALLS=5000 WARMUP=500 CONCURRENCY=1,16 BUILD=1
while [ $# -gt 0 ]; do
  case "$1" in
    --calls) CALLS=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --concurrency) CONCURRENCY=$2; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    *) echo "error: unknown argument $1 (see the usage at the top of $0)" >&2; exit 2 ;;
  esac
done

NODE=$ROOT/tests/peers/node_modules/.bin/node
EVERYTHING=$ROOT/tests/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js
PYTHON=$ROOT/.venv/bin/python
for f in "$NODE" "$EVERYTHING"; do
  [ -e "$f" ] || { echo "error: $f is missing; run scripts/test.sh (it installs the MCP peers into tests/peers)" >&2; exit 1; }
done
"$PYTHON" -c 'import mcp' 2>/dev/null || {
  echo "error: $PYTHON with the mcp package is missing; run scripts/test.sh" >&2; exit 1; }

TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
if [ "$BUILD" = 1 ]; then
  cargo build --release --locked -p toolgate-loadgen >&2
fi
"$TARGET/release/toolgate-loadgen" mcp-client --calls "$CALLS" --warmup "$WARMUP" \
  --concurrency "$CONCURRENCY" --python "$PYTHON" \
  --python-client "$ROOT/crates/toolgate-loadgen/peers/mcp_echo_client.py" \
  -- "$NODE" "$EVERYTHING" stdio
