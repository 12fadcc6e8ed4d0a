"""Shared helpers of the ROS test suite: starting planner_node, an rclpy peer that talks to it,
synthetic maps, and path checks. Nothing here is mocked: the node is the binary colcon installed
(scripts/build_ws.sh) and the peer talks to it over Fast DDS on the loopback interface."""

import array
import math
import os
import pathlib
import signal
import subprocess
import tempfile
import time

import rclpy
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from blockstar_planner_msgs.msg import PlannerStatus, Trajectory
from geometry_msgs.msg import PoseStamped, PoseWithCovarianceStamped
from nav_msgs.msg import OccupancyGrid, Odometry, Path

ROOT = pathlib.Path(__file__).resolve().parents[2]
# The colcon install of scripts/build_ws.sh, as `ros2 run blockstar_planner ...` finds it.
INSTALL = pathlib.Path(os.environ.get("BLOCKSTAR_INSTALL", ROOT / ".ws" / "install")) / "blockstar_planner"
NODE_BIN = INSTALL / "lib" / "blockstar_planner" / "planner_node"
CLI_BIN = INSTALL / "lib" / "blockstar_planner" / "blockstar"
SHARE = INSTALL / "share" / "blockstar_planner"

LATCHED = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=1,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
)
# What a test reads a latched topic with: the same durability, but up to 10 samples kept, since
# with one a second message arriving before the test's next spin (a plan, then its replan) would
# replace the first unread.
LATCHED_READER = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=10,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
)
STATUS_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=50,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
)
DEFAULT_QOS = QoSProfile(depth=10)


def interrupt_when_parent_dies():
    """In the child, before exec: the kernel sends it SIGINT (Ctrl-C: a clean stop of the node or
    of `ros2 launch` and its node) when the process that started it dies, however it died
    (SIGKILL included), so no node outlives its test or script."""
    import ctypes

    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGINT)


def close_then_stop(node, close=None, own_context=False):
    """A script's clean-up: runs `close` (its rclpy side, when made), shuts down rclpy's context
    when the script made it (`try_shutdown`: after Ctrl-C rclpy has shut it down itself, and a
    plain `shutdown()` raises), and stops `node` (None: never started) whatever those raised."""
    try:
        if close is not None:
            close()
        if own_context:
            rclpy.try_shutdown()
    finally:
        if node is not None:
            node.stop()


def exit_on_sigterm():
    """Makes SIGTERM end the calling script as Ctrl-C does (KeyboardInterrupt), so its `finally`
    blocks stop the nodes it started and print what was measured. Call from a script's main."""

    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, interrupt)


