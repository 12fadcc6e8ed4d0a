#!/usr/bin/env python3
"""How many of the pairs an independent search proves reachable does the planner solve?

For a polygon footprint (by default issue 27's rectangle: 0.9 m x 0.5 m, `base_link` 0.2 m from
its rear, turning radius 0.8 m) on map_server maps, with the forward (Dubins) or the
reeds_shepp motion model:

1. Random start and goal poses where the footprint stands free, at least `--min-separation`
   metres apart.
2. **Proof of reachability, independent of the planner:** OMPL (the `ompl` package from PyPI)
   searches each pair in its own `DubinsStateSpace` or `ReedsSheppStateSpace` of the same turning
   radius (RRT; RRT-Connect for the symmetric Reeds-Shepp space), for at most `--ompl-checks`
   state validity checks (a budget of work, not of time, so a busy machine proves what an idle
   one does; OMPL's random numbers are seeded from `--seed`), with a state validity check
   written here. Its path is then checked again, finely,
   by this script's own sweep of the footprint grown by `PROOF_MARGIN`: poses along the exact
   curves so close that no point of the outline moves more than `STEP` between them, the grown
   outline sampled every `STEP`, and the grown polygon's whole area at the start. A path that
   passes is a witness: the pair is proven reachable (the grown polygon keeps the true one clear
   of every cell the sampling could miss).
3. The planner (`blockstar plan`, the parameters a user would give it, its default time budget
   unless `--max-planning-time` says otherwise) plans every pair, with `--warm-tables` as the
   node has them: it fills Directional A*'s tables when its map arrives, so a plan's time is
   planning (`--cold-tables` to leave them empty, the CLI's default, where a one-shot plan
   fills what it looks up; that filling does not count against its budget, but it is in the
   plan's time). Each of its trajectories is sampled from its
   exact segments and swept by the same check (the polygon not grown): a path touching a
   blocked cell counts as illegal.

It prints, per map and motion model: pairs, proven reachable, solved among those (the issue's
bar: at least 98%), solved overall, illegal. A pair OMPL did not prove is left out of the
ratio (its search may simply have run out of its budget); one the planner solved that OMPL did not
prove is counted apart.

    python3 scripts/reachability_bench.py [--map M.yaml ...] [--pairs 20] [--motion forward reeds_shepp]

needs numpy and ompl (scripts/oracle-requirements.txt, installed by the test command's set-up).
"""

import argparse
import json
import math
import os
import pathlib
import random
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "ros"))
from map_server_files import read_map_server  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
CLI = pathlib.Path(os.environ.get("BLOCKSTAR_CLI", ROOT / ".ws/install/blockstar_planner/lib/blockstar_planner/blockstar"))
RECTANGLE = [[0.7, 0.25], [0.7, -0.25], [-0.2, -0.25], [-0.2, 0.25]]
TURNING_RADIUS = 0.8
# The witness check: outline samples and pose steps (m), and the growth that covers what a
# sampling this fine can miss.
STEP = 0.01
PROOF_MARGIN = 0.02


class Map:
    """A map_server map read here (trinary: occupied above occupied_thresh, free below free_thresh,
    unknown between; unknown cells are blocked, as the planner's default allow_unknown false)."""

    def __init__(self, path):
        path = pathlib.Path(path)
        meta, w, h, maxval, raw = read_map_server(path)
        pixels = np.frombuffer(raw, dtype=np.uint8).reshape(h, w)[::-1]
        occ = pixels / maxval if int(meta.get("negate", 0)) else (maxval - pixels.astype(float)) / maxval
        free = occ < float(meta["free_thresh"])
        self.blocked = ~free  # occupied or unknown
        self.w, self.h, self.res = w, h, float(meta["resolution"])
        self.ox, self.oy = float(meta["origin"][0]), float(meta["origin"][1])
        self.path = path

    def hits(self, xs, ys):
        """True where a point (metres) lies in a blocked cell or off the map."""
        cx = np.floor((xs - self.ox) / self.res).astype(np.int64)
        cy = np.floor((ys - self.oy) / self.res).astype(np.int64)
        inside = (cx >= 0) & (cy >= 0) & (cx < self.w) & (cy < self.h)
        out = ~inside
        out[inside] = self.blocked[cy[inside], cx[inside]]
        return out


