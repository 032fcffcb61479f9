#!/usr/bin/env bash
# Coverage-guided fuzzing of the attack surface (fuzz/, docs/security.md "Fuzzing"): builds
# every target with cargo-fuzz on the stable toolchain, then runs each for SECONDS (default
# 20) from its committed corpus (fuzz/corpus/<target>). Exits non-zero if any target
# crashes, fails a property or hangs, printing the reproducer.
#
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
#   FUZZ_NICE=19          run the build and the fuzzers at that nice level (default 0)
#   FUZZ_MERGE=1          afterwards, merge what the run found into fuzz/corpus (minimised)
#   FUZZ_ARGS="..."       extra libFuzzer flags for every target
#   FUZZ_WORK=DIR         where new inputs and logs go (default fuzz/target)
#
# Each run starts from the committed corpus alone; new inputs go to $FUZZ_WORK/corpus/<target>
# (emptied at the start), so a run leaves the committed corpus as it was unless FUZZ_MERGE=1.
# Logs: $FUZZ_WORK/logs/<target>.log.
set -euo pipefail
cd "$(dirname "$0")/.."

secs="${1:-20}"
[ $# -gt 0 ] && shift
case "$secs" in '' | *[!0-9]*) echo "error: SECONDS must be a whole number, not '$secs'" >&2; exit 2 ;; esac

CARGO_FUZZ_VERSION=0.13.2
if ! cargo fuzz --version 2>/dev/null | grep -qF "$CARGO_FUZZ_VERSION"; then
  echo "installing cargo-fuzz $CARGO_FUZZ_VERSION from crates.io"
  cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked \
    || { echo "error: could not install cargo-fuzz $CARGO_FUZZ_VERSION (cargo install cargo-fuzz)" >&2; exit 1; }
fi

# Stable toolchain: no sanitizer (-s none: ASan needs -Zsanitizer, i.e. nightly or
# RUSTC_BOOTSTRAP=1); every flag cargo-fuzz then passes (sancov passes, --cfg fuzzing) is
# stable. Release code with debug assertions and overflow checks; 16 codegen units keep the
# build short on small machines.
export CARGO_TARGET_DIR="$PWD/fuzz/target"
BUILD_FLAGS=(-O -a -s none --codegen-units 16)
nice_run() { nice -n "${FUZZ_NICE:-0}" "$@"; }

cd fuzz
nice_run cargo fuzz build "${BUILD_FLAGS[@]}"

if [ $# -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <(cargo fuzz list)
fi

# Per-target input size caps (libFuzzer's default is 4096 bytes).
max_len() {
  case "$1" in
    mcp_server | html_markdown | config_toml) echo 16384 ;;
    *) echo 4096 ;;
  esac
}

work="${FUZZ_WORK:-$PWD/target}"
mkdir -p "$work/logs"
failed=()
printf '\n%-14s %10s %8s %8s %8s %s\n' target execs cov ft corpus result
for t in "${targets[@]}"; do
  rm -rf "${work:?}/corpus/$t"
  mkdir -p "$work/corpus/$t" "corpus/$t" "artifacts/$t"
  args=(
    "-max_total_time=$secs" "-max_len=$(max_len "$t")" -timeout=30 -rss_limit_mb=2048
    -print_final_stats=1 "-artifact_prefix=artifacts/$t/"
  )
  [ -f "dict/$t.dict" ] && args+=("-dict=dict/$t.dict")
  # shellcheck disable=SC2206
  [ -n "${FUZZ_ARGS:-}" ] && args+=($FUZZ_ARGS)
  log="$work/logs/$t.log"
  status=ok
  nice_run cargo fuzz run "${BUILD_FLAGS[@]}" "$t" "$work/corpus/$t" "corpus/$t" -- "${args[@]}" \
    >"$log" 2>&1 || status=FAILED
  # The last status line: "#N  DONE  cov: C ft: F corp: K/S ..."
  # -a: the log may hold the raw bytes of an input.
  last=$(grep -aE '^#[0-9]+' "$log" | tail -n 1 || true)
  execs=$(grep -aoE 'stat::number_of_executed_units: [0-9]+' "$log" | grep -oE '[0-9]+$' || echo "?")
  cov=$(grep -oE 'cov: [0-9]+' <<<"$last" | grep -oE '[0-9]+' || echo "?")
  ft=$(grep -oE 'ft: [0-9]+' <<<"$last" | grep -oE '[0-9]+' || echo "?")
  corp=$(grep -oE 'corp: [0-9]+/[0-9]+[a-zA-Z]*' <<<"$last" | cut -d' ' -f2 || echo "?")
  printf '%-14s %10s %8s %8s %8s %s\n' "$t" "$execs" "$cov" "$ft" "$corp" "$status"
  if [ "$status" != ok ]; then
    failed+=("$t")
    echo "---- $t failed; the end of $log:" >&2
    tail -n 60 "$log" >&2
    ls -1 "artifacts/$t/"* 2>/dev/null | sed 's/^/artifact: fuzz\//' >&2 || true
  fi
done

if [ "${FUZZ_MERGE:-0}" = 1 ] && [ ${#failed[@]} -eq 0 ]; then
  for t in "${targets[@]}"; do
    # Keep the seeds, add only inputs that reach new coverage, minimised by libFuzzer.
    nice_run cargo fuzz run "${BUILD_FLAGS[@]}" "$t" "corpus/$t" "$work/corpus/$t" -- \
      -merge=1 "-max_len=$(max_len "$t")" >"$work/logs/$t.merge.log" 2>&1 \
      || { echo "error: merging the corpus of $t failed ($work/logs/$t.merge.log)" >&2; exit 1; }
  done
  du -sh corpus
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "error: fuzz targets failed: ${failed[*]} (reproduce: cd fuzz && cargo fuzz run ${BUILD_FLAGS[*]} TARGET ARTIFACT)" >&2
  exit 1
fi
echo "fuzz: ${#targets[@]} targets, ${secs}s each, no crashes"
