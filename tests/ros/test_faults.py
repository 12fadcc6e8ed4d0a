"""Faults (issue 6, robustness): the map publisher restarts with a new map, the node is killed
mid-stream and restarted (it recovers its map from the latched /map), and the LDDB cache file is
truncated or corrupted (detected, rebuilt, valid again, logged), for the node and the CLI."""

import hashlib
import os
import pathlib
import select
import socket
import subprocess
import sys
import time

import pytest

from blockstar_planner_msgs.msg import PlannerStatus as S

from helpers import CLI_BIN, Peer, assert_path_valid, make_grid, resend_until, start_node, start_pose_line, tmpdir

RES = 0.1
W, H = 60, 40
DOOR = range(15, 26)


def processes(marker, tag=None):
    """Pids of the processes whose command line holds `marker` and, with `tag`, whose
    environment holds BLOCKSTAR_TEST_TAG=`tag`. pgrep sees the whole machine, and another test
    session (a second checkout's run, a second CI job) starts nodes of the same names: only the
    tag tells this test's own apart."""
    out = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout
    pids = [int(pid) for pid in out.split()]
    if tag is None:
        return pids
    needle = f"BLOCKSTAR_TEST_TAG={tag}".encode()
    own = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    own.append(pid)
        except OSError:  # gone meanwhile, or not ours to read
            pass
    return own


def unique_tag():
    """A BLOCKSTAR_TEST_TAG value no other process on the machine carries."""
    return f"{os.getpid()}_{time.monotonic_ns()}"


def cell_center(cx, cy):
    return ((cx + 0.5) * RES, (cy + 0.5) * RES)


def walled(door_open):
    """A room split by a wall at x = 30; with door_open it has a door at rows 15..25."""

    def blocked(x, y):
        border = x in (0, W - 1) or y in (0, H - 1)
        return border or (x == 30 and not (door_open and y in DOOR))

    return blocked


def larger_open(x, y):
    """The open room framed by 10 more cells left and right and 5 above and below (origin moved
    by (-1.0, -0.5) m, so the wall stays where it was in the world)."""
    if 10 <= x < W + 10 and 5 <= y < H + 5:
        return walled(True)(x - 10, y - 5)
    return x in (0, W + 19) or y in (0, H + 9)


CLOSED = make_grid(W, H, RES, (0.0, 0.0), walled(False))
OPEN = make_grid(W, H, RES, (0.0, 0.0), walled(True))
START = cell_center(10, 20)
BEYOND = cell_center(50, 20)  # behind the wall: reachable only through the door


def wait_start(peer, node, x, y, timeout=30.0):
    """Publishes the start until the node logs it (after a restart, discovery takes a moment and
    /initialpose is not latched)."""
    line = start_pose_line(x, y)  # this pose's line, not an earlier one logged late
    before = node.count(line)
    try:
        resend_until(lambda: peer.set_start(x, y, 0.0), lambda: node.count(line) > before, peer.spin_until,
                     "the start pose", timeout, every=1.0)
    except AssertionError as e:
        raise AssertionError(f"{e}:\n{node.log()}") from None


@pytest.mark.parametrize("new_geometry", [False, True], ids=["same-geometry", "new-geometry"])
def test_map_publisher_restart_delivers_the_new_map(new_geometry):
    tag = "mr" + ("g" if new_geometry else "s")
    tmp = tmpdir("blockstar-maprestart-")
    node = start_node(tmp, f"planner_{tag}", {"robot_radius": 0.15}, remap_prefix=f"/{tag}")
    first = Peer(f"peer_{tag}", prefix=f"/{tag}", node_name=f"planner_{tag}")
    publisher = Peer(f"mapserver_{tag}_1", prefix=f"/{tag}", node_name=f"planner_{tag}")
    try:
        first.wait_connected()
        publisher.wait_connected()
        publisher.publish_map(CLOSED, node)
        first.set_start(*START, 0.0, node_proc=node)
        status, _ = first.plan(*BEYOND)
        assert status.code == S.NO_VALID_PATH, status.message  # the closed map is in use
        # The map server goes away and a new one (a fresh transient-local publisher) comes up
        # with a new version of the map: the door is open (and, for new-geometry, the map is
        # larger and has another origin, so everything is rebuilt rather than patched).
        publisher.close()
        new_map = make_grid(W + 20, H + 10, RES, (-1.0, -0.5), larger_open) if new_geometry else OPEN
        in_use = node.count("m/cell in use")
        publisher = Peer(f"mapserver_{tag}_2", prefix=f"/{tag}", node_name=f"planner_{tag}")
        publisher.map_pub.publish(new_map)  # before discovery: transient local delivers it later
        publisher.spin_until(lambda: node.count("m/cell in use") > in_use, what="the new map in use")
        status, path = first.plan(*BEYOND)
        assert status.code == S.SUCCESS, status.message
        assert_path_valid(path, new_map, START, BEYOND)
    finally:
        first.close()
        publisher.close()
        node.stop()


