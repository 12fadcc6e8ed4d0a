"""Run-time parameters (what `ros2 param set` does) through rclpy's SetParameters and
GetParameters service clients: invalid values and parameters that need a restart are refused with
a reason and the old value kept; valid changes reach the next plan; a plan in progress finishes
with the values it started with."""

import os

import pytest
from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
from rcl_interfaces.srv import GetParameters, SetParameters

from blockstar_planner_msgs.msg import PlannerStatus as S

from helpers import BIG, FAR, Peer, big_grid, start_with_peer, tmpdir
from living import GOAL, PARAMS, START, MapModel, assert_legal, polygon_hits, two_door_grid


def value(v):
    if isinstance(v, bool):
        return ParameterValue(type=ParameterType.PARAMETER_BOOL, bool_value=v)
    if isinstance(v, int):
        return ParameterValue(type=ParameterType.PARAMETER_INTEGER, integer_value=v)
    if isinstance(v, float):
        return ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=v)
    return ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=v)


class ParamPeer(Peer):
    def __init__(self, name, node_name):
        super().__init__(name, prefix=f"/{node_name}", node_name=node_name)
        self.set_client = self.node.create_client(SetParameters, f"/{node_name}/set_parameters")
        self.get_client = self.node.create_client(GetParameters, f"/{node_name}/get_parameters")

    def wait_services(self):
        self.spin_until(lambda: self.set_client.service_is_ready() and self.get_client.service_is_ready(),
                        what="the parameter services")

    def set(self, **kwargs):
        req = SetParameters.Request(parameters=[Parameter(name=k, value=value(v)) for k, v in kwargs.items()])
        fut = self.set_client.call_async(req)
        self.spin_until(fut.done, what="set_parameters")
        return fut.result().results

    def get(self, *names):
        fut = self.get_client.call_async(GetParameters.Request(names=list(names)))
        self.spin_until(fut.done, what="get_parameters")
        out = []
        for v in fut.result().values:
            out.append({ParameterType.PARAMETER_DOUBLE: v.double_value, ParameterType.PARAMETER_INTEGER: v.integer_value,
                        ParameterType.PARAMETER_BOOL: v.bool_value}.get(v.type, v.string_value))
        return out


def start(tmp, name, params, grid, start_pose, env=None):
    return start_with_peer(tmp, name, params, lambda: ParamPeer(f"peer_{name}", name), ParamPeer.wait_services,
                           grid=grid, start_pose=start_pose, env=env)


def set_and_wait(node, peer, **kwargs):
    """Sets parameters that change the planner and waits until the node uses them."""
    before = node.count("parameters in use")
    results = peer.set(**kwargs)
    assert all(r.successful for r in results), [r.reason for r in results]
    peer.spin_until(lambda: node.count("parameters in use") > before, what="the new parameters in use")


@pytest.fixture(scope="module")
def setup():
    tmp = tmpdir("blockstar-params-")
    grid = two_door_grid()
    # A budget no loaded machine runs out of: the no-path answers below (a robot wider than the
    # doors, with 16 headings and 48 neighbours) come from a full search that first needs that
    # motion model's Directional A* tables. Filling them took 5.4 s with four test runs on 2
    # cores, past the default 3.5 s (TIMEOUT, twice, before filling stopped counting against
    # the budget); the answer under test is NO_VALID_PATH, whatever the machine's load.
    node, peer = start(tmp, "planner_par", {**PARAMS, "max_planning_time": 60.0}, grid, START)
    yield node, peer, grid
    peer.close()
    node.stop()


def test_parameters_read_back(setup):
    node, peer, grid = setup
    assert peer.get("robot_radius", "min_turning_radius", "heading_bins", "neighbourhood", "replan_period") == \
        [0.1, 0.2, 8, 24, 0.0]


