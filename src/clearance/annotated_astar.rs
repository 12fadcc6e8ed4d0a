//! Annotated A* (Harabor and Botea, CIG 2008): A* on the cell grid that admits a cell only when
//! the agent's footprint fits there according to the clearance annotations. Used as a reference
//! planner for tests and benchmarks.
//!
//! Moves: 8-connected, cost 1 straight and sqrt(2) diagonal; a diagonal move also needs both
//! cells it passes between to admit the agent (no corner cutting), the Moving AI convention.

use super::{ClearanceLayer, Footprint};
use crate::search::octile::{octile_astar_admitting, CellPath};

/// Shortest path of placements of `footprint` from `start` to `goal` (cells) on `layer`.
///
/// Returns `None` when the footprint does not fit at either end, no path exists, or
/// `should_stop()` (polled every 4096 open-list entries taken, stale ones included) returns true.
pub fn annotated_astar(
    layer: &ClearanceLayer,
    footprint: Footprint,
    start: (usize, usize),
    goal: (usize, usize),
    should_stop: impl FnMut() -> bool,
) -> Option<CellPath> {
    octile_astar_admitting(layer.width(), layer.height(), |x, y| footprint.fits(layer, x, y), start, goal, should_stop)
}
