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
from conftest import wait_listed
from helpers import ROOT, SHARE, NodeProcess, Peer, load_map_server_yaml, make_grid, tmpdir
from living import MapModel, assert_legal

# The CLI finds nodes through a daemon (conftest.ros2_daemon), as a user's does.
pytestmark = pytest.mark.usefixtures("ros_tools", "ros2_daemon")

BUNDLED_MAP = SHARE / "config" / "tb3_sandbox.yaml"
BUNDLED_RADIUS = 0.15  # config/planner.yaml
START, GOAL = (-2.0, -0.5, 0.0), (1.5, 1.5, 1.57)
# `ros2 param` spins this long for discovery before it waits (up to 5 s) for the node's parameter
# services: room for a busy machine (the daemon has already found the node: `wait_listed`).
SPIN = ("--spin-time", "2")


def ros2(*args, timeout=60, check=True):
    """Runs `ros2 ARGS...`; returns its stdout (and stderr appended)."""
    out = subprocess.run(["ros2", *map(str, args)], capture_output=True, text=True, timeout=timeout,
                         stdin=subprocess.DEVNULL)
    text = out.stdout + out.stderr
    if check:
        assert out.returncode == 0, f"ros2 {' '.join(map(str, args))} exited {out.returncode}:\n{text}"
    return text


def params_file(tmp, robot_radius):
    """config/planner.yaml with another robot_radius, written to `tmp`: a value the node can only
    have from this file."""
    path = tmp / f"params-{robot_radius}.yaml"
    text = (ROOT / "config" / "planner.yaml").read_text()
    assert f"robot_radius: {BUNDLED_RADIUS}" in text
    path.write_text(text.replace(f"robot_radius: {BUNDLED_RADIUS}", f"robot_radius: {robot_radius}"))
    return path


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


@pytest.fixture(scope="class")
def launched():
    """`ros2 launch blockstar_planner planner.launch.py` with every default (the installed
    parameters file and bundled map), and a peer on the default topics; stopped with Ctrl-C, its
    clean exit checked, when the class's tests are done (before any other node of its name)."""
    node = launch(tmpdir("blockstar-ros2-launch-"))
    try:
        peer = Peer("peer_ros2_tools")
        peer.wait_connected()
        yield node, peer
        peer.close()
    finally:
        assert_clean_exit(node)


