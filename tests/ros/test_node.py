"""planner_node against a real rclpy peer: good plans, every bad input of issue 2 with its
status code, and the node still answering a good goal afterwards."""

import math

import pytest

from blockstar_planner_msgs.msg import PlannerStatus as S
from nav_msgs.msg import Odometry

from helpers import (FAR, Peer, assert_path_valid, big_grid, make_grid, start_node, start_with_peer, tmpdir,
                     yaw_quaternion)

RES = 0.1
ORIGIN = (-1.0, -2.0)
W, H = 60, 40


def cell_center(cx, cy):
    return (ORIGIN[0] + (cx + 0.5) * RES, ORIGIN[1] + (cy + 0.5) * RES)


def blocked(x, y):
    border = x == 0 or y == 0 or x == W - 1 or y == H - 1
    wall = x == 30 and not (25 <= y <= 30)  # a wall with a door at y 25..30
    room = 45 <= x <= 55 and 5 <= y <= 15 and (x in (45, 55) or y in (5, 15))  # closed room
    return border or wall or room


GRID = make_grid(W, H, RES, ORIGIN, blocked)
START = cell_center(10, 10)
GOAL = cell_center(50, 30)
IN_ROOM = cell_center(50, 10)
IN_WALL = cell_center(30, 10)


@pytest.fixture(scope="module")
def setup():
    tmp = tmpdir("blockstar-node-")
    node = start_node(tmp, "planner_tn", {"robot_radius": 0.15, "max_map_cells": 100000}, remap_prefix="/tn")
    peer = Peer("peer_tn", prefix="/tn", node_name="planner_tn")
    peer.wait_connected()
    peer.publish_map(GRID, node)
    peer.set_start(*START, 0.0, node_proc=node)
    yield node, peer
    peer.close()
    node.stop()


def good_goal_still_answered(node, peer):
    status, path = peer.plan(*GOAL)
    assert status.code == S.SUCCESS, status.message
    assert_path_valid(path, GRID, START, GOAL)
    assert node.alive()


def test_plan_starts_at_start_ends_at_goal_and_stays_free(setup):
    node, peer = setup
    status, path = peer.plan(*GOAL, yaw=0.5)
    assert status.code == S.SUCCESS and status.code_name == "SUCCESS", status.message
    assert_path_valid(path, GRID, START, GOAL)
    # The door is the only way through the wall: the path crosses x = 30 cells inside it.
    crossings = [p.pose.position.y for p in path.poses if abs(p.pose.position.x - cell_center(30, 0)[0]) < 0.06]
    assert crossings and all(cell_center(0, 25)[1] - 0.05 <= y <= cell_center(0, 30)[1] + 0.05 for y in crossings)
    # Orientation of inner poses follows the direction of travel.
    a, b = path.poses[1].pose.position, path.poses[2].pose.position
    q = path.poses[1].pose.orientation
    assert abs(math.remainder(math.atan2(b.y - a.y, b.x - a.x) - 2 * math.atan2(q.z, q.w), 2 * math.pi)) < 0.2
    assert status.trajectory_length > math.dist(START, GOAL) - 1e-9
    assert status.expansions > 0 and status.planning_time > 0
    traj = peer.trajectory_for(status)
    assert traj.header.frame_id == "map"
    assert abs(traj.total_length - status.trajectory_length) < 1e-9
    assert abs(sum(s.length for s in traj.segments) - traj.total_length) < 1e-9


def segment_end(s):
    """Where a TrajectorySegment message ends, from its fields alone: (x, y, yaw)."""
    if s.kind == s.ROTATE:
        assert s.length == 0.0 and s.curvature == 0.0
        return s.start_x, s.start_y, s.start_yaw + s.angle
    assert s.angle == 0.0
    t = -s.length if s.reverse else s.length
    if s.kind == s.LINE:
        return s.start_x + t * math.cos(s.start_yaw), s.start_y + t * math.sin(s.start_yaw), s.start_yaw
    k, yaw = s.curvature, s.start_yaw
    yaw2 = yaw + k * t
    return s.start_x + (math.sin(yaw2) - math.sin(yaw)) / k, s.start_y - (math.cos(yaw2) - math.cos(yaw)) / k, yaw2


