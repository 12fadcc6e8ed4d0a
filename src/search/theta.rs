//! Theta* (Nash, Daniel, Koenig, Felner 2007) on grid vertices: A* over the 8-connected vertex
//! graph where a successor may take its grandparent as parent whenever the two see each other.
//! Paths are any-angle and valid under the chosen [`LosRule`]; they are not always shortest.

use super::los::{CellMask, LosRule};
use super::path::{polyline_length, GridPath, SearchFailure};
use super::poll::StopPoll;
use super::scratch::{NodeScratch, NO_PARENT};

/// The 8 unit moves between vertices.
pub(crate) const MOVES: [(i64, i64); 8] = [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)];

/// Euclidean distance between two vertices.
#[inline(always)]
pub(crate) fn dist(a: (i64, i64), b: (i64, i64)) -> f64 {
    // Exact enough for integer coordinates, and much cheaper than `hypot`.
    let (dx, dy) = ((a.0 - b.0) as f64, (a.1 - b.1) as f64);
    (dx * dx + dy * dy).sqrt()
}

/// Follows parent links from `goal` to the start and returns the waypoints start first.
pub(crate) fn collect_path(s: &NodeScratch, goal: usize, stride: usize, expansions: usize) -> GridPath {
    let mut points = vec![];
    let mut j = goal as u32;
    while j != NO_PARENT {
        points.push((j % stride as u32, j / stride as u32));
        let p = s.parent(j as usize);
        j = if p == j { NO_PARENT } else { p };
    }
    points.reverse();
    let length = polyline_length(&points);
    GridPath { points, length, expansions }
}

/// Theta*; keep one per thread, its memory is recycled across queries.
#[derive(Debug, Default, Clone)]
pub struct ThetaStar {
    scratch: NodeScratch,
}

impl ThetaStar {
    /// An empty searcher.
    pub fn new() -> Self {
        Self::default()
    }

    /// Any-angle path between vertices `start` and `goal` under `rule`.
    ///
    /// Fails on out-of-range or unusable endpoints, when no path exists, or when `should_stop()`
    /// (polled every 1024 open-list entries taken, stale ones included) returns true.
    pub fn find_path(
        &mut self,
        mask: &CellMask,
        rule: LosRule,
        start: (u32, u32),
        goal: (u32, u32),
        should_stop: impl FnMut() -> bool,
    ) -> Result<GridPath, SearchFailure> {
        mask.check_vertex_endpoint(start)?;
        mask.check_vertex_endpoint(goal)?;
        let stride = mask.width() + 1;
        let node = |x: i64, y: i64| y as usize * stride + x as usize;
        let at = |i: usize| ((i % stride) as i64, (i / stride) as i64);
        let goal_v = (i64::from(goal.0), i64::from(goal.1));
        let s = &mut self.scratch;
        s.begin(stride * (mask.height() + 1));
        let si = node(i64::from(start.0), i64::from(start.1));
        let gi = node(goal_v.0, goal_v.1);
        s.set(si, 0.0, si as u32);
        s.push(si, dist(at(si), goal_v));
        let mut expansions = 0usize;
        let mut poll = StopPoll::new(1024, should_stop);
        while let Some((u, _)) = s.pop() {
            // A goal taken off the list is answered even when the poll says stop.
            if poll.stop() && u != gi {
                return Err(SearchFailure::Stopped);
            }
            if s.is_closed(u) {
                continue;
            }
            s.close(u);
            if u == gi {
                return Ok(collect_path(s, gi, stride, expansions));
            }
            expansions += 1;
            let (x, y) = at(u);
            if u != si && !mask.vertex_passable(rule, x, y) {
                continue;
            }
            let gu = s.g(u);
            let p = s.parent(u) as usize;
            let pv = at(p);
            for (dx, dy) in MOVES {
                let (nx, ny) = (x + dx, y + dy);
                if nx < 0 || ny < 0 || nx as usize > mask.width() || ny as usize > mask.height() {
                    continue;
                }
                if !mask.unit_move_ok(rule, x, y, dx, dy) {
                    continue;
                }
                let v = node(nx, ny);
                if s.is_closed(v) {
                    continue;
                }
                let (cand, parent) = if p != u && mask.los_vertices(rule, pv, (nx, ny)) {
                    (s.g(p) + dist(pv, (nx, ny)), p)
                } else {
                    (gu + dist((x, y), (nx, ny)), u)
                };
                if cand < s.g(v) {
                    s.set(v, cand, parent as u32);
                    s.push(v, cand + dist((nx, ny), goal_v));
                }
            }
        }
        Err(SearchFailure::NoPath)
    }
}
