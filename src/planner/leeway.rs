//! Leeway at the ends of a plan, as a Nav2 user expects it: a goal that is occupied or cannot be
//! reached is planned to the nearest reachable place within a tolerance (`tolerance`, the goal
//! side), and a start where the footprint overlaps obstacles by a little (a localisation jump, a
//! robot pushed against a shelf) is driven out of before the plan (`overlap`, the start side).
//! [`Planner::plan_near`] is the entry point; [`Planner::plan`] itself stays exact.

use super::{Budget, Plan, PlanError, Planner, StatusCode};
use crate::geometry::Pose2;

/// The node's and the CLI's `start_overlap` unless set (m): a few centimetres, the size of a
/// localisation jump, well below any footprint.
pub const DEFAULT_START_OVERLAP: f64 = 0.05;

/// How far a plan may depart from the exact request at its ends (metres, the map's units).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Leeway {
    /// Nav2's goal `tolerance` (>= 0): an occupied or unreachable goal is planned to the
    /// reachable cell centre nearest to it within this distance. 0: the goal itself or nothing.
    pub tolerance: f64,
    /// Largest depth (>= 0) by which obstacles may reach into the footprint at the start for the
    /// plan to drive out of them (never deeper) first. 0: a start that overlaps is refused.
    pub start_overlap: f64,
}

impl Leeway {
    /// A goal tolerance and no start overlap.
    pub fn goal(tolerance: f64) -> Self {
        Self { tolerance, start_overlap: 0.0 }
    }

    /// `INVALID_INPUT` naming the first value that is negative or not finite.
    pub fn validate(&self) -> Result<(), PlanError> {
        for (name, value) in [("tolerance", self.tolerance), ("start_overlap", self.start_overlap)] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(PlanError::new(
                    StatusCode::InvalidInput,
                    format!("{name} must be a finite distance >= 0, not {value}"),
                ));
            }
        }
        Ok(())
    }
}

impl Planner {
    /// Plans from `start` to `goal` as [`Planner::plan`], with the ends' `leeway`:
    /// - the goal: when it is occupied or unreachable and `leeway.tolerance` is positive, the
    ///   reachable cell centre nearest to it within the tolerance, with the goal's heading;
    /// - the start: when obstacles reach into the vehicle's exact footprint there (by any depth),
    ///   the depth is measured; within `leeway.start_overlap`, the plan starts with a short
    ///   stretch out of the overlap that never goes deeper (the first
    ///   [`crate::planner::StartOverlap::segments`] of the trajectory), checked pose by pose
    ///   instead of by the sweep, and the rest is planned and verified as usual.
    ///
    /// Either departure is said in the plan's note (where, how far), the start's also in
    /// [`crate::planner::PlanStats::start_overlap`].
    ///
    /// Unlike [`Planner::plan`], a start the footprint overlaps is never moved to a covering cell:
    /// the plan starts at the robot, or is refused. Fails with `INVALID_INPUT` for a negative or
    /// non-finite leeway; `START_OCCUPIED` with the depth in the map's units when it exceeds
    /// `start_overlap` or no stretch out of it exists; otherwise as [`Planner::plan`] (a goal's
    /// error telling that nothing within the tolerance was reachable either).
    pub fn plan_near(
        &self,
        start: Pose2,
        goal: Pose2,
        goal_heading_free: bool,
        leeway: Leeway,
        budget: &Budget,
    ) -> Result<Plan, PlanError> {
        leeway.validate()?;
        // One binding for every plan tried (see `Planner::plan`).
        let budget = &budget.on_this_thread();
        let to_goal = |from: Pose2| self.plan_to_near_goal(from, goal, goal_heading_free, leeway.tolerance, budget);
        match self.start_overlap_depth(start) {
            Some(depth) => self.plan_out_of_overlap(start, depth, leeway.start_overlap, budget, to_goal),
            None => to_goal(start),
        }
    }
}
