"""~/clearance: with publish_clearance set, the node publishes the obstacle distance of the map it
holds as an OccupancyGrid (same geometry; 100 on obstacles; darker nearer obstacles), and
publishes it again when the map changes."""

import math

from nav_msgs.msg import OccupancyGrid

from helpers import LATCHED, Peer, make_grid, start_node, tmpdir

RES = 0.05
W, H = 40, 30


def walls(x, y):
    return x == 0 or y == 0 or x == W - 1 or y == H - 1


def test_clearance_is_published_and_follows_the_map():
    tmp = tmpdir("blockstar-clear-")
    node = start_node(tmp, "planner_cl", {"publish_clearance": True, "robot_radius": 0.05}, remap_prefix="/cl")
    peer = Peer("peer_cl", prefix="/cl", node_name="planner_cl")
    got = []
    peer.node.create_subscription(OccupancyGrid, "/planner_cl/clearance", got.append, LATCHED)
    try:
        peer.wait_connected()
        grid = make_grid(W, H, RES, (1.0, 2.0), walls)
        peer.publish_map(grid, node)
        peer.spin_until(lambda: got and got[-1].info.width == W, what="a clearance grid")
        c = got[-1]
        assert (c.info.width, c.info.height) == (W, H)
        assert math.isclose(c.info.resolution, RES, rel_tol=1e-6)
        assert c.header.frame_id == "map"
        data = list(c.data)
        assert all(data[y * W + x] == 100 for y in range(H) for x in range(W) if walls(x, y))
        # Free cells get darker (larger values) nearer the walls, never 100 where the robot fits.
        row = [data[15 * W + x] for x in range(0, 20)]
        assert all(0 <= v <= 100 for v in row)
        assert 100 > row[3] > row[8] > row[14], row
        # A new obstacle in the middle shows up in the next clearance grid.
        n = len(got)
        grid2 = make_grid(W, H, RES, (1.0, 2.0), lambda x, y: walls(x, y) or (x == 20 and y == 15))
        peer.publish_map(grid2, node)
        peer.spin_until(lambda: len(got) > n, what="a second clearance grid")
        assert got[-1].data[15 * W + 20] == 100
        assert got[-1].data[15 * W + 21] > data[15 * W + 21]
        assert node.alive()
    finally:
        peer.close()
        node.stop()
