//! Shortest bounded-curvature curves, built from [`crate::trajectory::Segment`]s.
//!
//! - [`mod@dubins`]: the shortest forward curve between two poses with a minimum turning radius (all
//!   six Dubins words: Pinter's four arc-line-arc curves plus the two arc-arc-arc ones).
//! - [`mod@pose_to_point`]: the shortest arc-then-line curve from a pose to a point (Pinter's first
//!   construction), used when the goal heading is free.
//! - [`mod@reeds_shepp`]: the shortest (or, under a caller's prices of reversing and of changes of
//!   gear, the cheapest) forward-and-backward curve between two poses (Reeds and Shepp), and its
//!   per-thread memo (`reeds_shepp_cheapest_memo`).
//! - [`mod@memo`]: the per-thread memo of fixed size of the shortest Dubins word, by exact
//!   relative problem.
//!
//! Units are the caller's (cell units inside the planner); angles are radians, counter-clockwise.

pub mod dubins;
pub mod memo;
pub mod pose_to_point;
pub mod reeds_shepp;

pub use dubins::{dubins_candidate, dubins_length, dubins_shortest, dubins_word, DubinsCurve, DubinsWord, Pieces};
pub use memo::dubins_candidate_memo;
pub use pose_to_point::{pose_to_point, PointCurve};
pub use reeds_shepp::{reeds_shepp_all, reeds_shepp_cheapest, reeds_shepp_shortest, ReedsSheppCurve};

use crate::trajectory::Segment;

/// Total length of a run of segments.
pub fn segments_length(segments: &[Segment]) -> f64 {
    segments.iter().map(|s| s.length).sum()
}
