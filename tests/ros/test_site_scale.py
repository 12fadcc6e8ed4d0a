"""The node on a site-scale map, small: scripts/site_scale_node.py tiles the shared 100by100_15
to 3000 x 3000 cells (the README's run takes it to 10^8), publishes it as one OccupancyGrid from
an rclpy peer, sends long goals, streams patches on /map_updates and sends long goals again. The
script checks every returned path against the map itself and fails when the node dies or a
patch is not applied; here its figures are checked too."""

import json
import subprocess
import sys

from helpers import ROOT

MAP = ROOT.parent / "shared" / "data" / "ros_maps" / "100by100_15.yaml"


def test_long_goals_and_a_patch_stream_on_a_tiled_map(tmp_path):
    assert MAP.exists(), f"{MAP} is missing: the test data lives in ../shared beside the clone"
    out = tmp_path / "site.json"
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "site_scale_node.py"), "--map", str(MAP),
                          "--size", "3000", "--patches", "60", "--goals", "2", "--json", str(out)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    f = json.loads(out.read_text())
    assert f["alive"] and f["patches"] == 60, f
    # Long goals (corner quarter to the far corner quarter, over 100 m apart) answered with a
    # path before and after the patches; the script verified every path it got.
    for phase in ("goals_before", "goals_after"):
        solved = [g for g in f[phase] if g[0] == 0]
        assert solved and all(g[3] > 100 and g[1] >= g[3] - 1e-6 for g in solved), f[phase]
    # The guide searchers' scratch is pooled: goals that follow each other reuse one set of
    # searchers whichever planning thread runs them, so the second round of goals adds nothing.
    before = f["after_goals_diagnostics"]["thread_stores_bytes"]
    assert 0 < f["final_diagnostics"]["thread_stores_bytes"] <= before * 1.1, f
    # Every patch came while the node followed a trajectory, so each was followed by a check of
    # it on the new map: the patches waited for those checks and changed the map in place, never
    # a copy of it (before, a batch changed a copy whenever the node held the map too: 54 of the
    # 60 here, about 7 bytes per cell held twice over while each ran).
    assert f["final_diagnostics"]["map_copies"] == 0, f
