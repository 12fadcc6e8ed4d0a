"""The ~/compute_path action (blockstar_planner_msgs/action/ComputePath) with an rclpy
ActionClient: a plan with feedback, an error code for a goal in an obstacle, an explicit start,
cancellation, and a newer goal (action or topic) aborting the older one with SUPERSEDED."""

import math
import os

import pytest
from action_msgs.msg import GoalStatus
from action_msgs.srv import CancelGoal
from nav_msgs.msg import Path
from rclpy.action import ActionClient

from blockstar_planner_msgs.action import ComputePath
from blockstar_planner_msgs.msg import PlannerStatus as S

from helpers import FAR, LATCHED_READER, Peer, big_grid, make_grid, pose_stamped, start_with_peer, tmpdir
from living import GOAL, H, PARAMS, RES, START, W, MapModel, assert_legal, blocked, two_door_grid

# FAR on the serpentine of helpers: planning it takes seconds, long enough to cancel.


class ActionPeer(Peer):
    def __init__(self, name, node_name):
        super().__init__(name, prefix=f"/{node_name}", node_name=node_name)
        self.client = ActionClient(self.node, ComputePath, f"/{node_name}/compute_path")
        self.feedback = []

    def wait_server(self):
        assert self.client.wait_for_server(timeout_sec=20.0), "no action server"

    def send_async(self, x, y, yaw=0.0, start=None, planner_id=""):
        """Sends a goal; returns the future of its goal handle."""
        goal = ComputePath.Goal()
        goal.goal = pose_stamped(x, y, yaw)
        goal.planner_id = planner_id
        if start is not None:
            goal.start = pose_stamped(*start)
            goal.use_start = True
        return self.client.send_goal_async(goal, feedback_callback=lambda f: self.feedback.append(f.feedback))

    def send(self, x, y, yaw=0.0, start=None, planner_id=""):
        fut = self.send_async(x, y, yaw, start, planner_id)
        self.spin_until(fut.done, what="the goal to be accepted")
        handle = fut.result()
        assert handle.accepted
        return handle

    def result(self, handle, timeout=60.0):
        fut = handle.get_result_async()
        self.spin_until(fut.done, timeout, "the action result")
        return fut.result()


def start(tmp, name, params, grid, start_pose, env=None):
    return start_with_peer(tmp, name, params, lambda: ActionPeer(f"peer_{name}", name), ActionPeer.wait_server,
                           grid=grid, start_pose=start_pose, env=env)


@pytest.fixture(scope="module")
def small():
    tmp = tmpdir("blockstar-action-")
    grid = two_door_grid()
    node, peer = start(tmp, "planner_act", PARAMS, grid, START)
    yield node, peer, grid
    peer.close()
    node.stop()


def test_action_plans_with_feedback_and_result_fields(small):
    node, peer, grid = small
    n_status = len(peer.statuses)
    r = peer.result(peer.send(*GOAL))
    assert r.status == GoalStatus.STATUS_SUCCEEDED
    res = r.result
    assert res.error_code == S.SUCCESS and res.error_msg == ""
    assert res.path.header.frame_id == "map" and len(res.path.poses) >= 2
    p0, p1 = res.path.poses[0].pose.position, res.path.poses[-1].pose.position
    assert math.hypot(p0.x - START[0], p0.y - START[1]) < 1e-6
    assert math.hypot(p1.x - GOAL[0], p1.y - GOAL[1]) < 1e-6
    assert_legal(res.path, MapModel(grid), PARAMS["robot_radius"])
    assert len(res.trajectory.segments) >= 1
    assert abs(sum(s.length for s in res.trajectory.segments) - res.trajectory.total_length) < 1e-9
    assert res.planning_time.sec > 0 or res.planning_time.nanosec > 0
    peer.spin_until(lambda: peer.feedback, what="feedback")
    assert {f.stage for f in peer.feedback} <= {"queued", "planning"}
    # The status topic reports action goals too.
    peer.spin_until(lambda: len(peer.statuses) > n_status, what="the status")
    assert peer.statuses[-1].code == S.SUCCESS


