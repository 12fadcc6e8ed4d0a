"""Load benchmark of planner_node: goals at a fixed rate while the map changes, with an rclpy client.

    python3 scripts/load_bench.py [--duration 60] [--goal-rate 100] [--map-rate 10] [--warmup S] [--json]

A soak run is the same protocol made long, for example 100 000 goals at 100 goals/s with the map
changing once a second: `--duration 1000 --goal-rate 100 --map-rate 1`.

Starts planner_node (as the test suite does: tests/ros/helpers.py), publishes a map (8 x 5 m at
5 cm: a wall with two doors), sets the start, then sends duration x goal-rate goals to random
free places, one every 1/goal-rate seconds (goals due while the client itself lagged go out at
once, so the stream may end a little late but is never short), while republishing the whole
/map at --map-rate per second for --duration seconds with one door alternately closed and open
(the node finds the changed rectangle itself). Then the door is closed for good, and the last
goal is sent through where the door was: its /plan must go round by the other door. After a
drain period it sends one more goal to check the node still answers.

Recorded: every goal's status (matched by the goal's stamp, which is unique per goal; statuses
with event EVENT_REPLAN, published when a map change made the current trajectory illegal, are
counted apart), the
latency from sending a goal to receiving its /plan (the /plan whose header stamp equals its
SUCCESS status's) and to receiving its status, the node's memory every second (its VmRSS, read
from /proc, and the heap it holds, from its /diagnostics), summarised as the value first, after
the warm-up (--warmup seconds, default a tenth of the run and at least 10 s), at the middle and at
the end of the load (the idle drain after it left out), each the lowest reading of 10 s there (a plan in flight holds working memory for
milliseconds; the lowest reading is what stays), with the slope after the warm-up (least
squares, per 1000 goals), and whether the last /plan is legal on the final map (every pose and every point between
consecutive poses keeps the robot radius from blocked cells and the map's edge, checked here in
Python, independently of the node). Prints a report (JSON with --json).
"""

import argparse
import array
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
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402

from blockstar_planner_msgs.msg import PlannerStatus  # noqa: E402
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from geometry_msgs.msg import PoseStamped, PoseWithCovarianceStamped  # noqa: E402
from nav_msgs.msg import OccupancyGrid, Path  # noqa: E402

from helpers import (LATCHED, exit_on_sigterm, initial_pose, pose_stamped, resend_until, start_node,  # noqa: E402
                     start_pose_line, tmpdir)

# The map: W x H cells of RES metres, a wall at column WALL_X with doors at DOOR_A and DOOR_B
# (row ranges); DOOR_B is the one that closes and opens.
W, H, RES = 160, 100, 0.05
WALL_X = 80
DOOR_A = range(15, 31)
DOOR_B = range(66, 84)
ROBOT_RADIUS = 0.15
MIN_TURNING_RADIUS = 0.3
# The node's parameters for the benchmark.
NODE_PARAMS = {"robot_radius": ROBOT_RADIUS, "min_turning_radius": MIN_TURNING_RADIUS}
OCCUPIED = 65  # the node's default occupied_threshold
START_CELL = (20, 75)
LAST_GOAL_CELL = (140, 75)  # straight across DOOR_B from the start
NODE_NAME = "planner_load"
# The node's log line for each map it took in ("map WxH at R m/cell in use"); plain "in use" is
# also in "parameters in use".
MAP_IN_USE = "m/cell in use"
PREFIX = "/load"

RELIABLE_DEEP = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=10000,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.VOLATILE,
)
GOAL_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=100,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.VOLATILE,
)


def blocked_cell(x, y, door_closed):
    """Whether cell (x, y) is an obstacle in the benchmark map."""
    if x in (0, W - 1) or y in (0, H - 1):
        return True
    if x == WALL_X:
        return not (y in DOOR_A or (y in DOOR_B and not door_closed))
    # A few pillars so plans are not all straight lines.
    return any(abs(x - px) <= 2 and abs(y - py) <= 2 for px, py in ((40, 30), (40, 70), (120, 50), (125, 85)))


def bench_map(door_closed, version, width=W):
    """The map as an OccupancyGrid; `version` goes into the stamp so every publication differs.
    A `width` beyond W adds columns of obstacles east of the border wall (the same free space,
    but a map the node's log names by its own size)."""
    g = OccupancyGrid()
    g.header.frame_id = "map"
    g.header.stamp.sec = version
    g.info.width, g.info.height, g.info.resolution = width, H, RES
    g.info.origin.orientation.w = 1.0
    g.data = array.array("b", (100 if x >= W or blocked_cell(x, y, door_closed) else 0
                               for y in range(H) for x in range(width)))
    return g


