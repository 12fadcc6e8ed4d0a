# Source this (after scripts/setup.sh) to get the ROS 2 environment:
#   source scripts/env.sh
# With /opt/ros/jazzy present it sources that installation; otherwise it points everything at the
# wheel-based ROS in .venv-ros/ and the tools and interfaces of .ros-prefix/extras. The project's
# own packages come from the colcon workspace (scripts/build_ws.sh; `source .ws/install/setup.bash`).
# Every shell that sources it from one checkout gets the same DDS domain, on the loopback interface
# only, so the demo and the tests of one checkout see each other and nothing else (set
# BLOCKSTAR_KEEP_ROS_NETWORK=1 to keep your own ROS_DOMAIN_ID / ROS_AUTOMATIC_DISCOVERY_RANGE, for
# example to reach a robot).

BLOCKSTAR_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export BLOCKSTAR_ROOT
_bs_venv="$BLOCKSTAR_ROOT/.venv-ros"
_bs_extras="$BLOCKSTAR_ROOT/.ros-prefix/extras"

_bs_prepend() { # VAR DIR: prepends DIR to the colon list VAR unless already present
    local cur="${!1:-}"
    case ":$cur:" in *":$2:"*) ;; *) export "$1=$2${cur:+:$cur}" ;; esac
}

if [ -f /opt/ros/jazzy/setup.bash ]; then
    # setup.bash reads unset variables; relax nounset around it.
    case $- in *u*) _bs_u=1; set +u ;; *) _bs_u=0 ;; esac
    # shellcheck disable=SC1091
    source /opt/ros/jazzy/setup.bash
    [ "$_bs_u" = 1 ] && set -u
else
    export ROS_DISTRO=jazzy ROS_VERSION=2 ROS_PYTHON_VERSION=3
    export RMW_IMPLEMENTATION=rmw_fastrtps_cpp
    _bs_prepend AMENT_PREFIX_PATH "$_bs_venv"
    _bs_prepend LD_LIBRARY_PATH "$_bs_venv/lib"
    for _bs_d in "$_bs_venv"/lib/python3.11/site-packages/ros_*.libs; do
        [ -d "$_bs_d" ] && _bs_prepend LD_LIBRARY_PATH "$_bs_d"
    done
    # The ROS tools and interfaces PyPI lacks (scripts/setup.sh), always on the paths so the
    # value r2r keys its bindings cache on does not depend on whether they are installed yet.
    _bs_prepend AMENT_PREFIX_PATH "$_bs_extras"
    _bs_prepend CMAKE_PREFIX_PATH "$_bs_extras"
    _bs_prepend LD_LIBRARY_PATH "$_bs_extras/lib"
    _bs_prepend PYTHONPATH "$_bs_extras/lib/python3.11/site-packages"
fi

# colcon, cargo-ament-build, pytest, rosbags (and with the wheels, ros2 and the ROS Python tools).
[ -d "$_bs_venv/bin" ] && _bs_prepend PATH "$_bs_venv/bin"

# r2r generates bindings only for these packages (the build is slow otherwise; rosgraph_msgs
# carries /clock, which the node reads under use_sim_time). r2r itself adds
# rcl_interfaces, builtin_interfaces, unique_identifier_msgs and action_msgs. Optional packages
# (tf2_msgs, map_msgs, nav2_msgs) named here but not installed are left out by r2r and by build.rs, which then compiles the node without what
# needs them (ARCHITECTURE.md, "Interfaces the wheels lack"). Keep this value fixed: r2r rebuilds
# whenever it changes.
export IDL_PACKAGE_FILTER="rosgraph_msgs;std_msgs;diagnostic_msgs;geometry_msgs;nav_msgs;sensor_msgs;visualization_msgs;lifecycle_msgs;tf2_msgs;map_msgs;geographic_msgs;nav2_msgs;blockstar_planner_msgs"

if [ "${BLOCKSTAR_KEEP_ROS_NETWORK:-0}" != 1 ]; then
    # A domain from the checkout's path: 50-99 (0 is ROS's default, kept for the user's robots).
    export ROS_DOMAIN_ID="${BLOCKSTAR_ROS_DOMAIN_ID:-$((50 + $(printf %s "$BLOCKSTAR_ROOT" | cksum | cut -d' ' -f1) % 50))}"
    export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
fi

unset _bs_venv _bs_extras _bs_d _bs_u
