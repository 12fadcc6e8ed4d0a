"""planner_node under load (issue 6, robustness): the full protocol of scripts/load_bench.py
(100 goals/s for 60 s while /map changes 10 times a second) and a burst of goals sent at once.
Asserted: a status for every goal (SUCCESS or SUPERSEDED, exactly one each), the node answers a
fresh goal afterwards, the heap it holds flat after a warm-up (bytes from its /diagnostics), its
resident memory flat, and the last goal's /plan legal on the final map (checked in Python). No wall-clock latency is asserted; the benchmark prints it."""

import sys

from blockstar_planner_msgs.msg import PlannerStatus as S
from rclpy.qos import QoSProfile

from helpers import ROOT, STATUS_QOS, start_node, tmpdir

sys.path.insert(0, str(ROOT / "scripts"))
import load_bench  # noqa: E402

MIB = 1024  # KiB


def test_a_burst_of_goals_gets_one_status_each():
    """500 goals published back to back (a client catching up after a pause): the default
    subscription depth and r2r's 10-deep channels used to drop most of them without a status."""
    tmp = tmpdir("blockstar-burst-")
    node = start_node(tmp, load_bench.NODE_NAME, load_bench.NODE_PARAMS,
                      remap_prefix=load_bench.PREFIX)
    client = load_bench.Client("burst_client")
    try:
        client.spin_until(lambda: client.goal_pub.get_subscription_count() > 0
                          and client.map_pub.get_subscription_count() > 0, 30, "discovery")
        client.map_pub.publish(load_bench.bench_map(False, 0))
        node.wait_log("m/cell in use", 1)
        client.set_start(node, *load_bench.cell_center(*load_bench.START_CELL), 0.0)
        cells = load_bench.goal_cells()
        n = 500
        for gid in range(1, n + 1):
            client.send_goal(gid, *load_bench.cell_center(*cells[(gid * 7919) % len(cells)]), 0.0)
        def wait_for_every_goal(answers, timeout, what):
            try:
                client.spin_until(lambda: all(g in answers for g in range(1, n + 1)), timeout, what)
            finally:
                missing = [g for g in range(1, n + 1) if g not in answers]
                assert not missing, f"{len(missing)} goals without {what}, e.g. {missing[:10]}"

        wait_for_every_goal(client.statuses, 60, "a status")
        client.spin_for(0.3)
        assert all(len(a) == 1 for a in client.statuses.values()), "a goal got two statuses"
        codes = {g: a[0][1].code for g, a in client.statuses.items()}
        assert set(codes.values()) <= {S.SUCCESS, S.SUPERSEDED}, {a[0][1].code_name for a in client.statuses.values()}
        # Latest wins: the last goal of the burst is planned.
        assert codes[n] == S.SUCCESS
        # A reader matched only after the whole burst was answered (the extreme of one matched
        # while the burst goes out) still gets every answer from the status history: at a
        # history of 20 a loaded run lost the burst's first answer to the reader's late match.
        late = {}
        late_qos = QoSProfile(history=STATUS_QOS.history, depth=10 * n, reliability=STATUS_QOS.reliability,
                              durability=STATUS_QOS.durability)
        client.node.create_subscription(
            S, f"/{load_bench.NODE_NAME}/status",
            lambda m: late.setdefault(m.goal.header.stamp.sec, m.code), late_qos)
        wait_for_every_goal(late, 30, "an answer replayed to a late reader")
        assert {g: late[g] for g in codes} == codes
        assert node.alive()
    finally:
        client.close()
        node.stop()


# Heap the node may gain between the end of the warm-up and the end of the run (see the test).
HEAP_ALLOWANCE = 1024 * 1024  # bytes


