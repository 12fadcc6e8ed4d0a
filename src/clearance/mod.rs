//! Clearance annotations kept current on a changing map, and planning for a vehicle's size.
//!
//! Follows Harabor and Botea's clearance-based pathfinding (Hierarchical Annotated A*, CIG 2008)
//! adapted to a robot on an occupancy grid:
//!
//! - [`classes`]: occupancy values become cell classes; a [`Capability`] is the set of classes a
//!   vehicle may enter. Annotations are kept per capability in use ([`ClearanceLayer`]).
//! - [`distance`]: obstacle distance, an exact Euclidean distance transform up to a cap.
//! - [`true_clearance`]: the side of the largest traversable square anchored at each cell.
//! - [`footprint`]: circle and square vehicles and when they fit at a cell.
//! - [`regions`]: connected components of a vehicle's mask, answering "unreachable" at once.
//! - [`reach`]: optimistic reachability of a disc, a proof of "unreachable" free of the mask's
//!   margin (asked before refusing a pair the mask's regions split).
//! - [`ClearanceMap`]: all of the above for one map, updated locally after rectangular patches or
//!   a whole replacement map, reporting what changed ([`ChangedRegion`]) so derived data (Block A*
//!   pattern codes) can be updated in the same pass.
//! - [`annotated_astar`]: A* admitting a cell only when the vehicle fits there (reference planner).
//! - [`display`]: clearance as `OccupancyGrid` values for RViz and as a PNG heat map.
//!
//! Coordinates are cells `(x, y)` as in [`crate::grid`] (row-major, row 0 at the map origin);
//! convert world points with [`crate::map::MapInfo`] (or [`ClearanceMap::cell_of_world`]).
//! Distances are in cell units.
//!
//! # Using it from the planner
//! 1. Build once per map: `ClearanceMap::new(&map, config, &[capability])`, with
//!    [`Capability::from_traversability`] for the node's `allow_unknown` rule and caps above the
//!    largest footprint (`distance_cap` > circle radius in cells, `clearance_cap` >= square side).
//! 2. `track_vehicle(Vehicle { capability, footprint: Footprint::circle_metres(r, resolution)? })`.
//!    [`ClearanceMap::vehicle_mask`] is then the mask to search on (a padded `CellMask`): free exactly
//!    where the footprint fits (a circle's cell is its centre; a square's cell is its low corner,
//!    so its centre is `side / 2` further along +x and +y).
//! 3. Per request: [`ClearanceMap::subsuming_cell`] for start and goal (plan between the returned
//!    cells, report the offsets), then [`ClearanceMap::same_region`] to answer "unreachable"
//!    without searching.
//! 4. On a map update: [`ClearanceMap::apply_patch`] or [`ClearanceMap::replace_map`]. For every
//!    [`MaskChange`] in the returned [`ChangedRegion`], recompute the Block A* pattern codes of the
//!    blocks overlapping `rect` (no other mask cell changed); `rebuilt` means all of them.
//! 5. For RViz: [`display::to_occupancy`] gives an `OccupancyGrid`-ready map of the clearance.
//!
//! ```
//! use blockstar_planner::clearance::{Capability, ClearanceConfig, ClearanceMap, Footprint, PatchRect, Vehicle};
//! use blockstar_planner::grid::Grid;
//! let grid = Grid::from_rows(&["......", "......", "......", "...@.."]).unwrap();
//! let mut map = ClearanceMap::from_grid(&grid, ClearanceConfig::default()).unwrap();
//! let car = Vehicle { capability: Capability::FREE, footprint: Footprint::square(2).unwrap() };
//! map.track_vehicle(car).unwrap();
//! assert_eq!(map.layer(Capability::FREE).unwrap().true_clearance(0, 0), Some(3));
//! assert!(map.same_region(&car, (0, 0), (4, 0)).unwrap());
//! // A wall across column 2 cuts the map in two for the car.
//! let changed = map.apply_patch(PatchRect { x: 2, y: 0, width: 1, height: 4 }, &[100; 4]).unwrap();
//! assert!(!map.same_region(&car, (0, 0), (4, 0)).unwrap());
//! assert!(!changed.masks.is_empty());
//! ```

