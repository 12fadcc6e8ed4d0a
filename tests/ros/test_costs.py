"""Traversal costs against a real rclpy peer: a Nav2-style costmap (obstacles 100, the inscribed
band 99, an inflation gradient 1-98) on the map topic with occupied_threshold 100, so lethal cells
are obstacles (the planner checks its own footprint against them) and everything below is a grade. Every plan is legal on the grid the test published; the mean cost the status
reports equals the one this test computes from /plan and that grid; `cost_penalty` 0 set through
the real parameter service gives a path that passes more cost; and an OccupancyGridUpdate moving
the gradient onto the path replans it, legal and costed on the new grid."""

import array
import math

import pytest

from blockstar_planner_msgs.msg import PlannerStatus as S

from conftest import require_interfaces

require_interfaces(allow_module_level=True)  # map_msgs: the map updates
from map_msgs.msg import OccupancyGridUpdate  # noqa: E402

from helpers import make_grid, tmpdir  # noqa: E402
from living import PATCH_QOS  # noqa: E402
from test_params import ParamPeer, set_and_wait, start_with_peer  # noqa: E402

RES = 0.05
W, H = 100, 40
ROBOT = 0.15
PARAMS = {"robot_radius": ROBOT, "min_turning_radius": 0.2, "occupied_threshold": 100, "cost_penalty": 2.0,
          "preferred_clearance": 0.0, "max_map_cells": 100000}
START = (0.6, 1.0, 0.0)
GOAL = (4.4, 1.0)


def lethal_cells(blocks):
    """The border and every cell of the given (x0, x1, y0, y1) blocks."""
    return {(x, y) for y in range(H) for x in range(W)
            if x in (0, W - 1) or y in (0, H - 1) or any(x0 <= x < x1 and y0 <= y < y1 for x0, x1, y0, y1 in blocks)}


def costmap_values(blocks):
    """Navigation2's costmap as an OccupancyGrid: 100 on obstacles, 99 within the robot's radius,
    then 98 exp(-3 (d - r)) up to 0.55 m (d between cell centres), 0 beyond."""
    lethal = lethal_cells(blocks)
    reach = math.ceil(0.55 / RES) + 1
    values = []
    for y in range(H):
        for x in range(W):
            if (x, y) in lethal:
                values.append(100)
                continue
            d = min((math.hypot(x - ox, y - oy) for ox in range(x - reach, x + reach + 1)
                     for oy in range(y - reach, y + reach + 1) if (ox, oy) in lethal), default=1e9) * RES
            if d <= ROBOT:
                values.append(99)
            elif d <= 0.55:
                values.append(max(1, int(98 * math.exp(-3.0 * (d - ROBOT)))))
            else:
                values.append(0)
    return values


# A 0.5 m square in the middle of a 2 m wide corridor, on the straight line: its gradient and the
# walls' overlap, so every way past it passes some cost.
PILLAR = (45, 55, 15, 25)
VALUES = costmap_values([PILLAR])


def grid_msg(values):
    g = make_grid(W, H, RES, (0.0, 0.0), lambda x, y: False)
    g.data = array.array("b", values)
    return g


def value_at(values, x, y):
    cx, cy = math.floor(x / RES), math.floor(y / RES)
    if not (0 <= cx < W and 0 <= cy < H):
        return 100
    return values[cy * W + cx]


def assert_legal(path, values):
    """Every point of the path (every quarter cell between poses) keeps the robot's disc off
    lethal cells (the threshold 100)."""
    for a, b in zip(path.poses, path.poses[1:]):
        pa, pb = a.pose.position, b.pose.position
        n = max(1, math.ceil(math.hypot(pb.x - pa.x, pb.y - pa.y) / (RES / 4)))
        for i in range(n + 1):
            x, y = pa.x + (pb.x - pa.x) * i / n, pa.y + (pb.y - pa.y) * i / n
            r = math.ceil(ROBOT / RES) + 1
            cx, cy = math.floor(x / RES), math.floor(y / RES)
            for oy in range(cy - r, cy + r + 1):
                for ox in range(cx - r, cx + r + 1):
                    v = values[oy * W + ox] if 0 <= ox < W and 0 <= oy < H else 100
                    if v < 100:
                        continue
                    dx = max(ox * RES - x, 0.0, x - (ox + 1) * RES)
                    dy = max(oy * RES - y, 0.0, y - (oy + 1) * RES)
                    assert math.hypot(dx, dy) >= ROBOT - 1e-9, f"({x:.3f}, {y:.3f}) touches cell ({ox}, {oy}) = {v}"


