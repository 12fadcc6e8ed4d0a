#!/usr/bin/env bash
# The project's test command (README, CI): set-up, formatting, lints with and without the `ros`
# feature, the Rust tests, the ROS build, and the ROS integration tests with real rclpy peers.
# Exits non-zero when any step fails; every step runs so one run shows all failures.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

bash scripts/setup.sh || { echo "test.sh: set-up failed" >&2; exit 1; }
# shellcheck source=scripts/env.sh
source scripts/env.sh

failed=()
step() {
    local name="$1"
    shift
    echo "=== $name: $*"
    local t0=$SECONDS
    if "$@"; then
        echo "--- ok: $name ($((SECONDS - t0)) s)"
    else
        echo "--- FAILED: $name ($((SECONDS - t0)) s)"
        failed+=("$name")
    fi
}

# Test binaries that link the ROS libraries run through this (libpython preload for the wheels).
export CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER="$ROOT/scripts/ros-run.sh"

step fmt cargo fmt --check
step clippy-no-ros cargo clippy --all-targets --no-default-features -- -D warnings
step test-no-ros cargo test --no-default-features
# Each criterion benchmark once, with the correctness checks it makes before timing (a broken
# check would otherwise surface only when someone measures).
step benches-once cargo test --no-default-features --benches
step clippy-ros cargo clippy --all-targets --features ros -- -D warnings
step build-ros cargo build --features ros --bins
step test-ros-unit cargo test --features ros --lib ros::
step pytest-ros python -m pytest tests/ros -v -p no:cacheprovider
# Coverage-guided fuzzing of every parser of outside input, a short bounded run of each target
# (a longer run: scripts/fuzz.sh 600).
step fuzz bash scripts/fuzz.sh 10

if [ ${#failed[@]} -gt 0 ]; then
    echo "test.sh: FAILED steps: ${failed[*]}"
    exit 1
fi
echo "test.sh: all steps passed"