@pytest.mark.parametrize("name,bad", [
    ("heading_bins", 12), ("neighbourhood", 10), ("robot_radius", -0.5), ("min_turning_radius", "wide"),
    ("path_spacing", 0.0), ("turn_penalty", -1.0), ("replan_period", -2.0), ("global_frame", "odom"),
    ("robot_side", -0.3),
])
def test_invalid_values_are_refused_with_a_reason_and_change_nothing(setup, name, bad):
    node, peer, grid = setup
    (before,) = peer.get(name) if name != "global_frame" else (None,)
    (r,) = peer.set(**{name: bad})
    assert not r.successful
    assert name in r.reason, r.reason
    if before is not None:
        assert peer.get(name) == [before]
    status, path = peer.plan(*GOAL)
    assert status.code == S.SUCCESS, status.message
    assert peer.trajectory_for(status).min_turning_radius == pytest.approx(0.2)


def test_a_turning_radius_beyond_the_lattice_at_the_maps_resolution_is_put_back(setup):
    """`min_turning_radius` 1000 m is in range as a number, so the set is answered; at the map's
    0.1 m it is 10000 cells, beyond Directional A*'s largest lattice (8192 cells), so the rebuild
    refuses it, naming it in metres, and puts the value in force back. Before, it was taken, and
    every plan then ran seconds past its budget filling table entries for it."""
    node, peer, grid = setup
    (before,) = peer.get("min_turning_radius")
    rejected = node.count("parameter change rejected")
    (r,) = peer.set(min_turning_radius=1000.0)
    assert r.successful, r.reason
    peer.spin_until(lambda: node.count("parameter change rejected") > rejected, 60.0, "the refusal")
    assert "min_turning_radius 1000.000 m is 10000.0 cells of this map (0.1 m per cell)" in node.log(), node.log()[-3000:]
    assert peer.get("min_turning_radius") == [before]
    status, path = peer.plan(*GOAL)
    assert status.code == S.SUCCESS, status.message
    assert peer.trajectory_for(status).min_turning_radius == pytest.approx(before)


def test_an_atomic_set_is_all_or_none_and_each_change_is_announced(setup):
    """`set_parameters_atomically` (what rclcpp's and rclpy's parameter clients call) sets
    every parameter it names or none, and the reason names the one refused; accepted changes are
    announced on /parameter_events with the node's name and the new values, as rclcpp nodes
    announce theirs."""
    import time

    from rcl_interfaces.msg import ParameterEvent
    from rcl_interfaces.srv import SetParametersAtomically
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    node, peer, grid = setup
    events = []
    peer.node.create_subscription(ParameterEvent, "/parameter_events", events.append,
                                  QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE))
    client = peer.node.create_client(SetParametersAtomically, "/planner_par/set_parameters_atomically")
    peer.spin_until(client.service_is_ready, what="set_parameters_atomically")

    def atomically(**kwargs):
        req = SetParametersAtomically.Request(parameters=[Parameter(name=k, value=value(v)) for k, v in kwargs.items()])
        fut = client.call_async(req)
        peer.spin_until(fut.done, what="set_parameters_atomically")
        return fut.result().result

    before = peer.get("tolerance", "start_overlap")
    refused = atomically(tolerance=0.3, heading_bins=12)
    assert not refused.successful and "heading_bins" in refused.reason, refused.reason
    assert peer.get("tolerance", "start_overlap") == before

    def announced(tolerance):
        return next((e for e in events if e.node == "/planner_par"
                     and any(p.name == "tolerance" and p.value.double_value == tolerance for p in e.changed_parameters)),
                    None)

    def changed_in(event):
        return {p.name: p.value.double_value for p in event.changed_parameters}

    try:
        # The event topic is volatile: one published before this subscription matched the node's
        # writer is not delivered, so a change not heard of within a few seconds is made again
        # with another value.
        for attempt in range(5):
            tolerance, overlap = 0.31 + 0.01 * attempt, 0.021 + 0.001 * attempt
            accepted = atomically(tolerance=tolerance, start_overlap=overlap)
            assert accepted.successful, accepted.reason
            assert peer.get("tolerance", "start_overlap") == [tolerance, overlap]
            end = time.monotonic() + 3.0
            while announced(tolerance) is None and time.monotonic() < end:
                peer.spin(0.05)
            if announced(tolerance) is not None:
                break
        event = announced(tolerance)
        assert event is not None, "no parameter event from /planner_par"
        assert changed_in(event) == {"tolerance": tolerance, "start_overlap": overlap}, changed_in(event)
        assert not event.new_parameters and not event.deleted_parameters
    finally:
        assert atomically(tolerance=before[0], start_overlap=before[1]).successful


