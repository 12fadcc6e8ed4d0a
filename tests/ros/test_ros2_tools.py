"""The node as a ROS 2 user meets it, through the real tools: `ros2 launch` and `ros2 run` from the
colcon install of scripts/build_ws.sh, and the `ros2` CLI (node, topic, param, action, interface)
against it. Every launch argument is exercised; every start is stopped with Ctrl-C (SIGINT to the
process group) and must exit cleanly. Plans are checked legal on the map they were made for, read
independently from the map_server files (helpers.load_map_server_yaml)."""

import math
import re
import subprocess

import pytest

from blockstar_planner_msgs.msg import PlannerStatus as S
from helpers import ROOT, SHARE, NodeProcess, Peer, load_map_server_yaml, make_grid, tmpdir
from living import MapModel, assert_legal

pytestmark = pytest.mark.usefixtures("ros_tools")

BUNDLED_MAP = SHARE / "config" / "tb3_sandbox.yaml"
BUNDLED_RADIUS = 0.15  # config/planner.yaml
START, GOAL = (-2.0, -0.5, 0.0), (1.5, 1.5, 1.57)
# The CLI's own discovery, long enough to find the node every time (no daemon left behind).
NO_DAEMON = ("--no-daemon", "--spin-time", "3")


def ros2(*args, timeout=60, check=True):
    """Runs `ros2 ARGS...`; returns its stdout (and stderr appended)."""
    out = subprocess.run(["ros2", *map(str, args)], capture_output=True, text=True, timeout=timeout,
                         stdin=subprocess.DEVNULL)
    text = out.stdout + out.stderr
    if check:
        assert out.returncode == 0, f"ros2 {' '.join(map(str, args))} exited {out.returncode}:\n{text}"
    return text


def launch(tmp, *arguments, ready=True):
    """`ros2 launch blockstar_planner planner.launch.py ARGUMENTS...` as a user types it."""
    cmd = ["ros2", "launch", "blockstar_planner", "planner.launch.py", *arguments]
    return NodeProcess(cmd, tmp / "launch.log", ready=ready)


def assert_clean_exit(proc, launched=True):
    """Stops `proc` with Ctrl-C: exit code 0, the node shut down on the signal, and (under ros2
    launch) launch saw its process finish cleanly."""
    code = proc.stop()
    log = proc.log()
    assert code == 0, f"exit code {code}:\n{log}"
    assert "interrupted, shutting down" in log, log
    if launched:
        assert re.search(r"\[planner_node-1\]: process has finished cleanly", log), log


def plan_legal(peer, grid, radius, start=START, goal=GOAL, node_proc=None):
    peer.set_start(*start, node_proc=node_proc)
    status, path = peer.plan(*goal)
    assert status.code == S.SUCCESS, status.message
    p0, p1 = path.poses[0].pose.position, path.poses[-1].pose.position
    assert math.hypot(p0.x - start[0], p0.y - start[1]) < 1e-6 and math.hypot(p1.x - goal[0], p1.y - goal[1]) < 1e-6
    assert_legal(path, MapModel(grid), radius)
    return path


@pytest.fixture(scope="module")
def launched():
    """`ros2 launch blockstar_planner planner.launch.py` with every default (the installed
    parameters file and bundled map), and a peer on the default topics."""
    tmp = tmpdir("blockstar-ros2-launch-")
    node = launch(tmp)
    peer = Peer("peer_ros2_tools")
    try:
        peer.wait_connected()
        yield node, peer
    finally:
        peer.close()
        node.stop()


def test_launch_with_defaults_plans_legally_on_the_bundled_map(launched):
    node, peer = launched
    assert f"loaded map_file {BUNDLED_MAP}" in node.log(), node.log()
    plan_legal(peer, load_map_server_yaml(BUNDLED_MAP), BUNDLED_RADIUS, node_proc=node)


def test_ros2_node_list(launched):
    assert "/planner_node" in ros2("node", "list", *NO_DAEMON).split()