def cell_center(cx, cy):
    return ((cx + 0.5) * RES, (cy + 0.5) * RES)


def goal_cells(margin_m=2 * MIN_TURNING_RADIUS + ROBOT_RADIUS + 0.1):
    """Cells farther than margin_m (in x or y) from every obstacle cell of the closed-door map and
    from the wall, so every goal is reachable with either door state in every heading: both
    turning circles through the goal, with the footprint, stay clear. (Closer to a wall, a pose
    facing away from it can be unreachable, and the node rightly answers NO_VALID_PATH.)"""
    m = math.ceil(margin_m / RES)
    near = set()
    for y in range(H):
        for x in range(W):
            if blocked_cell(x, y, True) or x == WALL_X:
                near.update((x + dx, y + dy) for dy in range(-m, m + 1) for dx in range(-m, m + 1))
    return [(x, y) for y in range(H) for x in range(W) if (x, y) not in near]


def distance_to_cell(px, py, cx, cy):
    """Distance (m) from point (px, py) to the square of cell (cx, cy)."""
    dx = max(cx * RES - px, 0.0, px - (cx + 1) * RES)
    dy = max(cy * RES - py, 0.0, py - (cy + 1) * RES)
    return math.hypot(dx, dy)


def point_clearance_ok(grid, px, py, radius, tol):
    """True when the disc of `radius` around (px, py) touches no blocked cell (occupied at or
    above the threshold, unknown, or outside the map), up to `tol` metres."""
    info = grid.info
    x0, y0 = px - info.origin.position.x, py - info.origin.position.y
    k = math.ceil(radius / info.resolution) + 1
    cx, cy = math.floor(x0 / info.resolution), math.floor(y0 / info.resolution)
    for y in range(cy - k, cy + k + 1):
        for x in range(cx - k, cx + k + 1):
            inside = 0 <= x < info.width and 0 <= y < info.height
            v = grid.data[y * info.width + x] if inside else 100
            if (v < 0 or v >= OCCUPIED) and distance_to_cell(x0, y0, x, y) < radius - tol:
                return False
    return True


def path_legal(path, grid, radius, start, goal, tol=0.002):
    """(legal, reason): the path runs from start to goal and every pose, and every point every
    1/10 cell between consecutive poses, keeps `radius` from blocked cells. `tol` (2 mm) covers
    the chord of an arc between two poses (5 cm apart on a 0.3 m radius: 1 mm inside the arc)."""
    poses = [p.pose.position for p in path.poses]
    if len(poses) < 2:
        return False, f"{len(poses)} poses"
    if math.hypot(poses[0].x - start[0], poses[0].y - start[1]) > 1e-6:
        return False, f"starts at ({poses[0].x:.3f}, {poses[0].y:.3f}), not at the start"
    if math.hypot(poses[-1].x - goal[0], poses[-1].y - goal[1]) > 1e-6:
        return False, f"ends at ({poses[-1].x:.3f}, {poses[-1].y:.3f}), not at the goal"
    step = grid.info.resolution / 10
    for a, b in zip(poses, poses[1:]):
        n = max(1, math.ceil(math.hypot(b.x - a.x, b.y - a.y) / step))
        for i in range(n + 1):
            t = i / n
            x, y = a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t
            if not point_clearance_ok(grid, x, y, radius, tol):
                return False, f"point ({x:.3f}, {y:.3f}) is within {radius} m of a blocked cell"
    return True, "ok"


