"""Fault soak of planner_node: goals through Nav2's action from several clients while faults
arrive at random, all at once, under load.

    python3 scripts/chaos_bench.py [--duration 600] [--goal-rate 50] [--clients 4]
                                   [--fault-interval 4] [--seed 1] [--json]

Starts planner_node as Nav2 would run it (namespace /chaos, Nav2's names, use_sim_time), and in
one process, as rclpy peers: a map server (latched /chaos/map: the map of scripts/load_bench.py,
8 x 5 m at 5 cm, a wall with two doors), TF (map -> odom static, odom -> base_link at 50 Hz),
/clock (simulated time as a looping bag plays it: running with the wall clock, and jumping back
at each loop), and --clients action clients of compute_path_to_pose sending --goal-rate goals per
second between them to random free places, half from the robot's TF pose, half with `use_start`.

Every --fault-interval seconds on average (exponential gaps), one fault, each kind once in every
round of six (in random order):
- map_restart: the map server goes away; a new one (a fresh latched publisher) comes up with the
  other door state;
- tf_stall: odom -> base_link stops for 2 s, then resumes;
- clock_jump: simulated time jumps back 5 s (the bag loops; its /tf_static comes again);
- lifecycle: deactivate, then activate (Nav2's lifecycle manager, change_state);
- param: turn_penalty or heading_bins set at run time (set_parameters);
- malformed: in turn (a shuffled round of every kind), a goal with a NaN or infinite
  coordinate, a goal or start in an unknown frame, a start at NaN, a map whose data length does
  not match its size, an update outside the map, a map of absurd size or resolution.

Checked, and printed (JSON with --json): every goal gets exactly one terminal answer (a
rejection, or one result; none is lost: after the load, answers are waited for until 30 s pass
with no new one, 120 s at most); the first plans after each fault
(the first three successes among the goals sent after it) are legal on the map in force (every
pose and every point between poses keeps the robot radius from blocked cells, in Python,
independently of the node: scripts/load_bench.py's check); the node neither dies nor logs a
panic. Reported: goals sent and answered, faults per kind, answers per result code, p50/p95
latency from sending to the result (and per client, to the goal response and to the result, so
a client that fell behind shows where), the node's VmRSS first, at the middle and at the end (each
the lowest reading in 10 s there), and its growth over the second half (lowest reading of the
second half's first 10 s against its last 10 s; flat within 2 MiB is the bar, checked when the
run lasts 120 s or more).

Exit status 0 when every check passed, 1 otherwise. The test suite runs it for 60 s
(tests/ros/test_load.py); the figures in README.md are from a 10-minute run.
"""

import argparse
import array
import collections
import json
import math
import pathlib
import random
import re
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "ros"))
sys.path.insert(0, str(ROOT / "scripts"))
import rclpy  # noqa: E402
from rclpy.action import ActionClient  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402

from action_msgs.msg import GoalStatus  # noqa: E402
from geometry_msgs.msg import TransformStamped  # noqa: E402
from lifecycle_msgs.msg import Transition  # noqa: E402
from lifecycle_msgs.srv import ChangeState  # noqa: E402
from map_msgs.msg import OccupancyGridUpdate  # noqa: E402
from nav2_msgs.action import ComputePathToPose  # noqa: E402
from nav_msgs.msg import OccupancyGrid  # noqa: E402
from rcl_interfaces.msg import Parameter, ParameterType  # noqa: E402
from rcl_interfaces.srv import SetParameters  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

import load_bench  # noqa: E402
from helpers import close_then_stop, exit_on_sigterm, pose_stamped, start_node, tmpdir  # noqa: E402

NS = "chaos"
ROBOT_RADIUS = load_bench.ROBOT_RADIUS
NODE_PARAMS = {
    "robot_radius": ROBOT_RADIUS,
    "min_turning_radius": load_bench.MIN_TURNING_RADIUS,
    "use_sim_time": True,
    # The peers publish TF from this process's loop: room for a busy moment.
    "transform_tolerance": 0.5,
    "max_planning_time": 2.0,
}
FAULTS = ("map_restart", "tf_stall", "clock_jump", "lifecycle", "param", "malformed")
MALFORMED = ("nan_goal", "inf_goal", "unknown_frame_goal", "unknown_frame_start", "nan_start",
             "map_data_length", "update_outside", "absurd_size", "absurd_resolution")