def test_ros2_topic_echo_plan_once(launched):
    node, peer = launched
    plan_legal(peer, load_map_server_yaml(BUNDLED_MAP), BUNDLED_RADIUS, node_proc=node)
    # /plan is latched (transient local): echo, which matches the publisher's QoS, gets the last one.
    out = ros2("topic", "echo", "/plan", "--once", *NO_DAEMON, timeout=60)
    assert "frame_id: map" in out, out
    xs = [float(v) for v in re.findall(r"\n\s+x: (-?[\d.e+-]+)", out)]
    ys = [float(v) for v in re.findall(r"\n\s+y: (-?[\d.e+-]+)", out)]
    assert any(math.hypot(x - START[0], y - START[1]) < 1e-6 for x, y in zip(xs, ys)), out[:2000]
    assert any(math.hypot(x - GOAL[0], y - GOAL[1]) < 1e-6 for x, y in zip(xs, ys)), out[-2000:]


def test_ros2_param_get_and_set(launched):
    node, peer = launched
    assert "Double value is: 0.15" in ros2("param", "get", *NO_DAEMON, "/planner_node", "robot_radius")
    applied = node.count("parameters in use")
    try:
        assert "Set parameter successful" in ros2("param", "set", *NO_DAEMON, "/planner_node", "robot_radius", "0.2")
        assert "Double value is: 0.2" in ros2("param", "get", *NO_DAEMON, "/planner_node", "robot_radius")
        # A bad value is refused with the reason, and the old value stays.
        out = ros2("param", "set", *NO_DAEMON, "/planner_node", "robot_radius", "-1.0", check=False)
        assert "Setting parameter failed" in out and "robot_radius" in out, out
        assert "Double value is: 0.2" in ros2("param", "get", *NO_DAEMON, "/planner_node", "robot_radius")
        out = ros2("param", "set", *NO_DAEMON, "/planner_node", "robot_radius", "wide", check=False)
        assert "Setting parameter failed" in out, out
        # The new value is planned with: legal for the wider vehicle.
        node.wait_log("parameters in use", applied + 1)
        plan_legal(peer, load_map_server_yaml(BUNDLED_MAP), 0.2, node_proc=node)
    finally:
        ros2("param", "set", *NO_DAEMON, "/planner_node", "robot_radius", str(BUNDLED_RADIUS))


def test_ros2_action_send_goal(launched):
    goal = (
        "{goal: {header: {frame_id: map}, pose: {position: {x: %f, y: %f}, orientation: {z: %f, w: %f}}}, "
        "use_start: true, start: {header: {frame_id: map}, pose: {position: {x: %f, y: %f}, orientation: {w: 1.0}}}}"
        % (GOAL[0], GOAL[1], math.sin(GOAL[2] / 2), math.cos(GOAL[2] / 2), START[0], START[1])
    )
    out = ros2("action", "send_goal", "/planner_node/compute_path", "blockstar_planner_msgs/action/ComputePath", goal,
               timeout=90)
    assert "Goal accepted" in out, out
    assert "error_code: 0" in out, out
    assert "Goal finished with status: SUCCEEDED" in out, out
    # An unreachable goal (off the map) ends ABORTED with its code.
    bad = goal.replace("x: %f" % GOAL[0], "x: 500.0", 1)
    out = ros2("action", "send_goal", "/planner_node/compute_path", "blockstar_planner_msgs/action/ComputePath", bad,
               timeout=90)
    assert f"error_code: {S.GOAL_OUTSIDE_MAP}" in out and "ABORTED" in out, out


def test_ros2_interface_show_trajectory():
    out = ros2("interface", "show", "blockstar_planner_msgs/msg/Trajectory")
    source = (ROOT / "msg" / "msg" / "Trajectory.msg").read_text()
    fields = [line for line in source.splitlines() if line.strip() and not line.startswith("#")]
    assert fields, source
    for line in fields:
        assert line in out, f"{line!r} missing from:\n{out}"
    # Nested types are expanded, as the real tool does: the segment's fields appear indented.
    assert "\tfloat64 length" in out or "  float64 length" in out, out


