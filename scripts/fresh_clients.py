"""Fresh action clients against planner_node: does every goal's acceptance arrive?

    python3 scripts/fresh_clients.py [--processes 6] [--clients 4] [--rounds 3] [--in-process 20]
        [--busy 2] [--response-wait default|fastdds|MS] [--json]

Nav2's behaviour tree sends compute_path_to_pose the moment it discovers the planner server. Fast
DDS drops a service response when the client's response reader is not yet matched by the server
within its writer's max_blocking_time (ros2/rmw_fastrtps#467, #704); planner_node sends a refused
response again, in short attempts (src/ros/dds_profile.rs, src/ros/responder.rs). This starts planner_node (the colcon install,
as the test suite does), publishes a map, then in each round starts --processes client processes
at once, each making --clients fresh rclpy nodes one after another (a new DDS participant each),
each with a fresh ActionClient that sends compute_path_to_pose the moment wait_for_server returns
and waits for the acceptance and the result; then --in-process fresh ActionClients in this process
on one node, each sending the moment it finds the server. --busy N runs N busy loops beside it all.
A goal whose acceptance does not arrive within 60 s is counted lost; one that arrives after 10 s
is answered but counted late as well (an answer normally takes milliseconds; on an overloaded
machine a late answer is slow, not lost, so only losses fail the run). The node's log is searched for the rmw's refusals:
responses given up ("could not answer") and responses sent again until they arrived ("matched
late").

--response-wait chooses the node's Fast DDS profile: `default` is the node's own (20 ms per
attempt for its own services, 5 s for others), `fastdds` a profiles file without the `service` profile (Fast DDS's 100 ms: the node as
it first was), MS a profile waiting MS milliseconds (0 makes the race visible on any machine;
5000 is the node's own until 2026-12-06).

The node is stopped on every exit (normal, an exception, SIGINT, SIGTERM). Prints a summary (JSON
with --json); exits 1 when a goal went unanswered.
"""

import argparse
import array
import json
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "ros"))
from helpers import exit_on_sigterm, interrupt_when_parent_dies  # noqa: E402

NODE_NAME = "fresh_clients_planner"
# The node's namespace, and so its actions'.
NAMESPACE = "/fresh_clients"
ACTION = f"{NAMESPACE}/compute_path_to_pose"
ACCEPT_TIMEOUT = 60.0
# An acceptance slower than this is counted late (an answered goal takes milliseconds).
LATE = 10.0
RESULT_TIMEOUT = 30.0
# A 4 x 4 m room at 5 cm, walls all round and a pillar in the middle; start and goal either side.
SIDE, RES = 80, 0.05
START = (0.6, 2.0, 0.0)
GOAL = (3.4, 2.0, 0.0)
NODE_PARAMS = {"robot_radius": 0.15, "min_turning_radius": 0.3, "map_file": ""}

PROFILE_TEMPLATE = """<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns="http://www.eprosima.com/XMLSchemas/fastRTPS_Profiles">
  <profiles>
    {writer}
  </profiles>
</dds>
"""
SERVICE_WRITER = """<data_writer profile_name="service"><qos><reliability><kind>RELIABLE</kind>
      <max_blocking_time><sec>{sec}</sec><nanosec>{nanosec}</nanosec></max_blocking_time>
    </reliability></qos></data_writer>"""


def room_blocked(x, y):
    edge = x in (0, SIDE - 1) or y in (0, SIDE - 1)
    return edge or (36 <= x < 44 and 30 <= y < 50)