def rss_kib(pid):
    """VmRSS of process `pid` in KiB, None when it is gone."""
    try:
        for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def memory_summary(samples, load_end, warmup, goal_rate, window=10.0):
    """The memory series `samples` ([(seconds since the load began, value)]) summarised over the
    load (up to `load_end` seconds, when the last goal of the stream went out; the idle drain after
    it is left out): the first reading; the lowest reading of the `window` seconds that begin when
    the warm-up ends, of the `window` seconds around the middle of the load and of its last
    `window` seconds (None where no reading falls in them); the highest reading after the warm-up;
    and the least-squares slope of the readings after the warm-up, per 1000 goals."""
    samples = [(t, v) for t, v in samples if t <= load_end]
    if not samples:
        return None

    def low_within(a, b):
        inside = [v for t, v in samples if a <= t <= b]
        return min(inside) if inside else None

    end = samples[-1][0]
    middle = max(load_end / 2, warmup + window / 2)
    later = [(t, v) for t, v in samples if t >= warmup]
    slope = None
    if len(later) >= 2:
        mt = sum(t for t, _ in later) / len(later)
        mv = sum(v for _, v in later) / len(later)
        var = sum((t - mt) ** 2 for t, _ in later)
        if var > 0:
            per_second = sum((t - mt) * (v - mv) for t, v in later) / var
            slope = per_second * 1000.0 / goal_rate
    return {
        "first": samples[0][1],
        "after_warmup": low_within(warmup, warmup + window),
        "middle": low_within(middle - window / 2, middle + window / 2),
        "end": low_within(end - window, end),
        "max_after_warmup": max((v for _, v in later), default=None),
        "slope_per_1000_goals": slope,
        "samples": [[round(t, 1), v] for t, v in samples],
    }


