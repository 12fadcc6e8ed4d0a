#!/usr/bin/env bash
# The README's first command: set-up, the colcon build a ROS 2 user does (cargo's progress shown;
# about 9 minutes the first time on 2 cores, seconds after), then `ros2 launch` of planner_node on
# the bundled map answers a start and a goal from a small client; prints the plan summary and
# writes out/demo.png.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# Stopping this script (Ctrl-C, SIGTERM) stops the command it runs, and the node with it.
# shellcheck source=scripts/signals.sh
source scripts/signals.sh
run_forwarding bash scripts/setup.sh
run_forwarding bash scripts/build_ws.sh
# shellcheck source=scripts/env.sh
source scripts/env.sh
set +u # colcon's set-up script reads unset variables
# shellcheck disable=SC1091
source .ws/install/setup.bash
set -u
mkdir -p out
run_forwarding python scripts/demo_client.py "$@" --out out/demo_path.txt --guide-out out/demo_guide.txt
.ws/install/blockstar_planner/lib/blockstar_planner/blockstar render --map config/tb3_sandbox.yaml \
    --params config/planner.yaml --path out/demo_path.txt --guide out/demo_guide.txt --out out/demo.png --crop
echo "demo: wrote out/demo.png"
