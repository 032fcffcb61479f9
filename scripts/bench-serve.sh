#!/usr/bin/env bash
# `toolgate serve` under load: tools/call of a trivial built-in tool (read_file of a 6-byte
# file) over MCP Streamable HTTP and over /v1, and the Python SDK's own MCPServer with one echo
# tool, and that Python server federated behind toolgate serve (federated-python-mcp: the
# gateway's overhead on a real upstream), all driven by the same Rust load generator
# (crates/toolgate-loadgen) at each concurrency, in one run. Durable audit (the default) is on. Prints markdown tables, the
# throughput ratios toolgate / python and the target check (>= 10x, p99 < 10 ms at C=16).
#
# Usage: scripts/bench-serve.sh [--runs N] [--duration 10s] [--warmup 2s]
#                               [--concurrency 1,16,64] [--no-build] [--out DIR]
# Needs: .venv with mcp==2.3.0 (scripts/test.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

RUNS=3 DURATION=10s WARMUP=2s CONCURRENCY=1,16,64 BUILD=1 OUT=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) RUNS=$2; shift 2 ;;
    --duration) DURATION=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --concurrency) CONCURRENCY=$2; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    --out) OUT=$2; shift 2 ;;
    *) echo "error: unknown argument $1 (see the usage at the top of $0)" >&2; exit 2 ;;
  esac
done

PYTHON=$ROOT/.venv/bin/python
[ -x "$PYTHON" ] && "$PYTHON" -c 'import mcp.server.mcpserver' 2>/dev/null || {
  echo "error: $PYTHON with the mcp package is missing; run scripts/test.sh (or the pip line of TESTBEDS.md)" >&2
  exit 1
}

TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
if [ "$BUILD" = 1 ]; then
  cargo build --release --locked -p toolgate-cli -p toolgate-loadgen >&2
fi
TOOLGATE=$TARGET/release/toolgate
LOADGEN=$TARGET/release/toolgate-loadgen

WORK=$(mktemp -d "${TMPDIR:-/tmp}/bench-serve.XXXXXX")
OUT=${OUT:-$WORK/results}
mkdir -p "$OUT"
PIDS=()
# Newest first: the federated toolgate holds an SSE stream open to the Python server, whose
# graceful shutdown would otherwise wait for it forever.
stop_all() {
  local i
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
    kill "${PIDS[i]}" 2>/dev/null && wait "${PIDS[i]}" 2>/dev/null || true
  done
  PIDS=()
}
trap 'stop_all; rm -rf "$WORK/ws"*' EXIT

# Waits until $1 (a file) holds "toolgate serving at http://ADDR/"; prints ADDR.
toolgate_addr() {
  for _ in $(seq 100); do
    addr=$(grep -o 'serving at http://[^/]*' "$1" 2>/dev/null | sed 's|.*http://||') || true
    [ -n "$addr" ] && { echo "$addr"; return; }
    sleep 0.1
  done
  echo "error: toolgate serve did not start; its stderr:" >&2; cat "${1%.out}.err" >&2; exit 1
}
# Waits until 127.0.0.1:$1 accepts connections.
wait_port() {
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return
    sleep 0.1
  done
  echo "error: nothing listens on 127.0.0.1:$1; the Python server's stderr:" >&2; cat "$WORK/python.err" >&2; exit 1
}
free_port() { "$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

{
  echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), Linux $(uname -r)"
  echo "command: scripts/bench-serve.sh --runs $RUNS --duration $DURATION --warmup $WARMUP --concurrency $CONCURRENCY"
} | tee "$OUT/machine.txt" >&2

FILES=()
for run in $(seq "$RUNS"); do
  # Fresh servers and workspace per run, so "RSS before" is a freshly started server's.
  ws=$WORK/ws$run
  mkdir -p "$ws" && printf 'hello\n' >"$ws/hello.txt"
  (cd "$ws" && exec "$TOOLGATE" --workspace . serve --listen 127.0.0.1:0 >"$WORK/toolgate.out" 2>"$WORK/toolgate.err") &
  TOOLGATE_PID=$!; PIDS+=("$TOOLGATE_PID")
  addr=$(toolgate_addr "$WORK/toolgate.out")
  port=$(free_port)
  "$PYTHON" "$ROOT/crates/toolgate-loadgen/peers/echo_server.py" "$port" >"$WORK/python.out" 2>"$WORK/python.err" &
  PYTHON_PID=$!; PIDS+=("$PYTHON_PID")
  wait_port "$port"

  file=$OUT/run-$run.jsonl; : >"$file"; FILES+=("$file")
  echo "run $run: load $(cut -d' ' -f1-3 /proc/loadavg) at start" | tee -a "$OUT/machine.txt" >&2
  common=(--concurrency "$CONCURRENCY" --duration "$DURATION" --warmup "$WARMUP")
  "$LOADGEN" run --label toolgate-mcp --url "http://$addr/mcp" --protocol mcp \
    --tool read_file --arguments '{"path":"hello.txt"}' --pid "$TOOLGATE_PID" "${common[@]}" >>"$file"
  "$LOADGEN" run --label toolgate-v1 --url "http://$addr" --protocol v1 \
    --tool read_file --arguments '{"path":"hello.txt"}' --pid "$TOOLGATE_PID" "${common[@]}" >>"$file"
  "$LOADGEN" run --label python-mcp --url "http://127.0.0.1:$port/mcp" --protocol mcp \
    --tool echo --arguments '{"text":"hello"}' --pid "$PYTHON_PID" "${common[@]}" >>"$file"
  # The same Python server federated behind a second toolgate serve (Streamable HTTP through
  # the SSRF guard, labelled read so the loopback caller's role may call it): the client
  # calls mcp__py__echo on toolgate, toolgate calls echo upstream. Server CPU is toolgate's.
  fed=$WORK/fed$run
  mkdir -p "$fed"
  printf '[egress]\nallow_hosts = ["127.0.0.1:%s"]\nallow_http = ["127.0.0.1:%s"]\n\n[[mcp.servers]]\nname = "py"\nurl = "http://127.0.0.1:%s/mcp"\nrisk = { echo = "read" }\n' \
    "$port" "$port" "$port" >"$fed/toolgate.toml"
  (cd "$fed" && exec "$TOOLGATE" --workspace . serve --listen 127.0.0.1:0 >"$WORK/fed.out" 2>"$WORK/fed.err") &
  FED_PID=$!; PIDS+=("$FED_PID")
  fed_addr=$(toolgate_addr "$WORK/fed.out")
  listed=0
  for _ in $(seq 100); do
    "$PYTHON" -c 'import sys, urllib.request; sys.exit(b"mcp__py__echo" not in urllib.request.urlopen(sys.argv[1]).read())' \
      "http://$fed_addr/v1/tools" 2>/dev/null && { listed=1; break; }
    sleep 0.1
  done
  [ "$listed" = 1 ] || { echo "error: mcp__py__echo never reached the federating toolgate; its stderr:" >&2; cat "$WORK/fed.err" >&2; exit 1; }
  "$LOADGEN" run --label federated-python-mcp --url "http://$fed_addr/mcp" --protocol mcp \
    --tool mcp__py__echo --arguments '{"text":"hello"}' --pid "$FED_PID" "${common[@]}" >>"$file"
  echo "run $run: load $(cut -d' ' -f1-3 /proc/loadavg) at end" | tee -a "$OUT/machine.txt" >&2
  stop_all
done

echo >&2
echo "results: $OUT" >&2
"$LOADGEN" report --baseline python-mcp "${FILES[@]}" | tee "$OUT/report.md"
