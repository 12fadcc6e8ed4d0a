"""Nav2's planner-benchmark protocol against planner_node, through Nav2's own action.

    python3 scripts/nav2_bench.py [--map ../shared/data/ros_maps/100by100_15.yaml] [--pairs 500]
        [--robot-radius 0.2] [--min-turning-radius 0.4] [--seed 1] [--timeout 5] [--json]

As navigation2's tools/planner_benchmarking (metrics.py) does with BasicNavigator.getPath: random
start and goal poses (random headings) on free cells of a map_server map, each sent as a
`nav2_msgs/action/ComputePathToPose` goal with `use_start`, from an rclpy ActionClient. The node
runs from the colcon install with the map as `map_file` and `max_planning_time` = --timeout.
Poses are drawn where the robot's disc fits (every cell within the robot radius free, checked
here), so a failure is the planner's answer, not a bad pair; pairs the disc cannot connect are
still sent (Nav2's protocol does not filter them) and counted as expected failures when a
flood fill of the disc's free space separates them.

Every returned path is checked here, independently of the node: it starts and ends at the
requested poses, every pose's disc is free on the map, and the heading turns no faster than the
minimum turning radius allows. Prints a table: success rate, planning time (the action result's
`planning_time`) p50 / p95 / max, the client's round trip p50 / p95, the mean path length, and
the failures by error code.
"""

import argparse
import collections
import json
import math
import pathlib
import random
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "ros"))
import rclpy  # noqa: E402
from rclpy.action import ActionClient  # noqa: E402

from nav2_msgs.action import ComputePathToPose  # noqa: E402

from helpers import exit_on_sigterm, load_map_server_yaml, pose_stamped, quaternion_yaw, start_node, tmpdir  # noqa: E402

NODE_NAME = "planner_bench"
NAMESPACE = "bench"


def percentile(values, q):
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))]


class DiscMap:
    """Where a disc of `radius` fits on the grid, and its connected regions, computed here
    independently of the node (numpy for the disc test of every cell, one flood fill per region)."""

    def __init__(self, grid, radius):
        info = grid.info
        self.w, self.h, self.res = info.width, info.height, info.resolution
        self.ox, self.oy = info.origin.position.x, info.origin.position.y
        self.data = grid.data
        self.radius = radius
        r = math.ceil(radius / self.res)
        self.offsets = [(dx, dy) for dy in range(-r - 1, r + 2) for dx in range(-r - 1, r + 2)]
        self.labels = None

    def disc_free(self, x, y):
        """No blocked or unknown cell, nor the map's edge, within `radius` of (x, y)."""
        cx, cy = math.floor((x - self.ox) / self.res), math.floor((y - self.oy) / self.res)
        for dx, dy in self.offsets:
            gx, gy = cx + dx, cy + dy
            # Distance from (x, y) to the cell's square.
            x0, y0 = self.ox + gx * self.res, self.oy + gy * self.res
            ddx = max(x0 - x, 0.0, x - (x0 + self.res))
            ddy = max(y0 - y, 0.0, y - (y0 + self.res))
            if math.hypot(ddx, ddy) >= self.radius:
                continue
            if not (0 <= gx < self.w and 0 <= gy < self.h) or self.data[gy * self.w + gx] != 0:
                return False
        return True

    def fits_mask(self):
        """fits[y, x]: the disc fits at the centre of cell (x, y) (the rule of disc_free)."""
        import numpy as np

        blocked = np.frombuffer(bytes(self.data), dtype=np.int8).reshape(self.h, self.w) != 0
        pad = max(max(abs(dx), abs(dy)) for dx, dy in self.offsets)
        padded = np.pad(blocked, pad, constant_values=True)
        fits = np.ones((self.h, self.w), dtype=bool)
        for dx, dy in self.offsets:
            # The nearest point of cell (dx, dy) from the centre of cell (0, 0), in cells.
            ddx, ddy = max(abs(dx) - 0.5, 0.0), max(abs(dy) - 0.5, 0.0)
            if math.hypot(ddx, ddy) * self.res >= self.radius:
                continue
            fits &= ~padded[pad + dy:pad + dy + self.h, pad + dx:pad + dx + self.w]
        return fits

    def region(self, cx, cy):
        """The connected region (4-neighbour flood fill over cells where the disc fits) of a
        cell, 0 where the disc does not fit; all regions are labelled at the first call."""
        if self.labels is None:
            fits = self.fits_mask().ravel().tolist()
            w, n = self.w, self.w * self.h
            labels = [0] * n
            label = 0
            for seed in range(n):
                if not fits[seed] or labels[seed]:
                    continue
                label += 1
                labels[seed] = label
                stack = [seed]
                while stack:
                    i = stack.pop()
                    x = i % w
                    for j in (i + 1 if x + 1 < w else -1, i - 1 if x > 0 else -1, i + w, i - w):
                        if 0 <= j < n and fits[j] and not labels[j]:
                            labels[j] = label
                            stack.append(j)
            self.labels = labels
        return self.labels[cy * self.w + cx]

    def fits(self, cx, cy):
        return self.region(cx, cy) != 0