def test_valid_changes_reach_the_next_plan(setup):
    node, peer, grid = setup
    set_and_wait(node, peer, min_turning_radius=0.4, heading_bins=16, neighbourhood=48, path_spacing=0.1)
    assert peer.get("min_turning_radius", "heading_bins", "neighbourhood", "path_spacing") == [0.4, 16, 48, 0.1]
    status, path = peer.plan(*GOAL)
    assert status.code == S.SUCCESS, status.message
    traj = peer.trajectory_for(status)
    assert traj.min_turning_radius == pytest.approx(0.4)
    assert all(s.radius >= 0.4 - 1e-9 for s in traj.segments if s.kind == s.ARC)
    gaps = [((b.pose.position.x - a.pose.position.x) ** 2 + (b.pose.position.y - a.pose.position.y) ** 2) ** 0.5
            for a, b in zip(path.poses, path.poses[1:])]
    assert max(gaps) <= 0.1 + 1e-9 and max(gaps) > 0.05, "path_spacing 0.1 in use"
    # A robot wider than both doors: no path; narrower again: a legal path for that radius. The
    # trajectory just planned (the goal topic's, kept legal by the node) no longer fits: its
    # re-check says a parameter change, not the map, blocked it.
    blocked, by_map = node.count("parameter change blocked the path"), node.count("map change blocked the path")
    set_and_wait(node, peer, robot_radius=0.45)
    peer.spin_until(lambda: node.count("parameter change blocked the path") > blocked, 60.0, "the re-check")
    assert node.count("map change blocked the path") == by_map, node.log()[-3000:]
    status, _ = peer.plan(*GOAL)
    assert status.code == S.NO_VALID_PATH, status.message
    set_and_wait(node, peer, robot_radius=0.15, min_turning_radius=0.2, heading_bins=8, neighbourhood=24,
                 path_spacing=0.05)
    status, path = peer.plan(*GOAL)
    assert status.code == S.SUCCESS, status.message
    assert_legal(path, MapModel(grid), 0.15)
    # A square footprint (robot_side) replaces the circle: one whose corners cannot pass the doors
    # in any heading, then a small one (checked with its circumscribed circle).
    set_and_wait(node, peer, robot_side=0.7)
    assert peer.get("robot_side") == [0.7]
    status, _ = peer.plan(*GOAL)
    assert status.code == S.NO_VALID_PATH, status.message
    set_and_wait(node, peer, robot_side=0.2)
    status, path = peer.plan(*GOAL)
    assert status.code == S.SUCCESS, status.message
    assert_legal(path, MapModel(grid), 0.2 * 2 ** 0.5 / 2)
    set_and_wait(node, peer, robot_side=0.0)


def test_a_polygon_footprint_reaches_the_next_plan(setup):
    """Nav2's `footprint` string set at run time: read back as written, a rear-axle rectangle
    plans a path whose outline touches nothing (checked here with plane geometry), one wider than
    both doors gets no path, and "[]" brings the disk back."""
    node, peer, grid = setup
    rect = [[0.5, 0.15], [0.5, -0.15], [-0.1, -0.15], [-0.1, 0.15]]
    text = "[[0.5, 0.15], [0.5, -0.15], [-0.1, -0.15], [-0.1, 0.15]]"
    set_and_wait(node, peer, footprint=text, min_turning_radius=0.4)
    assert peer.get("footprint") == [text]
    status, path = peer.plan(*GOAL)
    assert status.code == S.SUCCESS, status.message
    assert polygon_hits(path, MapModel(grid), rect) == []
    wide = "[[0.5, 0.45], [0.5, -0.45], [-0.1, -0.45], [-0.1, 0.45]]"
    set_and_wait(node, peer, footprint=wide)
    status, _ = peer.plan(*GOAL)
    assert status.code == S.NO_VALID_PATH, status.message
    (bad,) = peer.set(footprint="[[0, 0], [1, 1], [1, 0], [0, 1]]")
    assert not bad.successful and "footprint" in bad.reason and "simple polygon" in bad.reason, bad.reason
    assert peer.get("footprint") == [wide]
    set_and_wait(node, peer, footprint="[]", min_turning_radius=0.2)
    status, path = peer.plan(*GOAL)
    assert status.code == S.SUCCESS, status.message
    assert_legal(path, MapModel(grid), 0.1)