def grown(polygon, margin):
    """A convex polygon (counter-clockwise or not) moved outwards by `margin` along its normals
    (the corners mitred: the result contains every point within `margin` of the polygon)."""
    pts = np.array(polygon, float)
    area = 0.5 * np.sum(pts[:, 0] * np.roll(pts[:, 1], -1) - np.roll(pts[:, 0], -1) * pts[:, 1])
    if area < 0:
        pts = pts[::-1]
    n = len(pts)
    out = []
    for i in range(n):
        a, b, c = pts[i - 1], pts[i], pts[(i + 1) % n]
        n1 = np.array([(b - a)[1], -(b - a)[0]]) / np.linalg.norm(b - a)
        n2 = np.array([(c - b)[1], -(c - b)[0]]) / np.linalg.norm(c - b)
        bis = n1 + n2
        out.append(b + bis * margin / (1.0 + n1 @ n2))
    return out


def outline_points(polygon, step):
    pts = []
    for (ax, ay), (bx, by) in zip(polygon, polygon[1:] + polygon[:1]):
        k = max(1, math.ceil(math.hypot(bx - ax, by - ay) / step))
        pts += [(ax + (bx - ax) * i / k, ay + (by - ay) * i / k) for i in range(k)]
    return np.array(pts)


def area_points(polygon, step):
    """Points every `step` over the polygon's bounding box that lie inside it, plus its outline."""
    poly = np.array(polygon, float)
    xs = np.arange(poly[:, 0].min(), poly[:, 0].max() + step, step)
    ys = np.arange(poly[:, 1].min(), poly[:, 1].max() + step, step)
    gx, gy = np.meshgrid(xs, ys)
    px, py = gx.ravel(), gy.ravel()
    inside = np.zeros(px.shape, bool)
    j = len(poly) - 1
    for i in range(len(poly)):
        (xi, yi), (xj, yj) = poly[i], poly[j]
        crosses = ((yi > py) != (yj > py)) & (px < (xj - xi) * (py - yi) / (yj - yi + 1e-300) + xi)
        inside ^= crosses
        j = i
    return np.vstack([np.column_stack([px[inside], py[inside]]), outline_points(list(map(tuple, poly)), step)])


class Footprint:
    def __init__(self, polygon, margin):
        poly = grown(polygon, margin) if margin > 0 else [np.array(p, float) for p in polygon]
        poly = [tuple(p) for p in poly]
        self.outline = outline_points(poly, STEP)
        self.area = area_points(poly, STEP)
        self.coarse = area_points(poly, 0.025)
        self.reach = max(math.hypot(x, y) for x, y in poly)

    @staticmethod
    def place(points, poses):
        """Every point at every pose: arrays of x and y."""
        x, y, th = poses[:, 0:1], poses[:, 1:2], poses[:, 2:3]
        c, s = np.cos(th), np.sin(th)
        return (x + c * points[:, 0] - s * points[:, 1]).ravel(), (y + s * points[:, 0] + c * points[:, 1]).ravel()

    def stands_free(self, m, pose, points=None):
        xs, ys = self.place(self.area if points is None else points, np.array([pose], float))
        return not m.hits(xs, ys).any()

    def sweep_free(self, m, poses):
        """The whole footprint at the first pose, its outline at every pose (consecutive poses
        close enough that no outline point moves more than STEP)."""
        if not self.stands_free(m, poses[0]):
            return False
        for k in range(0, len(poses), 2000):
            xs, ys = self.place(self.outline, poses[k:k + 2000])
            if m.hits(xs, ys).any():
                return False
        return True


def pose_step(reach, curvature):
    """Distance (m) along a curve between poses so that no outline point moves more than STEP."""
    return STEP / (1.0 + abs(curvature) * reach)