def percentile(values, q):
    """The q-quantile (0..1) of values by linear interpolation; None when empty."""
    if not values:
        return None
    v = sorted(values)
    pos = q * (len(v) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


# A status as the client keeps it (a soak run receives 100 000: not the messages themselves).
Answer = collections.namedtuple("Answer", "code code_name message stamp")

# The /plan messages kept whole, the newest (the last goals' legality is checked on them).
RECENT_PATHS = 50


class Client:
    """The benchmark's rclpy peer: sends goals and maps, records every answer with its arrival time
    (and only the newest plans whole, so that a long run does not grow the client)."""

    def __init__(self, name):
        if not rclpy.ok():
            rclpy.init()
        self.node = rclpy.create_node(name)
        n = self.node
        self.map_pub = n.create_publisher(OccupancyGrid, f"{PREFIX}/map", LATCHED)
        self.goal_pub = n.create_publisher(PoseStamped, f"{PREFIX}/goal_pose", GOAL_QOS)
        self.initial_pub = n.create_publisher(PoseWithCovarianceStamped, f"{PREFIX}/initialpose", GOAL_QOS)
        self.statuses = {}  # goal id -> list of (arrival time, status), EVENT_GOAL only
        self.replans = {}  # goal id -> list of (arrival time, status), EVENT_REPLAN
        self.other_statuses = []  # statuses that name no goal of ours (map rejections)
        self.path_arrivals = {}  # (stamp sec, nanosec) -> arrival time
        self.recent_paths = collections.OrderedDict()  # (stamp sec, nanosec) -> path, the newest
        self.sent = {}  # goal id -> send time
        self.heap = []  # (monotonic time, heap bytes, per-thread store bytes) from the node's /diagnostics
        n.create_subscription(PlannerStatus, f"/{NODE_NAME}/status", self._on_status, RELIABLE_DEEP)
        n.create_subscription(Path, f"{PREFIX}/plan", self._on_path, RELIABLE_DEEP)
        n.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, RELIABLE_DEEP)

    def _on_status(self, msg):
        gid = msg.goal.header.stamp.sec
        answer = Answer(msg.code, msg.code_name, msg.message, (msg.header.stamp.sec, msg.header.stamp.nanosec))
        if gid in self.sent and msg.event == PlannerStatus.EVENT_REPLAN:
            self.replans.setdefault(gid, []).append((time.monotonic(), answer))
        elif gid in self.sent and msg.event == PlannerStatus.EVENT_GOAL:
            self.statuses.setdefault(gid, []).append((time.monotonic(), answer))
        elif len(self.other_statuses) < 100:
            self.other_statuses.append(answer)

    def _on_path(self, msg):
        key = (msg.header.stamp.sec, msg.header.stamp.nanosec)
        self.path_arrivals[key] = time.monotonic()
        self.recent_paths[key] = msg
        while len(self.recent_paths) > RECENT_PATHS:
            self.recent_paths.popitem(last=False)

    def _on_diagnostics(self, msg):
        for status in msg.status:
            if status.name == f"{NODE_NAME}: memory":
                values = {kv.key: kv.value for kv in status.values}
                if "heap_bytes" in values:
                    # The heap less the planning threads' own stores (search scratch, curve memos:
                    # bounded, allocated at once by a thread's first plan, whenever that comes):
                    # what a soak judges.
                    scratch = int(values.get("thread_stores_bytes", 0))
                    self.heap.append((time.monotonic(), int(values["heap_bytes"]), scratch))

    def spin_until(self, predicate, timeout, what):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if predicate():
                return True
            rclpy.spin_once(self.node, timeout_sec=0.01)
        raise RuntimeError(f"timed out waiting for {what}")

    def spin_for(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            # A constant timeout: a varying one makes rclpy's executor serve only the first ready
            # entity of each wait (see chaos_bench.SPIN_TIMEOUT).
            rclpy.spin_once(self.node, timeout_sec=0.01)

    def send_goal(self, gid, x, y, yaw):
        msg = pose_stamped(x, y, yaw, stamp_sec=gid)
        self.sent[gid] = time.monotonic()
        self.goal_pub.publish(msg)

    def set_start(self, node, x, y, yaw, timeout=30.0):
        """Publishes the start until `node` logs one more start pose: /initialpose is volatile,
        so one sent before the node's reader matched it is lost (only the goal and map
        publishers' matching is waited for), and it is sent again every half second."""
        msg = initial_pose(x, y, yaw)
        line = start_pose_line(x, y)  # this pose's line, not an earlier one logged late
        before = node.count(line)
        resend_until(lambda: self.initial_pub.publish(msg), lambda: node.count(line) > before, self.spin_until,
                     "the start pose", timeout)

    def path_for(self, gid):
        """(arrival time, path) of the /plan answering goal gid's SUCCESS status, or None; the
        path itself only for the newest plans (None for older ones)."""
        for _, s in self.statuses.get(gid, []):
            if s.code == PlannerStatus.SUCCESS and s.stamp in self.path_arrivals:
                return self.path_arrivals[s.stamp], self.recent_paths.get(s.stamp)
        return None

    def close(self):
        self.node.destroy_node()


def run(duration=60.0, goal_rate=100.0, map_rate=10.0, seed=1, drain=30.0, log=print, warmup=None):
    """Runs the benchmark against a node it starts (and stops), returns the report (a dict).
    `warmup` (s) defaults to a tenth of `duration`, at least 10 s."""
    tmp = tmpdir("blockstar-load-")
    node = start_node(tmp, NODE_NAME, NODE_PARAMS, remap_prefix=PREFIX)
    client = Client("load_bench_client")
    warmup = max(10.0, duration / 10) if warmup is None else warmup
    try:
        return _run(node, client, duration, goal_rate, map_rate, seed, drain, log, warmup)
    finally:
        client.close()
        node.stop()


def _run(node, client, duration, goal_rate, map_rate, seed, drain, log, warmup):
    rng = random.Random(seed)
    cells = goal_cells()
    maps = {closed: bench_map(closed, 0) for closed in (False, True)}
    pid = node.proc.pid
    client.spin_until(
        lambda: client.goal_pub.get_subscription_count() > 0 and client.map_pub.get_subscription_count() > 0,
        30,
        "discovery of planner_node",
    )
    in_use = node.count(MAP_IN_USE)
    client.map_pub.publish(maps[False])
    client.spin_until(lambda: node.count(MAP_IN_USE) > in_use, 30, "the first map in use")
    start = cell_center(*START_CELL)
    client.set_start(node, *start, 0.0)

    log(f"load: {duration:.0f} s, {goal_rate:g} goals/s, {map_rate:g} map changes/s, node pid {pid}")
    rss = [(0.0, rss_kib(pid))]
    gid, version, door_closed = 0, 0, False
    # The stream is a fixed number of goals on a fixed schedule: goal k is due k / goal_rate
    # after the start. When the client itself lags (a slow spin on a busy machine), the goals
    # due meanwhile go out at once and the stream may end a little after `duration`; it never
    # sends fewer goals than the protocol names.
    stream_len = max(1, round(duration * goal_rate))
    t0 = time.monotonic()
    next_map, next_rss = t0 + 1.0 / map_rate, t0 + 1.0
    end = t0 + duration

    def next_goal():
        return t0 + gid / goal_rate if gid < stream_len else math.inf

    while True:
        now = time.monotonic()
        if now >= end and gid >= stream_len:
            break
        if now >= next_goal():
            gid += 1
            x, y = cell_center(*rng.choice(cells))
            client.send_goal(gid, x, y, rng.uniform(-math.pi, math.pi))
        if now >= next_map and now < end:
            version += 1
            door_closed = not door_closed
            m = maps[door_closed]
            m.header.stamp.sec = version
            client.map_pub.publish(m)
            next_map += 1.0 / map_rate
        if now >= next_rss:
            rss.append((now - t0, rss_kib(pid)))
            next_rss += 1.0
        # A constant timeout (see Client.spin_for); the next event is at most 5 ms late.
        rclpy.spin_once(client.node, timeout_sec=0.005)
    stream_goals = gid
    load_end = time.monotonic() - t0
    rss.append((load_end, rss_kib(pid)))

    # The door closes for good; once the node has the final map in use, the last goal asks for a
    # place straight across the closed door. Whether it has is read from its log, which names
    # each map it takes in by its size: the final map alone has one more column (of obstacles,
    # beyond the border wall), so its line cannot be an earlier map's (maps still queued in the
    # node or the middleware are applied before it, in order).
    version += 1
    final_map = bench_map(True, version, width=W + 1)
    client.map_pub.publish(final_map)
    client.spin_until(lambda: node.map_in_use(W + 1, H), 60, "the final map in use")
    gid += 1
    last_gid = gid
    last_goal = cell_center(*LAST_GOAL_CELL)
    client.send_goal(last_gid, *last_goal, 0.0)
    drain_end = time.monotonic() + drain
    while time.monotonic() < drain_end and len(client.statuses) < gid:
        rclpy.spin_once(client.node, timeout_sec=0.01)
    client.spin_until(lambda: client.path_for(last_gid) is not None or last_gid not in client.statuses
                      or client.statuses[last_gid][0][1].code != PlannerStatus.SUCCESS, 10, "the last /plan")
    rss.append((time.monotonic() - t0, rss_kib(pid)))
    client.spin_for(0.3)  # a duplicate status would show up now

    # A fresh goal after the load: the node still answers.
    gid += 1
    fresh_gid = gid
    client.send_goal(fresh_gid, *cell_center(30, 20), 0.0)
    try:
        client.spin_until(lambda: fresh_gid in client.statuses, 30, "the fresh goal's status")
        fresh = client.statuses[fresh_gid][0][1].code_name
    except RuntimeError:
        fresh = "MISSING"

    codes, missing, duplicates = {}, [], []
    plan_latency, status_latency = [], []
    for g in range(1, last_gid + 1):
        answers = client.statuses.get(g, [])
        if not answers:
            missing.append(g)
            continue
        if len(answers) > 1:
            duplicates.append(g)
        arrived, status = answers[0]
        codes[status.code_name] = codes.get(status.code_name, 0) + 1
        status_latency.append(arrived - client.sent[g])
        if status.code == PlannerStatus.SUCCESS:
            p = client.path_for(g)
            if p is not None:
                plan_latency.append(p[0] - client.sent[g])

    last_status = client.statuses.get(last_gid, [(None, None)])[0][1]
    last_path = client.path_for(last_gid)
    if last_status is None:
        legal, reason = False, "no status for the last goal"
    elif last_status.code != PlannerStatus.SUCCESS:
        legal, reason = False, f"last goal: {last_status.code_name}: {last_status.message}"
    elif last_path is None or last_path[1] is None:
        legal, reason = False, "no /plan for the last goal"
    else:
        legal, reason = path_legal(last_path[1], final_map, ROBOT_RADIUS, start, last_goal)

    replan_codes = {}
    for answers in client.replans.values():
        for _, status in answers:
            replan_codes[status.code_name] = replan_codes.get(status.code_name, 0) + 1

    def ms(values, q):
        v = percentile(values, q)
        return None if v is None else round(v * 1e3, 2)

    sends = [client.sent[g] for g in range(1, stream_goals + 1)]
    max_send_gap = max((b - a for a, b in zip(sends, sends[1:])), default=0.0)
    rss_values = [(t, v) for t, v in rss if v is not None]
    heap_values = [(t - t0, v) for t, v, _ in client.heap if t >= t0]
    heap_less_threads = [(t - t0, v - s) for t, v, s in client.heap if t >= t0]
    return {
        "duration_s": duration,
        "goal_rate": goal_rate,
        "map_rate": map_rate,
        "goals_sent": last_gid,
        "stream_goals": stream_goals,
        "maps_published": version + 1,
        "statuses_by_code": dict(sorted(codes.items())),
        "missing_statuses": len(missing),
        "missing_goal_ids": missing[:20],
        # The client's own hiccups: the longest pause between two goals of the stream (goals
        # due meanwhile are sent at once, a burst the node must absorb).
        "max_send_gap_ms": round(max_send_gap * 1e3, 1),
        "duplicate_statuses": len(duplicates),
        "other_statuses": [f"{s.code_name}: {s.message}" for s in client.other_statuses][:10],
        # Replans of the goal being followed after a map change made its trajectory illegal.
        "replan_statuses_by_code": replan_codes,
        "plan_latency_ms": {
            "count": len(plan_latency),
            "p50": ms(plan_latency, 0.5),
            "p95": ms(plan_latency, 0.95),
            "max": ms(plan_latency, 1.0),
        },
        "status_latency_ms": {
            "count": len(status_latency),
            "p50": ms(status_latency, 0.5),
            "p95": ms(status_latency, 0.95),
            "max": ms(status_latency, 1.0),
        },
        "warmup_s": warmup,
        "rss_kib": memory_summary(rss_values, load_end, warmup, goal_rate),
        "heap_bytes": memory_summary(heap_values, load_end, warmup, goal_rate),
        "heap_less_thread_stores_bytes": memory_summary(heap_less_threads, load_end, warmup, goal_rate),
        "last_goal": {
            "status": last_status.code_name if last_status else None,
            "legal_on_final_map": legal,
            "reason": reason,
        },
        "fresh_goal_after_load": fresh,
        "node_alive": node.alive(),
        "node_log": str(node.log_path),
    }


def print_report(r):
    print(f"goals sent: {r['goals_sent']} ({r['stream_goals']} in {r['duration_s']:g} s + the last goal), "
          f"maps published: {r['maps_published']}")
    print("statuses by code: " + ", ".join(f"{k} {v}" for k, v in r["statuses_by_code"].items()))
    print("replan statuses by code: " + (", ".join(f"{k} {v}" for k, v in r["replan_statuses_by_code"].items())
                                         or "none"))
    print(f"missing statuses: {r['missing_statuses']}, duplicates: {r['duplicate_statuses']}, "
          f"longest pause of the client between goals: {r['max_send_gap_ms']} ms")
    for name, key in (("goal -> /plan (SUCCESS)", "plan_latency_ms"), ("goal -> status (all)", "status_latency_ms")):
        lat = r[key]
        print(f"latency {name}: n={lat['count']} p50 {lat['p50']} ms, p95 {lat['p95']} ms, max {lat['max']} ms")
    for name, key, unit in (("resident (VmRSS)", "rss_kib", 1024), ("heap held", "heap_bytes", 1024 * 1024)):
        m = r[key]
        if m is None:
            print(f"{name}: no readings")
            continue
        mib = lambda v: "n/a" if v is None else f"{v / unit:.2f} MiB"  # noqa: E731
        slope = m["slope_per_1000_goals"]
        slope = "n/a" if slope is None else f"{slope * 1024 / unit:+.1f} KiB per 1000 goals"
        print(f"{name}: first {mib(m['first'])}, after the {r['warmup_s']:g} s warm-up {mib(m['after_warmup'])}, "
              f"middle {mib(m['middle'])}, end {mib(m['end'])} (max after warm-up {mib(m['max_after_warmup'])}); "
              f"slope after warm-up {slope}")
    lg = r["last_goal"]
    print(f"last goal: {lg['status']}, legal on the final map: {lg['legal_on_final_map']} ({lg['reason']})")
    print(f"fresh goal after the load: {r['fresh_goal_after_load']}; node alive: {r['node_alive']}")


def main():
    exit_on_sigterm()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=60.0, help="seconds of load (default 60)")
    ap.add_argument("--goal-rate", type=float, default=100.0, help="goals per second (default 100)")
    ap.add_argument("--map-rate", type=float, default=10.0, help="map changes per second (default 10)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the random goals")
    ap.add_argument("--warmup", type=float, default=None,
                    help="seconds of warm-up before memory is compared (default: a tenth of the run, at least 10)")
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    args = ap.parse_args()
    if not (args.duration > 0 and args.goal_rate > 0 and args.map_rate > 0):
        ap.error("duration and rates must be positive")
    report = run(args.duration, args.goal_rate, args.map_rate, args.seed,
                 log=(lambda s: print(s, file=sys.stderr)) if args.json else print, warmup=args.warmup)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_report(report)
    ok = (report["missing_statuses"] == 0 and report["last_goal"]["legal_on_final_map"]
          and report["fresh_goal_after_load"] == "SUCCESS")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
