//! Exact any-angle reference for tests and small maps: Dijkstra over the visibility graph whose
//! nodes are all usable grid vertices, edges every pair with line of sight. The result is the
//! shortest path among all paths with vertex waypoints under the rule, so it bounds Theta*,
//! Lazy Theta* and Block A* lengths from below. Cost is quadratic in the vertex count: use it on
//! maps of a few hundred vertices.

use super::los::{CellMask, LosRule};
use super::path::{polyline_length, GridPath, SearchFailure};

/// Shortest vertex-waypoint path between vertices `start` and `goal` under `rule`.
///
/// Fails on bad endpoints or when the goal is unreachable.
pub fn visibility_shortest_path(
    mask: &CellMask,
    rule: LosRule,
    start: (u32, u32),
    goal: (u32, u32),
) -> Result<GridPath, SearchFailure> {
    mask.check_vertex_endpoint(start)?;
    mask.check_vertex_endpoint(goal)?;
    let mut nodes: Vec<(i64, i64)> = vec![(i64::from(start.0), i64::from(start.1))];
    for y in 0..=mask.height() as i64 {
        for x in 0..=mask.width() as i64 {
            let v = (x, y);
            if v != nodes[0] && v != (i64::from(goal.0), i64::from(goal.1)) && mask.vertex_passable(rule, x, y) {
                nodes.push(v);
            }
        }
    }
    let goal_index = nodes.len();
    nodes.push((i64::from(goal.0), i64::from(goal.1)));
    if nodes[0] == nodes[goal_index] {
        return Ok(GridPath { points: vec![start], length: 0.0, expansions: 0 });
    }
    let n = nodes.len();
    let mut dist = vec![f64::INFINITY; n];
    let mut parent = vec![usize::MAX; n];
    let mut done = vec![false; n];
    dist[0] = 0.0;
    for expansions in 0..n {
        let Some(u) = (0..n).filter(|&i| !done[i] && dist[i].is_finite()).min_by(|&a, &b| dist[a].total_cmp(&dist[b]))
        else {
            break;
        };
        done[u] = true;
        if u == goal_index {
            let mut points = vec![];
            let mut j = u;
            while j != usize::MAX {
                points.push((nodes[j].0 as u32, nodes[j].1 as u32));
                j = parent[j];
            }
            points.reverse();
            let length = polyline_length(&points);
            return Ok(GridPath { points, length, expansions });
        }
        for v in 0..n {
            if done[v] {
                continue;
            }
            let d = dist[u] + ((nodes[u].0 - nodes[v].0) as f64).hypot((nodes[u].1 - nodes[v].1) as f64);
            if d < dist[v] && mask.los_vertices(rule, nodes[u], nodes[v]) {
                dist[v] = d;
                parent[v] = u;
            }
        }
    }
    Err(SearchFailure::NoPath)
}
