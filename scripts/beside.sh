#!/usr/bin/env bash
# Runs a step beside another, for scripts/test.sh:
#
#     scripts/beside.sh NAME COMMAND [ARGS...] -- NAME2 COMMAND2 [ARGS2...]
#
# starts COMMAND in the background (its output kept aside, its standard input /dev/null), runs
# COMMAND2 in the foreground, then waits for COMMAND and shows its output after COMMAND2's. Each
# is reported as test.sh reports a step ("--- ok: NAME (N s)" or "--- FAILED: NAME (N s)"); the
# exit status is non-zero when either failed.
#
# Why: the fuzz step spends minutes compiling on both cores, while the ROS tests mostly wait for
# their nodes and the ROS tools (the CPU about 80% idle through them); side by side the two take
# about as long as the ROS tests alone. The ROS tests are required to pass with both cores busy
# beside them (issue 29), which this is a part of.
#
# Stopping: both commands run in the background, with SIGINT and SIGQUIT as they were (as
# scripts/signals.sh runs a step), while this script waits. SIGTERM, SIGINT or SIGHUP to it is
# passed on to both and to the processes below them, and it waits for them to end before it ends
# by the same signal: so test.sh's run_forwarding, which gives its step 20 s to stop before
# SIGKILL, sees this script end when they have, not at once.
set -uo pipefail
# shellcheck source=scripts/signals.sh
source "$(dirname "${BASH_SOURCE[0]}")/signals.sh" # for _bs_descendants

usage() {
    echo "usage: $0 NAME COMMAND [ARGS...] -- NAME2 COMMAND2 [ARGS2...]" >&2
    exit 2
}

[ $# -ge 2 ] || usage
bg_name="$1"
shift
bg_cmd=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    bg_cmd+=("$1")
    shift
done
[ $# -ge 3 ] && [ ${#bg_cmd[@]} -gt 0 ] || usage
shift # the --
fg_name="$1"
shift

log="$(mktemp)"
trap 'rm -f "$log"' EXIT

bg_pid=""
fg_pid=""
stop_both() { # SIGNAL-NAME
    trap '' TERM INT HUP # a second signal does not cut the stop short
    local pids="$bg_pid $fg_pid" pid tree=""
    for pid in $pids; do
        tree="$tree $(_bs_descendants "$pid")"
    done
    # shellcheck disable=SC2086 # one pid per word
    kill -s "$1" $pids $tree 2>/dev/null
    for pid in $pids; do
        wait "$pid" 2>/dev/null
    done
    trap - "$1"
    kill -s "$1" "$$"
    exit 1 # not reached unless the signal is blocked
}
trap 'stop_both TERM' TERM
trap 'stop_both INT' INT
trap 'stop_both HUP' HUP

t0=$SECONDS
echo "=== $bg_name (beside $fg_name, its output after): ${bg_cmd[*]}"
(
    trap - INT QUIT
    exec "${bg_cmd[@]}"
) </dev/null >"$log" 2>&1 &
bg_pid=$!

echo "=== $fg_name: $*"
(
    trap - INT QUIT
    exec "$@"
) </dev/null &
fg_pid=$!
fg_status=0
wait "$fg_pid" || fg_status=$?
if [ "$fg_status" -eq 0 ]; then
    echo "--- ok: $fg_name ($((SECONDS - t0)) s)"
else
    echo "--- FAILED: $fg_name ($((SECONDS - t0)) s)"
fi

bg_status=0
wait "$bg_pid" || bg_status=$?
echo "=== $bg_name: its output"
cat "$log"
if [ "$bg_status" -eq 0 ]; then
    echo "--- ok: $bg_name ($((SECONDS - t0)) s, beside $fg_name)"
else
    echo "--- FAILED: $bg_name ($((SECONDS - t0)) s, beside $fg_name)"
fi
[ "$fg_status" -eq 0 ] && [ "$bg_status" -eq 0 ]
