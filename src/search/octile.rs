//! 8-connected A* on cells (Moving AI convention): straight moves cost 1, diagonal moves cost
//! sqrt 2 and are allowed only when both cells they cut past are free (no corner cutting).
//! Returned lengths equal the `optimal_length` column of Moving AI scenario files.

use super::poll::StopPoll;
use super::OrdF64;
use crate::grid::Grid;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

const SQRT2: f64 = std::f64::consts::SQRT_2;

/// An 8-connected path between two cells.
#[derive(Debug, Clone, PartialEq)]
pub struct CellPath {
    /// Cells from start to goal, both included.
    pub cells: Vec<(usize, usize)>,
    /// Octile length in cells.
    pub length: f64,
    /// Expanded nodes.
    pub expansions: usize,
}

/// Octile distance between two cells (the admissible, consistent heuristic of this search).
pub fn octile_distance(a: (usize, usize), b: (usize, usize)) -> f64 {
    let dx = a.0.abs_diff(b.0) as f64;
    let dy = a.1.abs_diff(b.1) as f64;
    dx.max(dy) + (SQRT2 - 1.0) * dx.min(dy)
}

/// Shortest 8-connected path from `start` to `goal` on `grid`.
///
/// Returns `None` when either end is blocked or outside the grid, when no path exists, or when
/// `should_stop()` (polled every 4096 open-list entries taken, stale ones included) returns true.
pub fn octile_astar(
    grid: &Grid,
    start: (usize, usize),
    goal: (usize, usize),
    should_stop: impl FnMut() -> bool,
) -> Option<CellPath> {
    octile_astar_admitting(
        grid.width(),
        grid.height(),
        |x, y| grid.is_free(x as i64, y as i64),
        start,
        goal,
        should_stop,
    )
}

/// The same search over a `width x height` grid whose enterable cells are given by `admit`
/// (for example "the vehicle fits here", Annotated A*). A diagonal move needs both cells it cuts
/// past to be admitted. Returns `None` when an end is not admitted, no path exists or the search
/// was stopped.
pub fn octile_astar_admitting(
    width: usize,
    height: usize,
    admit: impl Fn(usize, usize) -> bool,
    start: (usize, usize),
    goal: (usize, usize),
    should_stop: impl FnMut() -> bool,
) -> Option<CellPath> {
    let ok = |x: i64, y: i64| {
        x >= 0 && y >= 0 && (x as usize) < width && (y as usize) < height && admit(x as usize, y as usize)
    };
    if !ok(start.0 as i64, start.1 as i64) || !ok(goal.0 as i64, goal.1 as i64) {
        return None;
    }
    let cells = width * height;
    let mut g = vec![f64::INFINITY; cells];
    let mut parent = vec![u32::MAX; cells];
    let mut closed = vec![false; cells];
    let mut open = BinaryHeap::new();
    let start_index = start.1 * width + start.0;
    g[start_index] = 0.0;
    open.push((Reverse(OrdF64::new(octile_distance(start, goal))), start_index as u32));
    let mut expansions = 0usize;
    let mut poll = StopPoll::new(4096, should_stop);
    while let Some((_, i)) = open.pop() {
        let i = i as usize;
        // A goal taken off the list is answered even when the poll says stop.
        if poll.stop() && (i % width, i / width) != goal {
            return None;
        }
        if closed[i] {
            continue;
        }
        closed[i] = true;
        let (x, y) = (i % width, i / width);
        if (x, y) == goal {
            let mut route = vec![(x, y)];
            let mut j = i;
            while parent[j] != u32::MAX {
                j = parent[j] as usize;
                route.push((j % width, j / width));
            }
            route.reverse();
            return Some(CellPath { cells: route, length: g[i], expansions });
        }
        expansions += 1;
        for (dx, dy) in [(1i64, 0i64), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)] {
            let (nx, ny) = (x as i64 + dx, y as i64 + dy);
            if !ok(nx, ny) {
                continue;
            }
            let diagonal = dx != 0 && dy != 0;
            if diagonal && !(ok(nx, y as i64) && ok(x as i64, ny)) {
                continue;
            }
            let j = ny as usize * width + nx as usize;
            let ng = g[i] + if diagonal { SQRT2 } else { 1.0 };
            if ng < g[j] && !closed[j] {
                g[j] = ng;
                parent[j] = i as u32;
                open.push((Reverse(OrdF64::new(ng + octile_distance((nx as usize, ny as usize), goal))), j as u32));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_corner_cutting() {
        let g = Grid::from_rows(&["..", "@."]).unwrap();
        // (0,0) -> (1,1): the diagonal cuts past the blocked (0,1), so it costs 2.
        let p = octile_astar(&g, (0, 0), (1, 1), || false).unwrap();
        assert_eq!(p.length, 2.0);
        let open = Grid::from_rows(&["..", ".."]).unwrap();
        assert!((octile_astar(&open, (0, 0), (1, 1), || false).unwrap().length - SQRT2).abs() < 1e-12);
    }

    #[test]
    fn blocked_ends_and_walls() {
        let g = Grid::from_rows(&[".@.", ".@.", ".@."]).unwrap();
        assert!(octile_astar(&g, (0, 0), (2, 0), || false).is_none());
        assert!(octile_astar(&g, (1, 0), (0, 0), || false).is_none());
    }
}
