"""Action responses that arrive (issue 29, item 1).

Fast DDS drops a service response when the client's response reader is not matched within the
response writer's max_blocking_time (100 ms by default): the node logged `could not accept a
compute_path_to_pose goal: RCL_RET_TIMEOUT` and its client waited for ever. planner_node runs with
a Fast DDS profile that makes that wait 5 s (src/ros/dds_profile.rs). Here:
fresh rclpy action clients, in separate processes several at a time and in one process, each
sending its goal the moment wait_for_server returns, with both cores busy: every goal accepted and
answered, no refusal logged, and the node says it runs with the profile (scripts/fresh_clients.py,
run short; README, "Action and service responses", has the long runs and their figures).
"""

import sys

from helpers import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import fresh_clients  # noqa: E402


def test_fresh_clients_sending_the_moment_they_find_the_server_are_all_answered(interfaces):
    report = fresh_clients.run(processes=4, clients=3, rounds=2, in_process=20, busy=2, log=lambda s: None)
    assert report["goals"] == 4 * 3 * 2 + 20, report
    assert report["answered"] == report["goals"], report
    assert report["node_refusals_logged"] == 0 and report["node_alive"], report
    assert "wait up to 5 s" in (report["node_profile_line"] or ""), report
