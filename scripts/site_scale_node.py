#!/usr/bin/env python3
"""The node on a site-scale map, as a robot would run it: planner_node (the colcon install)
receives a map tiled from a shared one as a costmap publishes it (one OccupancyGrid message from
an rclpy publisher), answers long goals, survives a stream of 10 x 10 patches on /map_updates and
still answers after it. Reports the node's resident memory (VmRSS and its peak VmHWM, from
/proc) at each stage, in bytes per cell beyond the map's own byte per cell.

    python3 scripts/site_scale_node.py [--map M.yaml] [--size 10000] [--patches 200] [--goals 3] [--json OUT]

`--size` is the side of the square map in cells (the shared `100by100_15`, 2000 x 2000 at 5 cm,
repeated from its origin; 10000 is 10^8 cells). Exits non-zero when the node dies, a patch is not
applied, or no long goal is answered with a verified path. The test suite runs it small
(`tests/ros/test_site_scale.py`); the README gives the 10^8-cell figures.

Needs the ROS environment of scripts/env.sh and the workspace of scripts/build_ws.sh."""

import argparse
import array
import json
import math
import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "ros"))

import rclpy  # noqa: E402
from living import PATCH_QOS, patch_msg  # noqa: E402
from helpers import Peer, exit_on_sigterm, start_node, tmpdir  # noqa: E402
from map_server_files import read_map_server  # noqa: E402
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from nav_msgs.msg import OccupancyGrid  # noqa: E402

SOURCE = ROOT.parent / "shared" / "data" / "ros_maps" / "100by100_15.yaml"
RADIUS = 0.2
TURNING = 0.5


def tiled(path, side):
    """The map_server map at `path` (trinary, `negate` honoured) repeated from its origin to
    side x side cells: (values as int8, row 0 at the bottom, resolution)."""
    meta, w, h, maxval, raw = read_map_server(path)
    px = np.frombuffer(bytes(raw), dtype=np.uint8).reshape(h, w)[::-1].astype(np.float64)
    occ = px / maxval if int(meta.get("negate", 0)) else (maxval - px) / maxval
    values = np.full((h, w), -1, dtype=np.int8)
    values[occ > float(meta["occupied_thresh"])] = 100
    values[occ < float(meta["free_thresh"])] = 0
    reps = (math.ceil(side / h), math.ceil(side / w))
    return np.tile(values, reps)[:side, :side].copy(), float(meta["resolution"])


def roomy_cells(values, margin, count, rng):
    """`count` random cells whose square of half side `margin` holds only free cells."""
    free = values == 0
    # A summed-area table answers "all free" for any square in O(1).
    sat = np.pad(np.cumsum(np.cumsum(free, axis=0, dtype=np.int64), axis=1), ((1, 0), (1, 0)))
    h, w = values.shape
    found = []
    while len(found) < count:
        y, x = int(rng.integers(margin, h - margin)), int(rng.integers(margin, w - margin))
        y0, y1, x0, x1 = y - margin, y + margin + 1, x - margin, x + margin + 1
        if sat[y1, x1] - sat[y0, x1] - sat[y1, x0] + sat[y0, x0] == (2 * margin + 1) ** 2:
            found.append((x, y))
    return found


