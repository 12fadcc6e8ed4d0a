import importlib.util
import os
import pathlib
import shutil
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "scripts"))

import ros_domain  # noqa: E402


# The reservation of the session's domain (scripts/ros_domain.py), held open for its life.
_DOMAIN_RESERVATION = None


def _use_a_domain_of_our_own():
    """Runs the session in a ROS domain no other process on this machine uses now
    (scripts/ros_domain.py): another test session beside this one, a second CI job on the same
    machine with a checkout at the same path (scripts/env.sh's domain comes from the path),
    would otherwise talk to this session's nodes. Set here, before any participant exists, and
    reserved for the session's life, so that a session starting beside it does not take it
    before its first participant runs; the nodes and tools the tests start inherit it, and so do
    pytest sessions a test starts (they keep the domain they are given, under its reservation).
    A domain the user chose is kept: BLOCKSTAR_ROS_DOMAIN_ID, or BLOCKSTAR_KEEP_ROS_NETWORK=1."""
    global _DOMAIN_RESERVATION
    if os.environ.get("BLOCKSTAR_KEEP_ROS_NETWORK") == "1" or os.environ.get("BLOCKSTAR_ROS_DOMAIN_ID"):
        return
    chosen = os.environ.get("BLOCKSTAR_TEST_DOMAIN")
    if not chosen:
        chosen, _DOMAIN_RESERVATION = ros_domain.claim_free_domain()
    if chosen is not None:
        os.environ["ROS_DOMAIN_ID"] = os.environ["BLOCKSTAR_TEST_DOMAIN"] = str(chosen)


_use_a_domain_of_our_own()

from helpers import NODE_BIN  # noqa: E402


def _missing_ros_tools():
    """Why the real ROS tools (the `ros2` CLI with its verbs, launch and launch_ros) are not
    usable here, or None when they are."""
    if shutil.which("ros2") is None:
        return "no `ros2` command"
    for module in ("launch", "launch_ros", "ros2launch", "ros2param", "ros2action", "ros2interface", "ros2run",
                   "composition_interfaces"):
        if importlib.util.find_spec(module) is None:
            return f"no Python module {module}"
    return None


def pytest_configure(config):
    """SIGTERM (a CI runner cancelling the job, `timeout`, `kill`) ends the session as Ctrl-C
    does: pytest stops, tears its fixtures down and so stops every node a test started. Without
    this, the handler rclpy.init() installs for SIGTERM only shuts the ROS context down (no
    Python handler is there to pass the signal on to), and the session, its nodes with it, runs
    on. Installed before any test calls rclpy.init(), so rclpy's handler passes it on."""
    from helpers import exit_on_sigterm

    exit_on_sigterm()


def pytest_report_header(config):
    return f"ROS_DOMAIN_ID={os.environ.get('ROS_DOMAIN_ID', '0')}"


@pytest.fixture(scope="session", autouse=True)
def colcon_install():
    """Every test here runs the node colcon installed (scripts/build_ws.sh)."""
    if not NODE_BIN.is_file():
        pytest.fail(f"{NODE_BIN} missing: build the workspace first (bash scripts/build_ws.sh)")


@pytest.fixture(scope="session")
def ros_tools():
    """The real ROS tools. Without them (a machine with neither /opt/ros/jazzy nor the
    ../shared/ros_jazzy_extra bundle that scripts/setup.sh installs) the tests that need them are
    skipped with the reason, except under CI=true, where that is a failure."""
    reason = _missing_ros_tools()
    if reason is None:
        return
    message = (f"the real ROS 2 tools are missing ({reason}): install /opt/ros/jazzy, or put ../shared "
               "(ros_jazzy_extra) beside the clone and rerun scripts/setup.sh")
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


# The daemon `ros2_daemon` runs, for `wait_listed` to check it is still there.
_ROS2_DAEMON = None


@pytest.fixture(scope="session")
def ros2_daemon(ros_tools):
    """The `ros2` CLI's daemon for the session's domain, run as a child of the session from the
    first test that asks for it: the CLI then finds nodes through its graph, which it keeps
    current, instead of each command's own discovery (`--no-daemon` spins for a fixed time, twice
    for `param` and `lifecycle`, and 3 s of it once missed the node on a busy machine, so the
    tests waited 6 s a lookup). As a child, it stops with the session (teardown, or SIGTERM
    through it); were the session killed outright, its idle timeout ends it an hour later, where
    the CLI's own would run for two. One for the session: a second one started right after the
    first stopped finds the port still taken. Nodes a test starts are found after
    `wait_listed`."""
    global _ROS2_DAEMON
    import subprocess
    import time

    import rclpy
    from helpers import tmpdir

    domain = os.environ.get("ROS_DOMAIN_ID", "0")
    log = open(tmpdir("ros2-daemon-") / "daemon.log", "w")
    daemon = subprocess.Popen(
        [sys.executable, "-c", "import sys; from ros2cli.daemon import main; main(argv=sys.argv[1:])",
         "--rmw-implementation", rclpy.get_rmw_implementation_identifier(), "--ros-domain-id", domain,
         "--timeout", "3600"],
        stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            status = subprocess.run(["ros2", "daemon", "status"], capture_output=True, text=True,
                                    stdin=subprocess.DEVNULL, timeout=60).stdout
            if "The daemon is running" in status:
                break
            if daemon.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the ros2 daemon did not start in domain {domain}: {status}\n"
                            + pathlib.Path(log.name).read_text())
            time.sleep(0.2)
        _ROS2_DAEMON = daemon
        yield
    finally:
        _ROS2_DAEMON = None
        daemon.terminate()
        try:
            daemon.wait(timeout=10)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()
        log.close()


def wait_listed(name, timeout=60):
    """Waits until the session's `ros2` daemon (`ros2_daemon`) lists the node `name` (a full
    name: `/planner_node`), as a user's `ros2 node list` would show it; fails after `timeout`
    seconds with what it listed."""
    import subprocess
    import time

    # Were it gone (stopped by its idle timeout), the CLI would start a daemon of its own, which
    # nothing here stops.
    assert _ROS2_DAEMON is not None and _ROS2_DAEMON.poll() is None, "the session's ros2 daemon is not running"
    deadline = time.monotonic() + timeout
    while True:
        listed = subprocess.run(["ros2", "node", "list"], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                                timeout=60).stdout.split()
        if name in listed:
            return
        if time.monotonic() > deadline:
            pytest.fail(f"the ros2 daemon did not list {name} within {timeout} s: {listed}")
        time.sleep(0.2)


# Interface packages PyPI lacks (scripts/setup.sh builds them from ../shared/ros_jazzy_extra;
# /opt/ros/jazzy has them): the tests of TF, map updates and Nav2's interface need them.
INTERFACES = ("tf2_msgs.msg", "map_msgs.msg", "nav2_msgs.action", "nav2_msgs.srv")


def require_interfaces(allow_module_level=False):
    """Skips (fails under CI=true) the calling test, or module with allow_module_level, when an
    interface package of INTERFACES is missing."""
    missing = [m.split(".")[0] for m in INTERFACES if importlib.util.find_spec(m.split(".")[0]) is None]
    if not missing:
        return
    message = (f"interface packages missing: {', '.join(sorted(set(missing)))} (install /opt/ros/jazzy, or put "
               "../shared (ros_jazzy_extra) beside the clone and rerun scripts/setup.sh)")
    if os.environ.get("CI") == "true":
        pytest.fail(message, pytrace=False)
    pytest.skip(message, allow_module_level=allow_module_level)


@pytest.fixture
def interfaces():
    """See require_interfaces."""
    require_interfaces()
