"""Starts planner_node exactly as launch/planner.launch.py does (same executable at its install
path, same --ros-args, parameters file, map_file and remappings, built by the launch file's own
planner_node_command), and checks it answers a goal on the bundled map. `ros2 launch` itself is
not available with the wheel-based ROS, so the launch file's command builder is the single
source of truth both use."""

import importlib.util
import math
import os

import pytest

from blockstar_planner_msgs.msg import PlannerStatus as S

from helpers import NODE_BIN, ROOT, NodeProcess, Peer, make_grid, tmpdir

spec = importlib.util.spec_from_file_location("planner_launch", ROOT / "launch" / "planner.launch.py")
launch_file = importlib.util.module_from_spec(spec)
spec.loader.exec_module(launch_file)


def install_layout(tmp):
    """An install prefix like colcon's: <prefix>/lib/blockstar_planner/planner_node, and the
    package's share directory (the repository holds config/ and launch/ as installed)."""
    prefix = tmp / "install"
    lib = prefix / "lib" / launch_file.PACKAGE
    lib.mkdir(parents=True)
    (lib / launch_file.EXECUTABLE).symlink_to(NODE_BIN)
    return prefix, ROOT


def test_command_has_the_launch_files_arguments():
    cmd = launch_file.planner_node_command("/p", "/s", {"goal_topic": "/g"})
    assert cmd[0] == "/p/lib/blockstar_planner/planner_node"
    assert cmd[1] == "--ros-args"
    assert cmd[cmd.index("--params-file") + 1] == "/s/config/planner.yaml"
    assert "map_file:=/s/config/tb3_sandbox.yaml" in cmd
    assert "/goal_pose:=/g" in cmd
    with pytest.raises(ValueError):
        launch_file.planner_node_command("/p", "/s", {"no_such_argument": "x"})


def test_node_started_as_the_launch_file_does_answers_on_the_bundled_map():
    tmp = tmpdir("blockstar-launch-")
    prefix, share = install_layout(tmp)
    # A remapped goal topic checks that the launch file's remappings reach the node.
    cmd = launch_file.planner_node_command(str(prefix), str(share), {"goal_topic": "/launch_test/goal"})
    node = NodeProcess(cmd, tmp / "node.log")
    peer = Peer("peer_launch", goal_topic="/launch_test/goal", node_name=launch_file.NODE_NAME)
    try:
        assert "loaded map_file" in node.log(), node.log()
        peer.wait_connected()
        # tb3_sandbox: free space around the robot's usual start and a goal across the arena.
        peer.set_start(-2.0, -0.5, 0.0, node_proc=node)
        status, path = peer.plan(0.5, 1.8)
        assert status.code == S.SUCCESS, status.message
        p0, p1 = path.poses[0].pose.position, path.poses[-1].pose.position
        assert math.hypot(p0.x + 2.0, p0.y + 0.5) < 1e-6 and math.hypot(p1.x - 0.5, p1.y - 1.8) < 1e-6
        # A map on /map replaces the one from map_file: a goal only inside the new map works.
        new_map = make_grid(40, 40, 0.1, (50.0, 50.0), lambda x, y: False)
        peer.publish_map(new_map, node)
        status = peer.wait_status(peer.send_goal(0.5, 1.8))
        assert status.code == S.START_OUTSIDE_MAP, status.message
        peer.set_start(50.5, 50.5, 0.0, node_proc=node)
        status, path = peer.plan(53.0, 53.0)
        assert status.code == S.SUCCESS, status.message
    finally:
        peer.close()
        node.stop()


def test_parameters_file_values_reach_the_node():
    # A parameters file with an out-of-range value must stop the node with a message naming it:
    # proof that the file given with --params-file is read.
    tmp = tmpdir("blockstar-params-")
    prefix, share = install_layout(tmp)
    bad = tmp / "bad.yaml"
    bad.write_text((ROOT / "config" / "planner.yaml").read_text().replace("robot_radius: 0.15", "robot_radius: -1.0"))
    cmd = launch_file.planner_node_command(str(prefix), str(share), {"params_file": str(bad)})
    import subprocess

    from helpers import node_env

    out = subprocess.run(cmd, env=node_env(), capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    assert "robot_radius" in out.stderr + out.stdout


def test_generate_launch_description_runs_the_same_command(monkeypatch):
    """generate_launch_description() with stand-ins for the `launch` package (not on PyPI) and the
    ament index: its process action must run planner_node_command() with the launch arguments'
    values, and every launch argument must be declared with its default."""
    import sys
    import types

    declared, executed = {}, []

    class LaunchDescription(list):
        pass

    class DeclareLaunchArgument:
        def __init__(self, name, default_value=None, description=""):
            declared[name] = default_value

    class ExecuteProcess:
        def __init__(self, cmd, name=None, output=None):
            executed.append(cmd)

    class OpaqueFunction:
        def __init__(self, function):
            self.function = function

    class LaunchConfiguration:
        def __init__(self, name):
            self.name = name

        def perform(self, context):
            return context[self.name]

    fake = {
        "launch": types.SimpleNamespace(LaunchDescription=LaunchDescription),
        "launch.actions": types.SimpleNamespace(
            DeclareLaunchArgument=DeclareLaunchArgument, ExecuteProcess=ExecuteProcess, OpaqueFunction=OpaqueFunction
        ),
        "launch.substitutions": types.SimpleNamespace(LaunchConfiguration=LaunchConfiguration),
        "ament_index_python.packages": types.SimpleNamespace(
            get_package_share_directory=lambda pkg: f"/opt/ws/install/{pkg}/share/{pkg}",
            get_package_prefix=lambda pkg: f"/opt/ws/install/{pkg}",
        ),
    }
    for name, module in fake.items():
        monkeypatch.setitem(sys.modules, name, module)
    ld = launch_file.generate_launch_description()
    share = "/opt/ws/install/blockstar_planner/share/blockstar_planner"
    assert declared == launch_file.default_arguments(share)
    (opaque,) = [a for a in ld if isinstance(a, OpaqueFunction)]
    context = dict(declared, map_topic="/other_map")
    opaque.function(context)
    assert executed == [
        launch_file.planner_node_command("/opt/ws/install/blockstar_planner", share, {"map_topic": "/other_map"})
    ]
    assert "/map:=/other_map" in executed[0]