def check_path(path, disc, start, goal, turning):
    """Why the path is not drivable, or None."""
    p = path.poses
    if len(p) < 2:
        return "fewer than 2 poses"
    a, b = p[0].pose, p[-1].pose
    if math.hypot(a.position.x - start[0], a.position.y - start[1]) > 1e-6:
        return "does not start at the start"
    if math.hypot(b.position.x - goal[0], b.position.y - goal[1]) > 1e-6:
        return "does not end at the goal"
    if abs(math.remainder(quaternion_yaw(b.orientation) - goal[2], math.tau)) > 1e-6:
        return "does not arrive with the goal's heading"
    for u, v in zip(p, p[1:]):
        step = math.hypot(v.pose.position.x - u.pose.position.x, v.pose.position.y - u.pose.position.y)
        turn = abs(math.remainder(quaternion_yaw(v.pose.orientation) - quaternion_yaw(u.pose.orientation), math.tau))
        # On an arc of radius >= turning, a chord of `step` turns the heading by at most this.
        if turning > 0 and turn > 2 * math.asin(min(1.0, step / (2 * turning))) + 1e-6:
            return f"turns {turn:.4f} rad over {step:.4f} m"
    for q in p:
        if not disc.disc_free(q.pose.position.x, q.pose.position.y):
            return f"footprint meets an obstacle at ({q.pose.position.x:.3f}, {q.pose.position.y:.3f})"
    return None


def draw_pairs(disc, n, seed):
    rng = random.Random(seed)
    free = [(x, y) for y in range(disc.h) for x in range(disc.w) if disc.data[y * disc.w + x] == 0]
    pairs = []
    while len(pairs) < n:
        poses = []
        while len(poses) < 2:
            cx, cy = rng.choice(free)
            if disc.fits(cx, cy):
                poses.append((cx, cy, rng.uniform(-math.pi, math.pi)))
        pairs.append(tuple(poses))
    return pairs


def run(args):
    grid = load_map_server_yaml(args.map)
    disc = DiscMap(grid, args.robot_radius)
    pairs = draw_pairs(disc, args.pairs, args.seed)
    world = lambda c: (disc.ox + (c[0] + 0.5) * disc.res, disc.oy + (c[1] + 0.5) * disc.res, c[2])  # noqa: E731
    tmp = tmpdir("blockstar-nav2-bench-")
    params = {"robot_radius": args.robot_radius, "min_turning_radius": args.min_turning_radius,
              "max_planning_time": args.timeout, "map_file": str(pathlib.Path(args.map).resolve())}
    node = start_node(tmp, NODE_NAME, params, extra_args=["-r", f"__ns:=/{NAMESPACE}"])
    own_context = not rclpy.ok()  # under pytest, the suite's context may already be up
    if own_context:
        rclpy.init()
    client_node = rclpy.create_node("nav2_bench_client")
    client = ActionClient(client_node, ComputePathToPose, f"/{NAMESPACE}/compute_path_to_pose")
    rows = []
    try:
        if not client.wait_for_server(timeout_sec=30.0):
            raise SystemExit("no compute_path_to_pose server")
        # The first goal goes the moment the server is found, as Nav2's does: the node's response
        # waits for this client's reader (README, "Action and service responses").

        def wait(fut, timeout):
            end = time.monotonic() + timeout
            while not fut.done():
                if time.monotonic() > end:
                    raise SystemExit("the node stopped answering")
                rclpy.spin_once(client_node, timeout_sec=0.01)
            return fut.result()

        for s_cell, g_cell in pairs:
            start, goal = world(s_cell), world(g_cell)
            t0 = time.perf_counter()
            handle = wait(client.send_goal_async(ComputePathToPose.Goal(
                goal=pose_stamped(*goal), start=pose_stamped(*start), use_start=True)), 30)
            result = wait(handle.get_result_async(), args.timeout + 30).result
            round_trip = time.perf_counter() - t0
            connected = disc.region(*s_cell[:2]) == disc.region(*g_cell[:2])
            illegal = check_path(result.path, disc, start, goal, args.min_turning_radius) \
                if result.error_code == 0 else None
            rows.append({"code": result.error_code, "message": result.error_msg, "connected": connected,
                         "time": result.planning_time.sec + result.planning_time.nanosec * 1e-9,
                         "round_trip": round_trip, "illegal": illegal,
                         "length": sum(math.hypot(b.pose.position.x - a.pose.position.x,
                                                  b.pose.position.y - a.pose.position.y)
                                       for a, b in zip(result.path.poses, result.path.poses[1:]))})
    finally:
        client_node.destroy_node()
        if own_context:
            rclpy.shutdown()
        node.stop()
    return rows


