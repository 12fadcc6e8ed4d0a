"""The demo's client: starts planner_node as launch/planner.launch.py does (bundled map), sends a
start on /initialpose and a goal on /goal_pose like RViz would, prints the answer from ~/status
and /plan, and writes the path as text for `blockstar render`.

    python scripts/demo_client.py --start X,Y,YAW --goal X,Y,YAW --out out/demo_path.txt
"""

import argparse
import importlib.util
import math
import pathlib
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "ros"))
from helpers import NODE_BIN, NodeProcess, Peer, quaternion_yaw  # noqa: E402  (the tests' peer)


def numbers(text, n):
    v = [float(t) for t in text.split(",")]
    if len(v) != n or not all(math.isfinite(x) for x in v):
        raise argparse.ArgumentTypeError(f"expected {n} comma-separated numbers, got {text!r}")
    return v


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--start", type=lambda s: numbers(s, 3), default=[-2.0, -0.5, 0.0])
    ap.add_argument("--goal", type=lambda s: numbers(s, 3), default=[1.5, 1.5, 1.57])
    ap.add_argument("--out", type=pathlib.Path, default=ROOT / "out" / "demo_path.txt")
    args = ap.parse_args()

    spec = importlib.util.spec_from_file_location("planner_launch", ROOT / "launch" / "planner.launch.py")
    launch_file = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(launch_file)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="blockstar-demo-"))
    lib = tmp / "lib" / launch_file.PACKAGE
    lib.mkdir(parents=True)
    (lib / launch_file.EXECUTABLE).symlink_to(NODE_BIN)
    cmd = launch_file.planner_node_command(str(tmp), str(ROOT))
    print("starting:", " ".join(cmd))
    node = NodeProcess(cmd, tmp / "planner_node.log")
    peer = Peer("demo_client", node_name=launch_file.NODE_NAME)
    try:
        peer.wait_connected()
        peer.set_start(*args.start, node_proc=node)
        status, path = peer.plan(*args.goal)
        print(f"status: {status.code_name} ({status.code}): {status.message}")
        print(f"planning time {status.planning_time * 1e3:.2f} ms, expansions {status.expansions}, "
              f"any-angle length {status.any_angle_length:.3f} m, trajectory length {status.trajectory_length:.3f} m")
        if path is None:
            print("no path")
            return 1
        first, last = path.poses[0].pose, path.poses[-1].pose
        print(f"/plan: {len(path.poses)} poses in frame {path.header.frame_id!r}, "
              f"from ({first.position.x:.3f}, {first.position.y:.3f}, yaw {quaternion_yaw(first.orientation):.3f}) "
              f"to ({last.position.x:.3f}, {last.position.y:.3f}, yaw {quaternion_yaw(last.orientation):.3f})")
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("# x y (m, map frame) of /plan\n" + "".join(
            f"{p.pose.position.x:.6f} {p.pose.position.y:.6f}\n" for p in path.poses))
        print(f"wrote {args.out}")
        return 0
    finally:
        peer.close()
        node.stop()


if __name__ == "__main__":
    sys.exit(main())