TF_STALL = 2.0
MAP_IN_USE = load_bench.MAP_IN_USE
CLOCK_JUMP = 5.0
# After the load: answers are waited for until every goal has one, or DRAIN seconds pass with no
# new answer (a goal the node lost), or DRAIN_MAX in all (a bench so far behind its responses
# that it would never be done).
DRAIN = 30.0
DRAIN_MAX = 120.0
# The robot stands here (cells of load_bench's map), in free space whatever the door.
ROBOT_CELL = load_bench.START_CELL
# The clients' goal and result services 1000 deep (rclpy's default is 10): a client with more
# than 10 answers outstanding otherwise loses the oldest in its own reader (KEEP_LAST), which a
# catch-up burst of goals after the bench's own pause produced (README, "Action and service
# responses").
CLIENT_SERVICES = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1000, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.VOLATILE)
LATCHED = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
# The timeout of every spin_once of the bench's executor, never varied. rclpy's executor serves
# the entities that one wait found ready across successive spin_once calls only while the
# arguments stay the same; a new timeout makes it wait again and serve only the first ready
# entity, taken in the order of its set of nodes (by hash: a different order every run). With
# the remaining time as the timeout, as this bench had it, one wait served one entity, and under
# load, when every client always had a status array ready, the client last in that order waited:
# its goal responses came seconds late (4.5 s at p95 in a loaded run), in one clean-checkout run
# 26 s, past the 10 s a result is kept, and its results came back STATUS_UNKNOWN
# (tests/ros/test_load.py, test_the_chaos_bench_serves_its_clients_in_turn).
SPIN_TIMEOUT = 0.005
# A TF_ERROR whose pose is older than this (s) says the node's clock is not the bench's: simulated
# time starts at 1000 s and jumps back CLOCK_JUMP at a time, so no honest age comes near it.
OFF_CLOCK_AGE = 1e5
# Nav2's result codes by value (rosidl keeps message constants on the class's metaclass).
CODE_NAMES = {getattr(ComputePathToPose.Result, k): k for k in dir(type(ComputePathToPose.Result)) if k.isupper()}


class Goal:
    """One goal as the bench keeps it: when it was sent and by whom, what it asked, its answers."""

    __slots__ = ("gid", "client", "sent", "start", "target", "answers", "answered", "code", "message", "path",
                 "accepted", "accepted_at", "accept_stamp", "status")

    def __init__(self, gid, client, sent, start, target):
        self.gid, self.client, self.sent, self.start, self.target = gid, client, sent, start, target
        self.answers, self.answered, self.code, self.message, self.path = 0, None, None, "", None
        # None until the goal response arrives; then whether the server accepted it.
        self.accepted = None
        # When the goal response arrived (time.monotonic()); None before it.
        self.accepted_at = None
        # The acceptance's stamp in the response (the node's simulated time, s); None before it.
        self.accept_stamp = None
        # The action's goal status in the result response (action_msgs/GoalStatus); None before it.
        self.status = None


