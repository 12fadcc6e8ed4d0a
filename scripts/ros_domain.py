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
(the RTPS specification's default port mapping). The first participant of a domain on a machine
takes id 0, so a domain whose id-0 ports are both free has no such participant here now.

Known gaps: only id 0 is probed, so a domain whose first participant has exited while later ones
run (between two test modules of another session) looks free; participants that bind no UDP
unicast ports of the mapping (Cyclone DDS's default ephemeral ports, a shared-memory-only Fast
DDS) are not seen; and looking is not reserving.

Usage: `python scripts/ros_domain.py` prints a domain of 50-99 that is free now, drawn at random
from the free ones (drawn, so that two sessions looking at the same moment seldom pick the same
one; looking is not reserving). It exits 1, printing nothing, when every one is in use.
"""

import random
import socket
import sys

# The domains the test command may use (0 is ROS's default, kept for the user's robots; 101 and
# above collide with ephemeral ports on Linux).
TEST_DOMAINS = range(50, 100)


def unicast_ports(domain, participant=0):
    """The metatraffic and user unicast UDP ports of participant `participant` of `domain`."""
    base = 7400 + 250 * domain + 2 * participant
    return base + 10, base + 11


def in_use(domain):
    """Whether a participant of `domain` runs on this machine (its id-0 ports are bound)."""
    for port in unicast_ports(domain):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                return True
    return False


def free_domain(rng=random):
    """A domain of TEST_DOMAINS no participant on this machine uses now, drawn with `rng`; None
    when all are in use."""
    free = [d for d in TEST_DOMAINS if not in_use(d)]
    return rng.choice(free) if free else None


def main():
    domain = free_domain()
    if domain is None:
        print(f"ros_domain.py: every domain of {TEST_DOMAINS.start}-{TEST_DOMAINS.stop - 1} is in use",
              file=sys.stderr)
        sys.exit(1)
    print(domain)


if __name__ == "__main__":
    main()
