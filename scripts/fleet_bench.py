"""Three vehicle profiles on one node through Nav2's action: each profile's goals alone, then the
same goals of every profile interleaved, side by side in one run of one node.

    python3 scripts/fleet_bench.py [--map ../shared/data/ros_maps/100by100_15.yaml] [--pairs 100]
        [--seed 1] [--timeout 5] [--json]

The node serves `planner_plugins: [GridBased, Car, Tugger]` (a parameters file as Nav2 writes
one, each profile's parameters nested under its name):
- GridBased: a disc of radius 0.2 m, minimum turning radius 0.4 m, forward;
- Car: a disc of radius 0.25 m, 0.6 m, with reversing (`reeds_shepp`);
- Tugger: a 0.85 m x 0.4 m rectangle, `base_link` on its rear axle 0.15 m from its back, 0.8 m,
  forward.

Start and goal poses are drawn as scripts/nav2_bench.py draws them (random headings, where a disc
of 0.25 m, the largest, fits) and sent to `compute_path_to_pose` with `use_start` and the profile's `planner_id`,
one goal at a time, from one rclpy client: after a warm-up pass over every pair and profile (not
reported: the node fills each profile's tables in the background, and a first plan may still fill
what it needs itself, besides warming caches), every pair for GridBased
alone, then for Car alone, then for Tugger alone, then every pair for the three profiles in turn
(GridBased, Car, Tugger, next pair, ...). Reported per profile: success, planning time (the result's
`planning_time`) p50 / p95 alone and interleaved and the ratio of the p95s, whether every
interleaved answer equals the answer alone (same code, same path), and the paths that fail the
check here (discs: scripts/nav2_bench.py's check; the tugger: its outline swept over the map,
tests/ros/living.py). Exits 1 on an illegal path or an answer that changed.
"""

import argparse
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "ros"))
sys.path.insert(0, str(ROOT / "scripts"))
import rclpy  # noqa: E402
from rclpy.action import ActionClient  # noqa: E402

from nav2_msgs.action import ComputePathToPose  # noqa: E402

from helpers import close_then_stop, exit_on_sigterm, load_map_server_yaml, pose_stamped, start_node, tmpdir  # noqa: E402
from living import MapModel, polygon_hits  # noqa: E402
from nav2_bench import DiscMap, check_path, draw_pairs, percentile, wait_for  # noqa: E402

TUGGER = [[0.7, 0.2], [0.7, -0.2], [-0.15, -0.2], [-0.15, 0.2]]
# (name, the profile's own parameters, disc radius for the check or None for the tugger's
# outline, minimum turning radius)
PROFILES = [
    ("GridBased", {}, 0.2, 0.4),
    ("Car", {"robot_radius": 0.25, "min_turning_radius": 0.6, "motion_model": "reeds_shepp"}, 0.25, 0.6),
    ("Tugger", {"footprint": "[" + ", ".join(f"[{x}, {y}]" for x, y in TUGGER) + "]", "min_turning_radius": 0.8},
     None, 0.8),
]
NODE_NAME = "planner_fleet_bench"
NAMESPACE = "fleet"