class Bench:
    """The peers (map server, TF, clock, lifecycle and parameter clients, action clients) and the
    record of what was sent, injected and answered."""

    def __init__(self, n_clients, seed):
        self.rng = random.Random(seed)
        self.malformed_round = []
        self.executor = SingleThreadedExecutor()
        self.node = rclpy.create_node("chaos_bench")
        self.executor.add_node(self.node)
        n = self.node
        self.clock_pub = n.create_publisher(Clock, "/clock", QoSProfile(depth=10))
        self.tf_pub = n.create_publisher(TFMessage, "/tf", QoSProfile(depth=100))
        self.tf_static_pub = n.create_publisher(TFMessage, "/tf_static", QoSProfile(
            history=HistoryPolicy.KEEP_LAST, depth=100, reliability=ReliabilityPolicy.RELIABLE,
            durability=DurabilityPolicy.TRANSIENT_LOCAL))
        self.map_pub = n.create_publisher(OccupancyGrid, f"/{NS}/map", LATCHED)
        # Malformed maps come from a publisher of their own (latched as a map server's: the node's
        # subscription asks for that), so the good map stays latched on the other.
        self.bad_map_pub = n.create_publisher(OccupancyGrid, f"/{NS}/map", LATCHED)
        self.update_pub = n.create_publisher(OccupancyGridUpdate, f"/{NS}/map_updates", QoSProfile(depth=10))
        base = f"/{NS}/planner_node"
        self.change = n.create_client(ChangeState, f"{base}/change_state")
        self.set_params = n.create_client(SetParameters, f"{base}/set_parameters")
        # Several clients, each on a node of its own (as several Nav2 servers would be).
        self.clients = []
        for i in range(n_clients):
            cn = rclpy.create_node(f"chaos_client_{i}")
            self.executor.add_node(cn)
            ac = ActionClient(cn, ComputePathToPose, f"/{NS}/compute_path_to_pose", goal_service_qos_profile=CLIENT_SERVICES,
                              result_service_qos_profile=CLIENT_SERVICES, cancel_service_qos_profile=CLIENT_SERVICES)
            self.clients.append((cn, ac))
        # Simulated time: the wall clock plus an offset that each loop of the "bag" moves back.
        self.sim_offset = 1000.0 - time.monotonic()
        # Every offset in force so far, with the time it came into force (one more per jump).
        self.sim_offsets = [(0.0, self.sim_offset)]
        self.tf_paused_until = 0.0
        self.door_closed = False
        self.map_version = 0
        # The map history: [monotonic time published, grid, time the node had it in use (None
        # until seen)]. A restarted publisher's map reaches the node only once its new writer is
        # discovered, which takes a while under load: goals sent meanwhile are planned on the map
        # before, rightly.
        self.maps = []
        self.log_read = 0  # bytes of the node's log read by note_maps_in_use
        self.goals = []
        self.faults = []  # (monotonic time, kind, detail)
        self.free_cells = load_bench.goal_cells()
        self.last_tick = 0.0
        self.t0 = time.monotonic()

    # --- Peers -----------------------------------------------------------------------------------

    def sim_now(self):
        t = time.monotonic() + self.sim_offset
        sec = int(t)
        return sec, int((t - sec) * 1e9)

    def stamp(self, msg):
        msg.sec, msg.nanosec = self.sim_now()

    def transform(self, parent, child, x, y):
        t = TransformStamped()
        t.header.frame_id, t.child_frame_id = parent, child
        self.stamp(t.header.stamp)
        t.transform.translation.x, t.transform.translation.y = float(x), float(y)
        t.transform.rotation.w = 1.0
        return t

    def publish_static(self):
        self.tf_static_pub.publish(TFMessage(transforms=[self.transform("map", "odom", 0.0, 0.0)]))

    def tick(self):
        """Clock and odometry, 50 times a second."""
        now = time.monotonic()
        if now - self.last_tick < 0.02:
            return
        self.last_tick = now
        c = Clock()
        self.stamp(c.clock)
        self.clock_pub.publish(c)
        if now >= self.tf_paused_until:
            x, y = load_bench.cell_center(*ROBOT_CELL)
            self.tf_pub.publish(TFMessage(transforms=[self.transform("odom", "base_link", x, y)]))

    def publish_map(self):
        self.map_version += 1
        grid = load_bench.bench_map(self.door_closed, self.map_version)
        grid.header.frame_id = "map"
        self.map_pub.publish(grid)
        self.maps.append([time.monotonic(), grid, None])

    def note_maps_in_use(self, node):
        """Marks the maps the node has taken in since the last call with the time now, from the
        lines its log gained since (each map it takes in logs one "m/cell in use" line; the
        oldest unmarked map first). A map the node dropped because a newer one came while it
        waited logs nothing, so a mark can fall on a map older than the one taken in: the
        judging then allows more maps, never fewer. Only the new part of the log is read: this
        runs every 50 ms for minutes."""
        with open(node.log_path, "rb") as log:
            log.seek(self.log_read)
            new = log.read()
        whole = new.rfind(b"\n") + 1  # a line still being written is read next time
        self.log_read += whole
        seen = new[:whole].count(MAP_IN_USE.encode())
        for entry in [m for m in self.maps if m[2] is None][:seen]:
            entry[2] = time.monotonic()

    def spin(self, seconds):
        """Spins the peers' executor for about `seconds` (up to SPIN_TIMEOUT more), ticking
        clock and TF meanwhile."""
        end = time.monotonic() + seconds
        while True:
            self.tick()
            if time.monotonic() >= end:
                return
            # Always the same timeout: see SPIN_TIMEOUT.
            self.executor.spin_once(timeout_sec=SPIN_TIMEOUT)

    def spin_until(self, predicate, timeout, what):
        end = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > end:
                raise AssertionError(f"timed out waiting for {what}")
            self.spin(0.01)

    def call(self, client, request, timeout=10.0):
        """A service call, spinning meanwhile; the response, or None when none came."""
        if not client.wait_for_service(timeout_sec=timeout):
            return None
        fut = client.call_async(request)
        end = time.monotonic() + timeout
        while not fut.done() and time.monotonic() < end:
            self.spin(0.01)
        return fut.result() if fut.done() else None

    # --- Goals -----------------------------------------------------------------------------------

    def random_pose(self):
        cx, cy = self.rng.choice(self.free_cells)
        x, y = load_bench.cell_center(cx, cy)
        return (x, y, self.rng.uniform(-math.pi, math.pi))

    def send(self, target, start=None, goal_frame="map", start_frame="map", client=None):
        """Sends one goal (a ComputePathToPose) from client `client` (round robin by default)."""
        k = len(self.goals) % len(self.clients) if client is None else client
        g = Goal(len(self.goals), k, time.monotonic(), start, target)
        self.goals.append(g)
        msg = ComputePathToPose.Goal(goal=pose_stamped(*target, frame=goal_frame))
        if start is not None:
            msg.start, msg.use_start = pose_stamped(*start, frame=start_frame), True

        def on_result(fut):
            g.answers += 1
            g.answered = time.monotonic()
            r = fut.result()
            g.status = r.status
            g.code, g.message = r.result.error_code, r.result.error_msg
            # Only a SUCCEEDED goal's path is a plan: a result with status UNKNOWN (the server
            # forgot the goal) or ABORTED carries a default, empty one.
            if g.code == ComputePathToPose.Result.NONE and r.status == GoalStatus.STATUS_SUCCEEDED:
                g.path = r.result.path

        def on_goal(fut):
            handle = fut.result()
            g.accepted_at = time.monotonic()
            g.accepted = handle is not None and handle.accepted
            if handle is not None:
                g.accept_stamp = handle.stamp.sec + 1e-9 * handle.stamp.nanosec
            if not g.accepted:
                g.answers += 1
                g.answered = time.monotonic()
                g.code, g.message = "rejected", ""
                return
            handle.get_result_async().add_done_callback(on_result)

        self.clients[k][1].send_goal_async(msg).add_done_callback(on_goal)
        return g

    def send_random(self):
        target = self.random_pose()
        start = self.random_pose() if self.rng.random() < 0.5 else None
        self.send(target, start)

    # --- Faults ----------------------------------------------------------------------------------

    def inject(self, kind):
        detail = ""
        if kind == "map_restart":
            self.node.destroy_publisher(self.map_pub)
            self.spin(0.1)
            self.map_pub = self.node.create_publisher(OccupancyGrid, f"/{NS}/map", LATCHED)
            self.door_closed = not self.door_closed
            self.publish_map()
            detail = "door closed" if self.door_closed else "door open"
        elif kind == "tf_stall":
            self.tf_paused_until = time.monotonic() + TF_STALL
        elif kind == "clock_jump":
            self.sim_offset -= CLOCK_JUMP
            self.sim_offsets.append((time.monotonic(), self.sim_offset))
            self.tick()
            self.publish_static()
        elif kind == "lifecycle":
            answers = []
            for t in (Transition.TRANSITION_DEACTIVATE, Transition.TRANSITION_ACTIVATE):
                r = self.call(self.change, ChangeState.Request(transition=Transition(id=t)))
                answers.append(r is not None and r.success)
            detail = f"deactivate {answers[0]}, activate {answers[1]}"
            if not all(answers):
                raise AssertionError(f"lifecycle change refused or unanswered: {detail}")
        elif kind == "param":
            p = Parameter()
            if self.rng.random() < 0.5:
                p.name = "turn_penalty"
                p.value.type, p.value.double_value = ParameterType.PARAMETER_DOUBLE, self.rng.choice([0.0, 0.1, 0.3])
                detail = f"turn_penalty {p.value.double_value}"
            else:
                p.name = "heading_bins"
                p.value.type, p.value.integer_value = ParameterType.PARAMETER_INTEGER, self.rng.choice([8, 16])
                detail = f"heading_bins {p.value.integer_value}"
            r = self.call(self.set_params, SetParameters.Request(parameters=[p]))
            if r is None or not r.results[0].successful:
                raise AssertionError(f"parameter change refused or unanswered: {detail}")
        elif kind == "malformed":
            # Taken in turn from a shuffled round of every kind, as the faults themselves are: a
            # run with as many malformed faults as kinds has sent each kind.
            if not self.malformed_round:
                self.malformed_round = self.rng.sample(MALFORMED, len(MALFORMED))
            detail = self.malformed_round.pop()
            self.malformed(detail)
        self.faults.append((time.monotonic(), kind, detail))

    def malformed(self, what):
        target, start = self.random_pose(), self.random_pose()
        if what == "nan_goal":
            self.send((math.nan, target[1], 0.0), start)
        elif what == "inf_goal":
            self.send((target[0], math.inf, 0.0), start)
        elif what == "unknown_frame_goal":
            self.send(target, start, goal_frame="nowhere")
        elif what == "unknown_frame_start":
            self.send(target, start, start_frame="nowhere")
        elif what == "nan_start":
            self.send(target, (start[0], math.nan, 0.0))
        elif what == "map_data_length":
            g = load_bench.bench_map(self.door_closed, 0)
            g.data = g.data[: len(g.data) // 2]
            self.bad_map_pub.publish(g)
        elif what == "update_outside":
            u = OccupancyGridUpdate()
            u.header.frame_id = "map"
            u.x, u.y, u.width, u.height = load_bench.W + 10, 5, 4, 4
            u.data = array.array("b", [100] * 16)
            self.update_pub.publish(u)
        elif what == "absurd_size":
            g = OccupancyGrid()
            g.header.frame_id = "map"
            g.info.width, g.info.height, g.info.resolution = 2_000_000_000, 2_000_000_000, 0.05
            g.info.origin.orientation.w = 1.0
            g.data = array.array("b", [0] * 16)
            self.bad_map_pub.publish(g)
        elif what == "absurd_resolution":
            g = load_bench.bench_map(self.door_closed, 0)
            g.info.resolution = -0.05 if self.rng.random() < 0.5 else math.nan
            self.bad_map_pub.publish(g)

    def close(self):
        # First the executor: it holds the handles of the last wait's entities until shut down.
        self.executor.shutdown()
        for cn, ac in self.clients:
            ac.destroy()
            cn.destroy_node()
        self.node.destroy_node()


def legal_on_some_map(bench, g):
    """(legal, reason) for a successful goal's path: legal on a map the node could have held
    while it was planned (see below)."""
    start = g.start or load_bench.cell_center(*ROBOT_CELL)
    # The node plans a goal on the map it holds when the goal's turn comes: any map published
    # before the answer that the next map had not yet replaced in the node (its "in use" line,
    # read every 50 ms; never, where that was not seen) when the goal was sent.
    maps = bench.maps
    superseded = [maps[i + 1][2] if i + 1 < len(maps) and maps[i + 1][2] is not None else math.inf
                  for i in range(len(maps))]
    candidates = [grid for (published, grid, _), until in zip(maps, superseded)
                  if published <= g.answered and until > g.sent]
    reasons = []
    for grid in candidates:
        ok, why = load_bench.path_legal(g.path, grid, ROBOT_RADIUS, start, g.target)
        if ok:
            return True, "ok"
        reasons.append(why)
    return False, "; ".join(reasons)


def p50_p95_max(ms):
    """[p50, p95, max] of `ms`, rounded to 0.1; [] when there are none."""
    return [round(load_bench.percentile(ms, q), 1) for q in (0.5, 0.95)] + [round(max(ms), 1)] if ms else []


def latency_by_client(answered):
    """{client: {"accepted": [p50, p95, max], "answered": [p50, p95, max]}} in ms."""
    out = {}
    for c in sorted({g.client for g in answered}):
        mine = [g for g in answered if g.client == c]
        figures = {}
        for what, times in (("accepted", [g.accepted_at - g.sent for g in mine if g.accepted_at is not None]),
                            ("answered", [g.answered - g.sent for g in mine])):
            ms = [1000.0 * t for t in times]
            figures[what] = p50_p95_max(ms)
        out[c] = figures
    return out


def run(duration=600.0, goal_rate=50.0, n_clients=4, fault_interval=4.0, seed=1, log=print):
    tmp = tmpdir("blockstar-chaos-")
    # Everything from the node's start on inside the try, so a signal at any point stops it.
    node = bench = None
    owns_rclpy = False
    try:
        node = start_node(tmp, "planner_node", NODE_PARAMS, extra_args=["-r", f"__ns:=/{NS}"])
        # Inside the test suite rclpy is running already (its peers start it and leave it running).
        owns_rclpy = not rclpy.ok()
        if owns_rclpy:
            rclpy.init()
        bench = Bench(n_clients, seed)
        bench.publish_static()
        bench.publish_map()
        end = time.monotonic() + 30
        while bench.map_pub.get_subscription_count() == 0 or not all(ac.server_is_ready() for _, ac in bench.clients):
            assert time.monotonic() < end, "the node was not discovered"
            bench.spin(0.05)
        node.wait_log(MAP_IN_USE, 1, timeout=30)
        bench.note_maps_in_use(node)
        bench.spin(1.0)
        return _run(node, bench, duration, goal_rate, fault_interval, log)
    finally:
        close_then_stop(node, bench and bench.close, owns_rclpy)


def acceptance_lag(bench, answered):
    """Where the time from sending a goal to hearing of its acceptance went, in ms (p50 / p95 /
    max): "node", from sending to the node's acceptance stamp, and "bench", from that stamp to the
    bench's reading of the response (the node's sending of it, the middleware, and the bench's
    executor's backlog). The stamp is in simulated time, which jumps back; it is read back on the
    offset that puts it inside that offset's time in force and between the two, and left out when
    not exactly one does: a goal whose acceptance a clock jump overtook, and, since the 5 s before
    and after a jump repeat the same stamps, many goals accepted more than 5 s after they were
    sent, so with a bench far behind the figures are lower bounds ("left_out" counts them). The
    node's clock is the last /clock, published at 50 Hz: "node" resolves 20 ms, no finer."""
    node_ms, bench_ms, left_out = [], [], 0
    spans = [(since, until, off) for (since, off), (until, _) in
             zip(bench.sim_offsets, bench.sim_offsets[1:] + [(math.inf, None)])]
    for g in answered:
        if g.accept_stamp is None or g.accepted_at is None:
            continue
        # The node's clock follows /clock by up to a tick (20 ms): allowed for on either side.
        fits = [g.accept_stamp - off for since, until, off in spans
                if since - 0.05 <= g.accept_stamp - off < until + 0.05
                and g.sent - 0.05 <= g.accept_stamp - off <= g.accepted_at + 0.05]
        if len(fits) != 1:
            left_out += 1
            continue
        node_ms.append(1000.0 * max(0.0, fits[0] - g.sent))
        bench_ms.append(1000.0 * max(0.0, g.accepted_at - fits[0]))
    return {"node": p50_p95_max(node_ms), "bench": p50_p95_max(bench_ms), "goals": len(node_ms), "left_out": left_out}


def _run(node, bench, duration, goal_rate, fault_interval, log):
    rng = bench.rng
    t0 = bench.t0 = time.monotonic()
    next_goal, n_sent = t0, 0
    next_fault = t0 + rng.expovariate(1.0 / fault_interval)
    rss, next_rss = [], t0
    next_log_read = t0
    bag = []
    log(f"chaos: {duration:.0f} s, {goal_rate:g} goals/s from {len(bench.clients)} clients, "
        f"a fault every {fault_interval:g} s on average")
    while time.monotonic() - t0 < duration:
        now = time.monotonic()
        while next_goal <= now:
            bench.send_random()
            n_sent += 1
            next_goal = t0 + n_sent / goal_rate
        if now >= next_fault:
            # Kinds drawn from a shuffled bag: every kind once in each round of six.
            if not bag:
                bag = rng.sample(FAULTS, len(FAULTS))
            bench.inject(bag.pop())
            next_fault = time.monotonic() + rng.expovariate(1.0 / fault_interval)
        if now >= next_rss:
            rss.append((now - t0, load_bench.rss_kib(node.proc.pid)))
            next_rss += 1.0
        if now >= next_log_read and any(used is None for _, _, used in bench.maps):
            bench.note_maps_in_use(node)
            next_log_read = now + 0.05
        if not node.alive():
            break
        bench.spin(0.002)
    # Goals whose time came while the last fault was being injected (a restart can take a few
    # hundred milliseconds): the schedule is goal_rate x duration goals, sent in full.
    while node.alive() and n_sent < int(round(duration * goal_rate)):
        bench.send_random()
        n_sent += 1
    load_end = time.monotonic() - t0
    drain_start = last_answer = time.monotonic()
    answered = sum(1 for g in bench.goals if g.answers)
    while answered < len(bench.goals) and node.alive():
        now = time.monotonic()
        if now - last_answer > DRAIN or now - drain_start > DRAIN_MAX:
            break
        bench.spin(0.05)
        now_answered = sum(1 for g in bench.goals if g.answers)
        if now_answered > answered:
            answered, last_answer = now_answered, time.monotonic()
    return report(node, bench, load_end, rss)


def report(node, bench, load_end, rss):
    goals = bench.goals
    answered = [g for g in goals if g.answers >= 1]
    lost = [g.gid for g in goals if g.answers == 0]

    def last_fault(t):
        before = [(ft, kind, detail) for ft, kind, detail in bench.faults if ft <= t]
        return f"{before[-1][1]} {before[-1][2]} {t - before[-1][0]:.2f} s before".strip() if before else "none"

    lost_detail = [{"goal": g.gid, "client": g.client, "sent_s": round(g.sent - bench.t0, 2),
                    "stage": "no goal response" if g.accepted is None else "accepted, no result",
                    "last_fault": last_fault(g.sent)} for g in goals if g.answers == 0][:30]
    twice = [g.gid for g in goals if g.answers > 1]
    # A result is SUCCEEDED with error code NONE, or not SUCCEEDED with a code that says why;
    # anything else (STATUS_UNKNOWN: the server had forgotten the goal) is an answer lost.
    status_names = {getattr(GoalStatus, k): k[len("STATUS_"):] for k in dir(GoalStatus) if k.startswith("STATUS_")}
    disagreeing = [{"goal": g.gid, "client": g.client, "status": status_names.get(g.status, g.status),
                    "code": CODE_NAMES.get(g.code, str(g.code)), "message": g.message,
                    "answered_after_s": round(g.answered - g.sent, 2),
                    "accepted_after_s": None if g.accepted_at is None else round(g.accepted_at - g.sent, 2)}
                   for g in answered if g.status is not None
                   and (g.status == GoalStatus.STATUS_SUCCEEDED) != (g.code == ComputePathToPose.Result.NONE)]
    codes = collections.Counter(CODE_NAMES.get(g.code, str(g.code)) for g in answered)
    # One message per code and cause (its text up to the first digit), a few per code.
    examples = collections.defaultdict(dict)
    for g in answered:
        name = CODE_NAMES.get(g.code, str(g.code))
        cause = next((g.message[:i] for i, c in enumerate(g.message) if c.isdigit()), g.message)[:80]
        if name != "NONE" and len(examples[name]) < 4:
            examples[name].setdefault(cause, g.message)
    # A robot pose "older" than the whole run (its age as the node's TF_ERROR message gives it) is
    # a node whose clock is not the simulated time the bench publishes: every goal without its
    # own start would fail so, and each such answer would otherwise count as a fine one.
    ages = [abs(float(m.group(1))) for g in answered if g.code == ComputePathToPose.Result.TF_ERROR
            for m in [re.search(r"is (-?[0-9.]+) s old", g.message)] if m]
    off_clock = [a for a in ages if a > OFF_CLOCK_AGE]
    latency = [1000.0 * (g.answered - g.sent) for g in answered]
    faults = collections.Counter(kind for _, kind, _ in bench.faults)
    malformed = collections.Counter(d for _, kind, d in bench.faults if kind == "malformed")
    # The first three successes among the goals sent after each fault, checked on the map.
    checked, illegal = set(), []
    for t, kind, detail in bench.faults:
        after = [g for g in goals if g.sent > t and g.path is not None][:3]
        for g in after:
            if g.gid in checked:
                continue
            checked.add(g.gid)
            ok, why = legal_on_some_map(bench, g)
            if not ok:
                illegal.append({"goal": g.gid, "after": kind, "detail": detail, "why": why})
    log_text = node.log()
    rss_values = [(t, v) for t, v in rss if v is not None]
    half = [(t, v) for t, v in rss_values if t >= load_end / 2]

    def low(a, b):
        inside = [v for t, v in rss_values if a <= t <= b]
        return min(inside) if inside else None

    second_half_growth = None
    if half:
        first, last = low(half[0][0], half[0][0] + 10), low(load_end - 10, load_end)
        if first is not None and last is not None:
            second_half_growth = last - first
    r = {
        "duration_s": round(load_end, 1),
        "goals_sent": len(goals),
        "goals_answered": len(answered),
        "lost": lost[:20],
        "lost_count": len(lost),
        "lost_detail": lost_detail,
        "answered_twice": twice[:20],
        "action_statuses": dict(collections.Counter(
            status_names.get(g.status, "rejected" if g.code == "rejected" else str(g.status)) for g in answered)),
        "status_disagrees": disagreeing[:20],
        "status_disagrees_count": len(disagreeing),
        "answers": dict(codes.most_common()),
        # The node's own status behind each answer (Nav2's UNKNOWN holds several).
        "statuses": dict(collections.Counter(
            "SUCCESS" if g.code == ComputePathToPose.Result.NONE else
            ("rejected" if g.code == "rejected" else g.message.split(":", 1)[0]) for g in answered).most_common()),
        "examples": {k: list(v.values()) for k, v in examples.items()},
        "faults": dict(faults.most_common()),
        "malformed": dict(malformed.most_common()),
        "latency_ms": {"p50": load_bench.percentile(latency, 0.5), "p95": load_bench.percentile(latency, 0.95)},
        # Per client: from sending to the goal response, and to the result (p50 / p95 / max, ms),
        # so a client that fell behind shows, and where (its acceptances or its results).
        "latency_by_client_ms": latency_by_client(answered),
        # Whether a late acceptance was late in the node or in the bench's own client process.
        "acceptance_lag_ms": acceptance_lag(bench, answered),
        "off_clock_answers": len(off_clock),
        "off_clock_largest_age_s": max(off_clock, default=None),
        "plans_checked_after_faults": len(checked),
        "illegal": illegal,
        "node_alive": node.alive(),
        "panics": log_text.count("panicked"),
        "rss_kib": {"first": rss_values[0][1] if rss_values else None,
                    "middle": low(load_end / 2 - 5, load_end / 2 + 5),
                    "end": low(load_end - 10, load_end),
                    "second_half_growth": second_half_growth},
    }
    r["failures"] = failures(r, load_end)
    return r


def failures(r, load_end):
    out = []
    if r["lost_count"]:
        out.append(f"{r['lost_count']} goals never answered (first: {r['lost']})")
    if r["answered_twice"]:
        out.append(f"goals answered twice: {r['answered_twice']}")
    if r["status_disagrees_count"]:
        out.append(f"{r['status_disagrees_count']} results whose goal status and error code disagree "
                   f"(first: {r['status_disagrees'][:3]})")
    if r["illegal"]:
        out.append(f"{len(r['illegal'])} plans after faults illegal: {r['illegal'][:3]}")
    if r["off_clock_answers"]:
        out.append(f"{r['off_clock_answers']} answers TF_ERROR with the robot's pose up to "
                   f"{r['off_clock_largest_age_s']:.0f} s old: the node is not on the simulated clock")
    if not r["node_alive"]:
        out.append("the node died")
    if r["panics"]:
        out.append(f"the node logged {r['panics']} panics")
    if r["plans_checked_after_faults"] == 0:
        out.append("no plan after a fault was checked")
    growth = r["rss_kib"]["second_half_growth"]
    if load_end >= 120 and (growth is None or growth > 2048):
        out.append(f"resident memory grew {growth} KiB over the second half (bar: 2048)")
    return out


def print_report(r):
    print(f"goals sent {r['goals_sent']}, answered {r['goals_answered']}, lost {r['lost_count']}, "
          f"answered twice {len(r['answered_twice'])}")
    print("action statuses: " + ", ".join(f"{k} {v}" for k, v in r["action_statuses"].items()))
    print("answers: " + ", ".join(f"{k} {v}" for k, v in r["answers"].items()))
    print("the node's statuses: " + ", ".join(f"{k} {v}" for k, v in r["statuses"].items()))
    print("faults: " + ", ".join(f"{k} {v}" for k, v in r["faults"].items())
          + " (malformed: " + ", ".join(f"{k} {v}" for k, v in r["malformed"].items()) + ")")
    lat = r["latency_ms"]
    if lat["p50"] is not None:
        print(f"latency p50 {lat['p50']:.1f} ms, p95 {lat['p95']:.1f} ms")
    lag = r["acceptance_lag_ms"]
    if lag["goals"]:
        print(f"to the acceptance (p50/p95/max ms, {lag['goals']} goals, {lag['left_out']} left out): "
              f"in the node {lag['node']}, after the node's stamp {lag['bench']}")
    m = r["rss_kib"]
    print(f"RSS first {m['first']} KiB, middle {m['middle']} KiB, end {m['end']} KiB, "
          f"second half growth {m['second_half_growth']} KiB")
    print(f"plans checked after faults {r['plans_checked_after_faults']}, illegal {len(r['illegal'])}; "
          f"node alive {r['node_alive']}, panics {r['panics']}")
    print("PASS" if not r["failures"] else "FAIL: " + "; ".join(r["failures"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=600.0, help="seconds of load (default 600)")
    ap.add_argument("--goal-rate", type=float, default=50.0, help="goals per second, all clients (default 50)")
    ap.add_argument("--clients", type=int, default=4, help="action clients (default 4)")
    ap.add_argument("--fault-interval", type=float, default=4.0, help="mean seconds between faults (default 4)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    a = ap.parse_args()
    exit_on_sigterm()
    r = run(a.duration, a.goal_rate, a.clients, a.fault_interval, a.seed,
            log=(lambda *x: print(*x, file=sys.stderr)) if a.json else print)
    if a.json:
        print(json.dumps(r, indent=1))
    else:
        print_report(r)
    sys.exit(1 if r["failures"] else 0)


if __name__ == "__main__":
    main()
