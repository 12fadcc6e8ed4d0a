//! Directional A* (Pinter 2001) and the hybrid refinement pipeline: turning an any-angle path
//! into a trajectory of arcs and lines that a vehicle with a minimum turning radius can drive,
//! verified against the map before it is returned.
//!
//! Everything here works in **cell units** on a [`crate::grid::Grid`] whose blocked cells are the
//! cells the vehicle may not enter (its footprint, a disk, must not touch them). The caller
//! converts radii from metres with the map resolution.
//!
//! Use:
//! 1. Once per configuration: [`Directional::new`] with [`RefineParams`] (turning radius and
//!    footprint in cells, e.g. [`RefineParams::from_metres`]); it owns the hit-check and heuristic
//!    tables, rebuilt by [`Directional::set_params`] ([`Directional::with_params`]) only when a
//!    value they depend on changes.
//! 2. Once per map: [`CollisionMap::new`] on the obstacle grid (not inflated); its
//!    [`CollisionMap::centre_mask`] is the traversability mask to run the any-angle planner on.
//! 3. Per request: [`refine`](fn@refine) with the any-angle waypoints (cell units), the exact start pose,
//!    the goal pose (heading free or not) and a stop callback (deadline or cancellation). The
//!    result is verified; [`full_search`] runs the plain Directional-8/-24/-48 instead.

pub mod chain;
pub mod escape;
pub mod footprint;
pub mod lattice;
pub mod motion;
pub mod params;
pub mod refine;
pub mod search;
pub mod smoothing;
pub mod tables;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_reverse;
pub mod verify;

pub use footprint::{CollisionMap, Obstacles};
pub use lattice::{HeadingBins, Neighbourhood};
pub use motion::{Gear, Motion, MotionModel};
pub use params::{Directional, InvalidParam, RefineParams, TableWarmer, MAX_TURNING_RADIUS};
pub use refine::{
    direct_curve, full_search, refine, refine_guided, RefineError, RefineStats, Refined, DIRECT_COST_SLACK,
};
pub use tables::CentreCell;
pub use verify::{verify_trajectory, Vehicle, VerifyError};