def test_action_start_pose_is_used_when_given(small):
    node, peer, grid = small
    r = peer.result(peer.send(*GOAL, start=(1.55, 2.55, 0.0)))
    assert r.status == GoalStatus.STATUS_SUCCEEDED
    p0 = r.result.path.poses[0].pose.position
    assert math.hypot(p0.x - 1.55, p0.y - 2.55) < 1e-6


@pytest.mark.parametrize("goal,code", [((3.05, 1.85), S.GOAL_OCCUPIED), ((9.0, 1.0), S.GOAL_OUTSIDE_MAP)])
def test_action_errors_carry_the_planner_status_code(small, goal, code):
    node, peer, grid = small
    r = peer.result(peer.send(*goal))
    assert r.status == GoalStatus.STATUS_ABORTED
    assert r.result.error_code == code, r.result.error_msg
    assert r.result.error_msg and len(r.result.path.poses) == 0


@pytest.fixture(scope="module")
def big():
    tmp = tmpdir("blockstar-action-big-")
    grid = big_grid()
    node, peer = start(tmp, "planner_actbig", {"robot_radius": 0.05, "max_planning_time": 60.0}, grid,
                       (1.0, 1.0, 0.0))
    yield node, peer
    peer.close()
    node.stop()


def test_action_goal_can_be_cancelled(big):
    node, peer = big
    handle = peer.send(*FAR)
    peer.spin(0.2)  # being planned now
    fut = handle.cancel_goal_async()
    peer.spin_until(fut.done, what="the cancel response")
    assert len(fut.result().goals_canceling) == 1
    r = peer.result(handle)
    assert r.status == GoalStatus.STATUS_CANCELED
    assert len(r.result.path.poses) == 0
    # The node still plans afterwards.
    r = peer.result(peer.send(2.0, 3.0))
    assert r.status == GoalStatus.STATUS_SUCCEEDED and r.result.error_code == S.SUCCESS


def test_newer_goal_supersedes_an_action_goal(big):
    node, peer = big
    a = peer.send(*FAR)
    peer.spin(0.2)
    b = peer.send(*FAR)  # a is aborted; b waits and is superseded by the topic goal c
    c = peer.send_goal(2.0, 3.0)
    ra, rb = peer.result(a), peer.result(b)
    for r in (ra, rb):
        assert r.status == GoalStatus.STATUS_ABORTED
        assert r.result.error_code == S.SUPERSEDED, r.result.error_msg
    sc = peer.wait_status(c, timeout=60)
    assert sc.code == S.SUCCESS, sc.message
    # And an action goal supersedes a topic goal.
    d = peer.send_goal(*FAR)
    peer.spin(0.2)
    e = peer.send(2.5, 3.0)
    assert peer.wait_status(d, timeout=60).code == S.SUPERSEDED
    assert peer.result(e).result.error_code == S.SUCCESS


def assert_neither_published_nor_followed(node, peer, n_paths, n_traj):
    """No plan or trajectory published since the peer had `n_paths` and `n_traj` of them (the
    node published none before), and none followed: a map change finds no current trajectory to
    check."""
    peer.spin(0.5)
    assert len(peer.paths) == n_paths and len(peer.trajectories) == n_traj
    peer.publish_map(make_grid(W, H, RES, (0.0, 0.0), lambda x, y: blocked(x, y) or (x, y) == (W - 2, H - 2)), node)
    peer.spin(0.5)
    assert "current trajectory" not in node.log(), node.log()


