#!/usr/bin/env bash
# Runs a program that links the ROS libraries: with the wheel-based ROS, their librcl needs
# libpython's symbols in the process, so libpython is preloaded (see scripts/env.sh).
if [ "${BLOCKSTAR_ROS_SOURCE:-}" = wheels ] && [ -n "${BLOCKSTAR_LIBPYTHON:-}" ]; then
    export LD_PRELOAD="$BLOCKSTAR_LIBPYTHON${LD_PRELOAD:+:$LD_PRELOAD}"
fi
exec "$@"
