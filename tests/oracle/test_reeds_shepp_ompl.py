"""Reeds-Shepp and Dubins curves of `blockstar curve` against OMPL's state spaces.

OMPL (the `ompl` package from PyPI, Python bindings of the Open Motion Planning Library) is an
independent implementation of both: `ReedsSheppStateSpace` and `DubinsStateSpace` give the length
of the shortest curve between two SE(2) states for a turning radius. The pairs are random (a fixed
seed), near (where the four- and five-piece words win) and far, with random radii; every length
must equal OMPL's within 1e-9 relative, and every curve must end at its goal.
"""

import json
import math
import os
import random
import subprocess
from pathlib import Path

# The test command installs ompl (scripts/oracle-requirements.txt): without it this module fails
# to import, which is a failure, not a skip.
from ompl import base as ompl_base

ROOT = Path(__file__).resolve().parents[2]
CLI = Path(os.environ.get("BLOCKSTAR_CLI", ROOT / ".ws/install/blockstar_planner/lib/blockstar_planner/blockstar"))

PAIRS = 100_000


def random_pairs(seed, count):
    rnd = random.Random(seed)
    pairs = []
    for i in range(count):
        # A third of the pairs within two radii of each other, where the CCCC and CCSCC words
        # arise; the rest spread over up to 40 radii.
        radius = 0.05 + 3.0 * rnd.random()
        span = radius * (4.0 if i % 3 == 0 else 40.0)
        a = (rnd.uniform(-span, span) / 2, rnd.uniform(-span, span) / 2, rnd.uniform(-math.pi, math.pi))
        b = (rnd.uniform(-span, span) / 2, rnd.uniform(-span, span) / 2, rnd.uniform(-math.pi, math.pi))
        pairs.append((radius, a, b))
    return pairs


def ompl_length(space_type, radius, a, b):
    space = space_type(radius)
    s1, s2 = space.allocState(), space.allocState()
    s1.setX(a[0]), s1.setY(a[1]), s1.setYaw(a[2])
    s2.setX(b[0]), s2.setY(b[1]), s2.setYaw(b[2])
    return space.distance(s1, s2)


def run_cli(motion_model, radius, pairs, tmp_path):
    """Lengths and end poses from `blockstar curve --pairs` for pairs of one radius."""
    path = tmp_path / f"pairs-{motion_model}-{radius}.txt"
    path.write_text("".join(f"{a[0]!r} {a[1]!r} {a[2]!r} {b[0]!r} {b[1]!r} {b[2]!r}\n" for a, b in pairs))
    out = subprocess.run(
        [str(CLI), "curve", "--motion-model", motion_model, "--radius", repr(radius), "--pairs", str(path)],
        check=True, capture_output=True, text=True,
    ).stdout
    return [json.loads(line) for line in out.splitlines()]


def check_against(space_type, motion_model, count, tmp_path):
    assert CLI.exists(), f"{CLI} is missing: build the workspace first (scripts/build_ws.sh)"
    pairs = random_pairs(20261124 + count, count)
    # The CLI takes one radius per run: group the pairs into a few radius bands, each solved at
    # its band's radius (a pair's own radius only served to scale its span).
    bands = {}
    for radius, a, b in pairs:
        r = round(radius, 1) or 0.05
        bands.setdefault(r, []).append((a, b))
    worst = 0.0
    checked = 0
    words = set()
    for radius, group in sorted(bands.items()):
        got = run_cli(motion_model, radius, group, tmp_path)
        assert len(got) == len(group)
        for (a, b), g in zip(group, got):
            want = ompl_length(space_type, radius, a, b)
            err = abs(g["length"] - want) / max(1.0, want)
            worst = max(worst, err)
            assert err <= 1e-9, f"{a} -> {b} r {radius}: {g['length']!r} vs OMPL {want!r} ({g['word']})"
            ex, ey, eyaw = g["end"]
            scale = 1.0 + abs(b[0] - a[0]) + abs(b[1] - a[1]) + radius
            assert math.hypot(ex - b[0], ey - b[1]) <= 1e-9 * scale, f"{a} -> {b}: ends at {g['end']}"
            assert abs(math.remainder(eyaw - b[2], 2 * math.pi)) <= 1e-9, f"{a} -> {b}: ends at {g['end']}"
            assert g["cusps"] <= 2
            if motion_model == "forward":
                assert g["reverse_length"] == 0.0 and g["cusps"] == 0
            words.add(g["word"])
            checked += 1
    assert checked == count
    print(f"{motion_model}: {checked} pairs, worst relative error {worst:.3g}, {len(words)} distinct words")
    return words


def test_reeds_shepp_lengths_equal_ompl(tmp_path):
    words = check_against(ompl_base.ReedsSheppStateSpace, "reeds_shepp", PAIRS, tmp_path)
    # The pairs reach every family: words of five pieces (CCSCC), four (CCCC, CCSC) and cusps.
    assert any(len(w) == 10 for w in words), "no five-piece word was ever shortest"
    assert any(len(w) == 8 for w in words)
    assert len(words) > 40, f"only {len(words)} distinct words"


def test_dubins_lengths_equal_ompl(tmp_path):
    check_against(ompl_base.DubinsStateSpace, "forward", 20_000, tmp_path)