class NodeProcess:
    """A running planner_node, started by `cmd`: the executable itself, or `ros2 run` / `ros2
    launch` starting it. Its own process group, as a command typed in a terminal has, so stop()
    interrupts it as Ctrl-C does; interrupted too when the process that started it dies. The log
    (stdout and stderr) goes to a file the tests read."""

    def __init__(self, cmd, log_path, ready=True, env=None):
        self.cmd = [str(c) for c in cmd]
        self.log_path = pathlib.Path(log_path)
        self._log = open(self.log_path, "wb")
        # BLOCKSTAR_TEST_NO_BACKSTOP=1 (a test's, of a script's own clean-up): no signal at the
        # starter's death, so a node the clean-up misses outlives it.
        backstop = os.environ.get("BLOCKSTAR_TEST_NO_BACKSTOP") != "1"
        self.proc = subprocess.Popen(self.cmd, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True,
                                     preexec_fn=interrupt_when_parent_dies if backstop else None, env=env)
        if ready:
            try:
                self.wait_log("ready", 1, timeout=30)
            except BaseException:
                self.stop()
                raise

    def log(self):
        return self.log_path.read_text(errors="replace")

    def count(self, text):
        return self.log().count(text)

    def wait_log(self, text, count, timeout=20.0):
        """Waits until `text` appears `count` times in the log; fails if the node died."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.count(text) >= count:
                return
            if self.proc.poll() is not None:
                raise AssertionError(f"planner_node exited with {self.proc.returncode}:\n{self.log()}")
            time.sleep(0.02)
        raise AssertionError(f"timed out waiting for {text!r} x{count} in the node's log:\n{self.log()}")

    def map_in_use(self, width, height):
        """Whether the node logged a map of `width` x `height` cells in use ("map WxH at R m/cell
        in use"): a test that gives its map a size no earlier map had knows that map landed."""
        return any(f"map {width}x{height} at" in x and "m/cell in use" in x for x in self.log().splitlines())

    def alive(self):
        return self.proc.poll() is None

    def stop(self, timeout=10):
        """Ctrl-C: SIGINT to the process group; kills it after `timeout` s. Returns the exit
        code (negative: the signal that ended it)."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGINT)
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
            except ProcessLookupError:
                self.proc.wait()
        if not self._log.closed:
            self._log.close()
        return self.proc.returncode


def start_node(tmp_dir, name, params=None, remap_prefix=None, extra_args=(), env=None):
    """Starts planner_node named `name` with a parameters file holding `params` (under `/**`,
    so any node name matches) and, with remap_prefix, every topic remapped under it; `env`, when
    given, is its whole environment."""
    tmp_dir = pathlib.Path(tmp_dir)
    params_file = tmp_dir / f"{name}.yaml"
    lines = ["/**:", "  ros__parameters:"]

    def add(items, indent):
        # A dict value is a nested section, as Nav2 writes a plugin's parameters.
        for k, v in items:
            if isinstance(v, dict):
                lines.append(f"{indent}{k}:")
                add(v.items(), indent + "  ")
                continue
            if isinstance(v, bool):
                v = "true" if v else "false"
            elif isinstance(v, str):
                v = f'"{v}"'
            lines.append(f"{indent}{k}: {v}")

    add((params or {}).items(), "    ")
    params_file.write_text("\n".join(lines) + "\n")
    cmd = [NODE_BIN, "--ros-args", "-r", f"__node:={name}", "--params-file", params_file]
    if remap_prefix:
        for topic in ("/map", "/goal_pose", "/initialpose", "/odom", "/plan"):
            cmd += ["-r", f"{topic}:={remap_prefix}{topic}"]
    cmd += list(extra_args)
    return NodeProcess(cmd, tmp_dir / f"{name}.log", env=env)


def start_with_peer(tmp_dir, name, params, make_peer, ready=lambda peer: None, grid=None, start_pose=None,
                    extra_args=(), env=None):
    """Starts planner_node `name` with its topics under /`name` (and `env`, when given, as its
    whole environment), then a peer `make_peer()`, connected (see Peer.wait_connected) and
    `ready(peer)`; publishes `grid` and sets `start_pose` when given, each taken in by the node
    before this returns (node, peer). When any of that fails, the node is stopped before the
    error propagates: a failed set-up never leaves a node running."""
    node = start_node(tmp_dir, name, params, remap_prefix=f"/{name}", extra_args=extra_args, env=env)
    try:
        peer = make_peer()
        peer.wait_connected()
        ready(peer)
        if grid is not None:
            peer.publish_map(grid, node)
        if start_pose is not None:
            peer.set_start(*start_pose, node_proc=node)
    except BaseException:
        node.stop()
        raise
    return node, peer


def yaw_quaternion(yaw):
    return (0.0, 0.0, math.sin(yaw / 2), math.cos(yaw / 2))


def pose_stamped(x, y, yaw=0.0, frame="map", stamp_sec=0, quaternion=None):
    """A PoseStamped at (x, y) facing `yaw` (or with `quaternion` as given, unnormalised ones too),
    its header stamp's seconds `stamp_sec` (the tests' goal id)."""
    msg = PoseStamped()
    msg.header.frame_id = frame
    msg.header.stamp.sec = stamp_sec
    msg.pose.position.x, msg.pose.position.y = float(x), float(y)
    o = msg.pose.orientation
    o.x, o.y, o.z, o.w = quaternion if quaternion is not None else yaw_quaternion(yaw)
    return msg


def initial_pose(x, y, yaw, frame="map"):
    """A PoseWithCovarianceStamped (as /initialpose carries it) at (x, y) facing `yaw`."""
    msg = PoseWithCovarianceStamped()
    msg.header.frame_id = frame
    msg.pose.pose = pose_stamped(x, y, yaw).pose
    return msg


def quaternion_yaw(q):
    return math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z))


class Peer:
    """An rclpy node that plays the user: publishes map, start and goals, records the answers.

    Statuses are matched to goals by the goal's header stamp, which every goal gets unique."""

    _next_goal_id = 1000

    def __init__(self, name, prefix="", node_name="planner_node", map_topic=None, goal_topic=None):
        if not rclpy.ok():
            rclpy.init()
        self.node = rclpy.create_node(name)
        n = self.node
        self.map_pub = n.create_publisher(OccupancyGrid, map_topic or f"{prefix}/map", LATCHED)
        self.goal_pub = n.create_publisher(PoseStamped, goal_topic or f"{prefix}/goal_pose", DEFAULT_QOS)
        self.initial_pub = n.create_publisher(PoseWithCovarianceStamped, f"{prefix}/initialpose", DEFAULT_QOS)
        self.odom_pub = n.create_publisher(Odometry, f"{prefix}/odom", DEFAULT_QOS)
        self.statuses, self.paths, self.trajectories = [], [], []
        self.status_sub = n.create_subscription(PlannerStatus, f"/{node_name}/status", self.statuses.append,
                                                STATUS_QOS)
        self.path_sub = n.create_subscription(Path, f"{prefix}/plan", self.paths.append, LATCHED_READER)
        self.traj_sub = n.create_subscription(Trajectory, f"/{node_name}/trajectory", self.trajectories.append,
                                              LATCHED_READER)

    def spin(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            rclpy.spin_once(self.node, timeout_sec=0.01)

    def spin_until(self, predicate, timeout=20.0, what="condition"):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if predicate():
                return
            rclpy.spin_once(self.node, timeout_sec=0.02)
        raise AssertionError(f"timed out waiting for {what}")

    def wait_connected(self, timeout=20.0):
        """Waits until DDS discovery has matched every endpoint with the node."""
        self.spin_until(
            lambda: self.goal_pub.get_subscription_count() > 0
            and self.initial_pub.get_subscription_count() > 0
            and self.map_pub.get_subscription_count() > 0
            and self.status_sub.get_publisher_count() > 0
            and self.path_sub.get_publisher_count() > 0,
            timeout,
            "discovery of planner_node",
        )

    def publish_map(self, grid, node_proc=None):
        """Publishes a map; with node_proc, waits until the node logs that it was taken in use or
        rejected (so a goal sent next is planned on it)."""
        before = node_proc.count("m/cell in use") + node_proc.count("map rejected") if node_proc else 0
        self.map_pub.publish(grid)
        if node_proc:
            self.spin_until(lambda: node_proc.count("m/cell in use") + node_proc.count("map rejected") > before,
                            what="the node to process the map")

    def set_start(self, x, y, yaw, frame="map", node_proc=None):
        msg = initial_pose(x, y, yaw, frame)
        line = start_pose_line(x, y)
        before = node_proc.count(line) if node_proc else 0
        self.initial_pub.publish(msg)
        if node_proc:
            self.spin_until(lambda: node_proc.count(line) > before, what="the node to take the start")

    def send_odom(self, msg, node_proc, timeout=30.0):
        """Publishes an Odometry until `node_proc` logs one more start pose. The node reads /odom
        best effort, as odometry is published: a message sent before its reader matched, or one
        the transport dropped, is gone without a trace, so it is sent again every half second."""
        p = msg.pose.pose.position
        line = start_pose_line(p.x, p.y)
        before = node_proc.count(line)
        resend_until(lambda: self.odom_pub.publish(msg), lambda: node_proc.count(line) > before, self.spin_until,
                     "the odometry pose", timeout)

    def send_goal(self, x, y, yaw=0.0, frame="map", quaternion=None):
        """Publishes a goal and returns its id (the stamp's seconds)."""
        Peer._next_goal_id += 1
        gid = Peer._next_goal_id
        msg = pose_stamped(x, y, yaw, frame, stamp_sec=gid, quaternion=quaternion)
        self.goal_pub.publish(msg)
        return gid

    def status_for(self, gid):
        """The answers (event EVENT_GOAL) to goal gid; replans of it are not answers."""
        return [s for s in self.statuses
                if s.goal.header.stamp.sec == gid and s.event == PlannerStatus.EVENT_GOAL]

    def wait_status(self, gid, timeout=30.0):
        self.spin_until(lambda: self.status_for(gid), timeout, f"the status of goal {gid}")
        # One status per goal: give a duplicate a moment to show up.
        self.spin(0.05)
        found = self.status_for(gid)
        assert len(found) == 1, f"{len(found)} statuses for goal {gid}"
        return found[0]

    def plan(self, x, y, yaw=0.0, resend_every=None, timeout=30.0):
        """Sends a goal and returns (status, path) for it; path is None unless SUCCESS. With
        `resend_every` (s) the goal is sent again that often until one of them is answered, for a
        node whose goal reader may not be matched yet (/goal_pose is volatile: a goal sent before
        is lost); then the last one sent is waited for and returned (each sent after one that
        arrived arrives too, and a newer goal replaces one still being planned)."""
        sent = [self.send_goal(x, y, yaw)]
        if resend_every is not None:
            deadline = time.monotonic() + timeout
            while not any(self.status_for(g) for g in sent):
                try:
                    self.spin_until(lambda: any(self.status_for(g) for g in sent), resend_every, "an answer")
                except AssertionError:
                    if time.monotonic() > deadline:
                        raise AssertionError(f"none of goals {sent} answered in {timeout} s") from None
                    sent.append(self.send_goal(x, y, yaw))
        status = self.wait_status(sent[-1], timeout)
        if status.code != PlannerStatus.SUCCESS:
            return status, None
        return status, self.message_for(status, self.paths, "/plan")

    def message_for(self, status, messages, what, header=lambda m: m.header):
        """The message in `messages` (a subscription's list) published with the plan that
        `status` (SUCCESS) answers: the node gives the plan's /plan, ~/trajectory,
        ~/any_angle_plan and ~/markers (`header` reads it: None when the message has none) the
        status's header stamp.
        Each topic has its own writer, so it may arrive after the status: waited for."""
        stamp = (status.header.stamp.sec, status.header.stamp.nanosec)

        def same(m):
            h = header(m)
            return h is not None and (h.stamp.sec, h.stamp.nanosec) == stamp

        self.spin_until(lambda: any(same(m) for m in messages), what=f"{what} with the status's stamp")
        return next(m for m in reversed(messages) if same(m))

    def trajectory_for(self, status):
        """The ~/trajectory of the plan `status` answers ([`Peer.message_for`])."""
        return self.message_for(status, self.trajectories, "~/trajectory")

    def close(self):
        self.node.destroy_node()


def make_grid(width, height, resolution, origin, blocked, frame="map"):
    """An OccupancyGrid with the cells for which blocked(x, y) is true set to 100."""
    g = OccupancyGrid()
    g.header.frame_id = frame
    g.info.width, g.info.height, g.info.resolution = width, height, float(resolution)
    g.info.origin.position.x, g.info.origin.position.y = float(origin[0]), float(origin[1])
    g.info.origin.orientation.w = 1.0
    g.data = array.array("b", (100 if blocked(x, y) else 0 for y in range(height) for x in range(width)))
    return g


def cell_value(grid, wx, wy):
    info = grid.info
    cx = math.floor((wx - info.origin.position.x) / info.resolution)
    cy = math.floor((wy - info.origin.position.y) / info.resolution)
    if not (0 <= cx < info.width and 0 <= cy < info.height):
        return None
    return grid.data[cy * info.width + cx]


def assert_path_valid(path, grid, start, goal, frame="map", tol=1e-6):
    """The path starts at start, ends at goal, is in `frame`, has unit quaternions, and every
    segment between consecutive poses stays in free cells (checked every 1/10 of a cell)."""
    assert path.header.frame_id == frame
    poses = path.poses
    assert len(poses) >= 2
    p0, p1 = poses[0].pose.position, poses[-1].pose.position
    assert math.hypot(p0.x - start[0], p0.y - start[1]) < tol, (p0, start)
    assert math.hypot(p1.x - goal[0], p1.y - goal[1]) < tol, (p1, goal)
    step = grid.info.resolution / 10
    for a, b in zip(poses, poses[1:]):
        q = a.pose.orientation
        assert abs(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w - 1) < 1e-9
        pa, pb = a.pose.position, b.pose.position
        n = max(1, math.ceil(math.hypot(pb.x - pa.x, pb.y - pa.y) / step))
        for i in range(n + 1):
            t = i / n
            x, y = pa.x + (pb.x - pa.x) * t, pa.y + (pb.y - pa.y) * t
            v = cell_value(grid, x, y)
            assert v is not None and 0 <= v < 65, f"path point ({x:.3f}, {y:.3f}) is in cell value {v}"


def load_map_server_yaml(path):
    """An OccupancyGrid from a map_server YAML and its PGM image, read here independently of the
    node (map_server's trinary mode: occupied above occupied_thresh, free below free_thresh, else
    unknown; `negate` honoured; image row 0 is the map's top row)."""
    from map_server_files import read_map_server

    meta, width, height, maxval, pixels = read_map_server(path)
    occ_t, free_t, negate = float(meta["occupied_thresh"]), float(meta["free_thresh"]), int(meta.get("negate", 0))

    def value(p):
        occ = p / maxval if negate else (maxval - p) / maxval
        return 100 if occ > occ_t else 0 if occ < free_t else -1

    g = OccupancyGrid()
    g.header.frame_id = "map"
    g.info.width, g.info.height, g.info.resolution = width, height, float(meta["resolution"])
    g.info.origin.position.x, g.info.origin.position.y = float(meta["origin"][0]), float(meta["origin"][1])
    g.info.origin.orientation.w = 1.0
    g.data = array.array("b", (value(pixels[(height - 1 - y) * width + x]) for y in range(height) for x in range(width)))
    return g


def start_pose_line(x, y):
    """The node's log line for a start pose it took (its own frame's coordinates, as sent), by
    which a test knows it was this pose, not an earlier one logged late."""
    return f"start pose ({x:.3f}, {y:.3f})"


def resend_until(publish, taken, spin_until, what, timeout=30.0, every=0.5):
    """Calls `publish` every `every` seconds until `taken()` (a message on a volatile or best-effort
    topic is lost when sent before the node's reader matched it, with no trace), spinning with
    `spin_until(predicate, timeout, what)`; fails after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        publish()
        try:
            return spin_until(taken, every, what)
        except (AssertionError, RuntimeError):
            if time.monotonic() > deadline:
                raise AssertionError(f"the node never took {what} in {timeout} s") from None


def tmpdir(prefix):
    return pathlib.Path(tempfile.mkdtemp(prefix=prefix))


# A map on which planning takes seconds whatever the speed of the cheap stages, for tests that
# cancel, supersede or time out a plan in progress. A serpentine of 2000 x 2000 cells (5 cm):
# walls every 100 columns, open alternately at the top and at the bottom. The far corner FAR lies
# in a chamber whose only entrance is a diagonal gap of two cells in a staircase wall: a vehicle of
# 5 cm radius passes it, but the vehicle mask's margin closes it, so the planner cannot use its
# regions and Block A* guide there and runs the full Directional A* over the whole serpentine.
BIG = 2000
FAR = (1990 * 0.05 + 0.025, 1950 * 0.05 + 0.025)
# Cells (x, y) with x + y = BIG_DIAGONAL form the chamber's wall, except the gap.
BIG_DIAGONAL = 3880
BIG_GAP = (1975, 1976)


def big_blocked(x, y):
    if x % 100 == 50:
        return y < 1900 if (x // 100) % 2 == 0 else y >= 100
    return x + y == BIG_DIAGONAL and x > 1950 and x not in BIG_GAP


def big_grid():
    return make_grid(BIG, BIG, 0.05, (0.0, 0.0), big_blocked)
