"""Helpers of the living-map tests: a two-door map, map_msgs/OccupancyGridUpdate patches on /map_updates, a Python model of the
map the node holds (to check plans against the map they were made for), and footprint checks."""

import array
import math

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from helpers import make_grid

RES = 0.1
W, H = 60, 40
WALL_X = 30
LOWER_DOOR = range(5, 13)  # rows of the door near the straight line start -> goal
UPPER_DOOR = range(26, 34)  # the detour
START = (1.05, 0.85, 0.0)
GOAL = (5.05, 0.85)
PARAMS = {"robot_radius": 0.1, "min_turning_radius": 0.2, "max_map_cells": 100000}

PATCH_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=10,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.VOLATILE,
)


def blocked(x, y):
    border = x in (0, W - 1) or y in (0, H - 1)
    wall = x == WALL_X and y not in LOWER_DOOR and y not in UPPER_DOOR
    return border or wall


def two_door_grid():
    return make_grid(W, H, RES, (0.0, 0.0), blocked)


def patch_msg(x, y, width, height, value, frame="map"):
    from map_msgs.msg import OccupancyGridUpdate  # an interface package PyPI lacks (conftest.INTERFACES)

    p = OccupancyGridUpdate()
    p.header.frame_id = frame
    p.x, p.y, p.width, p.height = x, y, width, height
    p.data = array.array("b", [value] * (width * height))
    return p


def door_patch(door, closed):
    return patch_msg(WALL_X, door[0], 1, len(door), 100 if closed else 0)


class MapModel:
    """The occupancy values the node should hold: a full map, then patches applied in order."""

    def __init__(self, grid):
        self.width, self.height = grid.info.width, grid.info.height
        self.res = grid.info.resolution
        self.ox, self.oy = grid.info.origin.position.x, grid.info.origin.position.y
        self.data = list(grid.data)

    def apply(self, patch):
        for r in range(patch.height):
            for c in range(patch.width):
                self.data[(patch.y + r) * self.width + patch.x + c] = patch.data[r * patch.width + c]

    def copy(self):
        m = MapModel.__new__(MapModel)
        m.__dict__ = dict(self.__dict__)
        m.data = list(self.data)
        return m

    def occupied(self, cx, cy, threshold=65):
        if not (0 <= cx < self.width and 0 <= cy < self.height):
            return True
        v = self.data[cy * self.width + cx]
        return v < 0 or v >= threshold

    def footprint_hits(self, x, y, radius):
        """Occupied cells whose square comes within `radius` of (x, y) (metres)."""
        cx0, cx1 = math.floor((x - radius - self.ox) / self.res), math.floor((x + radius - self.ox) / self.res)
        cy0, cy1 = math.floor((y - radius - self.oy) / self.res), math.floor((y + radius - self.oy) / self.res)
        hits = []
        for cy in range(cy0, cy1 + 1):
            for cx in range(cx0, cx1 + 1):
                if not self.occupied(cx, cy):
                    continue
                lx, ly = self.ox + cx * self.res, self.oy + cy * self.res
                dx = max(lx - x, 0.0, x - (lx + self.res))
                dy = max(ly - y, 0.0, y - (ly + self.res))
                if math.hypot(dx, dy) < radius - 1e-9:
                    hits.append((cx, cy))
        return hits


def assert_legal(path, model, radius, step_fraction=0.25):
    """Every point of the path (its poses and the straight pieces between them, every quarter
    cell) keeps a disk of `radius` off occupied cells of `model`."""
    poses = path.poses
    assert len(poses) >= 2, "empty path"
    step = model.res * step_fraction
    for a, b in zip(poses, poses[1:]):
        pa, pb = a.pose.position, b.pose.position
        n = max(1, math.ceil(math.hypot(pb.x - pa.x, pb.y - pa.y) / step))
        for i in range(n + 1):
            t = i / n
            x, y = pa.x + (pb.x - pa.x) * t, pa.y + (pb.y - pa.y) * t
            hits = model.footprint_hits(x, y, radius)
            assert not hits, f"path point ({x:.3f}, {y:.3f}) with radius {radius} touches cells {hits[:3]}"


def wall_crossings(path):
    """y of every crossing of the wall's centre line x = (WALL_X + 0.5) * RES."""
    xw = (WALL_X + 0.5) * RES
    pts = [(p.pose.position.x, p.pose.position.y) for p in path.poses]
    ys = []
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if (x0 - xw) * (x1 - xw) <= 0 and x0 != x1:
            ys.append(y0 + (xw - x0) / (x1 - x0) * (y1 - y0))
    return ys


def through(path, door):
    ys = wall_crossings(path)
    return bool(ys) and all(door[0] * RES <= y <= (door[-1] + 1) * RES for y in ys)


def polygon_hits(path, model, polygon, step=0.01):
    """Occupied cells of `model` under the outline of `polygon` (vehicle frame, metres) at every
    pose of `path` and every quarter cell between them (positions and headings interpolated),
    the outline sampled every `step` metres: a check independent of the node's rasteriser."""
    def yaw(p):
        q = p.pose.orientation
        return 2.0 * math.atan2(q.z, q.w)

    outline = []
    for (ax, ay), (bx, by) in zip(polygon, polygon[1:] + polygon[:1]):
        n = max(1, math.ceil(math.hypot(bx - ax, by - ay) / step))
        outline += [(ax + (bx - ax) * i / n, ay + (by - ay) * i / n) for i in range(n)]
    hits = []
    poses = path.poses
    for a, b in zip(poses, poses[1:]):
        pa, pb = a.pose.position, b.pose.position
        ya, turn = yaw(a), math.remainder(yaw(b) - yaw(a), 2 * math.pi)
        n = max(1, math.ceil(math.hypot(pb.x - pa.x, pb.y - pa.y) / (model.res / 4)))
        for i in range(n + 1):
            t = i / n
            x, y, th = pa.x + (pb.x - pa.x) * t, pa.y + (pb.y - pa.y) * t, ya + turn * t
            c, s = math.cos(th), math.sin(th)
            for u, v in outline:
                px, py = x + c * u - s * v, y + s * u + c * v
                cell = (math.floor((px - model.ox) / model.res), math.floor((py - model.oy) / model.res))
                if model.occupied(*cell):
                    hits.append((round(x, 3), round(y, 3), cell))
    return hits
