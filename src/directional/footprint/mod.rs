//! The vehicle's footprint (a disk, or a square or polygon turning with the vehicle) swept along curves,
//! and the map it is checked against. One job per file: [`shape`] (the footprint and the cells it
//! covers at one pose), [`sampling`] (samples along a segment, and the cells a sweep covers) and
//! [`collision_map`] (the blocked cells, the exact and the fast sweep tests, local updates).
//!
//! Sweeping is done by sampling each segment from its own start at a spacing of at most
//! [`SAMPLE_SPACING`] cells and growing the footprint by what it can move between samples (half
//! that spacing for a disk; for a square also what it turns, see [`Shape`]): every point of the
//! swept footprint then lies in some grown sample, so a curve that passes is truly collision-free
//! (the check is conservative by at most that growth). The hit-check tables, the on-the-fly checks
//! of the search and the final verification all use this one rule, so what the search accepts,
//! verification accepts too (the search adds [`SEARCH_MARGIN`] so rounding can never tip a cell
//! the other way, and a length a few ulps over a whole number of spacings gets no extra sample,
//! so a segment rebuilt elsewhere, or taken to metres and back, is sampled alike:
//! [`sampling`]'s `sample_count`).

pub mod collision_map;
pub mod sampling;
pub mod shape;

pub use collision_map::{CollisionMap, Obstacles};
pub use sampling::{sample_segment, swept_spans};
pub use shape::{disk_runs, polygon_runs, square_runs, Shape, POLYGON_GROWTH_REACH};

/// Largest distance (cells) between consecutive footprint samples along a segment.
pub const SAMPLE_SPACING: f64 = 0.25;

/// Sample stride of the first, coarse look of a sweep (see [`CollisionMap::sweep_free`]).
pub(crate) const COARSE_STRIDE: usize = 8;

/// Extra radius (cells) the search uses over verification, so floating-point differences between
/// a tabulated curve and the same curve rebuilt elsewhere never make verification stricter.
pub const SEARCH_MARGIN: f64 = 1e-6;

/// The disk radius actually tested around each sample for a footprint of `radius` cells.
pub fn sampled_radius(radius: f64) -> f64 {
    radius + SAMPLE_SPACING / 2.0
}

/// A horizontal run of cells `x0..=x1` in row `y`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Span {
    /// Row.
    pub y: i32,
    /// First column.
    pub x0: i32,
    /// Last column (inclusive).
    pub x1: i32,
}

#[cfg(test)]
mod tests;