def run(args):
    """Every pass in one node run: returns {(pass, profile): [answer per pair]}."""
    grid = load_map_server_yaml(args.map)
    # Ends where the largest disc fits (a start the disc overlaps would be driven out of, within
    # start_overlap, and the disc check here would count that stretch).
    disc = DiscMap(grid, max(radius for *_, radius, _ in PROFILES if radius is not None))
    pairs = draw_pairs(disc, args.pairs, args.seed)
    world = lambda c: (disc.ox + (c[0] + 0.5) * disc.res, disc.oy + (c[1] + 0.5) * disc.res, c[2])  # noqa: E731
    tmp = tmpdir("blockstar-fleet-bench-")
    params = {"robot_radius": 0.2, "min_turning_radius": 0.4, "max_planning_time": args.timeout,
              "map_file": str(pathlib.Path(args.map).resolve()),
              "planner_plugins": [name for name, *_ in PROFILES]}
    params.update({name: own for name, own, *_ in PROFILES if own})
    # Everything from the node's start on inside the try, so a signal at any point stops it.
    node = client_node = None
    own_context = False
    answers = {}
    try:
        node = start_node(tmp, NODE_NAME, params, extra_args=["-r", f"__ns:=/{NAMESPACE}"])
        own_context = not rclpy.ok()
        if own_context:
            rclpy.init()
        client_node = rclpy.create_node("fleet_bench_client")
        client = ActionClient(client_node, ComputePathToPose, f"/{NAMESPACE}/compute_path_to_pose")
        if not client.wait_for_server(timeout_sec=30.0):
            raise SystemExit("no compute_path_to_pose server")

        def wait(fut, timeout):
            return wait_for(client_node, fut, timeout)

        def ask(pair, profile):
            start, goal = world(pair[0]), world(pair[1])
            goal_msg = ComputePathToPose.Goal(goal=pose_stamped(*goal), start=pose_stamped(*start), use_start=True,
                                              planner_id=profile)
            handle = wait(client.send_goal_async(goal_msg), 30)
            r = wait(handle.get_result_async(), args.timeout + 30).result
            poses = tuple((round(p.pose.position.x, 6), round(p.pose.position.y, 6)) for p in r.path.poses)
            return {"code": r.error_code, "message": r.error_msg, "path": r.path, "poses": poses,
                    "time": r.planning_time.sec + r.planning_time.nanosec * 1e-9, "start": start, "goal": goal}

        # A warm-up pass (not reported): the first plans may still fill table entries (the
        # node's background filler runs beside them) and warm caches, which would otherwise
        # fall on the first pass measured.
        for pair in pairs:
            for name, *_ in PROFILES:
                ask(pair, name)
        for name, *_ in PROFILES:
            answers[("alone", name)] = [ask(pair, name) for pair in pairs]
        for name, *_ in PROFILES:
            answers[("mixed", name)] = []
        for pair in pairs:
            for name, *_ in PROFILES:
                answers[("mixed", name)].append(ask(pair, name))
    finally:
        close_then_stop(node, client_node and client_node.destroy_node, own_context)
    return grid, answers


def illegal(grid, profile, answer):
    """Why the path of a successful `answer` is not drivable for `profile`, or None."""
    _, _, radius, turning = profile
    if radius is not None:
        moved = "covering cell" in answer["message"]
        return check_path(answer["path"], DiscMap(grid, radius), answer["start"], answer["goal"], turning, moved)
    hits = polygon_hits(answer["path"], MapModel(grid), TUGGER)
    return f"the tugger's outline touches {hits[:3]}" if hits else None


def report(grid, answers):
    rows = []
    for profile in PROFILES:
        name = profile[0]
        alone, mixed = answers[("alone", name)], answers[("mixed", name)]
        ok_alone = [a for a in alone if a["code"] == 0]
        ok_mixed = [a for a in mixed if a["code"] == 0]
        p95_alone = percentile([a["time"] for a in ok_alone], 0.95)
        p95_mixed = percentile([a["time"] for a in ok_mixed], 0.95)
        bad = [why for a in ok_alone + ok_mixed if (why := illegal(grid, profile, a))]
        rows.append({
            "profile": name, "pairs": len(alone), "success": len(ok_alone),
            "time_alone_ms": {"p50": 1e3 * percentile([a["time"] for a in ok_alone], 0.5), "p95": 1e3 * p95_alone},
            "time_mixed_ms": {"p50": 1e3 * percentile([a["time"] for a in ok_mixed], 0.5), "p95": 1e3 * p95_mixed},
            "p95_ratio_mixed_to_alone": p95_mixed / p95_alone if p95_alone > 0 else float("nan"),
            "answers_changed": sum(1 for a, m in zip(alone, mixed) if (a["code"], a["poses"]) != (m["code"], m["poses"])),
            "illegal": bad,
        })
    return rows


def main():
    exit_on_sigterm()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--map", default=str(ROOT.parent / "shared" / "data" / "ros_maps" / "100by100_15.yaml"))
    parser.add_argument("--pairs", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=5.0, help="max_planning_time of the node (s)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    grid, answers = run(args)
    rows = report(grid, answers)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(f"map {args.map}, {args.pairs} pairs, seed {args.seed}; one node, profiles alone then interleaved")
        print("| profile | success | alone p50 / p95 (ms) | interleaved p50 / p95 (ms) | p95 ratio | answers changed "
              "| illegal |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for r in rows:
            a, m = r["time_alone_ms"], r["time_mixed_ms"]
            print(f"| {r['profile']} | {r['success']} of {r['pairs']} | {a['p50']:.2f} / {a['p95']:.2f} "
                  f"| {m['p50']:.2f} / {m['p95']:.2f} | {r['p95_ratio_mixed_to_alone']:.2f} | {r['answers_changed']} "
                  f"| {len(r['illegal'])} |")
        for r in rows:
            for why in r["illegal"]:
                print(f"illegal {r['profile']} path: {why}")
    return 1 if any(r["illegal"] or r["answers_changed"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
