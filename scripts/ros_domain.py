#!/usr/bin/env python3
"""A ROS domain that no other process on this machine is using, for a test session of its own.

Every ROS participant in the same domain on a machine sees every other (the test command runs
with ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST). Two test sessions in one domain, say two
clean-checkout runs of the test command at once, talk to each other's nodes: a goal reaches both
planners, one suite's map -> odom transform answers the other's "no such frame" test, one fault
bench deactivates the other's node. scripts/env.sh gives a checkout a fixed domain (50-99, from
its path), and two checkouts at the same path, in two CI jobs on one machine, get the same one.

A Fast DDS participant (Jazzy's default rmw, over UDPv4) of domain D binds the UDP ports of its
participant id P: the metatraffic and user unicast ports 7410 + 250 D + 2 P and 7411 + 250 D + 2 P
(the RTPS specification's default port mapping). Participants take the lowest free id, so a
domain whose ports of ids 0 to PROBED_PARTICIPANTS - 1 are all free has no such participant here
now (a session's nodes, tools and clients come and go, and its first participant may have exited
while later ones run: every id of the range is probed, not only 0).

A session that takes a domain reserves it for its life, with the port ROS's domain_coordinator
(Jazzy's, which launch_testing's isolated tests use) binds for it: TCP port RESERVATION_BASE + D,
held bound, so that two sessions starting at the same moment, before either has a participant,
cannot both take D, and neither takes a domain such a ROS test holds. `claim_free_domain()`
returns the domain and the socket to keep open.

Known gaps: participants that bind no UDP unicast ports of the mapping (Cyclone DDS's default
ephemeral ports, a shared-memory-only Fast DDS) are not seen, nor a domain whose only
participants have ids of PROBED_PARTICIPANTS and above.

Usage: `python scripts/ros_domain.py` prints a domain of 50-99 that is free and unreserved now,
drawn at random from the free ones. It cannot hold a reservation once it exits (that is for the
sessions that import it). It exits 1, printing nothing, when every one is in use.
"""

import random
import socket
import sys

# The domains the test command may use (0 is ROS's default, kept for the user's robots; 101 and
# above collide with ephemeral ports on Linux).
TEST_DOMAINS = range(50, 100)
# Participant ids probed per domain: a test session runs a node, a few tools and clients at once.
PROBED_PARTICIPANTS = 10
# A session holds TCP port RESERVATION_BASE + D bound while it uses domain D (domain_coordinator's
# PORT_BASE in Jazzy; it binds all interfaces, which a bind of 127.0.0.1 conflicts with).
RESERVATION_BASE = 32768


def unicast_ports(domain, participant=0):
    """The metatraffic and user unicast UDP ports of participant `participant` of `domain`."""
    base = 7400 + 250 * domain + 2 * participant
    return base + 10, base + 11


def _bound(kind, port):
    """Whether `port` of 127.0.0.1 is bound for sockets of `kind` (SOCK_DGRAM or SOCK_STREAM)."""
    with socket.socket(socket.AF_INET, kind) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def in_use(domain):
    """Whether a participant of `domain` runs on this machine (a port of ids 0 to
    PROBED_PARTICIPANTS - 1 is bound) or a session has reserved it."""
    if _bound(socket.SOCK_STREAM, RESERVATION_BASE + domain):
        return True
    return any(_bound(socket.SOCK_DGRAM, port)
               for participant in range(PROBED_PARTICIPANTS) for port in unicast_ports(domain, participant))


def reserve(domain):
    """Reserves `domain`: the bound socket to keep open while the domain is used (closing it, or
    the process ending, frees it), or None when another session holds it."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", RESERVATION_BASE + domain))
    except OSError:
        s.close()
        return None
    return s


def free_domain(rng=random):
    """A domain of TEST_DOMAINS no participant on this machine uses and no session has reserved
    now, drawn with `rng`; None when all are in use. Looking is not reserving: see
    claim_free_domain."""
    free = [d for d in TEST_DOMAINS if not in_use(d)]
    return rng.choice(free) if free else None


def claim_free_domain(rng=random):
    """A domain of TEST_DOMAINS that is free now, reserved: (domain, socket to keep open), or
    (None, None) when every one is in use or reserved. The free ones are tried in random order
    (`rng`), so sessions starting together seldom even contend for one."""
    free = [d for d in TEST_DOMAINS if not in_use(d)]
    rng.shuffle(free)
    for domain in free:
        reservation = reserve(domain)
        if reservation is not None:
            return domain, reservation
    return None, None


def main():
    domain = free_domain()
    if domain is None:
        print(f"ros_domain.py: every domain of {TEST_DOMAINS.start}-{TEST_DOMAINS.stop - 1} is in use",
              file=sys.stderr)
        sys.exit(1)
    print(domain)


if __name__ == "__main__":
    main()