def test_launch_every_argument_and_no_map():
    """Every launch argument at once: a parameters file of the test's, `map_file:=none` (the
    documented way to start without a map, which must get past the real ros2launch), and every
    topic remapped."""
    tmp = tmpdir("blockstar-launch-args-")
    params = tmp / "params.yaml"
    params.write_text((ROOT / "config" / "planner.yaml").read_text().replace("robot_radius: 0.15", "robot_radius: 0.1"))
    topics = {"map_topic": "/lt/map", "goal_topic": "/lt/goal_pose", "initialpose_topic": "/lt/initialpose",
              "odom_topic": "/lt/odom", "plan_topic": "/lt/plan"}
    node = launch(tmp, f"params_file:={params}", "map_file:=none", *(f"{k}:={v}" for k, v in topics.items()))
    peer = Peer("peer_launch_args", prefix="/lt")
    try:
        assert "loaded map_file" not in node.log()
        peer.wait_connected()
        # The parameters file reached the node.
        assert "Double value is: 0.1" in ros2("param", "get", *NO_DAEMON, "/planner_node", "robot_radius")
        # No map yet: a goal is answered NO_MAP.
        assert peer.wait_status(peer.send_goal(1.0, 1.0)).code == S.NO_MAP
        grid = make_grid(50, 40, 0.1, (0.0, 0.0), lambda x, y: x in (0, 49) or y in (0, 39) or (x == 25 and y < 30))
        peer.publish_map(grid, node)
        # The start from the remapped /odom, then from the remapped /initialpose.
        from nav_msgs.msg import Odometry

        odom = Odometry()
        odom.header.frame_id = "map"
        odom.pose.pose.position.x, odom.pose.pose.position.y, odom.pose.pose.orientation.w = 0.6, 0.6, 1.0
        before = node.count("start pose")
        peer.odom_pub.publish(odom)
        peer.spin_until(lambda: node.count("start pose") > before, what="the start from the remapped odom topic")
        status, path = peer.plan(4.4, 0.6)
        assert status.code == S.SUCCESS, status.message
        assert abs(path.poses[0].pose.position.x - 0.6) < 1e-6
        assert_legal(path, MapModel(grid), 0.1)
        plan_legal(peer, grid, 0.1, start=(0.6, 3.4, 0.0), goal=(4.4, 3.4, 0.0), node_proc=node)
    finally:
        peer.close()
        assert_clean_exit(node)


def test_launch_with_a_bad_parameters_file_names_the_parameter():
    tmp = tmpdir("blockstar-launch-bad-")
    bad = tmp / "bad.yaml"
    bad.write_text((ROOT / "config" / "planner.yaml").read_text().replace("robot_radius: 0.15", "robot_radius: -1.0"))
    node = launch(tmp, f"params_file:={bad}", ready=False)
    try:
        node.wait_log("process has died", 1, timeout=60)
    except AssertionError:
        # ros2 launch ends once its only process has ended: the message must be there then.
        pass
    node.proc.wait(timeout=30)
    log = node.log()
    assert "robot_radius" in log and "process has died" in log, log
    assert "ready" not in log, log


def test_ros2_run():
    """`ros2 run blockstar_planner planner_node` with the installed parameters file and map."""
    tmp = tmpdir("blockstar-ros2-run-")
    cmd = ["ros2", "run", "blockstar_planner", "planner_node", "--ros-args", "-r", "__node:=run_node",
           "--params-file", SHARE / "config" / "planner.yaml", "-p", f"map_file:={BUNDLED_MAP}",
           "-r", "/goal_pose:=/run/goal_pose", "-r", "/initialpose:=/run/initialpose", "-r", "/plan:=/run/plan",
           "-r", "/map:=/run/map", "-r", "/odom:=/run/odom"]
    node = NodeProcess(cmd, tmp / "run.log")
    peer = Peer("peer_ros2_run", prefix="/run", node_name="run_node")
    try:
        peer.wait_connected()
        # The parameters file is keyed `planner_node`, so under another name its values do not
        # apply and the node runs with the defaults, which equal the file's.
        plan_legal(peer, load_map_server_yaml(BUNDLED_MAP), BUNDLED_RADIUS, node_proc=node)
    finally:
        peer.close()
        assert_clean_exit(node, launched=False)


def test_launch_stops_cleanly_on_ctrl_c():
    tmp = tmpdir("blockstar-launch-stop-")
    node = launch(tmp)
    assert_clean_exit(node)
