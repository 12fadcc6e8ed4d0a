"""Nav2's planner-benchmark protocol against planner_node, through Nav2's own action.

    python3 scripts/nav2_bench.py [--map ../shared/data/ros_maps/100by100_15.yaml] [--pairs 500]
        [--robot-radius 0.2] [--min-turning-radius 0.4] [--seed 1] [--timeout 5]
        [--cost-penalties 0,2] [--inflation-radius 0.55] [--cost-scaling-factor 3.0] [--json]

As navigation2's tools/planner_benchmarking (metrics.py) does with BasicNavigator.getPath: random
start and goal poses (random headings) on free cells of a map_server map, each sent as a
`nav2_msgs/action/ComputePathToPose` goal with `use_start`, from an rclpy ActionClient. The node
runs from the colcon install with the map as `map_file` and `max_planning_time` = --timeout.
Poses are drawn where the robot's disc fits (every cell within the robot radius free, checked
here), so a failure is the planner's answer, not a bad pair; pairs the disc cannot connect are
still sent (Nav2's protocol does not filter them) and counted as expected failures when a
flood fill of the disc's free space separates them.

Every returned path is checked here, independently of the node: it starts and ends at the
requested poses (or within a cell of them when the result's `error_msg` says an end the footprint
does not fit at was moved to a covering cell; those are counted apart), every pose's disc is free
on the map, and the heading turns no faster than the minimum turning radius allows. Prints a table: success rate, planning time (the action result's
`planning_time`) p50 / p95 / max, the client's round trip p50 / p95, the mean path length, and
the failures by error code.

And what navigation2's planner benchmark reports of a path's distance from obstacles, measured
here from the map alone: each path sampled every quarter cell, a sample's cost that of its cell
under costmap_2d's InflationLayer formula (254 on an obstacle, 253 within the robot radius,
floor(252 exp(-cost_scaling_factor (d - robot_radius))) up to the inflation radius, 0 beyond; `d`
the distance between the cell's centre and the nearest obstacle cell's centre). The table gives
the median over paths of the mean and of the largest sample cost, and the median and smallest
clearance (`d` at the path's nearest sample). With `--cost-penalties` the node is run once per
value of its `cost_penalty` on the same pairs, one row each, so the trade-off is one table.
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

from helpers import close_then_stop, exit_on_sigterm, load_map_server_yaml, pose_stamped, quaternion_yaw, start_node, tmpdir  # noqa: E402

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


class InflationCost:
    """costmap_2d's inflation cost of the cells a path passes, from the map alone: obstacles are
    the cells DiscMap treats as blocked (any value but 0), the map's edge is not inflated (as
    costmap_2d does not), and a cell's distance is found by scanning the obstacles within the
    inflation radius of it (kept per cell)."""

    def __init__(self, disc, robot_radius, inflation_radius, scaling):
        self.disc, self.robot_radius = disc, robot_radius
        self.inflation_radius, self.scaling = inflation_radius, scaling
        reach = inflation_radius / disc.res
        r = math.ceil(reach)
        self.offsets = sorted((math.hypot(dx, dy), dx, dy) for dy in range(-r, r + 1) for dx in range(-r, r + 1)
                              if math.hypot(dx, dy) <= reach)
        self.distances = {}

    def distance(self, cx, cy):
        """Metres from cell (cx, cy)'s centre to the nearest obstacle cell's centre, None beyond
        the inflation radius."""
        key = (cx, cy)
        if key not in self.distances:
            d, w, h, data = None, self.disc.w, self.disc.h, self.disc.data
            for dist, dx, dy in self.offsets:
                x, y = cx + dx, cy + dy
                if 0 <= x < w and 0 <= y < h and data[y * w + x] != 0:
                    d = dist * self.disc.res
                    break
            self.distances[key] = d
        return self.distances[key]

    def cost(self, d):
        if d is None or d > self.inflation_radius:
            return 0
        if d <= 0.0:
            return 254
        if d <= self.robot_radius:
            return 253
        return math.floor(252.0 * math.exp(-self.scaling * (d - self.robot_radius)))

    def measure(self, path):
        """(mean cost, max cost, min clearance in m or None) along the path's poses joined by
        straight lines, sampled every quarter cell; None for a path that does not move."""
        disc, step = self.disc, self.disc.res / 4.0
        pts = [(q.pose.position.x, q.pose.position.y) for q in path.poses]
        samples = [pts[0]]
        for (ax, ay), (bx, by) in zip(pts, pts[1:]):
            n = max(1, math.ceil(math.hypot(bx - ax, by - ay) / step))
            samples.extend((ax + (bx - ax) * k / n, ay + (by - ay) * k / n) for k in range(1, n + 1))
        if len(samples) < 2:
            return None
        costs, clearance = [], None
        for x, y in samples:
            d = self.distance(math.floor((x - disc.ox) / disc.res), math.floor((y - disc.oy) / disc.res))
            costs.append(self.cost(d))
            if d is not None:
                clearance = d if clearance is None else min(clearance, d)
        return sum(costs) / len(costs), max(costs), clearance


def check_path(path, disc, start, goal, turning, moved_said=False):
    """Why the path is not drivable, or None. With `moved_said` (the result's `error_msg` says an
    end was moved to a covering cell) the path may start or end up to one cell's diagonal from the
    requested pose; otherwise it must start and end exactly there."""
    p = path.poses
    if len(p) < 2:
        return "fewer than 2 poses"
    a, b = p[0].pose, p[-1].pose
    slack = disc.res * math.sqrt(2.0) + 1e-6 if moved_said else 1e-6
    if math.hypot(a.position.x - start[0], a.position.y - start[1]) > slack:
        return "does not start at the start"
    if math.hypot(b.position.x - goal[0], b.position.y - goal[1]) > slack:
        return (f"ends at ({b.position.x:.3f}, {b.position.y:.3f}), "
                f"{math.hypot(b.position.x - goal[0], b.position.y - goal[1]):.3f} m from the goal "
                f"({goal[0]:.3f}, {goal[1]:.3f}, {goal[2]:.4f}); start ({start[0]:.3f}, {start[1]:.3f}, {start[2]:.4f})")
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


def wait_for(node, fut, timeout):
    """Spins `node` until `fut` is done (its result), or stops the benchmark after `timeout` s."""
    end = time.monotonic() + timeout
    while not fut.done():
        if time.monotonic() > end:
            raise SystemExit("the node stopped answering")
        rclpy.spin_once(node, timeout_sec=0.01)
    return fut.result()


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


def run(args, cost_penalty=None):
    """One pass over the pairs, the node at `cost_penalty` (None: its default)."""
    grid = load_map_server_yaml(args.map)
    disc = DiscMap(grid, args.robot_radius)
    inflation = InflationCost(disc, args.robot_radius, args.inflation_radius, args.cost_scaling_factor)
    pairs = draw_pairs(disc, args.pairs, args.seed)
    world = lambda c: (disc.ox + (c[0] + 0.5) * disc.res, disc.oy + (c[1] + 0.5) * disc.res, c[2])  # noqa: E731
    tmp = tmpdir("blockstar-nav2-bench-")
    params = {"robot_radius": args.robot_radius, "min_turning_radius": args.min_turning_radius,
              "max_planning_time": args.timeout, "map_file": str(pathlib.Path(args.map).resolve())}
    if cost_penalty is not None:
        params["cost_penalty"] = cost_penalty
    # Everything from the node's start on inside the try, so a signal at any point stops it.
    node = client_node = None
    own_context = False
    rows = []
    try:
        node = start_node(tmp, NODE_NAME, params, extra_args=["-r", f"__ns:=/{NAMESPACE}"])
        own_context = not rclpy.ok()  # under pytest, the suite's context may already be up
        if own_context:
            rclpy.init()
        client_node = rclpy.create_node("nav2_bench_client")
        client = ActionClient(client_node, ComputePathToPose, f"/{NAMESPACE}/compute_path_to_pose")
        if not client.wait_for_server(timeout_sec=30.0):
            raise SystemExit("no compute_path_to_pose server")
        # The first goal goes the moment the server is found, as Nav2's does: the node's response
        # waits for this client's reader (README, "Action and service responses").

        def wait(fut, timeout):
            return wait_for(client_node, fut, timeout)

        for s_cell, g_cell in pairs:
            start, goal = world(s_cell), world(g_cell)
            t0 = time.perf_counter()
            handle = wait(client.send_goal_async(ComputePathToPose.Goal(
                goal=pose_stamped(*goal), start=pose_stamped(*start), use_start=True)), 30)
            result = wait(handle.get_result_async(), args.timeout + 30).result
            round_trip = time.perf_counter() - t0
            connected = disc.region(*s_cell[:2]) == disc.region(*g_cell[:2])
            # A success whose message names a covering cell moved an end and says so.
            moved = result.error_code == 0 and "covering cell" in result.error_msg
            illegal = check_path(result.path, disc, start, goal, args.min_turning_radius, moved) \
                if result.error_code == 0 else None
            measured = inflation.measure(result.path) if result.error_code == 0 else None
            rows.append({"code": result.error_code, "message": result.error_msg, "connected": connected,
                         "inflation": measured, "moved": moved,
                         "time": result.planning_time.sec + result.planning_time.nanosec * 1e-9,
                         "round_trip": round_trip, "illegal": illegal,
                         "length": sum(math.hypot(b.pose.position.x - a.pose.position.x,
                                                  b.pose.position.y - a.pose.position.y)
                                       for a, b in zip(result.path.poses, result.path.poses[1:]))})
    finally:
        close_then_stop(node, client_node and client_node.destroy_node, own_context)
    return rows


def report(rows, args):
    ok = [r for r in rows if r["code"] == 0]
    reachable = [r for r in rows if r["connected"]]
    failures = collections.Counter(r["code"] for r in rows if r["code"] != 0)
    measured = [r for r in ok if r["inflation"]]
    # A path that never comes within the inflation radius keeps at least that much.
    clearances = [r["inflation"][2] if r["inflation"][2] is not None else args.inflation_radius for r in measured]
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
        "moved_ends": [r["message"] for r in ok if r["moved"]],
        # Navigation2's benchmark metrics, over the paths that move.
        "median_mean_cost": percentile([r["inflation"][0] for r in measured], 0.5),
        "median_max_cost": percentile([r["inflation"][1] for r in measured], 0.5),
        "clearance_median_m": percentile([c for c in clearances], 0.5),
        "clearance_min_m": min(clearances, default=float("nan")),
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
    parser.add_argument("--cost-penalties", default=None,
                        help="comma-separated cost_penalty values, one pass each (default: the node's default)")
    parser.add_argument("--inflation-radius", type=float, default=0.55,
                        help="inflation radius (m) of the costmap the paths are measured against (Nav2's default)")
    parser.add_argument("--cost-scaling-factor", type=float, default=3.0,
                        help="cost scaling factor of that inflation (Nav2's default)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    penalties = [None] if args.cost_penalties is None else [float(v) for v in args.cost_penalties.split(",")]
    results = []
    for penalty in penalties:
        r = report(run(args, penalty), args)
        r["cost_penalty"] = penalty
        results.append(r)
    if args.json:
        print(json.dumps(results[0] if args.cost_penalties is None else results, indent=2))
    else:
        first = results[0]
        print(f"map {first['map']}, {first['pairs']} pairs, robot radius {first['robot_radius']} m, "
              f"minimum turning radius {first['min_turning_radius']} m; costs measured with inflation radius "
              f"{args.inflation_radius} m, cost scaling factor {args.cost_scaling_factor}")
        print("| planner | success | success (disc-reachable pairs) | planning time p50 / p95 / max (ms) "
              "| round trip p50 / p95 (ms) | mean length (m) | mean cost | max cost | clearance median / min (m) |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for r in results:
            t, rt = r["planning_time_ms"], r["round_trip_ms"]
            name = "blockstar GridBased" + ("" if r["cost_penalty"] is None else f" (cost_penalty {r['cost_penalty']:g})")
            print(f"| {name} | {100 * r['success_rate']:.1f}% | {100 * r['success_among_reachable']:.1f}% "
                  f"of {r['reachable_by_disc']} | {t['p50']:.2f} / {t['p95']:.2f} / {t['max']:.2f} "
                  f"| {rt['p50']:.2f} / {rt['p95']:.2f} | {r['mean_length_m']:.2f} | {r['median_mean_cost']:.1f} "
                  f"| {r['median_max_cost']:.0f} | {r['clearance_median_m']:.3f} / {r['clearance_min_m']:.3f} |")
        for r in results:
            label = "" if r["cost_penalty"] is None else f" at cost_penalty {r['cost_penalty']:g}"
            print(f"failures by error code{label}: {r['failures_by_code'] or 'none'}")
            print(f"illegal paths{label}: {len(r['illegal'])}" + "".join(f"\n  {i}" for i in r["illegal"]))
            print(f"ends moved to a covering cell, as the result says{label}: {len(r['moved_ends'])}"
                  + "".join(f"\n  {m}" for m in r["moved_ends"]))
    return 1 if any(r["illegal"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
