# Sourced by the scripts that run long commands (test.sh, demo.sh): `run_forwarding CMD [ARGS]`
# runs CMD so that a signal stopping the script stops CMD too, and what CMD started.
#
# Why: bash defers a trap while a foreground command runs, and a script killed by SIGTERM exits
# at once, so `kill <script>` (a CI runner cancelling the job, `timeout --foreground`) left the
# running step orphaned: a pytest session and its nodes, a cargo build. So CMD runs in the
# background with SIGINT and SIGQUIT as they were (a background command of a script would ignore
# them, and so would everything it starts: a Python child then has no KeyboardInterrupt), its
# standard input /dev/null (no step reads it). `wait` returns on a signal, and the trap:
# 1. gives CMD 10 s to stop by itself (a signal to the whole process group, Ctrl-C in a terminal
#    or a runner's group kill, reached it too: CMD stays in the script's group);
# 2. sends SIGTERM to CMD (if still there) and to the processes below it, as found before and
#    after that wait (what CMD started in the background may ignore SIGINT)
#    (pytest turns SIGTERM into KeyboardInterrupt and tears its fixtures down, which stops its
#    nodes; tests/ros/conftest.py); a process that left the tree before the first look (its
#    parent gone) is not found;
# 3. waits up to 20 s for CMD, then sends SIGKILL to the same processes;
# 4. ends the script by the same signal, so its caller sees how it ended.
# Returns CMD's exit status otherwise. A signal ignored when the script started (`nohup`) cannot
# be trapped. Not reentrant: one command at a time; the traps are cleared when CMD ends.

_bs_forward_pid=""
_bs_forward_starting=""

# The processes below PID (a snapshot: what starts after it is not included).
_bs_descendants() {
    local child
    for child in $(pgrep -P "$1" 2>/dev/null); do
        echo "$child"
        _bs_descendants "$child"
    done
}

# Waits up to TENTHS tenths of a second for PID to end; true when it has.
_bs_wait_gone() { # PID TENTHS
    local left=$2
    while kill -0 "$1" 2>/dev/null; do
        [ "$left" -le 0 ] && return 1
        sleep 0.1
        left=$((left - 1))
    done
    return 0
}

_bs_stop_forwarded() { # SIGNAL-NAME
    set +e # a process that already ended makes kill fail; the stop goes on
    trap '' TERM INT HUP # a second signal (a runner escalating) does not cut the stop short
    local pid=$_bs_forward_pid
    # Signalled between the fork and the pid's assignment: $! is already the command's.
    [ -z "$pid" ] && [ -n "$_bs_forward_starting" ] && pid=$!
    if [ -n "$pid" ]; then
        echo "$(basename "$0"): stopped by SIG$1; stopping the running command" >&2
        local tree
        tree="$(_bs_descendants "$pid")"
        _bs_wait_gone "$pid" 100
        tree="$tree $(_bs_descendants "$pid")"
        # Also when CMD ended by itself: what it started in the background may ignore the signal.
        # shellcheck disable=SC2086 # one pid per word
        kill -TERM "$pid" $tree 2>/dev/null
        if ! _bs_wait_gone "$pid" 200; then
            echo "$(basename "$0"): the command ignored SIGTERM for 20 s; killing it" >&2
            # shellcheck disable=SC2086
            kill -KILL "$pid" $tree 2>/dev/null
        fi
        wait "$pid" 2>/dev/null
    fi
    trap - "$1"
    kill -s "$1" "$$"
    exit 1 # not reached unless the signal is blocked
}

run_forwarding() {
    trap '_bs_stop_forwarded TERM' TERM
    trap '_bs_stop_forwarded INT' INT
    trap '_bs_stop_forwarded HUP' HUP
    _bs_forward_starting=1
    (
        trap - INT QUIT
        exec "$@"
    ) &
    _bs_forward_pid=$!
    _bs_forward_starting=""
    local status=0
    wait "$_bs_forward_pid" || status=$?
    _bs_forward_pid=""
    trap - TERM INT HUP
    return "$status"
}