def test_sixty_seconds_of_goals_while_the_map_changes():
    """The load benchmark's protocol, with a soak check: after a 20 s warm-up (the planning threads
    and their bounded working memory in place), the heap the node holds (its /diagnostics, from
    the counting allocator: bytes, not time) grows by no more than HEAP_ALLOWANCE to the end of
    6000 goals (the resident growth measured before the Dubins memo was bounded, about 1.9 KB per
    goal, would be 7.6 MB over these 4000 goals)."""
    report = load_bench.run(duration=60.0, goal_rate=100.0, map_rate=10.0, log=lambda s: None, warmup=20.0)
    summary = {k: v for k, v in report.items() if k not in ("rss_kib", "heap_bytes", "heap_less_thread_stores_bytes")}
    codes = report["statuses_by_code"]
    assert report["missing_statuses"] == 0, summary
    assert report["duplicate_statuses"] == 0, summary
    assert set(codes) <= {"SUCCESS", "SUPERSEDED"}, summary
    assert report["stream_goals"] == 6000, summary  # 60 s x 100 goals/s
    assert sum(codes.values()) == report["goals_sent"] == 6001, summary  # the stream + the last goal
    assert codes.get("SUCCESS", 0) > 0, summary
    assert report["last_goal"]["legal_on_final_map"], report["last_goal"]
    assert report["fresh_goal_after_load"] == "SUCCESS", summary
    assert report["node_alive"], summary
    heap = report["heap_bytes"]
    assert heap is not None and len(heap["samples"]) >= 55, heap  # /diagnostics once a second
    # Judged less the planning threads' own stores (/diagnostics' thread_stores_bytes: search
    # scratch and curve memos): each of the node's up to three planning threads allocates its
    # copies at its first plan, which may come after the warm-up (a one-time step of about 2.7 MB,
    # the same in every run; it read as growth in 2 of 4 clean runs). Everything else stays flat.
    held = report["heap_less_thread_stores_bytes"]
    assert held["end"] - held["after_warmup"] <= HEAP_ALLOWANCE, {
        "less thread stores": {k: v for k, v in held.items() if k != "samples"},
        "heap": {k: v for k, v in heap.items() if k != "samples"},
    }
    # The resident set (which also holds what the C allocator keeps after a free) stays within
    # 20 % plus 8 MiB of its value at the middle.
    rss = report["rss_kib"]
    bound = 1.2 * rss["middle"] + 8 * MIB
    assert rss["end"] <= bound and rss["max_after_warmup"] <= 1.2 * rss["after_warmup"] + 8 * MIB, rss
    assert len(rss["samples"]) >= 55, rss  # sampled every second of the run


def test_a_minute_of_faults_under_load():
    """scripts/chaos_bench.py for 60 s (the README's figures are from 10 minutes at 50 goals/s):
    25 goals/s through Nav2's compute_path_to_pose from four clients (the bench's rclpy clients,
    all in this process, keep up with 25 a second with both cores busy beside them, not always
    with 50: README "Fault soak") while, every 2 s on average, the map
    server restarts, TF stalls, simulated time jumps back, the node is deactivated and
    re-activated, parameters change or malformed input arrives. Every goal answered exactly once,
    the plans after each fault legal on the map in force, the node alive and without a panic.
    (Resident memory is judged on the long run; a minute is mostly warm-up.)"""
    import chaos_bench

    r = chaos_bench.run(duration=60.0, goal_rate=25.0, n_clients=4, fault_interval=2.0, seed=7, log=lambda s: None)
    summary = {k: v for k, v in r.items() if k != "illegal"}
    assert not r["failures"], (r["failures"], f"latency by client (ms): {r['latency_by_client_ms']}", summary)
    # The schedule (60 s x 25 goals/s) is sent in full; faults may add goals of their own.
    assert r["goals_sent"] >= 1500 and r["goals_answered"] == r["goals_sent"], summary
    assert set(r["faults"]) == set(chaos_bench.FAULTS), summary
    assert r["answers"].get("NONE", 0) > 0, summary
    assert r["plans_checked_after_faults"] >= 10, summary