def mean_grade(path, values):
    """The length-weighted mean of v / 100 along /plan (midpoints of quarter-cell steps)."""
    total = weighted = 0.0
    for a, b in zip(path.poses, path.poses[1:]):
        pa, pb = a.pose.position, b.pose.position
        length = math.hypot(pb.x - pa.x, pb.y - pa.y)
        n = max(1, math.ceil(length / (RES / 4)))
        for i in range(n):
            t = (i + 0.5) / n
            weighted += value_at(values, pa.x + (pb.x - pa.x) * t, pa.y + (pb.y - pa.y) * t) / 100.0 * length / n
        total += length
    return weighted / total


class CostPeer(ParamPeer):
    def __init__(self, name, node_name):
        super().__init__(name, node_name)
        self.patch_pub = self.node.create_publisher(OccupancyGridUpdate, f"/{node_name}/map_updates", PATCH_QOS)

    def wait_connected(self, timeout=20.0):
        super().wait_connected(timeout)
        self.spin_until(lambda: self.patch_pub.get_subscription_count() > 0, timeout, "discovery of map_updates")


@pytest.fixture(scope="module")
def setup():
    name = "planner_cost"
    node, peer = start_with_peer(tmpdir("blockstar-costs-"), name, PARAMS, lambda: CostPeer(f"peer_{name}", name),
                                 CostPeer.wait_services, grid=grid_msg(VALUES), start_pose=START,
                                 extra_args=["-r", f"/map_updates:=/{name}/map_updates"])
    yield node, peer
    peer.close()
    node.stop()


def test_the_gradient_is_priced_reported_and_followed(setup):
    node, peer = setup
    status, path = peer.plan(*GOAL)
    assert status.code == S.SUCCESS, status.message
    assert_legal(path, VALUES)
    computed = mean_grade(path, VALUES)
    assert computed > 0.0, "the path around the pillar passes some of its gradient"
    assert abs(status.mean_cost - computed) < 0.02, (status.mean_cost, computed)
    assert 0.0 < status.max_cost <= 1.0
    assert status.cost >= status.trajectory_length
    assert status.min_clearance > ROBOT

    # The shortest path (cost_penalty 0, set through the parameter service) passes more cost.
    set_and_wait(node, peer, cost_penalty=0.0)
    try:
        shortest_status, shortest = peer.plan(*GOAL)
        assert shortest_status.code == S.SUCCESS, shortest_status.message
        assert_legal(shortest, VALUES)
        assert shortest_status.mean_cost == 0.0  # nothing is priced at cost_penalty 0
        assert mean_grade(shortest, VALUES) > computed + 0.02, (mean_grade(shortest, VALUES), computed)
        assert shortest_status.trajectory_length <= status.trajectory_length + 1e-9
    finally:
        set_and_wait(node, peer, cost_penalty=2.0)


def test_an_update_moving_the_gradient_onto_the_path_replans_it(setup):
    node, peer = setup
    status, path = peer.plan(*GOAL)
    assert status.code == S.SUCCESS, status.message
    # A second pillar with its gradient where the path passes the first one: the patch holds the
    # new costmap over the rows and columns around it.
    side = 1 if sum(p.pose.position.y for p in path.poses) / len(path.poses) > 1.0 else -1
    second = (45, 55, 28, 34) if side > 0 else (45, 55, 6, 12)
    values = costmap_values([PILLAR, second])
    x0, x1, y0, y1 = 30, 70, 1, 39
    patch = OccupancyGridUpdate()
    patch.header.frame_id = "map"
    patch.x, patch.y, patch.width, patch.height = x0, y0, x1 - x0, y1 - y0
    patch.data = array.array("b", [values[y * W + x] for y in range(y0, y1) for x in range(x0, x1)])
    n, n_paths = len(peer.statuses), len(peer.paths)
    peer.patch_pub.publish(patch)
    peer.spin_until(lambda: any(s.event == S.EVENT_REPLAN for s in peer.statuses[n:]), what="a replan")
    replan = next(s for s in peer.statuses[n:] if s.event == S.EVENT_REPLAN)
    assert replan.code == S.SUCCESS, replan.message
    peer.spin_until(lambda: len(peer.paths) > n_paths, what="the replanned /plan")
    new_path = peer.paths[-1]
    assert_legal(new_path, values)
    assert abs(replan.mean_cost - mean_grade(new_path, values)) < 0.02, (replan.mean_cost, mean_grade(new_path, values))
    assert node.alive()
