#!/usr/bin/env bash
# Runs every cargo-fuzz target for a bounded time (default 10 s each; first argument overrides).
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
# cargo-fuzz needs nightly-only flags; on the stable toolchain RUSTC_BOOTSTRAP=1 enables them, and
# `-s none` skips the sanitizer runtime that stable does not ship. Crashes fail the script and
# leave the input under fuzz/artifacts/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-10}"
shift || true
if ! command -v cargo-fuzz >/dev/null 2>&1; then
  echo "fuzz.sh: installing cargo-fuzz (once)"
  cargo install cargo-fuzz --locked --quiet
fi
export RUSTC_BOOTSTRAP=1
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cd fuzz && cargo fuzz list)
  # The list comes from a process substitution, whose failure set -e does not see.
  [ ${#targets[@]} -gt 0 ] || { echo "fuzz.sh: cargo fuzz list gave no target" >&2; exit 1; }
fi
# Each target's whole output goes to a log; its summary lines are shown, and on failure (a build
# error, a crash, no run reported) its last lines too. The exit status is cargo fuzz's own: a
# filter in a pipeline once took its place, and a target that no longer compiled "passed".
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
passed=0
failed=()
for t in "${targets[@]}"; do
  echo "fuzz.sh: $t for ${secs}s"
  status=0
  (cd fuzz && cargo fuzz run "$t" -s none -- -max_total_time="$secs" -rss_limit_mb=2048 \
    -malloc_limit_mb=2048 -print_final_stats=0) >"$logs/$t.log" 2>&1 || status=$?
  grep -E "^(Done|==|SUMMARY|thread '.*panicked)" "$logs/$t.log" || true
  if [ "$status" -ne 0 ] || ! grep -qE "^Done [0-9]+ runs" "$logs/$t.log"; then
    tail -40 "$logs/$t.log"
    echo "fuzz.sh: $t FAILED (exit status $status)"
    failed+=("$t")
  else
    passed=$((passed + 1))
  fi
done
echo "fuzz: ${passed} passed, ${#failed[@]} failed${failed[*]:+: ${failed[*]}}"
[ ${#failed[@]} -eq 0 ]
