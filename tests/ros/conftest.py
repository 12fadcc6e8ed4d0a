import importlib.util
import os
import pathlib
import shutil
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

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