def same_heading(a, b):
    return abs(math.remainder(a - b, 2 * math.pi)) < 1e-6


def test_at_radius_zero_turns_on_the_spot_are_rotate_segments_that_join(tmp_path):
    """With min_turning_radius 0 the vehicle turns on the spot: the trajectory message holds
    ROTATE segments (start, at corners, goal), and every segment, computed from its fields alone,
    ends where the next one starts, in position and heading."""
    node = start_node(tmp_path, "planner_rot", {"robot_radius": 0.15, "min_turning_radius": 0.0,
                                                "max_map_cells": 100000}, remap_prefix="/rot")
    peer = Peer("peer_rot", prefix="/rot", node_name="planner_rot")
    try:
        peer.wait_connected()
        peer.publish_map(GRID, node)
        peer.set_start(*START, math.pi, node_proc=node)
        status, path = peer.plan(*GOAL, yaw=-math.pi / 2)
        assert status.code == S.SUCCESS, status.message
        assert_path_valid(path, GRID, START, GOAL)
        segs = peer.trajectory_for(status).segments
        kinds = [s.kind for s in segs]
        assert kinds[0] == segs[0].ROTATE and kinds[-1] == segs[0].ROTATE, kinds
        assert kinds.count(segs[0].ROTATE) >= 3, kinds  # start, the door's corners, goal
        assert same_heading(segs[0].start_yaw, math.pi)
        for a, b in zip(segs, segs[1:]):
            x, y, yaw = segment_end(a)
            assert math.hypot(x - b.start_x, y - b.start_y) < 1e-6 and same_heading(yaw, b.start_yaw), (a, b)
        x, y, yaw = segment_end(segs[-1])
        assert math.hypot(x - GOAL[0], y - GOAL[1]) < 1e-6 and same_heading(yaw, -math.pi / 2)
        # /plan shows the turns as poses at one place with the headings before and after.
        q = path.poses[-1].pose.orientation
        assert same_heading(2 * math.atan2(q.z, q.w), -math.pi / 2)
        assert node.alive()
    finally:
        peer.close()
        node.stop()


