"""Starts planner_node with the package's parameters file and bundled map.

    ros2 launch blockstar_planner planner.launch.py [params_file:=FILE] [map_file:=FILE|none]
        [map_topic:=/map] [goal_topic:=/goal_pose] [initialpose_topic:=/initialpose]
        [odom_topic:=/odom] [plan_topic:=/plan]

map_file: a map_server YAML (or Moving AI .map) loaded at start-up, by default the bundled
config/tb3_sandbox.yaml; `map_file:=none` starts without one and waits for the map topic (from
another launch file an empty value does the same). The topic arguments remap the node's topics.
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
    "map_topic": ("/map", "occupancy grid input (nav_msgs/OccupancyGrid, transient local)"),
    "goal_topic": ("/goal_pose", "goal input (geometry_msgs/PoseStamped)"),
    "initialpose_topic": ("/initialpose", "start pose input (geometry_msgs/PoseWithCovarianceStamped)"),
    "odom_topic": ("/odom", "start pose input (nav_msgs/Odometry)"),
    "plan_topic": ("/plan", "path output (nav_msgs/Path)"),
}


def _start_node(context):
    value = {name: LaunchConfiguration(name).perform(context) for name in list(TOPIC_ARGUMENTS) + ["map_file"]}
    map_file = "" if value["map_file"].strip().lower() in ("", NO_MAP) else value["map_file"]
    return [
        Node(
            package=PACKAGE,
            executable="planner_node",
            name=NODE_NAME,
            output="screen",
            parameters=[LaunchConfiguration("params_file"), {"map_file": map_file}],
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
    arguments += [
        DeclareLaunchArgument(name, default_value=topic, description=description)
        for name, (topic, description) in TOPIC_ARGUMENTS.items()
    ]
    return LaunchDescription(arguments + [OpaqueFunction(function=_start_node)])