def test_node_killed_and_restarted_recovers_the_latched_map():
    tmp = tmpdir("blockstar-noderestart-")
    params = {"robot_radius": 0.15}
    node = start_node(tmp, "planner_nr", params, remap_prefix="/nr")
    peer = Peer("peer_nr", prefix="/nr", node_name="planner_nr")
    try:
        peer.wait_connected()
        peer.publish_map(OPEN, node)  # published once, never again
        peer.set_start(*START, 0.0, node_proc=node)
        status, path = peer.plan(*BEYOND)
        assert status.code == S.SUCCESS, status.message
        # Killed mid-stream: goals keep coming while it is down (they are lost with it).
        for _ in range(5):
            peer.send_goal(*BEYOND)
        node.proc.kill()
        node.proc.wait()
        node.stop()
        for _ in range(5):
            peer.send_goal(*BEYOND)
        peer.spin(0.2)
        # A new process of the same node: its map comes from the latched /map of the peer.
        node = start_node(tmp, "planner_nr", params, remap_prefix="/nr")
        node.wait_log("m/cell in use", 1, timeout=30)
        wait_start(peer, node, *START)
        # Its goal reader may be matched later than its start reader, and the dead process's
        # reader still counts as matched until its lease ends: sent again until answered.
        status, path = peer.plan(*BEYOND, resend_every=2.0)
        assert status.code == S.SUCCESS, status.message
        assert_path_valid(path, OPEN, START, BEYOND)
        assert node.alive()
    finally:
        peer.close()
        node.stop()


def sha256(path):
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


