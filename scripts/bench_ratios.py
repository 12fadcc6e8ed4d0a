#!/usr/bin/env python3
"""Side-by-side speed ratios of Block A* against A*-octile and Theta* on Moving AI maps.

Runs `blockstar bench --algo block-aa,astar-oct,theta --json` on each map for several rounds
(one process per round, so every ratio comes from one run with the three algorithms side by
side) and prints, per map, block-aa's median time per query, the ratios of the baselines'
medians to it (lowest, median and highest over the rounds), and the mean lengths. Rounds exist
because a shared machine's noise moves single runs by tens of percent; the spread shows it.

Usage: python3 scripts/bench_ratios.py [--data DIR] [--rounds N] [--bin PATH] [MAP ...]
MAP names a file DIR/MAP.map with DIR/MAP.map.scen beside it (default: arena2 lak303d AR0011SR
random512-40-0; DIR defaults to tests/data/movingai). The binary must
exist (build it with `cargo build --release --no-default-features --bin blockstar`).
Exits with 1 when a run fails or any query goes unsolved.
"""
import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ALGOS = ["block-aa", "astar-oct", "theta"]


def one_round(binary, map_path, scen_path):
    """One bench process; returns {algorithm name: its JSON object}."""
    out = subprocess.run(
        [str(binary), "bench", "--map", str(map_path), "--scen", str(scen_path), "--algo", ",".join(ALGOS), "--json"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    rows = {a["name"]: a for a in json.loads(out)["algorithms"]}
    for name, row in rows.items():
        if row["solved"] != row["queries"]:
            raise RuntimeError(f"{map_path.name}: {name} solved {row['solved']} of {row['queries']}")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT / "tests" / "data" / "movingai")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--bin", type=Path, default=ROOT / "target" / "release" / "blockstar")
    ap.add_argument("maps", nargs="*", default=["arena2", "lak303d", "AR0011SR", "random512-40-0"])
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    if not args.bin.is_file():
        ap.error(f"{args.bin} not found: cargo build --release --no-default-features --bin blockstar")
    print(f"{'map':16} {'block-aa median_ms':>18} {'x astar-oct (lo/med/hi)':>24} {'x theta (lo/med/hi)':>22}"
          f" {'len block-aa':>12} {'len theta':>10}")
    for name in args.maps:
        map_path, scen_path = args.data / f"{name}.map", args.data / f"{name}.map.scen"
        try:
            runs = [one_round(args.bin, map_path, scen_path) for _ in range(args.rounds)]
        except (subprocess.CalledProcessError, RuntimeError, OSError) as e:
            print(f"{name}: {e}", file=sys.stderr)
            return 1
        block = [r["block-aa"]["median_ms"] for r in runs]

        def spread(algo):
            ratios = sorted(r[algo]["median_ms"] / r["block-aa"]["median_ms"] for r in runs)
            return f"{ratios[0]:.1f}/{statistics.median(ratios):.1f}/{ratios[-1]:.1f}"

        last = runs[-1]
        print(f"{name:16} {statistics.median(block):18.4f} {spread('astar-oct'):>24} {spread('theta'):>22}"
              f" {last['block-aa']['mean_length']:12.4f} {last['theta']['mean_length']:10.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
