#!/usr/bin/env bash
# The README's first command: set-up, build, then planner_node on the bundled map answers a
# start and a goal from a small client; prints the plan summary and writes out/demo.png.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
# shellcheck source=scripts/env.sh
source scripts/env.sh
echo "building (the first build of r2r takes a few minutes)..."
cargo build --quiet --features ros --bins
mkdir -p out
python scripts/demo_client.py "$@" --out out/demo_path.txt
target/debug/blockstar render --map config/tb3_sandbox.yaml --path out/demo_path.txt --out out/demo.png --crop
