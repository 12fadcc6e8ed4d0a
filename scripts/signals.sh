# Sourced by the scripts that run long commands (test.sh, demo.sh): `run_forwarding CMD [ARGS]`
# runs CMD so that a signal stopping the script stops CMD too, and everything CMD started.
#
# Why: bash defers a trap while a foreground command runs, and a script killed by SIGTERM exits
# at once, so `kill <script>` (a CI runner cancelling the job, `timeout`) left the running step
# orphaned: a pytest session and its nodes, a cargo build. So CMD runs in the background with
# SIGINT and SIGQUIT as they were (a background command of a script would ignore them, and so
# would everything it starts: a Python child then has no KeyboardInterrupt); `wait` returns on
# a signal, and the trap gives CMD a few seconds to stop by itself (a signal to the whole process
# group, Ctrl-C in a terminal or a runner's group kill, reached it too: CMD stays in the script's
# group), then sends SIGTERM to CMD and to every process below it (pytest turns it into
# KeyboardInterrupt and tears its fixtures down; tests/ros/conftest.py), waits for CMD, and
# exits 128 + the signal's number.
# Returns CMD's exit status otherwise. Not reentrant: one command at a time.

_bs_forward_pid=""

# The processes below PID, deepest last (a snapshot: what starts after it is not included).
_bs_descendants() {
    local child
    for child in $(pgrep -P "$1" 2>/dev/null); do
        echo "$child"
        _bs_descendants "$child"
    done
}

_bs_stop_forwarded() { # SIGNAL-NAME SIGNAL-NUMBER
    trap - TERM INT HUP
    if [ -n "$_bs_forward_pid" ]; then
        echo "$(basename "$0"): stopped by SIG$1; stopping the running command" >&2
        local tenths=0
        while kill -0 "$_bs_forward_pid" 2>/dev/null && [ "$tenths" -lt 30 ]; do
            sleep 0.1
            tenths=$((tenths + 1))
        done
        # shellcheck disable=SC2046 # one pid per word
        kill -TERM "$_bs_forward_pid" $(_bs_descendants "$_bs_forward_pid") 2>/dev/null
        wait "$_bs_forward_pid" 2>/dev/null
    fi
    exit $((128 + $2))
}

run_forwarding() {
    trap '_bs_stop_forwarded TERM 15' TERM
    trap '_bs_stop_forwarded INT 2' INT
    trap '_bs_stop_forwarded HUP 1' HUP
    (
        trap - INT QUIT
        exec "$@"
    ) &
    _bs_forward_pid=$!
    local status=0
    wait "$_bs_forward_pid" || status=$?
    _bs_forward_pid=""
    trap - TERM INT HUP
    return "$status"
}