def test_bursts_of_action_goals_from_several_clients_are_each_answered():
    """Issue 29, item 1, under bursts: 3 bursts of 600 compute_path_to_pose goals sent at once from
    four action clients (their own response queues deep enough to hold the answers: rclpy's
    default of 10 loses the oldest of a burst in the client, README "Action and service
    responses"). r2r hands the node one request per service per spin through a 10-deep channel
    that drops when full; the action servers' tasks now pace the spins too (ros::spin_gate), so
    every goal is accepted and answered, and no request is dropped (r2r logs each drop)."""
    import chaos_bench
    import rclpy

    tmp = tmpdir("blockstar-action-bursts-")
    node = start_node(tmp, "planner_node", chaos_bench.NODE_PARAMS, extra_args=["-r", f"__ns:=/{chaos_bench.NS}"])
    if not rclpy.ok():
        rclpy.init()  # as the other peers do: left running for the rest of the suite
    bench = chaos_bench.Bench(4, seed=3)
    try:
        bench.publish_static()
        bench.publish_map()
        bench.spin_until(lambda: bench.map_pub.get_subscription_count() > 0
                         and all(ac.server_is_ready() for _, ac in bench.clients), 30, "discovery")
        node.wait_log("m/cell in use", 1, timeout=30)
        for _ in range(3):
            for _ in range(600):
                bench.send(bench.random_pose(), bench.random_pose())
            bench.spin_until(lambda: all(g.answers for g in bench.goals), 120, "every goal answered")
        bench.spin(0.5)
        assert all(g.answers == 1 for g in bench.goals), "a goal answered twice"
        assert all(g.accepted for g in bench.goals), "a goal refused"
        assert "could not send service request" not in node.log()
        assert node.alive()
    finally:
        bench.close()
        node.stop()


def test_the_chaos_bench_serves_its_clients_in_turn():
    """The soak's judge must not lose answers itself. Four of its clients each have 100 messages
    waiting; the bench's spinning serves them in turn, every client a share of the first 40.
    With a timeout that varied from one spin_once to the next (the bench before), rclpy's
    executor served one entity per wait, the first in its order of nodes, so one client took all
    of the first 40 while the others waited: under load, goal responses seconds late and results
    asked for after they expired (chaos_bench.SPIN_TIMEOUT)."""
    import collections
    import time

    import chaos_bench
    import rclpy
    from rclpy.duration import Duration
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from std_msgs.msg import UInt32

    if not rclpy.ok():
        rclpy.init()  # as the other peers do: left running for the rest of the suite
    deep = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
    bench = chaos_bench.Bench(4, seed=5)
    feeder = rclpy.create_node("fairness_feeder")
    got = []
    try:
        topics = [f"/chaos_fairness_{i}" for i in range(len(bench.clients))]
        pubs = [feeder.create_publisher(UInt32, t, deep) for t in topics]
        for i, ((client_node, _), topic) in enumerate(zip(bench.clients, topics)):
            client_node.create_subscription(UInt32, topic, lambda m, i=i: got.append(i), deep)
        bench.spin_until(lambda: all(p.get_subscription_count() > 0 for p in pubs), 20, "discovery")
        for k in range(100):
            for p in pubs:
                p.publish(UInt32(data=k))
        # All in the readers' queues before the bench takes any: a reliable reader acknowledges a
        # message only once it holds it.
        for p in pubs:
            assert p.wait_for_all_acked(Duration(seconds=30)), "the messages never reached the clients"
        end = time.monotonic() + 20
        while len(got) < 40 and time.monotonic() < end:
            bench.spin(0.002)
        first = collections.Counter(got[:40])
        assert len(got) >= 40, f"only {len(got)} messages taken in 20 s"
        assert len(first) == 4 and min(first.values()) >= 5, f"messages taken per client among the first 40: {first}"
    finally:
        bench.close()
        feeder.destroy_node()