def sample_segments(segments, reach):
    """Poses along the planner's exact segments (JSON of `blockstar plan`)."""
    poses = []
    for seg in segments:
        x0, y0, th0 = seg["start"]
        length, gear = seg["length"], -1.0 if seg.get("reverse") else 1.0
        if seg["kind"] == "line":
            k = max(1, math.ceil(length / pose_step(reach, 0.0)))
            for i in range(k + 1):
                s = gear * length * i / k
                poses.append((x0 + s * math.cos(th0), y0 + s * math.sin(th0), th0))
        elif seg["kind"] == "arc":
            cx, cy = seg["center"]
            r = seg["radius"]
            rx, ry = x0 - cx, y0 - cy
            vx, vy = gear * math.cos(th0), gear * math.sin(th0)
            sense = 1.0 if rx * vy - ry * vx > 0 else -1.0
            k = max(1, math.ceil(length / pose_step(reach, 1.0 / r)))
            for i in range(k + 1):
                a = sense * length * i / k / r
                c, s = math.cos(a), math.sin(a)
                poses.append((cx + c * rx - s * ry, cy + s * rx + c * ry, th0 + a))
        else:  # a turn on the spot
            angle = seg.get("angle", 0.0)
            k = max(1, math.ceil(abs(angle) * reach / STEP))
            poses += [(x0, y0, th0 + angle * i / k) for i in range(k + 1)]
    return np.array(poses, float)


_ompl_seeded = False


def seed_ompl(seed):
    """Seeds OMPL's random numbers, once per process: OMPL takes a seed only before its first
    random number (later ones would make no run repeatable, and it says so)."""
    global _ompl_seeded
    if not _ompl_seeded:
        from ompl import util as ou

        ou.RNG.setSeed(seed)
        _ompl_seeded = True


def ompl_witness(m, proof, start, goal, model, checks):
    """OMPL's path from start to goal, if it finds one within `checks` state validity checks
    that passes the witness check."""
    from ompl import base as ob
    from ompl import geometric as og

    space = ob.ReedsSheppStateSpace(TURNING_RADIUS) if model == "reeds_shepp" else ob.DubinsStateSpace(TURNING_RADIUS)
    bounds = ob.RealVectorBounds(2)
    bounds.setLow(0, m.ox)
    bounds.setLow(1, m.oy)
    bounds.setHigh(0, m.ox + m.w * m.res)
    bounds.setHigh(1, m.oy + m.h * m.res)
    space.setBounds(bounds)
    ss = og.SimpleSetup(space)

    made = [0]

    def valid(state):
        made[0] += 1
        return proof.stands_free(m, (state.getX(), state.getY(), state.getYaw()), proof.coarse)

    ss.setStateValidityChecker(valid)
    si = ss.getSpaceInformation()
    si.setStateValidityCheckingResolution(0.02 / space.getMaximumExtent())
    planner = og.RRTConnect(si) if model == "reeds_shepp" else og.RRT(si)
    planner.setRange(2.0)
    ss.setPlanner(planner)
    s, g = space.allocState(), space.allocState()
    for st, (x, y, th) in ((s, start), (g, goal)):
        st.setX(x)
        st.setY(y)
        st.setYaw(th)
    ss.setStartAndGoalStates(s, g, 1e-6)
    ss.solve(ob.PlannerTerminationCondition(lambda: made[0] >= checks))
    if not ss.haveExactSolutionPath():
        return None
    path = ss.getSolutionPath()
    n = max(2, math.ceil(path.length() / pose_step(proof.reach, 1.0 / TURNING_RADIUS)) + 1)
    path.interpolate(n)
    poses = np.array([(st.getX(), st.getY(), st.getYaw()) for st in path.getStates()], float)
    return path.length() if proof.sweep_free(m, poses) else None


def planner_answer(map_path, start, goal, model, polygon, budget=None, warm=True):
    args = [str(CLI), "plan", "--map", str(map_path), "--start", ",".join(map(str, start)),
            "--goal", ",".join(map(str, goal)), "--footprint", json.dumps(polygon),
            "--min-turning-radius", str(TURNING_RADIUS), "--motion-model", model, "--json"]
    if warm:
        args.append("--warm-tables")
    if budget is not None:
        args += ["--set", f"max_planning_time={budget}"]
    out = subprocess.run(args, capture_output=True, text=True, timeout=120)
    try:
        return json.loads(out.stdout)
    except json.JSONDecodeError:
        return {"status": f"no answer: {out.stderr.strip()[-300:]}"}