pub mod annotated_astar;
pub mod blocked_rows;
pub mod classes;
mod clearance_map;
pub mod display;
pub mod distance;
pub mod footprint;
mod layer;
pub mod reach;
pub mod regions;
mod tiled_labels;
pub mod true_clearance;

pub use classes::{Capability, CellClass, Classifier};
pub use clearance_map::{ChangedRegion, ClearanceMap, MaskChange, PatchRect, Subsumed};
pub use footprint::{Footprint, Vehicle};
pub use layer::ClearanceLayer;

use crate::grid::CellRect;

/// Default cap (cells) on obstacle distance and true clearance: footprints up to 32 cells
/// (1.6 m at 5 cm per cell) are resolved exactly.
pub const DEFAULT_CAP: u16 = 32;

/// How annotations are computed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClearanceConfig {
    /// Occupancy value -> cell class.
    pub classifier: Classifier,
    /// Obstacle distances are exact below this many cells and reported as the cap beyond
    /// (`1..=127`). Must exceed the largest circle radius of interest; larger caps make patch
    /// updates cost more (the recomputed window grows by `cap - 1` on each side).
    pub distance_cap: u16,
    /// True clearance is capped at this many cells (`1..=255`); must be at least the largest
    /// square side of interest.
    pub clearance_cap: u16,
}

impl Default for ClearanceConfig {
    fn default() -> Self {
        Self { classifier: Classifier::default(), distance_cap: DEFAULT_CAP, clearance_cap: DEFAULT_CAP }
    }
}

impl ClearanceConfig {
    /// Checks the classifier and the caps; fails with [`ClearanceError::Config`].
    pub fn validate(&self) -> Result<(), ClearanceError> {
        self.classifier.validate()?;
        if !(1..=distance::MAX_DISTANCE_CAP).contains(&self.distance_cap) {
            return Err(ClearanceError::Config(format!("distance cap {} is not in 1..=127", self.distance_cap)));
        }
        if !(1..=true_clearance::MAX_CLEARANCE_CAP).contains(&self.clearance_cap) {
            return Err(ClearanceError::Config(format!("clearance cap {} is not in 1..=255", self.clearance_cap)));
        }
        Ok(())
    }
}

/// Errors of the clearance module. Whenever one is returned, nothing held has changed.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum ClearanceError {
    /// A configuration value is out of range.
    #[error("invalid clearance configuration: {0}")]
    Config(String),
    /// A map's data does not match its geometry.
    #[error("invalid map: {0}")]
    BadMap(String),
    /// A patch rectangle is empty, negative or outside the map, or its data has the wrong length.
    #[error("invalid patch: {0}")]
    BadPatch(String),
    /// A footprint size is negative, not finite, or beyond the annotation caps.
    #[error("invalid footprint: {0}")]
    BadFootprint(String),
    /// The vehicle is not tracked (call `track_vehicle` first).
    #[error("vehicle is not tracked by this clearance map")]
    NotTracked,
    /// A file could not be written.
    #[error("cannot write {0}")]
    Io(String),
    /// A cell outside the map was addressed.
    #[error("cell ({x}, {y}) is outside the map")]
    OutOfMap {
        /// Column.
        x: i64,
        /// Row.
        y: i64,
    },
}

/// Smallest rectangle holding `a` (if any) and `b`.
pub(crate) fn union_rect(a: Option<CellRect>, b: CellRect) -> CellRect {
    match a {
        None => b,
        Some(a) => {
            let x0 = a.x.min(b.x);
            let y0 = a.y.min(b.y);
            let x1 = (a.x + a.width).max(b.x + b.width);
            let y1 = (a.y + a.height).max(b.y + b.height);
            CellRect { x: x0, y: y0, width: x1 - x0, height: y1 - y0 }
        }
    }
}

#[cfg(test)]
mod tests;