def test_nose_in_at_a_wall_forward_refuses_and_reeds_shepp_backs_out(tmp_path, ros2_daemon):
    """A vehicle facing the map's west wall 0.1 m away with a turning radius of 0.3 m: forwards
    only (the default) the node refuses by proof; after `ros2 param set motion_model
    reeds_shepp` it backs out. Checked from the messages alone: every segment ends where the next
    starts (at cusps too, the heading being the vehicle's facing), each segment's `reverse` flag
    matches its motion, and /plan turns its direction of travel exactly at the trajectory's
    cusps, with every pose's orientation the vehicle's heading (what Nav2's controllers with
    reversing enabled read cusps from)."""
    from conftest import wait_listed
    from test_ros2_tools import SPIN, ros2

    start = cell_center(3, 10)
    params = {"robot_radius": 0.15, "min_turning_radius": 0.3, "max_map_cells": 100000}
    node, peer = start_with_peer(tmp_path, "planner_rs", params,
                                 lambda: Peer("peer_rs", prefix="/planner_rs", node_name="planner_rs"),
                                 grid=GRID, start_pose=(*start, math.pi))
    try:
        status, _ = peer.plan(*GOAL, yaw=0.0)
        assert status.code == S.NO_VALID_PATH and "ahead" in status.message, status.message
        wait_listed("/planner_rs")
        assert "Set parameter successful" in ros2("param", "set", *SPIN, "/planner_rs", "motion_model",
                                                  "reeds_shepp")
        out = ros2("param", "set", *SPIN, "/planner_rs", "motion_model", "sideways", check=False)
        assert "motion_model" in out and "Set parameter successful" not in out, out
        status, path = peer.plan(*GOAL, yaw=0.0)
        assert status.code == S.SUCCESS, status.message
        assert_path_valid(path, GRID, start, GOAL)
        segs = peer.trajectory_for(status).segments
        assert segs[0].reverse, "it backs out first"
        assert same_heading(segs[0].start_yaw, math.pi)
        for a, b in zip(segs, segs[1:]):
            x, y, yaw = segment_end(a)
            assert math.hypot(x - b.start_x, y - b.start_y) < 1e-6 and same_heading(yaw, b.start_yaw), (a, b)
        x, y, yaw = segment_end(segs[-1])
        assert math.hypot(x - GOAL[0], y - GOAL[1]) < 1e-6 and same_heading(yaw, 0.0)
        # Each segment's gear against its motion, from where it starts and where the next one
        # starts (the goal for the last): the chord runs against the heading exactly when
        # `reverse` is set (arcs of more than half a turn say nothing and are skipped).
        ends = [(b.start_x, b.start_y) for b in segs[1:]] + [GOAL]
        for s, (ex, ey) in zip(segs, ends):
            if s.length == 0.0 or (s.kind == s.ARC and s.length >= math.pi * s.radius):
                continue
            ahead = (ex - s.start_x) * math.cos(s.start_yaw) + (ey - s.start_y) * math.sin(s.start_yaw)
            assert (ahead < 0) == s.reverse, s
        cusps = sum(a.reverse != b.reverse for a, b in zip(segs, segs[1:]) if a.length > 0 and b.length > 0)
        assert cusps >= 1
        # /plan: the direction of travel between consecutive poses turns back exactly at cusps,
        # and each pose faces along its travel forwards, against it backwards.
        pts = [(p.pose.position.x, p.pose.position.y) for p in path.poses]
        steps = [(b[0] - a[0], b[1] - a[1]) for a, b in zip(pts, pts[1:]) if math.dist(a, b) > 1e-9]
        turns_back = sum(u[0] * v[0] + u[1] * v[1] < 0 for u, v in zip(steps, steps[1:]))
        assert turns_back == cusps, (turns_back, cusps)
        backwards = 0
        for a, b in zip(path.poses, path.poses[1:]):
            d = (b.pose.position.x - a.pose.position.x, b.pose.position.y - a.pose.position.y)
            if math.hypot(*d) < 1e-9:
                continue
            q = a.pose.orientation
            h = 2 * math.atan2(q.z, q.w)
            backwards += d[0] * math.cos(h) + d[1] * math.sin(h) < 0
        assert backwards > 0
        assert node.alive()
    finally:
        peer.close()
        node.stop()


@pytest.mark.parametrize(
    "goal,code",
    [
        ((100.0, 100.0), S.GOAL_OUTSIDE_MAP),
        (IN_WALL, S.GOAL_OCCUPIED),
        (IN_ROOM, S.NO_VALID_PATH),
    ],
)
def test_unreachable_goals(setup, goal, code):
    node, peer = setup
    status, _ = peer.plan(*goal)
    assert status.code == code, (status.code_name, status.message)
    assert status.message
    good_goal_still_answered(node, peer)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"quaternion": (0.0, 0.0, 0.0, 0.0)},
        {"quaternion": (0.0, 0.0, 1.0, 1.0)},
        {"quaternion": (math.nan, 0.0, 0.0, 1.0)},
    ],
    ids=["zero-quaternion", "unnormalised", "nan-quaternion"],
)
def test_bad_goals_are_invalid_input(setup, kwargs):
    node, peer = setup
    gid = peer.send_goal(*GOAL, **kwargs)
    status = peer.wait_status(gid)
    assert status.code == S.INVALID_INPUT and status.code_name == "INVALID_INPUT"
    assert "quaternion" in status.message, status.message
    good_goal_still_answered(node, peer)


