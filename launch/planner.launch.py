"""Starts planner_node with config/planner.yaml.

    ros2 launch blockstar_planner planner.launch.py [params_file:=...] [map_file:=...]
        [map_topic:=/map] [goal_topic:=/goal_pose] [initialpose_topic:=/initialpose]
        [odom_topic:=/odom] [plan_topic:=/plan]

The command line of the node is built by planner_node_command(), which the test suite also
calls (tests/ros/test_launch.py), so the tests start the node exactly as this file does. This
module imports `launch` only inside generate_launch_description(), so the tests can import it on
a machine without the `launch` package.
"""

import os

PACKAGE = "blockstar_planner"
EXECUTABLE = "planner_node"
NODE_NAME = "planner_node"

# Launch argument name -> (default, the node's topic it remaps, description).
TOPIC_ARGUMENTS = {
    "map_topic": ("/map", "/map", "occupancy grid input (transient local)"),
    "goal_topic": ("/goal_pose", "/goal_pose", "goal input (geometry_msgs/PoseStamped)"),
    "initialpose_topic": ("/initialpose", "/initialpose", "start pose input"),
    "odom_topic": ("/odom", "/odom", "start pose input (nav_msgs/Odometry)"),
    "plan_topic": ("/plan", "/plan", "nav_msgs/Path output"),
}


def default_arguments(share_dir):
    """Launch argument name -> default value, given the package's share directory."""
    args = {name: default for name, (default, _, _) in TOPIC_ARGUMENTS.items()}
    args["params_file"] = os.path.join(share_dir, "config", "planner.yaml")
    args["map_file"] = os.path.join(share_dir, "config", "tb3_sandbox.yaml")
    return args


def planner_node_command(prefix_dir, share_dir, overrides=None):
    """The node's full command line (executable first) for the given install prefix and share
    directory; overrides replace launch argument values (see default_arguments)."""
    args = default_arguments(share_dir)
    unknown = set(overrides or {}) - set(args)
    if unknown:
        raise ValueError(f"unknown launch arguments: {sorted(unknown)}")
    args.update(overrides or {})
    cmd = [
        os.path.join(prefix_dir, "lib", PACKAGE, EXECUTABLE),
        "--ros-args",
        "-r",
        f"__node:={NODE_NAME}",
        "--params-file",
        args["params_file"],
    ]
    if args["map_file"]:
        cmd += ["-p", f"map_file:={args['map_file']}"]
    for name, (_, topic, _) in TOPIC_ARGUMENTS.items():
        if args[name] != topic:
            cmd += ["-r", f"{topic}:={args[name]}"]
    return cmd


def generate_launch_description():
    from ament_index_python.packages import get_package_prefix, get_package_share_directory
    from launch import LaunchDescription
    from launch.actions import DeclareLaunchArgument, ExecuteProcess, OpaqueFunction
    from launch.substitutions import LaunchConfiguration

    share = get_package_share_directory(PACKAGE)
    prefix = get_package_prefix(PACKAGE)
    defaults = default_arguments(share)
    descriptions = {name: desc for name, (_, _, desc) in TOPIC_ARGUMENTS.items()}
    descriptions["params_file"] = "parameters file of planner_node"
    descriptions["map_file"] = "map_server YAML loaded at start-up ('' for none: wait for /map)"

    def start_node(context):
        values = {name: LaunchConfiguration(name).perform(context) for name in defaults}
        return [ExecuteProcess(cmd=planner_node_command(prefix, share, values), name=NODE_NAME, output="screen")]

    actions = [
        DeclareLaunchArgument(name, default_value=value, description=descriptions[name])
        for name, value in defaults.items()
    ]
    return LaunchDescription(actions + [OpaqueFunction(function=start_node)])
