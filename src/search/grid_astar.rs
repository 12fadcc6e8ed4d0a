//! 8-connected A* on cells with reusable scratch memory (Moving AI convention: straight moves
//! cost 1, diagonal moves sqrt 2 and only when both cells they cut past are free), with either the
//! octile heuristic (exact on an empty map) or the weaker Euclidean one. Both return optimal
//! octile lengths; the Euclidean variant expands more nodes and serves as a baseline.

use super::los::CellMask;
use super::path::{GridPath, SearchFailure};
use super::poll::StopPoll;
use super::scratch::{NodeScratch, NO_PARENT};

const SQRT2: f64 = std::f64::consts::SQRT_2;

/// The heuristic of [`GridAStar`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellHeuristic {
    /// Octile distance.
    Octile,
    /// Euclidean distance.
    Euclidean,
}

/// Octile distance between two cells.
#[inline]
pub fn octile(dx: f64, dy: f64) -> f64 {
    let (dx, dy) = (dx.abs(), dy.abs());
    dx.max(dy) + (SQRT2 - 1.0) * dx.min(dy)
}

/// A* on cells; keep one per thread and reuse it, its memory is recycled across queries.
#[derive(Debug, Default, Clone)]
pub struct GridAStar {
    scratch: NodeScratch,
}

impl GridAStar {
    /// An empty searcher (memory is sized on the first query).
    pub fn new() -> Self {
        Self::default()
    }

    /// Shortest octile path between cells `start` and `goal` of `mask`.
    ///
    /// Fails with [`SearchFailure::OutOfBounds`] / [`SearchFailure::BlockedEndpoint`] for bad
    /// endpoints, [`SearchFailure::NoPath`], or [`SearchFailure::Stopped`] when `should_stop()`
    /// (polled every 1024 open-list entries taken, stale ones included) returns true.
    pub fn find_path(
        &mut self,
        mask: &CellMask,
        start: (u32, u32),
        goal: (u32, u32),
        heuristic: CellHeuristic,
        should_stop: impl FnMut() -> bool,
    ) -> Result<GridPath, SearchFailure> {
        let (w, h) = (mask.width(), mask.height());
        for p in [start, goal] {
            if p.0 as usize >= w || p.1 as usize >= h {
                return Err(SearchFailure::OutOfBounds);
            }
            if mask.blocked(i64::from(p.0), i64::from(p.1)) {
                return Err(SearchFailure::BlockedEndpoint);
            }
        }
        let hfn = |x: i64, y: i64| {
            let (dx, dy) = ((x - i64::from(goal.0)) as f64, (y - i64::from(goal.1)) as f64);
            match heuristic {
                CellHeuristic::Octile => octile(dx, dy),
                CellHeuristic::Euclidean => (dx * dx + dy * dy).sqrt(),
            }
        };
        let s = &mut self.scratch;
        s.begin(w * h);
        let si = start.1 as usize * w + start.0 as usize;
        let gi = goal.1 as usize * w + goal.0 as usize;
        s.set(si, 0.0, NO_PARENT);
        s.push(si, hfn(i64::from(start.0), i64::from(start.1)));
        let mut expansions = 0usize;
        let mut poll = StopPoll::new(1024, should_stop);
        while let Some((i, _)) = s.pop() {
            // A goal taken off the list is answered even when the poll says stop.
            if poll.stop() && i != gi {
                return Err(SearchFailure::Stopped);
            }
            if s.is_closed(i) {
                continue;
            }
            s.close(i);
            if i == gi {
                let mut cells = vec![];
                let mut j = i as u32;
                while j != NO_PARENT {
                    cells.push((j % w as u32, j / w as u32));
                    j = s.parent(j as usize);
                }
                cells.reverse();
                return Ok(GridPath { points: cells, length: s.g(i), expansions });
            }
            expansions += 1;
            let (x, y) = ((i % w) as i64, (i / w) as i64);
            let gu = s.g(i);
            for (dx, dy) in [(1i64, 0i64), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)] {
                let (nx, ny) = (x + dx, y + dy);
                if mask.blocked(nx, ny) {
                    continue;
                }
                let diagonal = dx != 0 && dy != 0;
                if diagonal && (mask.blocked(nx, y) || mask.blocked(x, ny)) {
                    continue;
                }
                let j = ny as usize * w + nx as usize;
                if s.is_closed(j) {
                    continue;
                }
                let ng = gu + if diagonal { SQRT2 } else { 1.0 };
                if ng < s.g(j) {
                    s.set(j, ng, i as u32);
                    s.push(j, ng + hfn(nx, ny));
                }
            }
        }
        Err(SearchFailure::NoPath)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Grid;

    #[test]
    fn matches_the_reference_octile_astar() {
        let g = Grid::from_rows(&["....@...", ".@@.@.@.", ".@..@.@.", ".@.@@.@.", "......@."]).unwrap();
        let m = CellMask::from_grid(&g);
        let mut a = GridAStar::new();
        for (s, t) in [((0, 0), (7, 4)), ((2, 2), (5, 0)), ((7, 0), (0, 4))] {
            let want = crate::search::octile::octile_astar(&g, s, t, || false).map(|p| p.length);
            for hh in [CellHeuristic::Octile, CellHeuristic::Euclidean] {
                let got = a.find_path(&m, (s.0 as u32, s.1 as u32), (t.0 as u32, t.1 as u32), hh, || false);
                assert_eq!(got.ok().map(|p| p.length), want);
            }
        }
        assert_eq!(
            a.find_path(&m, (1, 1), (0, 0), CellHeuristic::Octile, || false),
            Err(SearchFailure::BlockedEndpoint)
        );
        assert_eq!(a.find_path(&m, (8, 0), (0, 0), CellHeuristic::Octile, || false), Err(SearchFailure::OutOfBounds));
    }
}
