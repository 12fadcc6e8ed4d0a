#!/usr/bin/env bash
# The project's test command (README, CI): set-up, the colcon build a ROS 2 user does, formatting,
# lints with and without the `ros` feature, the Rust tests, the API docs, and the ROS integration
# tests with the real ROS tools (ros2 launch, ros2 run, the ros2 CLI) and real rclpy peers. Exits
# non-zero when any step fails; every step runs so one run shows all failures, and each reports
# its time.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# Every step runs through run_forwarding, so stopping this script stops the step it is in.
# shellcheck source=scripts/signals.sh
source scripts/signals.sh

t_setup=$SECONDS
run_forwarding bash scripts/setup.sh || { echo "test.sh: set-up failed" >&2; exit 1; }
echo "--- ok: setup ($((SECONDS - t_setup)) s)"
# shellcheck source=scripts/env.sh
source scripts/env.sh

failed=()
step() {
    local name="$1"
    shift
    echo "=== $name: $*"
    local t0=$SECONDS
    if run_forwarding "$@"; then
        echo "--- ok: $name ($((SECONDS - t0)) s)"
    else
        echo "--- FAILED: $name ($((SECONDS - t0)) s)"
        failed+=("$name")
    fi
}

# No incremental caches: a test run rebuilds the crate in full anyway, and on a clean checkout
# they only cost disk (1.6 GB; a CI run once failed with its disk full).
export CARGO_INCREMENTAL=0

# The workspace as README.md tells a ROS 2 user to build it (colcon, colcon-ros-cargo,
# cargo-ament-build); the ROS tests run what it installed.
step colcon-build bash scripts/build_ws.sh
# Every cargo step below shares colcon's target directory and the environment colcon builds the
# crate in (r2r's generated bindings are keyed on that environment), so what colcon compiled is
# reused; only other features and profiles (ROS-free, clippy's check mode, tests) compile anew.
export CARGO_TARGET_DIR="$ROOT/.ws/build/blockstar_planner"
set +u # colcon's scripts read unset variables
# shellcheck disable=SC1091
[ -f .ws/install/blockstar_planner_msgs/share/blockstar_planner_msgs/package.sh ] &&
    source .ws/install/blockstar_planner_msgs/share/blockstar_planner_msgs/package.sh
set -u

step fmt cargo fmt --check
step clippy-no-ros cargo clippy --all-targets --no-default-features -- -D warnings
step test-no-ros cargo test --no-default-features
# Each criterion benchmark once, with the correctness checks it makes before timing (a broken
# check would otherwise surface only when someone measures).
step benches-once cargo test --no-default-features --benches
step clippy-ros cargo clippy --all-targets --features ros -- -D warnings
# The node as built on a ROS installation without tf2_msgs, map_msgs and nav2_msgs (build.rs
# compiles out what needs them; ARCHITECTURE.md): it must compile, warning-free, too.
step clippy-ros-without-interfaces env BLOCKSTAR_WITHOUT_INTERFACES=tf2_msgs,map_msgs,nav2_msgs \
    cargo clippy --all-targets --features ros -- -D warnings
step test-ros-unit cargo test --features ros --lib ros::
# The API documentation, node included, with every intra-doc link resolved and none to a private
# item (a doc comment states a contract: a broken link is a broken contract).
step doc env RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --features ros
# The installed packages in reach of ros2 run / ros2 launch, as after `source install/setup.bash`.
set +u
# shellcheck disable=SC1091
[ -f .ws/install/setup.bash ] && source .ws/install/setup.bash
set -u
# The curves against OMPL's (an independent implementation from PyPI), through the installed CLI.
step pytest-oracle python -m pytest tests/oracle -v -p no:cacheprovider -rs
# The ROS tests (the slowest 15 listed, to keep an eye on them) and, beside them, coverage-guided
# fuzzing of every parser of outside input, a short bounded run of each target (a longer run:
# scripts/fuzz.sh 600): the fuzz targets' build keeps both cores busy for minutes while the ROS
# tests mostly wait on their nodes (scripts/beside.sh). The fuzz targets keep their own target
# directory (fuzz/target).
step pytest-ros-and-fuzz bash scripts/beside.sh \
    fuzz env -u CARGO_TARGET_DIR bash scripts/fuzz.sh 10 -- \
    pytest-ros python -m pytest tests/ros -v -p no:cacheprovider -rs --durations=15

if [ ${#failed[@]} -gt 0 ]; then
    echo "test.sh: FAILED steps: ${failed[*]}"
    exit 1
fi
echo "test.sh: all steps passed in $SECONDS s"
