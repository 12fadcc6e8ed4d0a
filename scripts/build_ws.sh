#!/usr/bin/env bash
# Builds this repository the way README.md tells a ROS 2 user to: a colcon workspace (.ws/) whose
# src/blockstar_planner is this repository, built with
#     colcon build --base-paths src/blockstar_planner src/blockstar_planner/msg
# (colcon-ros-cargo and cargo-ament-build for the crate, ament_cmake for msg/). The installed
# planner_node, blockstar, launch file and configuration land in .ws/install; `source
# .ws/install/setup.bash` (after scripts/env.sh) puts them in reach of `ros2 run` and `ros2 launch`.
#
# colcon-ros-cargo runs cargo with --quiet, so a first build (about 7 minutes on 2 cores) would
# show nothing for minutes: the crate is first built with cargo itself, showing cargo's progress,
# in the very environment and target directory colcon then uses, so colcon's own build of it
# finds everything compiled and only installs. Run scripts/setup.sh first.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WS="$ROOT/.ws"
# shellcheck source=scripts/env.sh
source "$ROOT/scripts/env.sh"
mkdir -p "$WS/src"
[ "$(readlink "$WS/src/blockstar_planner" 2>/dev/null)" = ../.. ] || ln -sfn ../.. "$WS/src/blockstar_planner"
cd "$WS"
BASE_PATHS=(--base-paths src/blockstar_planner src/blockstar_planner/msg)
CRATE_BUILD="$WS/build/blockstar_planner"

# r2r caches its generated code (r2r_msg_gen's bindings, r2r's message modules) by the values of
# a few environment variables, not by the interface files, and the installed interface package's
# path does not change with them: after msg/ changed, drop both caches so the crate is built
# against the new messages. The hash is recorded at once, so a failed build does not clean again.
msg_hash="$(cd "$ROOT" && find msg -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)"
if [ "$(cat "$WS/.msg-hash" 2>/dev/null)" != "$msg_hash" ]; then
    if [ -d "$CRATE_BUILD" ]; then
        echo "build_ws: msg/ changed: dropping r2r's cached bindings"
        cargo clean --quiet -p r2r -p r2r_msg_gen --manifest-path "$ROOT/Cargo.toml" --target-dir "$CRATE_BUILD"
    fi
    echo "$msg_hash" >"$WS/.msg-hash"
fi

t0=$SECONDS
colcon build "${BASE_PATHS[@]}" --packages-select blockstar_planner_msgs
echo "build_ws: building the crate (cargo's progress; the first build takes about 7 minutes on 2 cores)"
(
    # The environment colcon builds the crate in: this one plus its dependencies' hooks (colcon's
    # scripts read unset variables).
    set +u
    # shellcheck disable=SC1091
    source "$WS/install/blockstar_planner_msgs/share/blockstar_planner_msgs/package.sh"
    set -u
    cargo build --manifest-path "$ROOT/Cargo.toml" --target-dir "$CRATE_BUILD"
)
# The README's command, as a user types it.
colcon build "${BASE_PATHS[@]}"
test -x "$WS/install/blockstar_planner/lib/blockstar_planner/planner_node" ||
    { echo "build_ws: colcon did not install planner_node" >&2; exit 1; }
echo "build_ws: workspace built in $((SECONDS - t0)) s: source $WS/install/setup.bash"