def draw_pairs(m, proof, n, seed, min_separation):
    rnd = random.Random(seed)
    free = np.argwhere(~m.blocked)
    pairs = []
    for _ in range(200000):
        if len(pairs) == n:
            break
        ends = []
        for _ in range(2):
            cy, cx = free[rnd.randrange(len(free))]
            pose = (round(m.ox + (float(cx) + rnd.random()) * m.res, 3),
                    round(m.oy + (float(cy) + rnd.random()) * m.res, 3), round(rnd.uniform(-math.pi, math.pi), 3))
            ends.append(pose if proof.stands_free(m, pose) else None)
        if None not in ends and math.dist(ends[0][:2], ends[1][:2]) >= min_separation:
            pairs.append(tuple(ends))
    return pairs


def run(map_path, model, args):
    m = Map(map_path)
    exact, proof = Footprint(args.polygon, 0.0), Footprint(args.polygon, PROOF_MARGIN)
    pairs = draw_pairs(m, proof, args.pairs, args.seed, args.min_separation)
    seed_ompl(args.seed)
    row = dict(map=m.path.stem, model=model, pairs=len(pairs), proven=0, solved_of_proven=0, solved=0,
               illegal=0, solved_not_proven=0, refused_proven=[])
    for start, goal in pairs:
        t = time.monotonic()
        witness = ompl_witness(m, proof, start, goal, model, args.ompl_checks)
        answer = planner_answer(m.path, start, goal, model, args.polygon, args.max_planning_time,
                                not args.cold_tables)
        solved = answer.get("status") == "SUCCESS"
        if solved:
            poses = sample_segments(answer["trajectory"]["segments"], exact.reach)
            if not exact.sweep_free(m, poses):
                row["illegal"] += 1
                print(f"  ILLEGAL {start} -> {goal}", file=sys.stderr)
        row["proven"] += witness is not None
        row["solved"] += solved
        row["solved_of_proven"] += solved and witness is not None
        row["solved_not_proven"] += solved and witness is None
        if witness is not None and not solved:
            row["refused_proven"].append((start, goal, answer.get("status"), round(witness, 2)))
        print(f"  {m.path.stem} {model} {start} -> {goal}: witness {witness and round(witness, 2)}, "
              f"planner {answer.get('status')} ({time.monotonic() - t:.1f} s)", file=sys.stderr)
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    shared = ROOT.parent / "shared/data/ros_maps"
    p.add_argument("--map", nargs="+", default=sorted(str(x) for x in shared.glob("*.yaml")))
    p.add_argument("--motion", nargs="+", default=["forward", "reeds_shepp"], choices=["forward", "reeds_shepp"])
    p.add_argument("--pairs", type=int, default=20)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--min-separation", type=float, default=2.0)
    p.add_argument("--ompl-checks", type=int, default=200_000,
                   help="OMPL's state validity checks per pair (about 10 s of this script's checks on an idle core)")
    p.add_argument("--footprint", default=json.dumps(RECTANGLE), help="Nav2's polygon string (convex)")
    p.add_argument("--max-planning-time", type=float, default=None,
                   help="the planner's budget per pair (s; default: its parameter's default)")
    p.add_argument("--cold-tables", action="store_true",
                   help="plan without --warm-tables (each plan fills the entries it looks up, outside its budget)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    args.polygon = json.loads(args.footprint)
    from ompl import util as ou

    ou.setLogLevel(ou.LogLevel.LOG_WARN)
    rows = [run(mp, model, args) for mp in args.map for model in args.motion]
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print("| map | motion | pairs | proven reachable (OMPL) | solved of proven | solved | illegal | solved, not proven |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        pct = 100.0 * r["solved_of_proven"] / r["proven"] if r["proven"] else float("nan")
        print(f"| {r['map']} | {r['model']} | {r['pairs']} | {r['proven']} | {r['solved_of_proven']} ({pct:.0f}%) | "
              f"{r['solved']} | {r['illegal']} | {r['solved_not_proven']} |")
    for r in rows:
        for start, goal, status, length in r["refused_proven"]:
            print(f"refused though proven: {r['map']} {r['model']} {start} -> {goal}: {status} (witness {length} m)")


if __name__ == "__main__":
    main()
    sys.stdout.flush()
    sys.stderr.flush()
    # OMPL's Python bindings (nanobind) report reference leaks of their own at interpreter exit,
    # pages of them: the results are printed, so leave without the teardown.
    os._exit(0)
