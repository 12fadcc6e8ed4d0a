#!/usr/bin/env python3
"""How low can a path's mean Nav2 cost go at all? A lower bound, independent of the planner.

Issue 26 asks that, with the default costs, the median over random pairs of the mean Nav2 cost
along each path fall to half of the shortest paths', for paths at most 1.10 times as long. On a
cluttered map that may be impossible for any vehicle. This script estimates, per pair, the least
mean cost any path within a length limit can have, for a disc that turns on the spot (every
turning-radius-legal path is such a path, so its floor is at most the car's):

1. The map (map_server YAML + PGM) is read here; occupied and unknown cells are obstacles. Each
   cell's Nav2 cost follows costmap_2d's InflationLayer formula as issue 26 states it (254 on an
   obstacle, 253 within the inscribed radius, floor(252 exp(-k (d - r))) up to the inflation
   radius, 0 beyond; d the distance between cell centres), computed here by scanning offsets.
2. The paths considered are those of the 16-connected grid between cell centres whose samples
   (every quarter cell, as the benchmark samples) all lie in cells that are not obstacles (cost
   below 254): more paths than the disc may drive, whose centre keeps out of the cells of cost
   253 too (a lower bound stays one when more paths are allowed).
3. For several weights w, Dijkstra finds V(w) = min over paths of L + w C (L the length, C the
   cost integral: the sum of sample costs times the sample spacing). For every path,
   L + w C >= V(w); so a path with L <= Lmax has a mean cost C / L >= (V(w) - Lmax) / (w Lmax).
   The floor is the best of these bounds over the weights (a supporting line of the convex hull
   of the (L, C) pairs of all paths).
4. Lmax is `--length-factor` (1.10) times the length of the planner's cost-free path for the
   pair, plus the distances from the start and goal poses to their cells' centres, times
   `--grid-slack` (1.03: a straight run is approximated by 16-connected moves at most 2.7%
   longer). So the figure is an estimate of the bound for continuous paths, not a proof: a
   continuous path bending round obstacles may need more than that slack on the grid, and the
   grid's paths pass other cells than it does.

Input: the `--verbose` lines of `blockstar bench-nav` with `pipeline-shortest` (the length limit
per pair) and the costed algorithm to compare (`pipeline` by default), which print each pair's
poses (cells) and the path's mean Nav2 cost:

    blockstar bench-nav --map M.yaml --pairs 20 --min-separation 2 --robot-radius 0.22 \\
        --min-turning-radius 0.4 --algo pipeline-shortest,pipeline --verbose 2> pairs.txt
    python3 scripts/cost_floor.py --map M.yaml --pairs pairs.txt

Prints per pair the shortest path's and the planner's mean cost, the floor, and the least mean
cost among the weights' grid paths within the limit (without the slack) that keep out of the
cells of cost 253 too: a cost a disc turning on the spot reaches (up to the grid's sampling), so
the least lies between the two. Then the medians (the issue's bar is
half of the shortest paths' median). numpy and PyYAML.
"""

import argparse
import heapq
import math
import pathlib
import re
import statistics
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "ros"))
from map_server_files import read_map_server  # noqa: E402

LINE = re.compile(
    r"^(?P<algo>[\w-]+) [\d.]+ms \((?P<s>[^)]*)\)->\((?P<g>[^)]*)\): len (?P<len>[\d.]+) by .*"
    r"; Nav2 mean cost (?P<cost>[\d.]+|NaN)$"
)


def load_map(yaml_path):
    """The map's obstacles (occupied or unknown), row 0 at the map's origin, and its resolution."""
    meta, width, height, maxval, raw = read_map_server(yaml_path)
    pixels = np.frombuffer(raw, dtype=np.uint8).reshape(height, width)
    p = pixels.astype(float) / maxval
    occ = p if int(meta.get("negate", "0")) else 1.0 - p
    occupied = occ > float(meta["occupied_thresh"])
    free = occ < float(meta["free_thresh"])
    obstacle = ~free | occupied
    # Row 0 of the image is the top; the grid's row 0 is the bottom (map_server's convention).
    return obstacle[::-1, :].copy(), float(meta["resolution"])


def nav2_costs(obstacle, resolution, inscribed, inflation, scaling):
    h, w = obstacle.shape
    reach = int(math.ceil(inflation / resolution))
    dist = np.full((h, w), np.inf)
    padded = np.zeros((h + 2 * reach, w + 2 * reach), dtype=bool)
    padded[reach:reach + h, reach:reach + w] = obstacle
    for dy in range(-reach, reach + 1):
        for dx in range(-reach, reach + 1):
            d = math.hypot(dx, dy) * resolution
            if d > inflation:
                continue
            shifted = padded[reach + dy:reach + dy + h, reach + dx:reach + dx + w]
            dist = np.where(shifted & (dist > d), d, dist)
    cost = np.zeros((h, w), dtype=np.int32)
    band = (dist > inscribed) & (dist <= inflation)
    cost[band] = np.floor(252.0 * np.exp(-scaling * (dist[band] - inscribed))).astype(np.int32)
    cost[(dist > 0) & (dist <= inscribed)] = 253
    cost[dist == 0] = 254
    return cost


MOVES = [(1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1),
         (2, 1), (1, 2), (-1, 2), (-2, 1), (-2, -1), (-1, -2), (1, -2), (2, -1)]