class TestLaunchedWithDefaults:
    """The ros2 CLI against one node launched with the defaults."""

    def test_plans_legally_on_the_bundled_map(self, launched):
        node, peer = launched
        assert f"loaded map_file {BUNDLED_MAP}" in node.log(), node.log()
        plan_legal(peer, load_map_server_yaml(BUNDLED_MAP), BUNDLED_RADIUS, node_proc=node)

    def test_ros2_node_list(self, launched):
        wait_listed("/planner_node")
        assert "/planner_node" in ros2("node", "list").split()

    def test_ros2_topic_echo_plan_once(self, launched):
        node, peer = launched
        plan_legal(peer, load_map_server_yaml(BUNDLED_MAP), BUNDLED_RADIUS, node_proc=node)
        # /plan is latched (transient local): echo, which matches the publisher's QoS, gets the
        # last one, every pose of it (--full-length: arrays are cut at 128 elements otherwise).
        wait_listed("/planner_node")
        out = ros2("topic", "echo", "/plan", "--once", "--full-length")
        assert "frame_id: map" in out, out
        number = r"(-?[\d.]+(?:e[+-]?\d+)?)"
        points = [(float(x), float(y)) for x, y in re.findall(rf"position:\s+x: {number}\s+y: {number}", out)]
        assert len(points) > 2, out
        # The first and last poses are the start and the goal.
        assert math.hypot(points[0][0] - START[0], points[0][1] - START[1]) < 1e-6, out[:2000]
        assert math.hypot(points[-1][0] - GOAL[0], points[-1][1] - GOAL[1]) < 1e-6, out[-2000:]

    def test_ros2_param_get_and_set(self, launched):
        node, peer = launched
        wait_listed("/planner_node")
        get = lambda: ros2("param", "get", *SPIN, "/planner_node", "robot_radius")  # noqa: E731
        assert "Double value is: 0.15" in get()
        applied = node.count("parameters in use")
        try:
            assert "Set parameter successful" in ros2("param", "set", *SPIN, "/planner_node", "robot_radius", "0.2")
            assert "Double value is: 0.2" in get()
            # A bad value is refused with the reason, and the old value stays.
            out = ros2("param", "set", *SPIN, "/planner_node", "robot_radius", "-1.0", check=False)
            assert "Setting parameter failed" in out and "robot_radius" in out, out
            out = ros2("param", "set", *SPIN, "/planner_node", "robot_radius", "wide", check=False)
            assert "Setting parameter failed" in out, out
            assert "Double value is: 0.2" in get()
            # The new value is planned with: legal for the wider vehicle.
            node.wait_log("parameters in use", applied + 1)
            plan_legal(peer, load_map_server_yaml(BUNDLED_MAP), 0.2, node_proc=node)
        finally:
            ros2("param", "set", *SPIN, "/planner_node", "robot_radius", str(BUNDLED_RADIUS))

    def test_ros2_param_list_describe_and_dump(self, launched):
        """Every parameter is listed (those read at start too, as rclpy and rclcpp nodes list
        theirs), described with what may change and within what, and dumped with the values in
        force."""
        wait_listed("/planner_node")
        names = ros2("param", "list", *SPIN, "/planner_node").split()
        for name in ("robot_radius", "min_turning_radius", "global_frame", "map_topic", "planner_plugins",
                     "use_sim_time"):
            assert name in names, names
        out = ros2("param", "describe", *SPIN, "/planner_node", "robot_radius", "global_frame", "heading_bins")
        radius, rest = out.split("Parameter name: global_frame")
        frame, bins = rest.split("Parameter name: heading_bins")
        assert "Type: double" in radius and "Additional constraints: >= 0 m" in radius, out
        assert "Read only" not in radius, out
        assert "Type: string" in frame and "Read only: true" in frame, out
        assert "Type: integer" in bins and "Additional constraints: one of 8, 16" in bins, out
        import yaml

        # stdout only: a warning on stderr would not be YAML.
        dump = subprocess.run(["ros2", "param", "dump", *SPIN, "/planner_node"], capture_output=True, text=True,
                              timeout=60, stdin=subprocess.DEVNULL)
        assert dump.returncode == 0, dump.stdout + dump.stderr
        dumped = yaml.safe_load(dump.stdout)
        values = dumped["/planner_node"]["ros__parameters"]
        assert values["robot_radius"] == BUNDLED_RADIUS and values["global_frame"] == "map", values
        assert values["use_sim_time"] is False, values

    def test_ros2_action_send_goal(self, launched):
        goal = (
            "{goal: {header: {frame_id: map}, pose: {position: {x: %f, y: %f}, orientation: {z: %f, w: %f}}}, "
            "use_start: true, start: {header: {frame_id: map}, pose: {position: {x: %f, y: %f}, "
            "orientation: {w: 1.0}}}}"
            % (GOAL[0], GOAL[1], math.sin(GOAL[2] / 2), math.cos(GOAL[2] / 2), START[0], START[1])
        )
        action = ("action", "send_goal", "/planner_node/compute_path", "blockstar_planner_msgs/action/ComputePath")
        out = ros2(*action, goal, timeout=90)
        assert "Goal accepted" in out, out
        assert "error_code: 0" in out, out
        assert "Goal finished with status: SUCCEEDED" in out, out
        # A goal off the map ends ABORTED with its code.
        out = ros2(*action, goal.replace("x: %f" % GOAL[0], "x: 500.0", 1), timeout=90)
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
    documented way to start without a map, which must get past the real ros2launch),
    `use_sim_time:=true`, and every topic remapped."""
    tmp = tmpdir("blockstar-launch-args-")
    params = params_file(tmp, 0.1)
    topics = {"map_topic": "/lt/map", "goal_topic": "/lt/goal_pose", "initialpose_topic": "/lt/initialpose",
              "odom_topic": "/lt/odom", "plan_topic": "/lt/plan"}
    node = launch(tmp, f"params_file:={params}", "map_file:=none", "use_sim_time:=true",
                  *(f"{k}:={v}" for k, v in topics.items()))
    try:
        peer = Peer("peer_launch_args", prefix="/lt")
        assert "loaded map_file" not in node.log()
        peer.wait_connected()
        # The parameters file reached the node.
        wait_listed("/planner_node")
        assert "Double value is: 0.1" in ros2("param", "get", *SPIN, "/planner_node", "robot_radius")
        assert "Boolean value is: True" in ros2("param", "get", *SPIN, "/planner_node", "use_sim_time")
        # It is read at start: a change is refused with that reason (not as an unknown name), and
        # setting the value in force is accepted.
        out = ros2("param", "set", *SPIN, "/planner_node", "use_sim_time", "false", check=False)
        assert "read when the node starts" in out, out
        assert "Set parameter successful" in ros2("param", "set", *SPIN, "/planner_node", "use_sim_time", "true")
        # No map yet: a goal is answered NO_MAP.
        assert peer.wait_status(peer.send_goal(1.0, 1.0)).code == S.NO_MAP
        grid = make_grid(50, 40, 0.1, (0.0, 0.0), lambda x, y: x in (0, 49) or y in (0, 39) or (x == 25 and y < 30))
        peer.publish_map(grid, node)
        # The start from the remapped /odom, then from the remapped /initialpose.
        from nav_msgs.msg import Odometry

        odom = Odometry()
        odom.header.frame_id = "map"
        odom.pose.pose.position.x, odom.pose.pose.position.y, odom.pose.pose.orientation.w = 0.6, 0.6, 1.0
        peer.send_odom(odom, node)
        status, path = peer.plan(4.4, 0.6)
        assert status.code == S.SUCCESS, status.message
        assert abs(path.poses[0].pose.position.x - 0.6) < 1e-6
        # use_sim_time took effect: nobody publishes /clock, so simulated time is still zero.
        assert (path.header.stamp.sec, path.header.stamp.nanosec) == (0, 0), path.header.stamp
        assert_legal(path, MapModel(grid), 0.1)
        plan_legal(peer, grid, 0.1, start=(0.6, 3.4, 0.0), goal=(4.4, 3.4, 0.0), node_proc=node)
        peer.close()
    finally:
        assert_clean_exit(node)


def test_launch_with_a_bad_parameters_file_names_the_parameter():
    tmp = tmpdir("blockstar-launch-bad-")
    bad = params_file(tmp, -1.0)
    node = launch(tmp, f"params_file:={bad}", ready=False)
    try:
        # ros2 launch reports the node's death and ends, its only process having ended.
        node.proc.wait(timeout=60)
    finally:
        node.stop()
    log = node.log()
    assert "robot_radius" in log and "process has died" in log, log
    assert "ready" not in log, log


def test_a_parameters_file_rcl_cannot_parse_is_refused_in_one_line():
    """`ros2 run` with a `--params-file` rcl's YAML parser refuses (a value with a stray escaped
    newline): the node exits with status 1 and one line naming the cause, no panic or backtrace
    (r2r panics where rcl_init fails; the node catches it)."""
    import subprocess

    tmp = tmpdir("blockstar-params-unparsable-")
    bad = tmp / "malformed.yaml"
    bad.write_text("/**:\n  ros__parameters:\n    max_map_cells: 10\\n    map_file: x\n")
    done = subprocess.run(["ros2", "run", "blockstar_planner", "planner_node", "--ros-args", "--params-file", str(bad)],
                          capture_output=True, text=True, timeout=60)
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "planner_node: cannot initialise ROS (rcl_init" in out and "params file" in out, out
    assert "panicked" not in out and "backtrace" not in out.lower(), out


def write_map_server_map(directory, width, height, resolution, blocked):
    """A map_server YAML and binary PGM (0 = occupied, 254 = free) in `directory`."""
    rows = bytes(0 if blocked(x, height - 1 - r) else 254 for r in range(height) for x in range(width))
    (directory / "room.pgm").write_bytes(b"P5\n%d %d\n255\n" % (width, height) + rows)
    yaml = directory / "room.yaml"
    yaml.write_text(f"image: room.pgm\nresolution: {resolution}\norigin: [0.0, 0.0, 0.0]\nnegate: 0\n"
                    "occupied_thresh: 0.65\nfree_thresh: 0.196\n")
    return yaml


def test_launch_with_a_map_file():
    """`map_file:=FILE`: the node plans on that map, read independently here to check the plan;
    the map loaded at configure has its Directional A* tables filled in the background."""
    tmp = tmpdir("blockstar-launch-map-")
    room = write_map_server_map(tmp, 80, 60, 0.05, lambda x, y: x in (0, 79) or y in (0, 59) or (x == 40 and y > 20))
    node = launch(tmp, f"map_file:={room}")
    try:
        assert f"loaded map_file {room}" in node.log(), node.log()
        peer = Peer("peer_launch_map")
        peer.wait_connected()
        grid = load_map_server_yaml(room)
        plan_legal(peer, grid, BUNDLED_RADIUS, start=(0.8, 2.2, 0.0), goal=(3.2, 2.2, 0.0), node_proc=node)
        peer.close()
        node.wait_log("GridBased: Directional A* tables filled", 1, timeout=300.0)
    finally:
        assert_clean_exit(node)


def test_ros2_run():
    """`ros2 run blockstar_planner planner_node` with a parameters file and a map, topics remapped."""
    tmp = tmpdir("blockstar-ros2-run-")
    params = params_file(tmp, 0.12)
    cmd = ["ros2", "run", "blockstar_planner", "planner_node", "--ros-args", "--params-file", params,
           "-p", f"map_file:={BUNDLED_MAP}", "-r", "/goal_pose:=/run/goal_pose", "-r", "/initialpose:=/run/initialpose",
           "-r", "/plan:=/run/plan", "-r", "/map:=/run/map", "-r", "/odom:=/run/odom"]
    node = NodeProcess(cmd, tmp / "run.log")
    try:
        peer = Peer("peer_ros2_run", prefix="/run")
        peer.wait_connected()
        wait_listed("/planner_node")
        assert "Double value is: 0.12" in ros2("param", "get", *SPIN, "/planner_node", "robot_radius")
        plan_legal(peer, load_map_server_yaml(BUNDLED_MAP), 0.12, node_proc=node)
        peer.close()
    finally:
        assert_clean_exit(node, launched=False)


def lifecycle(verb, *args):
    """`ros2 lifecycle VERB ARGS...`."""
    return ros2("lifecycle", verb, *args)


def test_namespaced_launch_under_ros2_lifecycle_and_nav2_action():
    """As in a Nav2 bringup: `namespace:=robot1 autostart:=false`, brought up with the real
    `ros2 lifecycle set`, then Nav2's compute_path_to_pose called with the real `ros2 action
    send_goal` under the namespace (the robot's pose from a TF broadcaster)."""
    from conftest import require_interfaces

    require_interfaces()
    from test_nav2 import MAP_TO_ODOM, Nav2Peer

    tmp = tmpdir("blockstar-launch-lifecycle-")
    # The peer broadcasts the robot's pose only while it spins: room for a busy machine.
    params = tmp / "params.yaml"
    params.write_text((ROOT / "config" / "planner.yaml").read_text().replace("transform_tolerance: 0.1",
                                                                             "transform_tolerance: 0.5"))
    node = launch(tmp, "namespace:=robot1", "autostart:=false", f"params_file:={params}")
    name = "/robot1/planner_node"
    try:
        wait_listed(name)
        assert "unconfigured [1]" in lifecycle("get", name)
        listed = lifecycle("list", name)
        assert "configure [1]" in listed and "shutdown [5]" in listed, listed
        for transition, state in (("configure", "inactive [2]"), ("activate", "active [3]")):
            assert "Transitioning successful" in lifecycle("set", name, transition)
            assert state in lifecycle("get", name)
        assert "/robot1/compute_path_to_pose" in ros2("node", "info", name)
        peer = Nav2Peer("robot1")
        peer.start_tf((START[0] - MAP_TO_ODOM[0], START[1] - MAP_TO_ODOM[1], 0.0))
        goal = ("{goal: {header: {frame_id: map}, pose: {position: {x: %f, y: %f}, orientation: {w: 1.0}}}}"
                % GOAL[:2])

        def send_goal():
            """`ros2 action send_goal`, run while the peer keeps broadcasting the robot's pose."""
            proc = subprocess.Popen(["ros2", "action", "send_goal", "/robot1/compute_path_to_pose",
                                     "nav2_msgs/action/ComputePathToPose", goal], stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL)
            peer.spin_until(lambda: proc.poll() is not None, 60, "ros2 action send_goal")
            return proc.stdout.read()

        out = send_goal()
        assert "SUCCEEDED" in out and "error_code: 0" in out, out
        assert "Transitioning successful" in lifecycle("set", name, "deactivate")
        out = send_goal()
        assert "ABORTED" in out and "NOT_ACTIVE" in out, out
        peer.close()
    finally:
        assert_clean_exit(node)