def truncate(data):
    return data[: len(data) // 3]


def flip_bytes(data):
    b = bytearray(data)
    for at in (len(b) // 2, len(b) - 5, 100):
        b[at] ^= 0xFF
    return bytes(b)


@pytest.fixture(scope="module")
def cache_dir():
    """A private cache directory holding a freshly built, valid LDDB file, and its hash."""
    d = tmpdir("blockstar-cache-")
    env = dict(os.environ, BLOCKSTAR_CACHE_DIR=str(d))
    out = subprocess.run([str(CLI_BIN), "lddb", "info"], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    files = list(d.glob("lddb-*.bin"))
    assert len(files) == 1, files
    return d, files[0], sha256(files[0])


def node_with_cache(tmp, cache, name):
    old = os.environ.get("BLOCKSTAR_CACHE_DIR")
    os.environ["BLOCKSTAR_CACHE_DIR"] = str(cache)
    try:
        return start_node(tmp, name, {"robot_radius": 0.15})
    finally:
        if old is None:
            del os.environ["BLOCKSTAR_CACHE_DIR"]
        else:
            os.environ["BLOCKSTAR_CACHE_DIR"] = old


@pytest.mark.parametrize("damage", [truncate, flip_bytes], ids=["truncated", "flipped-bytes"])
def test_node_detects_rebuilds_and_logs_a_corrupt_cache(cache_dir, damage):
    d, file, good_hash = cache_dir
    tmp = tmpdir("blockstar-cachenode-")
    # A valid cache is loaded, and says so.
    node = node_with_cache(tmp, d, "planner_cache_ok")
    node.stop()
    assert "LDDB loaded from cache" in node.log(), node.log()
    file.write_bytes(damage(file.read_bytes()))
    node = node_with_cache(tmp, d, "planner_cache_bad")
    try:
        log = node.log()
        assert "[WARN]" in log and "was corrupt or unusable and has been rebuilt" in log, log
        assert str(file) in log and "cache written" in log, log
    finally:
        node.stop()
    assert sha256(file) == good_hash  # rewritten, byte for byte the valid file
    node = node_with_cache(tmp, d, "planner_cache_again")
    node.stop()
    assert "LDDB loaded from cache" in node.log(), node.log()


@pytest.mark.parametrize("damage", [truncate, flip_bytes], ids=["truncated", "flipped-bytes"])
def test_cli_detects_rebuilds_and_reports_a_corrupt_cache(cache_dir, damage):
    d, file, good_hash = cache_dir
    env = dict(os.environ, BLOCKSTAR_CACHE_DIR=str(d))
    file.write_bytes(damage(file.read_bytes()))
    out = subprocess.run([str(CLI_BIN), "lddb", "info"], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    text = out.stdout + out.stderr
    assert "built" in text and "is invalid" in text and "saved" in text, text
    assert sha256(file) == good_hash
    out = subprocess.run([str(CLI_BIN), "lddb", "info"], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "loaded" in out.stdout + out.stderr, out.stdout + out.stderr


@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
def test_a_script_stopped_by_a_signal_leaves_no_node_running(how, interfaces):
    """scripts/*.py start planner_node in a process group of its own; SIGTERM ends a script as
    Ctrl-C does (its clean-up stops the node) and a script killed outright takes the node with it
    (the kernel interrupts a node whose starter died: helpers.NodeProcess)."""
    import signal

    from helpers import ROOT

    tag = unique_tag()

    def nodes():
        return processes("__node:=fresh_clients_planner", tag)

    script = subprocess.Popen(["python3", str(ROOT / "scripts" / "fresh_clients.py"), "--processes", "1",
                               "--clients", "1", "--rounds", "1000", "--busy", "0",
                               "--node-env", f"BLOCKSTAR_TEST_TAG={tag}"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not nodes() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert nodes(), "the script did not start its node"
        time.sleep(2.0)  # into its rounds
        script.send_signal(getattr(signal, how))
        script.wait(timeout=60)
        deadline = time.monotonic() + 30
        while nodes() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not nodes(), f"planner_node still running after the script got {how}"
    finally:
        if script.poll() is None:
            script.kill()
        for pid in nodes():
            os.kill(pid, signal.SIGKILL)


# Benchmark scripts with a node of their own and an rclpy context: (script, arguments, node name).
BENCH_SCRIPTS = [
    ("nav2_bench.py", ["--map", "config/tb3_sandbox.yaml", "--pairs", "100000"], "planner_bench"),
    ("fleet_bench.py", ["--map", "config/tb3_sandbox.yaml", "--pairs", "100000"], "planner_fleet_bench"),
    ("chaos_bench.py", ["--duration", "600"], "planner_node"),
]


@pytest.mark.parametrize("how", ["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("script,args,node_name", BENCH_SCRIPTS, ids=[s for s, _, _ in BENCH_SCRIPTS])
def test_a_bench_stopped_by_a_signal_stops_its_node_itself(script, args, node_name, how):
    """A benchmark script stopped mid-run with Ctrl-C (SIGINT) or SIGTERM stops its node in its
    own clean-up: with the kernel's backstop off (no signal to the node at the script's death),
    the node is gone by the time the script has exited, and with SIGTERM the script ends through
    its handler, not killed by the signal. (After Ctrl-C rclpy shuts its context down itself; the
    scripts' `rclpy.shutdown()` then raised in their clean-up before the node's stop.)"""
    import signal

    from helpers import ROOT

    tag = unique_tag()

    def nodes():
        return processes(f"__node:={node_name}", tag)

    script = subprocess.Popen(["python3", str(ROOT / "scripts" / script), *args], cwd=ROOT,
                              env=dict(os.environ, BLOCKSTAR_TEST_TAG=tag, BLOCKSTAR_TEST_NO_BACKSTOP="1"),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not nodes() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert nodes(), "the script did not start its node"
        time.sleep(3.0)  # into its run (a signal before it is handled the same way)
        script.send_signal(getattr(signal, how))
        code = script.wait(timeout=60)
        assert not nodes(), f"planner_node still running when the script exited after {how}"
        if how == "SIGTERM":
            assert code != -signal.SIGTERM, "the script was killed by SIGTERM, not stopped by its handler"
    finally:
        if script.poll() is None:
            script.kill()
        for pid in nodes():
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("via", ["pytest", "scripts/signals.sh", "scripts/beside.sh"])
def test_the_suite_stopped_by_sigterm_stops_and_takes_its_nodes_with_it(via, interfaces):
    """A CI runner cancelling the test command sends pytest SIGTERM: the session must end (as on
    Ctrl-C, its fixtures torn down) and no node it started may run on. An inner pytest session
    with this directory's conftest starts a node in a fixture, calls rclpy.init() as the peers
    do (rclpy then handles SIGTERM itself), and waits; it gets SIGTERM. `via` "pytest": the
    signal goes to pytest itself; "scripts/signals.sh": pytest runs as scripts/test.sh runs its
    steps (`run_forwarding`), and only the bash script gets the signal, as `kill <pid of
    test.sh>` or `timeout` sends it (bash alone would exit and leave the step running);
    "scripts/beside.sh": the same, with a command run beside pytest as test.sh runs the fuzz
    step beside the ROS tests, which must stop too."""
    import signal
    import textwrap

    from helpers import ROOT

    tag = unique_tag()

    def nodes():
        return processes("__node:=sigterm_suite_planner", tag)

    work = tmpdir("sigterm_suite")
    inner = work / "test_inner_waits.py"
    inner.write_text(textwrap.dedent("""
        import time

        import pytest
        import rclpy

        from helpers import start_node


        @pytest.fixture
        def node(tmp_path):
            started = start_node(tmp_path, "sigterm_suite_planner", {"robot_radius": 0.1})
            yield started
            started.stop()


        def test_waits(node):
            if not rclpy.ok():
                rclpy.init()
            print("INNER READY", flush=True)
            time.sleep(600)
    """))
    # The tag reaches the node through the inner session's environment.
    env = dict(os.environ, BLOCKSTAR_TEST_TAG=tag,
               PYTHONPATH=os.pathsep.join([str(ROOT / "tests" / "ros"), os.environ.get("PYTHONPATH", "")]))
    def sessions():
        return processes(str(inner))

    command = [sys.executable, "-m", "pytest", str(inner), "-p", "conftest", "-p", "no:cacheprovider", "-s", "-q",
               "--rootdir", str(work)]
    # The command beside pytest (scripts/beside.sh): a process found by its marker.
    beside_marker = f"beside_marker_{os.getpid()}"

    def beside():
        # Anchored at the end: the sleeper's command line ends with the marker, while those of
        # the scripts that start it carry it in the middle of theirs.
        return processes(f"{beside_marker}$")

    if via == "scripts/beside.sh":
        sleeper = [sys.executable, "-c", "import sys, time; time.sleep(600)", beside_marker]
        command = ["bash", str(ROOT / "scripts" / "beside.sh"), "sleeper", *sleeper, "--", "pytest"] + command
    if via != "pytest":
        runner = f'source "{ROOT / "scripts" / "signals.sh"}"; run_forwarding "$@"'
        command = ["bash", "-c", runner, "test.sh"] + command
    session = subprocess.Popen(command, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output = []
    try:
        for line in session.stdout:
            output.append(line)
            if "INNER READY" in line:
                break
        assert nodes(), "the inner session did not start its node:\n" + "".join(output)
        if via == "scripts/beside.sh":
            assert beside(), "the command beside pytest is not running:\n" + "".join(output)
        session.send_signal(signal.SIGTERM)
        try:
            rest, _ = session.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            raise AssertionError("pytest ran on for 60 s after SIGTERM:\n" + "".join(output))
        output.append(rest)
        deadline = time.monotonic() + 30
        while nodes() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not nodes(), "planner_node still running after its session got SIGTERM:\n" + "".join(output)
        assert not sessions(), "the inner pytest still running after SIGTERM:\n" + "".join(output)
        while beside() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not beside(), "the command beside pytest still running after SIGTERM:\n" + "".join(output)
        assert session.returncode != 0, "".join(output)
    finally:
        if session.poll() is None:
            session.kill()
        for pid in nodes() + sessions() + beside():
            os.kill(pid, signal.SIGKILL)


def test_a_session_runs_in_a_domain_no_other_participant_uses():
    """Two test sessions in one ROS domain talk to each other's nodes (a second CI job on this
    machine, at the same checkout path, gets scripts/env.sh's same domain): the session takes a
    domain nobody uses (conftest.py, scripts/ros_domain.py). Here another process holds a domain
    with an rclpy participant, and a session told to use that domain moves to a free one."""
    import ros_domain

    occupied = ros_domain.free_domain()
    assert occupied is not None
    env = _outside_env(occupied)
    other = _participant(occupied, "other_session")
    try:
        _wait_up(other)
        assert ros_domain.in_use(occupied), f"the other participant does not hold domain {occupied}'s ports"
        assert occupied not in {ros_domain.free_domain() for _ in range(200)}
        here = pathlib.Path(__file__).resolve().parent
        out = subprocess.run([sys.executable, "-m", "pytest", str(here / "test_node.py"), "--collect-only",
                              "-p", "no:cacheprovider"], env=env, capture_output=True, text=True, timeout=120)
        header = [line for line in out.stdout.splitlines() if line.startswith("ROS_DOMAIN_ID=")]
        assert header, out.stdout[-2000:] + out.stderr[-2000:]
        chosen = int(header[0].split("=", 1)[1])
        assert chosen != occupied and chosen in ros_domain.TEST_DOMAINS, header
    finally:
        _stop(other)


def _outside_env(domain):
    """This environment in `domain`, without this session's domain choice (as another session's)."""
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain))
    for key in ("BLOCKSTAR_TEST_DOMAIN", "BLOCKSTAR_ROS_DOMAIN_ID", "BLOCKSTAR_KEEP_ROS_NETWORK"):
        env.pop(key, None)
    return env


def _participant(domain, name):
    """A process with one rclpy participant in `domain` (outside this session's domain rules)."""
    env = _outside_env(domain)
    return subprocess.Popen([sys.executable, "-c", f"import rclpy, time\nrclpy.init()\nn = rclpy.create_node('{name}')\n"
                             "print('up', flush=True)\ntime.sleep(120)"], env=env, stdout=subprocess.PIPE, text=True)


def _wait_up(process):
    """Waits (at most 30 s) for a _participant to have its participant."""
    ready = select.select([process.stdout], [], [], 30)[0]
    assert ready and process.stdout.readline().strip() == "up", f"exit status {process.poll()}"


def _stop(process):
    if process is not None:
        process.kill()
        process.wait()
        process.stdout.close()


def test_a_domain_whose_first_participant_left_is_still_in_use():
    """A domain whose first participant (id 0) has exited while a later one runs (another
    session between two of its steps) is still in use."""
    import ros_domain

    left = ros_domain.free_domain()
    first, second = _participant(left, "first"), None
    try:
        _wait_up(first)
        second = _participant(left, "second")
        _wait_up(second)
        _stop(first)
        first = None
        id0_free = not any(ros_domain._bound(socket.SOCK_DGRAM, p) for p in ros_domain.unicast_ports(left, 0))
        assert id0_free, f"participant 0 of domain {left} is still bound after its process ended"
        assert ros_domain.in_use(left)
    finally:
        _stop(first)
        _stop(second)


def test_domains_are_reserved_as_ros_domain_coordinator_reserves_them():
    """This session holds its domain reserved; a domain ROS's domain_coordinator (what
    launch_testing's isolated tests take theirs from) holds is not taken, and the reverse."""
    import domain_coordinator
    import ros_domain

    if os.environ.get("BLOCKSTAR_TEST_DOMAIN"):
        assert ros_domain.reserve(int(os.environ["BLOCKSTAR_TEST_DOMAIN"])) is None, "the session's domain is not held"
    theirs = ros_domain.free_domain()
    with domain_coordinator.domain_id(selector=lambda: theirs) as held:
        assert held == theirs and ros_domain.in_use(theirs) and ros_domain.reserve(theirs) is None
    ours, reservation = ros_domain.claim_free_domain()
    assert ours is not None, "no free domain"
    try:
        choices = iter([ours, 100])
        with domain_coordinator.domain_id(selector=lambda: next(choices)) as held:
            assert held == 100, f"domain_coordinator took domain {held}, which this session holds"
    finally:
        reservation.close()