def report(rows, args):
    ok = [r for r in rows if r["code"] == 0]
    reachable = [r for r in rows if r["connected"]]
    failures = collections.Counter(r["code"] for r in rows if r["code"] != 0)
    return {
        "map": str(args.map), "pairs": len(rows), "robot_radius": args.robot_radius,
        "min_turning_radius": args.min_turning_radius,
        "success": len(ok), "success_rate": len(ok) / max(1, len(rows)),
        "reachable_by_disc": len(reachable),
        "success_among_reachable": sum(1 for r in reachable if r["code"] == 0) / max(1, len(reachable)),
        "planning_time_ms": {q: 1e3 * percentile([r["time"] for r in ok], v)
                             for q, v in (("p50", 0.5), ("p95", 0.95), ("max", 1.0))},
        "round_trip_ms": {q: 1e3 * percentile([r["round_trip"] for r in rows], v) for q, v in (("p50", 0.5), ("p95", 0.95))},
        "mean_length_m": sum(r["length"] for r in ok) / max(1, len(ok)),
        "failures_by_code": dict(sorted(failures.items())),
        "illegal": [r["illegal"] for r in ok if r["illegal"]],
    }


def main():
    exit_on_sigterm()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--map", default=str(ROOT.parent / "shared" / "data" / "ros_maps" / "100by100_15.yaml"))
    parser.add_argument("--pairs", type=int, default=500)
    parser.add_argument("--robot-radius", type=float, default=0.2)
    parser.add_argument("--min-turning-radius", type=float, default=0.4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=5.0, help="max_planning_time of the node (s)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    r = report(run(args), args)
    if args.json:
        print(json.dumps(r, indent=2))
    else:
        t, rt = r["planning_time_ms"], r["round_trip_ms"]
        print(f"map {r['map']}, {r['pairs']} pairs, robot radius {r['robot_radius']} m, "
              f"minimum turning radius {r['min_turning_radius']} m")
        print("| planner | success | success (disc-reachable pairs) | planning time p50 / p95 / max (ms) "
              "| round trip p50 / p95 (ms) | mean length (m) |")
        print("| --- | --- | --- | --- | --- | --- |")
        print(f"| blockstar GridBased | {100 * r['success_rate']:.1f}% | {100 * r['success_among_reachable']:.1f}% "
              f"of {r['reachable_by_disc']} | {t['p50']:.2f} / {t['p95']:.2f} / {t['max']:.2f} "
              f"| {rt['p50']:.2f} / {rt['p95']:.2f} | {r['mean_length_m']:.2f} |")
        print(f"failures by error code: {r['failures_by_code'] or 'none'}")
        print(f"illegal paths: {len(r['illegal'])}" + "".join(f"\n  {i}" for i in r["illegal"]))
    return 1 if r["illegal"] else 0


if __name__ == "__main__":
    sys.exit(main())
