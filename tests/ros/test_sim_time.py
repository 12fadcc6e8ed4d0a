"""planner_node with `use_sim_time` (a simulator or a looping bag drives /clock): its "now" is the
simulated time, so TF stamped in simulated time is fresh, and what it publishes carries that time.

r2r 0.9.7 drives a node's clock from /clock only when its build script printed the cfg
`r2r__rosgraph_msgs__msg__Clock`, which it prints only when it generates its bindings, not when it
reuses bindings cached by an earlier build in the same environment. A workspace built twice with
environments that alternate (a shell with the workspace sourced, then one without) got a node that
silently ran on the wall clock and answered every goal TF_ERROR ("... is 1795882918.42 s old").
The node now keeps simulated time itself (src/ros/clock.rs); this test holds it to that."""

import time

from blockstar_planner_msgs.msg import PlannerStatus as S
from geometry_msgs.msg import TransformStamped
from rclpy.qos import QoSProfile
from rosgraph_msgs.msg import Clock
from tf2_msgs.msg import TFMessage

from helpers import Peer, assert_path_valid, make_grid, start_node, tmpdir

RES = 0.1
W, H = 40, 30
GRID = make_grid(W, H, RES, (0.0, 0.0), lambda x, y: x in (0, W - 1) or y in (0, H - 1))
START = (0.55, 0.55)
GOAL = (3.25, 2.35)
# A base frame no other test publishes: /tf is shared by the whole test session.
BASE = "base_sim_time"
# Simulated time starts here (far from the wall clock's 1.8e9 s).
SIM_START = 1000.0


class SimPeer(Peer):
    """A Peer that also plays the simulator: /clock and TF map -> BASE, both in simulated time."""

    def __init__(self):
        super().__init__("peer_sim_time", prefix="/sim_time", node_name="planner_sim_time")
        self.clock_pub = self.node.create_publisher(Clock, "/clock", QoSProfile(depth=10))
        self.tf_pub = self.node.create_publisher(TFMessage, "/tf", QoSProfile(depth=100))
        self.offset = SIM_START - time.monotonic()
        self.last = 0.0

    def sim_now(self):
        return time.monotonic() + self.offset

    def tick(self):
        """Clock and the robot's transform at 50 Hz, stamped with the simulated time."""
        if time.monotonic() - self.last < 0.02:
            return
        self.last = time.monotonic()
        t = self.sim_now()
        sec, nanosec = int(t), int((t - int(t)) * 1e9)
        c = Clock()
        c.clock.sec, c.clock.nanosec = sec, nanosec
        self.clock_pub.publish(c)
        tf = TransformStamped()
        tf.header.frame_id, tf.child_frame_id = "map", BASE
        tf.header.stamp.sec, tf.header.stamp.nanosec = sec, nanosec
        tf.transform.translation.x, tf.transform.translation.y = START
        tf.transform.rotation.w = 1.0
        self.tf_pub.publish(TFMessage(transforms=[tf]))

    def spin_until(self, predicate, timeout=20.0, what="condition"):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            self.tick()
            if predicate():
                return
            super().spin(0.01)
        raise AssertionError(f"timed out waiting for {what}")

    def spin(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.tick()
            super().spin(0.01)


def plan_once_tf_is_in(peer, timeout=20.0):
    """Plans to GOAL from the robot's pose in TF; while the node has no transform yet (TF_ERROR:
    /tf is a volatile topic its reader takes only once discovered, and after a jump back the node
    drops what it held), spins and asks again, for at most `timeout` seconds. A node that is not on
    simulated time answers TF_ERROR every time (its transforms all look decades old), and so still
    fails here."""
    deadline = time.monotonic() + timeout
    while True:
        status, path = peer.plan(*GOAL)
        if status.code != S.TF_ERROR or time.monotonic() > deadline:
            return status, path
        peer.spin(0.2)


def test_with_use_sim_time_the_node_runs_on_the_clock_topic():
    tmp = tmpdir("blockstar-sim-time-")
    node = start_node(tmp, "planner_sim_time",
                      {"robot_radius": 0.15, "use_sim_time": True, "robot_base_frame": BASE,
                       "transform_tolerance": 0.5},
                      remap_prefix="/sim_time")
    peer = SimPeer()
    try:
        peer.wait_connected()
        peer.spin_until(lambda: peer.clock_pub.get_subscription_count() > 0 and peer.tf_pub.get_subscription_count() > 0,
                        what="the node's /clock and /tf subscriptions")
        peer.publish_map(GRID, node)
        # The robot's pose from TF, stamped in simulated time: fresh on the node's clock.
        status, path = plan_once_tf_is_in(peer)
        assert status.code == S.SUCCESS, f"{status.code_name}: {status.message}"
        assert_path_valid(path, GRID, START, GOAL)
        # What the node publishes is stamped in simulated time, not the wall clock's.
        for what, stamp in (("status", status.header.stamp), ("plan", path.header.stamp)):
            t = stamp.sec + stamp.nanosec * 1e-9
            assert SIM_START <= t <= peer.sim_now() + 1.0, f"{what} stamped {t:.3f}, simulated time {peer.sim_now():.3f}"
        # The bag loops: simulated time jumps back 30 s. The node notes the jump (transforms
        # older than the new time would be taken as fresh otherwise), and plans on the TF
        # published after it.
        jumps = node.count("ROS time jumped back")
        peer.offset -= 30.0
        peer.spin_until(lambda: node.count("ROS time jumped back") > jumps, what="the node to note the jump back")
        status, path = plan_once_tf_is_in(peer)
        assert status.code == S.SUCCESS, f"{status.code_name}: {status.message}"
        t = status.header.stamp.sec + status.header.stamp.nanosec * 1e-9
        assert t <= peer.sim_now() + 1.0, f"status stamped {t:.3f} after the jump to {peer.sim_now():.3f}"
        assert node.alive()
    finally:
        peer.close()
        node.stop()
