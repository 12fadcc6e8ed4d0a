//! Annotated A* (Harabor and Botea, CIG 2008): A* on the cell grid that admits a cell only when
//! the agent's footprint fits there according to the clearance annotations. Used as a reference
//! planner for tests and benchmarks.
//!
//! Moves: 8-connected, cost 1 straight and sqrt(2) diagonal; a diagonal move also needs both
//! cells it passes between to admit the agent (no corner cutting), the Moving AI convention.

use super::{ClearanceLayer, Footprint};
use crate::search::octile::{octile_distance, CellPath};
use crate::search::OrdF64;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Shortest path of placements of `footprint` from `start` to `goal` (cells) on `layer`.
///
/// Returns `None` when the footprint does not fit at either end, no path exists, or
/// `should_stop()` (polled every 4096 expansions) returns true.
pub fn annotated_astar(
    layer: &ClearanceLayer,
    footprint: Footprint,
    start: (usize, usize),
    goal: (usize, usize),
    should_stop: impl FnMut() -> bool,
) -> Option<CellPath> {
    grid_astar(layer.width(), layer.height(), |x, y| footprint.fits(layer, x, y), start, goal, should_stop)
}

/// A* over a `width x height` grid whose admissible cells are given by `admit` (moves as in the
/// module documentation). Returns `None` when an end is not admissible, no path exists or the
/// search was stopped.
pub fn grid_astar(
    width: usize,
    height: usize,
    admit: impl Fn(usize, usize) -> bool,
    start: (usize, usize),
    goal: (usize, usize),
    mut should_stop: impl FnMut() -> bool,
) -> Option<CellPath> {
    let ok = |x: i64, y: i64| {
        x >= 0 && y >= 0 && (x as usize) < width && (y as usize) < height && admit(x as usize, y as usize)
    };
    if !ok(start.0 as i64, start.1 as i64) || !ok(goal.0 as i64, goal.1 as i64) {
        return None;
    }
    let idx = |x: usize, y: usize| y * width + x;
    let mut g = vec![f64::INFINITY; width * height];
    let mut parent = vec![u32::MAX; width * height];
    let mut closed = vec![false; width * height];
    let mut open = BinaryHeap::new();
    g[idx(start.0, start.1)] = 0.0;
    open.push((Reverse(OrdF64::new(octile_distance(start, goal))), idx(start.0, start.1) as u32));
    let mut expansions = 0usize;
    while let Some((_, i)) = open.pop() {
        let i = i as usize;
        if closed[i] {
            continue;
        }
        closed[i] = true;
        let (x, y) = (i % width, i / width);
        if (x, y) == goal {
            let mut cells = vec![(x, y)];
            let mut j = i;
            while parent[j] != u32::MAX {
                j = parent[j] as usize;
                cells.push((j % width, j / width));
            }
            cells.reverse();
            return Some(CellPath { cells, length: g[i], expansions });
        }
        expansions += 1;
        if expansions % 4096 == 0 && should_stop() {
            return None;
        }
        for (dx, dy) in [(1i64, 0i64), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)] {
            let (nx, ny) = (x as i64 + dx, y as i64 + dy);
            if !ok(nx, ny) {
                continue;
            }
            let diagonal = dx != 0 && dy != 0;
            if diagonal && !(ok(nx, y as i64) && ok(x as i64, ny)) {
                continue;
            }
            let j = idx(nx as usize, ny as usize);
            let ng = g[i] + if diagonal { std::f64::consts::SQRT_2 } else { 1.0 };
            if ng < g[j] {
                g[j] = ng;
                parent[j] = i as u32;
                let hj = octile_distance((nx as usize, ny as usize), goal);
                open.push((Reverse(OrdF64::new(ng + hj)), j as u32));
            }
        }
    }
    None
}