def edges(cost, limit):
    """Per move: its length (cells) and, per start cell, its cost integral (cells x cost) or -1
    where a sample falls in a cell of cost `limit` or more or off the map."""
    h, w = cost.shape
    ys, xs = np.mgrid[0:h, 0:w]
    out = []
    for dx, dy in MOVES:
        length = math.hypot(dx, dy)
        n = max(1, int(math.ceil(length / 0.25)))
        total = np.zeros((h, w))
        ok = np.ones((h, w), dtype=bool)
        # Samples at the start's centre and every quarter cell up to the end's centre; the
        # integral's trapezoid weights, so that consecutive moves do not count their joint twice.
        for k in range(n + 1):
            t = k / n
            ox, oy = 0.5 + t * dx, 0.5 + t * dy
            cx, cy = int(math.floor(ox)), int(math.floor(oy))
            tx, ty = xs + cx, ys + cy
            inside = (tx >= 0) & (tx < w) & (ty >= 0) & (ty < h)
            c = np.where(inside, cost[np.clip(ty, 0, h - 1), np.clip(tx, 0, w - 1)], 254)
            ok &= c < limit
            weight = 0.5 if k in (0, n) else 1.0
            total += weight * c * (length / n)
        out.append((dx, dy, length, np.where(ok, total, -1.0)))
    return out


def dijkstra(moves, start, goal, weight, shape):
    h, w = shape
    best = {start: 0.0}
    back = {}
    heap = [(0.0, start)]
    while heap:
        d, (x, y) = heapq.heappop(heap)
        if (x, y) == goal:
            break
        if d > best.get((x, y), math.inf):
            continue
        for dx, dy, length, integral in moves:
            c = integral[y, x]
            if c < 0:
                continue
            nx, ny = x + dx, y + dy
            if not (0 <= nx < w and 0 <= ny < h):
                continue
            nd = d + length + weight * c
            if nd < best.get((nx, ny), math.inf):
                best[(nx, ny)] = nd
                back[(nx, ny)] = (x, y, length, c)
                heapq.heappush(heap, (nd, (nx, ny)))
    if goal not in best:
        return None
    length = integral = 0.0
    node = goal
    while node != start:
        x, y, step, c = back[node]
        length += step
        integral += c
        node = (x, y)
    return best[goal], length, integral


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--map", required=True)
    ap.add_argument("--pairs", required=True, help="bench-nav --verbose output (stderr)")
    ap.add_argument("--shortest", default="pipeline-shortest")
    ap.add_argument("--costed", default="pipeline")
    ap.add_argument("--robot-radius", type=float, default=0.22)
    ap.add_argument("--inflation-radius", type=float, default=0.55)
    ap.add_argument("--cost-scaling-factor", type=float, default=3.0)
    ap.add_argument("--length-factor", type=float, default=1.10)
    ap.add_argument("--grid-slack", type=float, default=1.03)
    args = ap.parse_args()

    obstacle, res = load_map(args.map)
    cost = nav2_costs(obstacle, res, args.robot_radius, args.inflation_radius, args.cost_scaling_factor)
    moves = edges(cost, 254)
    strict = edges(cost, 253)
    results = {}
    for line in pathlib.Path(args.pairs).read_text().splitlines():
        m = LINE.match(line.strip())
        if not m or m["algo"] not in (args.shortest, args.costed):
            continue
        key = (m["s"], m["g"])
        results.setdefault(key, {})[m["algo"]] = (float(m["len"]), float(m["cost"]))
    weights = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0]
    rows = []
    for (s, g), by in results.items():
        if args.shortest not in by or args.costed not in by:
            continue
        sx, sy, _ = (float(v) for v in s.split(","))
        gx, gy, _ = (float(v) for v in g.split(","))
        start, goal = (int(sx), int(sy)), (int(gx), int(gy))
        to_centres = math.hypot(sx - start[0] - 0.5, sy - start[1] - 0.5) + math.hypot(gx - goal[0] - 0.5, gy - goal[1] - 0.5)
        limit = args.length_factor * by[args.shortest][0] / res
        lmax = (limit + to_centres) * args.grid_slack
        floor, reached = 0.0, math.inf
        for weight in weights:
            found = dijkstra(moves, start, goal, weight, cost.shape)
            if found is None:
                break
            floor = max(floor, (found[0] - lmax) / (weight * lmax))
            kept = dijkstra(strict, start, goal, weight, cost.shape)
            if kept is not None and kept[1] <= limit:
                reached = min(reached, kept[2] / kept[1])
        else:
            rows.append((s, g, by[args.shortest][1], by[args.costed][1], floor, reached))
            continue
        print(f"({s}) -> ({g}): no grid path (an end in an obstacle cell, or the two not connected)")
    print(f"{'start (cells)':>34} {'goal (cells)':>34} {'shortest':>9} {args.costed:>9} {'floor':>7} {'grid':>7}")
    for s, g, short, costed, floor, reached in rows:
        print(f"{s[:34]:>34} {g[:34]:>34} {short:9.1f} {costed:9.1f} {floor:7.1f} {reached:7.1f}")
    if rows:
        med = [statistics.median(r[k] for r in rows) for k in (2, 3, 4, 5)]
        print(f"medians over {len(rows)} pairs: shortest {med[0]:.1f}, {args.costed} {med[1]:.1f}, "
              f"floor {med[2]:.1f}, grid path {med[3]:.1f}; issue 26's bar: {med[0] / 2:.1f}")


if __name__ == "__main__":
    main()
