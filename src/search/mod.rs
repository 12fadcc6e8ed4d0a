//! Grid searches: a generic A* core and the planners built on it. Each algorithm lives in its own
//! file.

pub mod astar;
pub mod cost_astar;
pub mod grid_astar;
pub mod lazy_theta;
pub mod los;
pub mod octile;
mod open_ground;
pub mod path;
pub mod poll;
pub mod scratch;
pub mod smoothing;
pub mod theta;
pub mod visibility;

/// A non-NaN `f64` with a total order, so costs can live in a [`std::collections::BinaryHeap`].
///
/// Construct with [`OrdF64::new`], which maps NaN to `+inf` (a NaN cost is never preferred).
#[derive(Debug, Clone, Copy, Default)]
pub struct OrdF64(f64);

impl OrdF64 {
    /// Wraps `v`; NaN becomes `+inf`.
    pub fn new(v: f64) -> Self {
        Self(if v.is_nan() { f64::INFINITY } else { v })
    }

    /// The wrapped value.
    pub fn get(self) -> f64 {
        self.0
    }
}

impl PartialEq for OrdF64 {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for OrdF64 {}

impl PartialOrd for OrdF64 {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for OrdF64 {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}