def profile_file(tmp, response_wait):
    """The FASTRTPS_DEFAULT_PROFILES_FILE for the node, or None for the node's own choice."""
    if response_wait == "default":
        return None
    if response_wait == "fastdds":
        writer = '<data_writer profile_name="not_service"/>'  # parses; no `service`: Fast DDS's 100 ms
    else:
        ms = float(response_wait)
        if not 0 <= ms < 60000:
            raise SystemExit("--response-wait: default, fastdds, or milliseconds in [0, 60000)")
        writer = SERVICE_WRITER.format(sec=int(ms // 1000), nanosec=int(ms % 1000 * 1e6))
    path = pathlib.Path(tmp) / "profile.xml"
    path.write_text(PROFILE_TEMPLATE.format(writer=writer))
    return path


def goal_message(action, stamp_sec):
    from helpers import pose_stamped

    goal = action.Goal()
    goal.goal = pose_stamped(*GOAL, stamp_sec=stamp_sec)
    goal.start = pose_stamped(*START)
    goal.use_start = True
    return goal


def one_client(node, executor, action, name, serial):
    """A fresh ActionClient on `node` (spun by `executor`): sends the moment the server is found.
    Returns 'answered', 'answered-late' (accepted after LATE s, then answered), 'rejected',
    'lost-request' or 'lost-response' (no acceptance in ACCEPT_TIMEOUT s; see where_lost),
    'no-result' or 'no-server'."""
    import uuid

    from rclpy.action import ActionClient
    from unique_identifier_msgs.msg import UUID

    from action_msgs.msg import GoalStatusArray
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

    client = ActionClient(node, action, name)
    # The server's goal statuses, to tell a goal it never received from one whose answer was lost.
    seen = set()
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    statuses = node.create_subscription(
        GoalStatusArray, f"{name}/_action/status",
        lambda msg: seen.update(bytes(s.goal_info.goal_id.uuid) for s in msg.status_list), latched)
    try:
        if not client.wait_for_server(timeout_sec=30.0):
            return "no-server"
        goal_id = UUID(uuid=list(uuid.uuid4().bytes))
        future = client.send_goal_async(goal_message(action, serial), goal_uuid=goal_id)
        t0 = time.monotonic()
        executor.spin_until_future_complete(future, timeout_sec=LATE / 2)
        lost = None if future.done() else where_lost(node, executor, name, goal_id)
        if lost is not None and bytes(goal_id.uuid) in seen:
            lost += "+in-status"
        executor.spin_until_future_complete(future, timeout_sec=max(0.0, ACCEPT_TIMEOUT - (time.monotonic() - t0)))
        if not future.done():
            return lost
        late = time.monotonic() - t0 > LATE
        handle = future.result()
        if not handle.accepted:
            return "rejected"
        result = handle.get_result_async()
        executor.spin_until_future_complete(result, timeout_sec=RESULT_TIMEOUT)
        if not result.done():
            return "no-result"
        return "answered-late" if late else "answered"
    finally:
        node.destroy_subscription(statuses)
        client.destroy()


def where_lost(node, executor, name, goal_id):
    """Asks the server, on its cancel service, about goal `goal_id` whose acceptance has not
    arrived: 'lost-request' when it does not know the goal (the request never reached it),
    'lost-response' when it does (it accepted the goal, its answer did not arrive). A goal the
    server finished is known for 60 s after while nobody asked for its result (10 s once asked:
src/ros/action_server.rs), so this asks early."""
    from action_msgs.srv import CancelGoal

    cancel = node.create_client(CancelGoal, f"{name}/_action/cancel_goal")
    try:
        request = CancelGoal.Request()
        request.goal_info.goal_id = goal_id
        future = cancel.call_async(request)
        executor.spin_until_future_complete(future, timeout_sec=LATE)
        if not future.done():
            return "lost-unknown"
        return "lost-request" if future.result().return_code == CancelGoal.Response.ERROR_UNKNOWN_GOAL_ID \
            else "lost-response"
    finally:
        node.destroy_client(cancel)


def worker(clients, tag):
    """A client process: `clients` fresh nodes (participants) one after another; prints a JSON
    list of outcomes."""
    import rclpy
    from nav2_msgs.action import ComputePathToPose
    from rclpy.executors import SingleThreadedExecutor

    outcomes = []
    for k in range(clients):
        context = rclpy.Context()
        context.init()
        node = rclpy.create_node(f"fresh_client_{tag}_{k}", context=context)
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        try:
            outcomes.append(one_client(node, executor, ComputePathToPose, ACTION, k))
        finally:
            executor.shutdown()
            node.destroy_node()
            context.shutdown()
    print(json.dumps(outcomes), flush=True)


def map_publisher(rate):
    """A process that republishes a 2000 x 2000 map (4 MB) to the node `rate` times a second,
    a wall moving in it, so the node takes in large messages and rebuilds what a change touches
    while the clients discover it."""
    import rclpy

    from helpers import LATCHED, make_grid
    from nav_msgs.msg import OccupancyGrid

    rclpy.init()
    node = rclpy.create_node("fresh_clients_map_stream")
    publisher = node.create_publisher(OccupancyGrid, f"{NAMESPACE}/map", LATCHED)
    side, version = 2000, 0
    base = make_grid(side, side, RES / 10, (0.0, 0.0), lambda x, y: x in (0, side - 1) or y in (0, side - 1))
    while rclpy.ok():
        version += 1
        data = bytearray(base.data.tobytes())
        wall = 200 + (version % 10) * 150
        for y in range(200, 1800):
            data[y * side + wall] = 100
        base.data = array.array("b", bytes(data))
        publisher.publish(base)
        rclpy.spin_once(node, timeout_sec=1.0 / rate)


def busy_loops(n):
    code = "while True:\n    pass\n"
    return [subprocess.Popen([sys.executable, "-c", code], start_new_session=True,
                             preexec_fn=interrupt_when_parent_dies) for _ in range(n)]


def count(outcomes):
    summary = {}
    for o in outcomes:
        summary[o] = summary.get(o, 0) + 1
    return summary


def start_planner(tmp, response_wait="default", node_env=None):
    """Starts planner_node NODE_NAME in NAMESPACE with the Fast DDS profile `response_wait`
    chooses (see profile_file) and `node_env` added to its environment. Only the node gets them:
    the clients run as Nav2's do, with Fast DDS's defaults."""
    from helpers import start_node

    env = {k: v for k, v in os.environ.items() if k != "FASTRTPS_DEFAULT_PROFILES_FILE"}
    profile = profile_file(tmp, response_wait)
    if profile is not None:
        env["FASTRTPS_DEFAULT_PROFILES_FILE"] = str(profile)
    env.update(node_env or {})
    return start_node(tmp, NODE_NAME, NODE_PARAMS, extra_args=["-r", f"__ns:={NAMESPACE}"], env=env)


def run(processes=6, clients=4, rounds=3, in_process=20, busy=2, response_wait="default", map_rate=0.0, node_env=None, log=print):
    """Runs the protocol of the module doc; returns the report (a dict)."""
    import rclpy
    from nav2_msgs.action import ComputePathToPose
    from rclpy.executors import SingleThreadedExecutor

    from helpers import Peer, make_grid, tmpdir

    tmp = tmpdir("blockstar-fresh-clients-")
    node = start_planner(tmp, response_wait, node_env)
    loops, children = [], []
    report = {"processes": processes, "clients_per_process": clients, "rounds": rounds, "in_process": in_process,
              "busy_loops": busy, "response_wait": response_wait, "map_rate": map_rate}
    try:
        peer = Peer("fresh_clients_map", prefix=NAMESPACE, node_name=f"{NAMESPACE[1:]}/{NODE_NAME}")
        try:
            peer.wait_connected()
            peer.publish_map(make_grid(SIDE, SIDE, RES, (0.0, 0.0), room_blocked), node)
        finally:
            peer.close()
        loops = busy_loops(busy)
        if map_rate > 0:
            loops.append(subprocess.Popen([sys.executable, __file__, "--map-publisher", str(map_rate)],
                                          start_new_session=True, preexec_fn=interrupt_when_parent_dies))
        outcomes, t0 = [], time.monotonic()
        for r in range(rounds):
            children = [subprocess.Popen([sys.executable, __file__, "--worker", str(clients), f"{r}_{p}"],
                                         stdout=subprocess.PIPE, text=True, start_new_session=True,
                                         preexec_fn=interrupt_when_parent_dies)
                        for p in range(processes)]
            for child in children:
                out, _ = child.communicate(timeout=clients * (ACCEPT_TIMEOUT + RESULT_TIMEOUT + 40))
                lines = [line for line in out.splitlines() if line.startswith("[")]
                outcomes += json.loads(lines[-1]) if lines else ["worker-failed"] * clients
            children = []
            log(f"round {r + 1}/{rounds}: {count(outcomes)}")
        report["separate_processes"] = count(outcomes)
        if in_process:
            context = rclpy.Context()
            context.init()
            own = rclpy.create_node("fresh_clients_in_process", context=context)
            executor = SingleThreadedExecutor(context=context)
            executor.add_node(own)
            try:
                here = [one_client(own, executor, ComputePathToPose, ACTION, 1000 + k) for k in range(in_process)]
            finally:
                executor.shutdown()
                own.destroy_node()
                context.shutdown()
            report["one_process"] = count(here)
            outcomes += here
        report["seconds"] = round(time.monotonic() - t0, 1)
        report["goals"] = len(outcomes)
        report["answered"] = sum(o in ("answered", "answered-late") for o in outcomes)
        report["lost_acceptances"] = sum(o.startswith("lost") for o in outcomes)
        report["late_acceptances"] = outcomes.count("answered-late")
        report["node_refusals_logged"] = node.count("could not answer")
        report["node_late_answers_logged"] = node.count("matched late")
        report["node_alive"] = node.alive()
        report["node_profile_line"] = next((line.strip() for line in node.log().splitlines()
                                            if "Fast DDS profile" in line or "FASTRTPS_DEFAULT" in line), None)
    finally:
        for child in children:
            child.kill()
        for loop in loops:
            loop.kill()
        node.stop()
    return report


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=6)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--in-process", type=int, default=20)
    parser.add_argument("--busy", type=int, default=2)
    parser.add_argument("--response-wait", default="default")
    parser.add_argument("--map-rate", type=float, default=0.0)
    parser.add_argument("--node-env", action="append", default=[], metavar="NAME=VALUE",
                        help="an environment variable for the node only")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--map-publisher", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--worker", nargs=2, metavar=("CLIENTS", "TAG"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(int(args.worker[0]), args.worker[1])
    if args.map_publisher:
        return map_publisher(args.map_publisher)
    exit_on_sigterm()
    report = run(args.processes, args.clients, args.rounds, args.in_process, args.busy, args.response_wait,
                 args.map_rate, dict(kv.split("=", 1) for kv in args.node_env), log=lambda s: print(s, file=sys.stderr, flush=True))
    print(json.dumps(report, indent=2) if args.json else "\n".join(f"{k}: {v}" for k, v in report.items()))
    unanswered = report["goals"] - report["answered"]
    sys.exit(1 if unanswered or not report["node_alive"] else 0)


if __name__ == "__main__":
    main()
