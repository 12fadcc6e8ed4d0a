"""A small rosbag2 player (the job of `ros2 bag play` on a full ROS install): publishes a bag's
messages at their recorded relative times, each topic with the QoS profile it was recorded with
(offered_qos_profiles), so a /map recorded as transient local is re-latched for late joiners."""

import time

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rosbags.interfaces import QosDurability, QosHistory, QosReliability
from rosbags.rosbag2 import Reader
from rosbags.typesys import Stores, get_typestore
import importlib


def get_message(msgtype):
    """The rclpy message class of a type name such as nav_msgs/msg/OccupancyGrid."""
    package, kind, name = msgtype.split("/")
    return getattr(importlib.import_module(f"{package}.{kind}"), name)


def qos_from_bag(connection):
    """The rclpy QoS of a recorded connection (its first offered profile; default if none)."""
    profiles = connection.ext.offered_qos_profiles
    if not profiles:
        return QoSProfile(depth=10)
    p = profiles[0]
    return QoSProfile(
        history=HistoryPolicy.KEEP_ALL if p.history == QosHistory.KEEP_ALL else HistoryPolicy.KEEP_LAST,
        depth=max(1, p.depth),
        reliability=ReliabilityPolicy.BEST_EFFORT if p.reliability == QosReliability.BEST_EFFORT
        else ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL if p.durability == QosDurability.TRANSIENT_LOCAL
        else DurabilityPolicy.VOLATILE,
    )


class BagPlayer:
    """Plays `bag_path` through `node` (an rclpy node). The publishers live as long as the player,
    like `ros2 bag play`'s, so latched topics stay latched after the last message."""

    def __init__(self, node, bag_path):
        self.node = node
        self.reader = Reader(bag_path)
        self.reader.open()
        self.publishers = {}
        self.qos = {}
        for c in self.reader.connections:
            msg_class = get_message(c.msgtype)
            self.qos[c.topic] = qos_from_bag(c)
            self.publishers[c.topic] = node.create_publisher(msg_class, c.topic, self.qos[c.topic])
        self.typestore = get_typestore(Stores.ROS2_JAZZY)

    def play(self, after_each=None, rate=1.0):
        """Publishes every message at its recorded time relative to the first (divided by rate);
        after_each(index, topic, msg) runs after each publish (a test's checks). Returns the count."""
        from rclpy.serialization import deserialize_message

        t_first = None
        wall0 = time.monotonic()
        count = 0
        for connection, timestamp, raw in self.reader.messages():
            if t_first is None:
                t_first = timestamp
            due = wall0 + (timestamp - t_first) * 1e-9 / rate
            # Clamped: the clock moves between the loop's test and this line, and a negative
            # length is a ValueError (which failed a run of the ROS tests here, 2026-11-29).
            while time.monotonic() < due:
                time.sleep(max(0.0, min(0.01, due - time.monotonic())))
            msg = deserialize_message(bytes(raw), get_message(connection.msgtype))
            self.publishers[connection.topic].publish(msg)
            if after_each:
                after_each(count, connection.topic, msg)
            count += 1
        return count

    def close(self):
        for p in self.publishers.values():
            self.node.destroy_publisher(p)
        self.reader.close()
