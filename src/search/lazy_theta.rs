//! Lazy Theta* (Nash, Koenig, Tovey 2010): Theta* that assumes a successor sees its
//! grandparent and checks line of sight only when the successor is expanded, falling back to the
//! best closed neighbour when the assumption was wrong. Fewer line-of-sight checks than Theta*.

use super::los::{CellMask, LosRule};
use super::path::{GridPath, SearchFailure};
use super::poll::StopPoll;
use super::scratch::NodeScratch;
use super::theta::{collect_path, dist, MOVES};

/// Lazy Theta*; keep one per thread, its memory is recycled across queries.
#[derive(Debug, Default, Clone)]
pub struct LazyThetaStar {
    scratch: NodeScratch,
}

impl LazyThetaStar {
    /// An empty searcher.
    pub fn new() -> Self {
        Self::default()
    }

    /// Any-angle path between vertices `start` and `goal` under `rule`; same contract as
    /// [`super::theta::ThetaStar::find_path`].
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
        let (w, h) = (mask.width() as i64, mask.height() as i64);
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
        while let Some((u, f)) = s.pop() {
            // A goal taken off the list is answered even when the poll says stop.
            if poll.stop() && u != gi {
                return Err(SearchFailure::Stopped);
            }
            if s.is_closed(u) {
                continue;
            }
            let (x, y) = at(u);
            let p = s.parent(u) as usize;
            // Stale heap entries carry an f above the node's current one.
            if f > s.g(u) + dist((x, y), goal_v) + 1e-9 {
                continue;
            }
            if p != u && !mask.los_vertices(rule, at(p), (x, y)) {
                // The lazy assumption failed: take the best closed visible neighbour as parent.
                let mut best = (f64::INFINITY, u);
                for (dx, dy) in MOVES {
                    let (nx, ny) = (x + dx, y + dy);
                    if nx < 0 || ny < 0 || nx > w || ny > h || !mask.unit_move_ok(rule, x, y, dx, dy) {
                        continue;
                    }
                    let v = node(nx, ny);
                    // Closed but unusable (pinch) vertices were never expanded: no parents.
                    if s.is_closed(v) && (v == si || mask.vertex_passable(rule, nx, ny)) {
                        let c = s.g(v) + dist((nx, ny), (x, y));
                        if c < best.0 {
                            best = (c, v);
                        }
                    }
                }
                s.set(u, best.0, best.1 as u32);
            }
            s.close(u);
            if u == gi {
                return Ok(collect_path(s, gi, stride, expansions));
            }
            expansions += 1;
            if u != si && !mask.vertex_passable(rule, x, y) {
                continue;
            }
            let p = s.parent(u) as usize;
            let pv = at(p);
            let gp = s.g(p);
            for (dx, dy) in MOVES {
                let (nx, ny) = (x + dx, y + dy);
                if nx < 0 || ny < 0 || nx > w || ny > h || !mask.unit_move_ok(rule, x, y, dx, dy) {
                    continue;
                }
                let v = node(nx, ny);
                if s.is_closed(v) {
                    continue;
                }
                let cand = gp + dist(pv, (nx, ny));
                if cand < s.g(v) {
                    s.set(v, cand, p as u32);
                    s.push(v, cand + dist((nx, ny), goal_v));
                }
            }
        }
        Err(SearchFailure::NoPath)
    }
}
