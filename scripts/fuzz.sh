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
fi
passed=0
for t in "${targets[@]}"; do
  echo "fuzz.sh: $t for ${secs}s"
  (cd fuzz && cargo fuzz run "$t" -s none -- -max_total_time="$secs" -rss_limit_mb=2048 -malloc_limit_mb=2048 -print_final_stats=0 2>&1 | grep -E "^(Done|==|SUMMARY|thread '.*panicked)" || true; exit "${PIPESTATUS[0]}")
  passed=$((passed + 1))
done
echo "fuzz: ${passed} passed, 0 failed"