# A frame no TF publisher of the session names. TF is global to the ROS domain and other modules'
# peers publish map -> odom: twice in full runs of the suite (never in a run of the modules up to
# this one), this module's node knew an identity map -> odom, as the fault soak's peer publishes it,
# though no publisher of /tf or /tf_static was left on the graph afterwards.
ODOM = "odom_tn"


def tf_publishers(peer):
    """Who publishes /tf and /tf_static now, for a failure's message."""
    return {t: [f"{p.node_namespace}/{p.node_name}" for p in peer.node.get_publishers_info_by_topic(t)]
            for t in ("/tf", "/tf_static")}


def test_a_goal_in_a_frame_tf_does_not_know_is_tf_error(setup):
    node, peer = setup
    status = peer.wait_status(peer.send_goal(*GOAL, frame=ODOM))
    assert status.code == S.TF_ERROR and status.code_name == "TF_ERROR", (status.message, tf_publishers(peer))
    assert f'"{ODOM}"' in status.message and '"map"' in status.message, status.message
    good_goal_still_answered(node, peer)


def bad_map(kind):
    g = make_grid(W, H, RES, ORIGIN, lambda x, y: False)
    if kind == "data-length":
        g.data = g.data[:-1]
    elif kind == "zero-resolution":
        g.info.resolution = 0.0
    elif kind == "nan-resolution":
        g.info.resolution = math.nan
    elif kind == "negative-resolution":
        g.info.resolution = -0.1
    elif kind == "over-cell-cap":
        g = make_grid(400, 300, RES, ORIGIN, lambda x, y: False)  # cap is 100000 cells
    elif kind == "other-frame":
        g.header.frame_id = "odom"
    return g


@pytest.mark.parametrize(
    "kind", ["data-length", "zero-resolution", "nan-resolution", "negative-resolution", "over-cell-cap", "other-frame"]
)
def test_bad_maps_are_refused_and_the_last_good_map_kept(setup, kind):
    node, peer = setup
    before = len(peer.statuses)
    rejected = node.count("map rejected")
    peer.map_pub.publish(bad_map(kind))
    peer.spin_until(lambda: node.count("map rejected") > rejected, what="the map rejection")
    # Found by its text: another status (a replan, a goal of the test before) may come between.
    rejection = lambda: next((s for s in peer.statuses[before:] if s.message.startswith("map rejected")), None)  # noqa: E731
    peer.spin_until(rejection, what="the map's status")
    status = rejection()
    assert status.code == S.INVALID_INPUT and status.message.startswith("map rejected"), status.message
    # The bad maps are all free: a plan through the wall's position would mean the map was taken.
    good_goal_still_answered(node, peer)


def test_start_outside_or_occupied(setup):
    node, peer = setup
    peer.set_start(100.0, 100.0, 0.0, node_proc=node)
    status, _ = peer.plan(*GOAL)
    assert status.code == S.START_OUTSIDE_MAP, status.message
    peer.set_start(*IN_WALL, 0.0, node_proc=node)
    status, _ = peer.plan(*GOAL)
    assert status.code == S.START_OCCUPIED, status.message
    peer.set_start(*START, 0.0, node_proc=node)
    good_goal_still_answered(node, peer)