def test_a_cancel_accepted_as_the_plan_finishes_is_the_answer():
    """The race of a cancel and a plan's end: the action server accepts the cancel (the goal is
    CANCELING) after the plan finished but before the node's loop took the plan in. The client
    is told CANCELED, so the plan must not be published or followed either. The node holds each
    finished plan 5 s (a fault injected for tests), long enough for the cancel to be accepted
    even while the executor waits out an unacknowledged spin (1 s)."""
    tmp = tmpdir("blockstar-action-race-")
    env = dict(os.environ, BLOCKSTAR_FAULT_HOLD_FINISHED_MS="5000")
    node, peer = start(tmp, "planner_act_race", PARAMS, two_door_grid(), START, env=env)
    try:
        assert node.count("fault injection: finished jobs are held 5000 ms") == 1
        n_status, n_paths, n_traj = len(peer.statuses), len(peer.paths), len(peer.trajectories)
        handle = peer.send(*GOAL)  # planned in milliseconds, then held
        cancel = handle.cancel_goal_async()
        peer.spin_until(cancel.done, what="the cancel's answer")
        assert cancel.result().return_code == CancelGoal.Response.ERROR_NONE, "the cancel came too late"
        r = peer.result(handle)
        assert r.status == GoalStatus.STATUS_CANCELED
        assert r.result.error_code == S.SUPERSEDED, r.result.error_msg
        assert r.result.error_msg.endswith("cancelled by the action client"), r.result.error_msg
        assert len(r.result.path.poses) == 0
        peer.spin_until(lambda: len(peer.statuses) > n_status, what="the goal's status")
        status = peer.statuses[n_status]
        assert status.code == S.SUPERSEDED and "cancelled by the action client" in status.message, status.message
        assert_neither_published_nor_followed(node, peer, n_paths, n_traj)
    finally:
        peer.close()
        node.stop()


def test_cancels_read_before_their_finished_plans_are_the_answer():
    """Two vehicles' plans finish together; while the node holds the first (5 s, the fault of the
    test above) both are cancelled. The loop reads the cancels before it takes in the second
    plan (after a finished job it reads what came meanwhile), after that plan had finished
    without seeing its cancel flag: the cancel is still the answer, and neither plan is
    published or followed."""
    tmp = tmpdir("blockstar-action-race2-")
    env = dict(os.environ, BLOCKSTAR_FAULT_HOLD_FINISHED_MS="5000")
    params = dict(PARAMS, planner_plugins=["GridBased", "Second"])
    name = "planner_act_race2"
    node, peer = start(tmp, name, params, two_door_grid(), START, env=env)
    try:
        # The second vehicle's plans, on its own topic (latched: one published before counts).
        second_paths = []
        peer.node.create_subscription(Path, f"/{name}/Second/plan", second_paths.append, LATCHED_READER)
        n_status, n_paths, n_traj = len(peer.statuses), len(peer.paths), len(peer.trajectories)
        # The same map again: a batch, held 5 s once it lands. Goals sent meanwhile wait for it,
        # and then both plans start at once (milliseconds each).
        preparing = node.count("preparing map")
        peer.publish_map(two_door_grid())
        peer.spin_until(lambda: node.count("preparing map") > preparing, what="the batch to start")
        sent = [peer.send_async(*GOAL, start=START, planner_id=p) for p in params["planner_plugins"]]
        peer.spin_until(lambda: all(f.done() for f in sent), 30.0, "both goals accepted")
        handles = [f.result() for f in sent]
        assert all(h.accepted for h in handles)
        # Both planning (feedback), then cancelled while the first plan to finish is held.
        peer.spin_until(lambda: sum(f.stage == "planning" for f in peer.feedback) >= 2, 30.0, "both plans started")
        cancels = [h.cancel_goal_async() for h in handles]
        peer.spin_until(lambda: all(c.done() for c in cancels), what="the cancels' answers")
        for c in cancels:
            assert c.result().return_code == CancelGoal.Response.ERROR_NONE, "a cancel came too late"
        for h in handles:
            r = peer.result(h)
            assert r.status == GoalStatus.STATUS_CANCELED, r
            assert r.result.error_msg.endswith("cancelled by the action client"), r.result.error_msg
            assert len(r.result.path.poses) == 0
        peer.spin_until(lambda: len(peer.statuses) >= n_status + 2, what="both goals' statuses")
        assert all("cancelled by the action client" in s.message for s in peer.statuses[n_status:]), \
            [s.message for s in peer.statuses[n_status:]]
        assert_neither_published_nor_followed(node, peer, n_paths, n_traj)
        assert not second_paths, "the second vehicle's cancelled plan was published"
    finally:
        peer.close()
        node.stop()