# FAR on the serpentine of helpers: planning it takes seconds.


def test_a_plan_in_progress_finishes_with_the_old_values():
    tmp = tmpdir("blockstar-params-big-")
    grid = big_grid()
    node, peer = start(tmp, "planner_parbig", {"robot_radius": 0.05, "min_turning_radius": 0.5,
                                                "max_planning_time": 120.0}, grid, (1.0, 1.0, 0.0))
    try:
        far = peer.send_goal(*FAR)
        peer.spin(0.3)  # being planned now
        # The change is taken at once and applied when the plan in flight ends (updates wait for
        # plans: state.rs, `schedule`), so the wait for it is the plan's, however slow the machine.
        before = node.count("parameters in use")
        results = peer.set(min_turning_radius=0.25)
        assert all(r.successful for r in results), [r.reason for r in results]
        status = peer.wait_status(far, timeout=120)
        assert status.code == S.SUCCESS, status.message
        peer.spin_until(lambda: node.count("parameters in use") > before, timeout=60.0,
                        what="the new parameters in use")
        assert peer.trajectory_for(status).min_turning_radius == pytest.approx(0.5)
        # The change did arrive while the plan was running (else this test would prove nothing).
        log = node.log()
        assert log.index("parameter min_turning_radius set") < log.index("goal (99.525, 97.525): SUCCESS")
        status, _ = peer.plan(2.0, 3.0)
        assert status.code == S.SUCCESS
        peer.spin_until(lambda: peer.trajectories[-1].min_turning_radius == pytest.approx(0.25),
                        what="a trajectory with the new radius")
    finally:
        peer.close()
        node.stop()


def test_a_value_set_back_while_its_change_is_applied_is_the_one_kept():
    """`robot_radius` set to 0.15, then back to 0.1 before the first change is in use: the second
    set is compared with what is on its way (0.15) when it comes while the first batch runs, not
    with the fleet's value (still 0.1), and a batch landing leaves the live value alone when it
    comes after, so either way it is applied after the first and 0.1 is what the node ends with
    (both ways lost it before). The node holds each finished batch 3 s (a fault injected for
    tests), so the second set comes before the first change is in use."""
    tmp = tmpdir("blockstar-params-back-")
    env = dict(os.environ, BLOCKSTAR_FAULT_HOLD_FINISHED_MS="3000")
    node, peer = start(tmp, "planner_parback", PARAMS, two_door_grid(), START, env=env)
    try:
        in_use = node.count("parameters in use")
        results = peer.set(robot_radius=0.15)
        assert all(r.successful for r in results), [r.reason for r in results]
        peer.spin_until(lambda: node.count("parameter robot_radius set") >= 1, what="the node to take the set")
        # Back at once: the node's loop reads it while the first change's batch runs or while it
        # holds the batch's end; either way before the first change is in use.
        results = peer.set(robot_radius=PARAMS["robot_radius"])
        assert all(r.successful for r in results), [r.reason for r in results]
        assert node.count("parameters in use") == in_use, "the first change landed before the second set came"
        peer.spin_until(lambda: node.count("parameters in use") >= in_use + 2, 30.0, "both changes in use")
        assert peer.get("robot_radius") == [PARAMS["robot_radius"]]
        status, path = peer.plan(*GOAL)
        assert status.code == S.SUCCESS, status.message
        assert_legal(path, MapModel(two_door_grid()), PARAMS["robot_radius"])
    finally:
        peer.close()
        node.stop()


