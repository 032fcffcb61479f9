#!/usr/bin/env bash
# Property-tests the HTTP API of a running `toolgate serve` from its own /openapi.json with
# schemathesis: every operation, every check (responses validated against the declared
# schemas, status codes, content types, auth), positive and negative data, stateful links.
# The server is the product binary as users run it, in a throwaway workspace with an operator
# token, so the operator-only operations are reached too, and a stand-in model
# (scripts/fake_model.py) behind `[model]`, so the conversation routes run real turns.
#
# Usage: scripts/schemathesis.sh [EXAMPLES_PER_OPERATION]   (default 40)
#   TOOLGATE_BIN   the binary to test (default: target/debug/toolgate, built if missing)
#   SCHEMATHESIS   the schemathesis executable (default: .venv/bin/schemathesis)
# Exits non-zero on any failure; the report is in target/schemathesis/.
set -euo pipefail
cd "$(dirname "$0")/.."

examples="${1:-40}"
repo="$PWD"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
bin="${TOOLGATE_BIN:-$CARGO_TARGET_DIR/debug/toolgate}"
st="${SCHEMATHESIS:-$PWD/.venv/bin/schemathesis}"
[ -x "$st" ] || { echo "error: schemathesis not found at $st (scripts/test.sh installs it into .venv)" >&2; exit 1; }
[ -n "${TOOLGATE_BIN:-}" ] || cargo build -q -p toolgate-cli --locked
[ -x "$bin" ] || { echo "error: toolgate binary not found at $bin" >&2; exit 1; }

work="$(mktemp -d)"
report="$CARGO_TARGET_DIR/schemathesis"
mkdir -p "$work/ws" "$report"
# The audit key of this throwaway log lives beside it, never in the user's own key dir.
export TOOLGATE_KEY_DIR="$work/keys"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  if [ -n "${model_pid:-}" ]; then kill "$model_pid" 2>/dev/null || true; wait "$model_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# An operator token, configured by its hash, as an operator would set one up.
token="$("$bin" --workspace "$work/ws" token create --config-entry --principal schemathesis --role default --operator 2>"$work/entry.toml")"
sed -n '/^\[\[server.tokens\]\]/,$p' "$work/entry.toml" >"$work/toolgate.toml"
grep -q sha256 "$work/toolgate.toml" || { echo "error: token create printed no [[server.tokens]] entry" >&2; exit 1; }

# A model that answers "ok" at once (scripts/fake_model.py), so the conversation routes run real
# turns instead of answering 503 (no model); its key variable is set for the server only.
model_pid=""
python3 "$repo/scripts/fake_model.py" >"$work/model.out" &
model_pid=$!
model_port=""
for _ in $(seq 1 50); do
  model_port="$(sed -n 's/^{"port": \([0-9]*\)}$/\1/p' "$work/model.out" | head -n1)"
  [ -n "$model_port" ] && break
  sleep 0.1
done
[ -n "$model_port" ] || { echo "error: scripts/fake_model.py printed no port" >&2; exit 1; }
cat >>"$work/toolgate.toml" <<TOML

[model]
provider = "openai-chat"
model = "fake-model"
base_url = "http://127.0.0.1:$model_port/v1"
api_key_env = "SCHEMATHESIS_MODEL_KEY"

[conversations]
max_queued = 64
max_busy_per_principal = 64

[egress]
allow_hosts = ["127.0.0.1:$model_port"]
allow_http = ["127.0.0.1:$model_port"]
TOML

SCHEMATHESIS_MODEL_KEY=sk-schemathesis "$bin" --workspace "$work/ws" --config "$work/toolgate.toml" serve --listen 127.0.0.1:0 >"$work/serve.out" 2>"$work/serve.err" &
server_pid=$!
base=""
for _ in $(seq 1 100); do
  base="$(sed -n 's|^toolgate serving at \(http://[^ ]*/\) .*|\1|p' "$work/serve.out" | head -n1)"
  [ -n "$base" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/serve.err" >&2; echo "error: toolgate serve exited at start" >&2; exit 1; }
  sleep 0.1
done
[ -n "$base" ] || { cat "$work/serve.err" >&2; echo "error: toolgate serve printed no address" >&2; exit 1; }
echo "schemathesis against $base (toolgate serve, $examples examples per operation)"

# From the throwaway directory: schemathesis leaves its hypothesis state in the working dir.
run_schemathesis() {
  (cd "$work" && "$st" --config-file "$repo/scripts/schemathesis.toml" run "${base}openapi.json" \
    --checks all \
    --max-examples "$examples" \
    --seed 20261204 \
    --request-timeout 20 \
    --workers 2 \
    --header "Authorization: Bearer $token" \
    --no-color \
    --generation-database none \
    --report junit --report-dir "$report") 2>&1 | tee "$work/schemathesis.out"
  return "${PIPESTATUS[0]}"
}
status=0
run_schemathesis || status=$?
# CPython 3.11's ast module can raise "AST constructor recursion depth mismatch" inside
# hypothesis while it describes a strategy (a SystemError in the tool, seen once in a dozen
# runs; no request of toolgate's involved). That alone is not a finding: run once more, loudly.
if [ "$status" -ne 0 ] && grep -q "AST constructor recursion depth mismatch" "$work/schemathesis.out" \
  && ! grep -qE "^_+ .* _+$" <(grep -v "AST constructor" "$work/schemathesis.out" | sed -n '/FAILURES/,$p'); then
  echo "warning: schemathesis itself crashed (CPython ast recursion bug), not a finding; running it again" >&2
  status=0
  run_schemathesis || status=$?
fi

kill -0 "$server_pid" 2>/dev/null || { echo "error: toolgate serve died during the run" >&2; cat "$work/serve.err" >&2; exit 1; }
if grep -q "panicked" "$work/serve.err"; then
  echo "error: toolgate serve panicked during the run:" >&2
  grep -A3 "panicked" "$work/serve.err" >&2
  exit 1
fi
exit "$status"