def resident(pid):
    """(VmRSS, VmHWM) of process `pid` in bytes."""
    fields = {}
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(rest.split()[0]) * 1024
    return fields["VmRSS"], fields["VmHWM"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--map", type=pathlib.Path, default=SOURCE,
                    help="map_server YAML tiled to the size (default: the shared 100by100_15, whose tiles connect)")
    ap.add_argument("--size", type=int, default=10000, help="side of the square map (cells)")
    ap.add_argument("--patches", type=int, default=200, help="10 x 10 patches streamed on /map_updates")
    ap.add_argument("--goals", type=int, default=3, help="long goals tried before and after the patches")
    ap.add_argument("--budget", type=float, default=10.0, help="max_planning_time (s)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", help="write the figures there")
    args = ap.parse_args()
    # SIGTERM ends the run as Ctrl-C does: its clean-up stops the node.
    exit_on_sigterm()

    t = time.monotonic()
    values, res = tiled(args.map, args.size)
    cells = values.size
    print(f"map: {args.size} x {args.size} cells at {res} m ({cells / 1e6:.0f}M), built in {time.monotonic() - t:.1f} s")
    grid = OccupancyGrid()
    grid.header.frame_id = "map"
    grid.info.width = grid.info.height = args.size
    grid.info.resolution = res
    grid.info.origin.orientation.w = 1.0
    grid.data = array.array("b", values.tobytes())

    rng = np.random.default_rng(args.seed)
    margin = math.ceil(2 * RADIUS / res)
    tmp = tmpdir("site_scale_")
    params = {"robot_radius": RADIUS, "min_turning_radius": TURNING, "max_map_cells": cells,
              "max_planning_time": args.budget}
    node = start_node(tmp, "planner_site", params, remap_prefix="/site",
                      extra_args=["-r", "/map_updates:=/site/map_updates"])
    figures = {"size": args.size, "cells": cells, "resolution": res}
    ok = True
    try:
        pid = node.proc.pid
        rss, _ = resident(pid)
        figures["idle_rss_bytes"] = rss
        peer = Peer("site_peer", prefix="/site", node_name="planner_site")
        patch_pub = peer.node.create_publisher(type(patch_msg(0, 0, 1, 1, 0)), "/site/map_updates", PATCH_QOS)
        # The node's own account of its heap (`/diagnostics`, once a second), beside what the
        # operating system says is resident.
        memory = {}

        def on_diagnostics(msg):
            for status in msg.status:
                if status.name.endswith(": memory"):
                    memory.update({kv.key: int(kv.value) for kv in status.values if kv.value.isdigit()})

        peer.node.create_subscription(DiagnosticArray, "/diagnostics", on_diagnostics, 10)

        def heap(label):
            memory.clear()
            peer.spin_until(lambda: "heap_bytes" in memory, 10, "/diagnostics")
            keys = ("heap_bytes", "thread_stores_bytes", "map_shared_bytes", "map_copies")
            figures[f"{label}_diagnostics"] = {k: memory.get(k) for k in keys}
            rss, peak = resident(pid)
            figures[f"{label}_rss_bytes"] = rss
            # The peak so far, at every stage: which stage sets the process's peak.
            figures[f"{label}_peak_rss_bytes"] = peak
            print(f"{label}: resident {rss / 2**20:.0f} MiB (peak so far {peak / 2**20:.0f} MiB), heap "
                  f"{memory['heap_bytes'] / 2**20:.0f} MiB "
                  f"(search scratch {memory.get('thread_stores_bytes', 0) / 2**20:.0f} MiB)")

        peer.wait_connected(timeout=60)
        peer.spin_until(lambda: patch_pub.get_subscription_count() > 0, 60, "discovery of /map_updates")

        # 1. The map, as one message (a costmap's full publication).
        t = time.monotonic()
        peer.publish_map(grid, node)
        figures["map_in_use_s"] = time.monotonic() - t
        print(f"map in use after {figures['map_in_use_s']:.1f} s")
        heap("after_map")
        del grid  # the publisher keeps its own copy (transient local)

        def long_goals(label):
            """Plans from a roomy cell near one corner to one near the far corner, `args.goals`
            times; returns the answers as (code, length m, planning s, distance m)."""
            answers = []
            side = args.size
            lo = roomy_cells(values[: side // 4, : side // 4], margin, args.goals, rng)
            hi = roomy_cells(values[3 * side // 4:, 3 * side // 4:], margin, args.goals, rng)
            for (sx, sy), (gx, gy) in zip(lo, hi):
                gx, gy = gx + 3 * side // 4, gy + 3 * side // 4
                start = ((sx + 0.5) * res, (sy + 0.5) * res)
                goal = ((gx + 0.5) * res, (gy + 0.5) * res)
                peer.set_start(start[0], start[1], 0.0, node_proc=node)
                t = time.monotonic()
                status, path = peer.plan(goal[0], goal[1], 0.0)
                elapsed = time.monotonic() - t
                length = 0.0
                if path is not None:
                    pts = [(p.pose.position.x, p.pose.position.y) for p in path.poses]
                    length = sum(math.dist(a, b) for a, b in zip(pts, pts[1:]))
                    # The path keeps the robot's disc off every occupied cell, checked here.
                    check_path(pts, values, res)
                code = status.code
                answers.append((code, round(length, 1), round(elapsed, 2), round(math.dist(start, goal), 1)))
                print(f"{label}: {start} -> {goal}: code {code}, path {length:.1f} m, answered in {elapsed:.2f} s")
            return answers

        figures["goals_before"] = long_goals("before the patches")
        heap("after_goals")

        # 2. A patch stream: 10 x 10 blocks raised and cleared at random places.
        t = time.monotonic()
        applied_before = node.count(" applied")
        for k in range(args.patches):
            x, y = int(rng.integers(0, args.size - 10)), int(rng.integers(0, args.size - 10))
            value = 100 if k % 2 == 0 else 0
            patch_pub.publish(patch_msg(x, y, 10, 10, value))
            values[y:y + 10, x:x + 10] = value
            peer.spin(0.002)
        peer.spin_until(lambda: node.count(" applied") - applied_before >= args.patches, 120,
                        "every patch to be applied")
        figures["patches"] = args.patches
        figures["patch_stream_s"] = time.monotonic() - t
        print(f"{args.patches} patches applied in {figures['patch_stream_s']:.1f} s")

        figures["goals_after"] = long_goals("after the patches")
        figures["alive"] = node.alive()
        heap("final")
        _, figures["peak_rss_bytes"] = resident(pid)
        for key in ("after_map_rss_bytes", "after_goals_rss_bytes", "final_rss_bytes", "peak_rss_bytes"):
            figures[key.replace("_bytes", "_bytes_per_cell_beyond_map")] = round(figures[key] / cells - 1.0, 2)
        solved = [a for a in figures["goals_before"] + figures["goals_after"] if a[0] == 0]
        ok = figures["alive"] and bool(solved)
        print(json.dumps(figures, indent=1))
        peer.close()
    finally:
        node.stop()
        if rclpy.ok():
            rclpy.shutdown()
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(figures, indent=1) + "\n")
    if not ok:
        print("FAILED: the node died or answered no long goal with a path", file=sys.stderr)
        return 1
    return 0


def check_path(points, values, res):
    """Every point of the path (poses and the pieces between them, every quarter cell) keeps the
    robot's disc of RADIUS off occupied and unknown cells of `values` (and inside the map)."""
    step = res / 4
    samples = []
    for (ax, ay), (bx, by) in zip(points, points[1:]):
        n = max(1, math.ceil(math.dist((ax, ay), (bx, by)) / step))
        t = np.arange(n + 1) / n
        samples.append(np.stack([ax + (bx - ax) * t, ay + (by - ay) * t], axis=1))
    p = np.concatenate(samples)
    h, w = values.shape
    reach = math.ceil(RADIUS / res) + 1
    cx, cy = np.floor(p[:, 0] / res).astype(np.int64), np.floor(p[:, 1] / res).astype(np.int64)
    for dy in range(-reach, reach + 1):
        for dx in range(-reach, reach + 1):
            x, y = cx + dx, cy + dy
            outside = (x < 0) | (y < 0) | (x >= w) | (y >= h)
            v = np.where(outside, 100, values[np.clip(y, 0, h - 1), np.clip(x, 0, w - 1)])
            # The nearest point of the cell to the path point.
            nx = np.clip(p[:, 0], x * res, (x + 1) * res)
            ny = np.clip(p[:, 1], y * res, (y + 1) * res)
            hit = (v != 0) & (np.hypot(p[:, 0] - nx, p[:, 1] - ny) < RADIUS - 1e-6)
            if hit.any():
                k = int(np.argmax(hit))
                raise AssertionError(f"path point ({p[k, 0]:.3f}, {p[k, 1]:.3f}) within {RADIUS} m of cell ({x[k]}, {y[k]})")


if __name__ == "__main__":
    sys.exit(main())