def test_a_set_made_while_a_refused_change_is_applied_is_kept():
    """A change the rebuild refuses (`robot_radius` 20 m: a footprint reaching farther than the
    map's cells allow) is put back, and announced so; a parameter set while that batch ran or
    while its end was held (`turn_penalty`) is kept and applied after it. Before, the refusal put
    every planner parameter back to the fleet's, so the later set, answered "successful", was
    lost with it. The node holds each finished batch 5 s (a fault injected for tests), so the
    second set, 2 s after the first was taken, comes before the refusal is read. (Should it come
    before the batch even started, it would be tried with the radius and put back with it,
    rightly: 2 s is far more than the loop takes to start a batch.)"""
    import time

    from rcl_interfaces.msg import ParameterEvent
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    tmp = tmpdir("blockstar-params-undo-")
    env = dict(os.environ, BLOCKSTAR_FAULT_HOLD_FINISHED_MS="5000")
    node, peer = start(tmp, "planner_parundo", PARAMS, two_door_grid(), START, env=env)
    try:
        events = []
        peer.node.create_subscription(ParameterEvent, "/parameter_events", events.append,
                                      QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE))
        peer.spin(0.5)  # the event topic is volatile: matched before the sets
        in_use = node.count("parameters in use")
        results = peer.set(robot_radius=20.0)
        assert all(r.successful for r in results), [r.reason for r in results]
        peer.spin_until(lambda: node.count("parameter robot_radius set") >= 1, what="the node to take the set")
        peer.spin(2.0)  # the refused batch has run; its end is held
        results = peer.set(turn_penalty=0.2)
        assert all(r.successful for r in results), [r.reason for r in results]
        peer.spin_until(lambda: node.count("parameter change rejected") >= 1, 30.0, "the refusal")
        peer.spin_until(lambda: node.count("parameters in use") > in_use, 30.0, "the later set in use")
        assert peer.get("robot_radius", "turn_penalty") == [PARAMS["robot_radius"], 0.2]
        # /parameter_events ends on the values in force: the radius put back, the penalty kept.
        end = time.monotonic() + 5.0
        last = {}
        while time.monotonic() < end:
            peer.spin(0.1)
            last = {}
            for e in (e for e in events if e.node == "/planner_parundo"):
                last.update({p.name: p.value.double_value for p in e.changed_parameters})
            if last.get("robot_radius") == PARAMS["robot_radius"] and last.get("turn_penalty") == 0.2:
                break
        assert last.get("robot_radius") == PARAMS["robot_radius"] and last.get("turn_penalty") == 0.2, last
        status, path = peer.plan(*GOAL)
        assert status.code == S.SUCCESS, status.message
        assert_legal(path, MapModel(two_door_grid()), PARAMS["robot_radius"])
    finally:
        peer.close()
        node.stop()


def test_a_goal_sent_after_a_sets_answer_is_planned_with_it_while_a_map_is_prepared():
    """A set answered while a batch of updates runs (a new map being prepared), then a goal: the
    loop reads the set first (it goes before requests), and the change is applied before the goal
    is planned (a waiting parameter change goes before waiting plans, which otherwise go before
    the next batch), so the goal's trajectory has the new turning radius. Before, the goal was
    planned on the new map with the old parameters, and the change applied after it."""
    tmp = tmpdir("blockstar-params-order-")
    params = {**PARAMS, "max_map_cells": BIG * BIG, "max_planning_time": 60.0}
    node, peer = start(tmp, "planner_parorder", params, two_door_grid(), START)
    try:
        peer.set_start(1.0, 1.0, 0.0, node_proc=node)
        preparing = node.count("preparing map")
        peer.map_pub.publish(big_grid())
        peer.spin_until(lambda: node.count("preparing map") > preparing, what="the big map's preparation to start")
        results = peer.set(min_turning_radius=0.25)
        assert all(r.successful for r in results), [r.reason for r in results]
        gid = peer.send_goal(2.0, 3.0)
        status = peer.wait_status(gid, timeout=120.0)
        assert status.code == S.SUCCESS, status.message
        assert peer.trajectory_for(status).min_turning_radius == pytest.approx(0.25)
        # Both came while the map was being prepared (else this would prove nothing).
        log = node.log()
        big_in_use = log.index(" m/cell in use", log.index(f"map {BIG}x{BIG} at"))
        assert log.index("parameter min_turning_radius set") < big_in_use, "the set came after the map landed"
        assert log.rindex("parameters in use") > big_in_use
    finally:
        peer.close()
        node.stop()