def test_odometry_gives_the_start_pose_through_tf(setup):
    """/odom in an odometry frame without a transform to map cannot serve: the plan starts from
    the other source, the /initialpose set before (never from an odom pose taken as a map pose);
    /odom in map is used as is, being the newer."""
    node, peer = setup
    other = cell_center(20, 20)
    odom = Odometry()
    odom.header.frame_id = ODOM
    odom.pose.pose.position.x, odom.pose.pose.position.y = 5.0, 5.0
    odom.pose.pose.orientation.w = 1.0
    peer.send_odom(odom, node)
    status, path = peer.plan(*GOAL)
    assert status.code == S.SUCCESS, (status.message, tf_publishers(peer))
    assert_path_valid(path, GRID, START, GOAL)
    odom.header.frame_id = "map"
    odom.pose.pose.position.x, odom.pose.pose.position.y = other
    o = odom.pose.pose.orientation
    o.x, o.y, o.z, o.w = yaw_quaternion(1.0)
    peer.send_odom(odom, node)
    status, path = peer.plan(*GOAL)
    assert status.code == S.SUCCESS, status.message
    assert_path_valid(path, GRID, other, GOAL)
    # The most recent start wins: /initialpose again.
    peer.set_start(*START, 0.0, node_proc=node)
    good_goal_still_answered(node, peer)


def test_fresh_node_answers_no_map_then_no_robot_pose():
    tmp = tmpdir("blockstar-fresh-")
    node = start_node(tmp, "planner_fresh", {"robot_radius": 0.15}, remap_prefix="/fresh")
    peer = Peer("peer_fresh", prefix="/fresh", node_name="planner_fresh")
    try:
        peer.wait_connected()
        status = peer.wait_status(peer.send_goal(*GOAL))
        assert status.code == S.NO_MAP, status.message
        peer.publish_map(GRID, node)
        status = peer.wait_status(peer.send_goal(*GOAL))
        # No TF, no /initialpose, no /odom: Nav2's answer, TF_ERROR, naming the frames.
        assert status.code == S.TF_ERROR and "base_link" in status.message, status.message
        peer.set_start(*START, 0.0, node_proc=node)
        status, path = peer.plan(*GOAL)
        assert status.code == S.SUCCESS
        assert_path_valid(path, GRID, START, GOAL)
    finally:
        peer.close()
        node.stop()


# BIG, FAR: the serpentine of helpers (planning it takes seconds).


@pytest.fixture(scope="module", name="big_grid")
def big_grid_fixture():
    return big_grid()


def test_newer_goal_supersedes_and_planning_runs_off_the_executor(big_grid):
    tmp = tmpdir("blockstar-big-")
    node = start_node(tmp, "planner_big", {"robot_radius": 0.05, "max_planning_time": 60.0}, remap_prefix="/big")
    peer = Peer("peer_big", prefix="/big", node_name="planner_big")
    try:
        peer.wait_connected()
        peer.publish_map(big_grid, node)
        peer.set_start(1.0, 1.0, 0.0, node_proc=node)
        a = peer.send_goal(*FAR)
        peer.spin(0.2)  # a is being planned now
        b = peer.send_goal(*FAR)
        c = peer.send_goal(2.0, 3.0)
        # While a is searched, the node keeps receiving: b is superseded by c right away.
        sb = peer.wait_status(b, timeout=60)
        sa = peer.wait_status(a, timeout=60)
        sc = peer.wait_status(c, timeout=60)
        assert sa.code == S.SUPERSEDED, sa.message
        assert sb.code == S.SUPERSEDED, sb.message
        assert sc.code == S.SUCCESS, sc.message
        assert node.alive()
    finally:
        peer.close()
        node.stop()


def test_time_budget_gives_timeout(big_grid):
    tmp = tmpdir("blockstar-timeout-")
    node = start_node(tmp, "planner_to", {"robot_radius": 0.05, "max_planning_time": 0.001}, remap_prefix="/to")
    peer = Peer("peer_to", prefix="/to", node_name="planner_to")
    try:
        peer.wait_connected()
        peer.publish_map(big_grid, node)
        peer.set_start(1.0, 1.0, 0.0, node_proc=node)
        status = peer.wait_status(peer.send_goal(*FAR), timeout=60)
        assert status.code == S.TIMEOUT, status.message
        assert node.alive()
    finally:
        peer.close()
        node.stop()
