"""Starts planner_node with the package's parameters file and bundled map.

    ros2 launch blockstar_planner planner.launch.py [params_file:=FILE] [map_file:=FILE|none]
        [namespace:=NS] [map_topic:=TOPIC] [autostart:=true|false] [use_sim_time:=true|false] [goal_topic:=goal_pose]
        [initialpose_topic:=initialpose] [odom_topic:=odom] [plan_topic:=plan]

map_file: a map_server YAML (or Moving AI .map) loaded at start-up, by default the bundled
config/tb3_sandbox.yaml; `map_file:=none` starts without one and waits for the map topic (from
another launch file an empty value does the same). namespace: the node's namespace (its topics,
actions and services are relative to it, as planner_server's are). map_topic sets the parameter of
that name (its updates come on <map_topic>_updates; `map_topic:=/global_costmap/costmap` plans on
Nav2's global costmap); empty keeps the parameters file's value. autostart: false waits for a
lifecycle manager; empty keeps the file's value. use_sim_time: true runs the node on /clock (a
simulator, a bag played with --clock); empty keeps the file's value. The other topic arguments remap the node's
topics (relative names resolve in the namespace).
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

PACKAGE = "blockstar_planner"
NODE_NAME = "planner_node"
# The value of map_file that means "no map file". ros2launch refuses an empty value on its
# command line (`map_file:=` is malformed there), so a word is needed.
NO_MAP = "none"

# Launch argument -> (the node's topic it remaps, description).
TOPIC_ARGUMENTS = {
    "goal_topic": ("goal_pose", "goal input (geometry_msgs/PoseStamped)"),
    "initialpose_topic": ("initialpose", "start pose input (geometry_msgs/PoseWithCovarianceStamped)"),
    "odom_topic": ("odom", "start pose input (nav_msgs/Odometry)"),
    "plan_topic": ("plan", "path output (nav_msgs/Path)"),
}
# Launch arguments that set a parameter when not empty (else the parameters file decides).
PARAMETER_ARGUMENTS = {
    "map_topic": "occupancy grid topic (its updates on <map_topic>_updates), e.g. /global_costmap/costmap",
    "autostart": "configure and activate at start-up (false: wait for a lifecycle manager)",
    "use_sim_time": "run on simulated time from /clock (a simulator or a bag), as every Nav2 node takes it",
}
# Of those, the booleans.
BOOLEAN_ARGUMENTS = ("autostart", "use_sim_time")


def _start_node(context):
    names = list(TOPIC_ARGUMENTS) + list(PARAMETER_ARGUMENTS) + ["map_file", "namespace"]
    value = {name: LaunchConfiguration(name).perform(context).strip() for name in names}
    overrides = {"map_file": "" if value["map_file"].lower() in ("", NO_MAP) else value["map_file"]}
    if value["map_topic"]:
        overrides["map_topic"] = value["map_topic"]
    for name in BOOLEAN_ARGUMENTS:
        if value[name]:
            overrides[name] = value[name].lower() in ("true", "1", "yes")
    return [
        Node(
            package=PACKAGE,
            executable="planner_node",
            name=NODE_NAME,
            namespace=value["namespace"],
            output="screen",
            parameters=[LaunchConfiguration("params_file"), overrides],
            remappings=[(topic, value[arg]) for arg, (topic, _) in TOPIC_ARGUMENTS.items() if value[arg] != topic],
        )
    ]


def generate_launch_description():
    share = get_package_share_directory(PACKAGE)
    arguments = [
        DeclareLaunchArgument(
            "params_file",
            default_value=os.path.join(share, "config", "planner.yaml"),
            description="parameters file of planner_node",
        ),
        DeclareLaunchArgument(
            "map_file",
            default_value=os.path.join(share, "config", "tb3_sandbox.yaml"),
            description=f"map_server YAML loaded at start-up; '{NO_MAP}' for none (wait for the map topic)",
        ),
    ]
    arguments.append(DeclareLaunchArgument("namespace", default_value="", description="the node's namespace"))
    arguments += [
        DeclareLaunchArgument(name, default_value=topic, description=description)
        for name, (topic, description) in TOPIC_ARGUMENTS.items()
    ]
    arguments += [
        DeclareLaunchArgument(name, default_value="", description=description)
        for name, description in PARAMETER_ARGUMENTS.items()
    ]
    return LaunchDescription(arguments + [OpaqueFunction(function=_start_node)])
