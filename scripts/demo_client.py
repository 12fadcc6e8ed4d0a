"""The demo's client: starts planner_node as a user does, `ros2 launch blockstar_planner
planner.launch.py` from the colcon install (bundled map; where the ros2 CLI is not installed, the
installed executable with the same parameters file and map), sends a start on /initialpose and a
goal on /goal_pose like RViz would, prints the answer from ~/status and /plan, and writes the path
(x y yaw per line) and the any-angle guide as text for `blockstar render`.

    python scripts/demo_client.py --start X,Y,YAW --goal X,Y,YAW --out out/demo_path.txt
"""

import argparse
import math
import pathlib
import shutil
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "ros"))
from helpers import LATCHED, NODE_BIN, SHARE, NodeProcess, Peer, exit_on_sigterm, quaternion_yaw  # noqa: E402  (the tests' peer)

from nav_msgs.msg import Path  # noqa: E402


def numbers(text, n):
    v = [float(t) for t in text.split(",")]
    if len(v) != n or not all(math.isfinite(x) for x in v):
        raise argparse.ArgumentTypeError(f"expected {n} comma-separated numbers, got {text!r}")
    return v


def node_command():
    """`ros2 launch` where the ros2 CLI exists; otherwise what `ros2 run` would execute."""
    if shutil.which("ros2"):
        return ["ros2", "launch", "blockstar_planner", "planner.launch.py"]
    print("note: no ros2 CLI here (see README.md): starting the installed planner_node directly")
    return [NODE_BIN, "--ros-args", "--params-file", SHARE / "config" / "planner.yaml",
            "-p", f"map_file:={SHARE / 'config' / 'tb3_sandbox.yaml'}"]


def write_poses(path_msg, out, what):
    out.write_text(f"# x y yaw (m, m, rad; map frame) of {what}\n" + "".join(
        f"{p.pose.position.x:.6f} {p.pose.position.y:.6f} {quaternion_yaw(p.pose.orientation):.6f}\n"
        for p in path_msg.poses))
    print(f"wrote {out}")


def main():
    exit_on_sigterm()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--start", type=lambda s: numbers(s, 3), default=[-2.0, -0.5, 0.0])
    ap.add_argument("--goal", type=lambda s: numbers(s, 3), default=[1.5, 1.5, 1.57])
    ap.add_argument("--out", type=pathlib.Path, default=ROOT / "out" / "demo_path.txt")
    ap.add_argument("--guide-out", type=pathlib.Path, default=ROOT / "out" / "demo_guide.txt")
    args = ap.parse_args()

    cmd = node_command()
    print("starting:", " ".join(map(str, cmd)))
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="blockstar-demo-"))
    node = NodeProcess(cmd, tmp / "planner_node.log")
    peer = Peer("demo_client")
    guides = []
    peer.node.create_subscription(Path, "/planner_node/any_angle_plan", guides.append, LATCHED)
    try:
        peer.wait_connected()
        peer.set_start(*args.start, node_proc=node)
        status, path = peer.plan(*args.goal)
        print(f"status: {status.code_name} ({status.code}): {status.message}")
        print(f"planning time {status.planning_time * 1e3:.2f} ms, expansions {status.expansions}, "
              f"any-angle length {status.any_angle_length:.3f} m, trajectory length {status.trajectory_length:.3f} m")
        if status.code == status.SUCCESS:
            nearest = f"{status.min_clearance:.3f} m" if status.min_clearance >= 0 else "beyond 32 cells"
            print(f"cost {status.cost:.3f} m (mean traversal cost {status.mean_cost:.3f}, max {status.max_cost:.3f}), "
                  f"nearest obstacle {nearest}")
        if path is None:
            print("no path")
            return 1
        first, last = path.poses[0].pose, path.poses[-1].pose
        print(f"/plan: {len(path.poses)} poses in frame {path.header.frame_id!r}, "
              f"from ({first.position.x:.3f}, {first.position.y:.3f}, yaw {quaternion_yaw(first.orientation):.3f}) "
              f"to ({last.position.x:.3f}, {last.position.y:.3f}, yaw {quaternion_yaw(last.orientation):.3f})")
        args.out.parent.mkdir(parents=True, exist_ok=True)
        write_poses(path, args.out, "/plan")
        stamp = (path.header.stamp.sec, path.header.stamp.nanosec)
        peer.spin_until(lambda: any((g.header.stamp.sec, g.header.stamp.nanosec) == stamp for g in guides),
                        what="the any-angle guide of the plan")
        guide = next(g for g in guides if (g.header.stamp.sec, g.header.stamp.nanosec) == stamp)
        write_poses(guide, args.guide_out, "~/any_angle_plan (the any-angle guide)")
        return 0
    finally:
        peer.close()
        code = node.stop()
        if code != 0:
            print(f"planner_node did not stop cleanly (exit code {code}); its log: {node.log_path}")


if __name__ == "__main__":
    sys.exit(main())
