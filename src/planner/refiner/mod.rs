//! Step 4's motion model, chosen once per prepared map: how the any-angle guide becomes a
//! drivable trajectory, what is searched when the vehicle mask gives no guide, and the vehicle
//! every trajectory is verified with.
//!
//! Two refiners, one door ([`Refine`]):
//! - [`OnTheSpot`] (`min_turning_radius` 0): the guide's lines with turns on the spot, checked by
//!   the footprint's sweep; without a guide, or when the guide grazes an obstacle between its
//!   vertices, A* over a half-cell lattice on the exact collision map ([`exact_footprint`]).
//! - [`Curves`] (a turning radius): Directional A*'s refinement of the guide
//!   ([`crate::directional::refine`]), the direct curve when it is free, the trapped-ends
//!   proof, and the full Directional A* search without a guide.
//!
//! [`crate::planner::PreparedMap`] builds the refiner with the map; the plan's steps
//! (`steps.rs`) call it without asking which one it is.

mod curves;
pub mod exact_footprint;
mod on_the_spot;

pub use curves::Curves;
pub use on_the_spot::OnTheSpot;

use super::stats::StageClock;
use super::steps::{Endpoints, Solution};
use super::{Budget, PlanError, Planner, PreparedMap, StatusCode};
use crate::directional::verify::{verify_trajectory, Vehicle};
use crate::directional::Directional;
use crate::geometry::{Point2, Pose2};
use crate::trajectory::Trajectory;
use std::sync::Arc;

/// What a refiner works with: the planner, the map it prepared, the request's budget and whether
/// the goal's heading is free; the stage clock records what ran.
pub(super) struct Job<'a> {
    pub(super) planner: &'a Planner,
    pub(super) prepared: &'a PreparedMap,
    pub(super) budget: &'a Budget,
    pub(super) goal_heading_free: bool,
}

/// A motion model's part in a plan (see the module doc). Every [`Solution`] it returns is
/// verified with [`Refine::vehicle`]; every failure is a [`PlanError`] with the status a user
/// reads (`NO_VALID_PATH`, `START_OCCUPIED`, the budget's `TIMEOUT` or `CANCELED`, ...).
pub(super) trait Refine: std::fmt::Debug + Send + Sync {
    /// The vehicle as verification checks it, in cells: footprint, turning radius, gears.
    fn vehicle(&self) -> Vehicle;

    /// Directional A*'s parameters and tables, when this refiner drives curves.
    fn directional(&self) -> Option<&Arc<Directional>> {
        None
    }

    /// Whether the vehicle turns on the spot (so a heading change where it stands is a turn, not
    /// a loop).
    fn turns_on_the_spot(&self) -> bool;

    /// Whether the footprint stands free at `p` on the exact map where no vehicle-mask cell covers
    /// it (a gap narrower than the mask's margin), so the plan may start or end there with no
    /// guide. `free_heading`: any heading will do.
    fn stands_exactly(&self, _job: &Job, _p: Pose2, _free_heading: bool) -> bool {
        false
    }

    /// Step 3: refuses, with its proof, a start boxed in ahead or a goal behind.
    fn not_trapped(&self, _job: &Job, _ends: &Endpoints, _clock: &mut StageClock) -> Result<(), PlanError> {
        Ok(())
    }

    /// Step 4, the shortest curve itself when it is free (no guide needed); `None`: search.
    fn direct(&self, _job: &Job, _ends: &Endpoints, _clock: &mut StageClock) -> Option<Solution> {
        None
    }

    /// Step 4, the guide (cells, start to goal, with the expansions that found it) made
    /// drivable and verified.
    fn refine(
        &self,
        job: &Job,
        ends: &Endpoints,
        guide: (Vec<Point2>, usize),
        clock: &mut StageClock,
    ) -> Result<Solution, PlanError>;

    /// Step 4 without a guide (`why` the vehicle mask gave none): a search on the exact map.
    fn full_search(
        &self,
        job: &Job,
        ends: &Endpoints,
        why: &str,
        clock: &mut StageClock,
    ) -> Result<Solution, PlanError>;

    /// Checks `trajectory` between the request's ends with this refiner's vehicle (see
    /// [`verify_trajectory`]). Fails with `NO_VALID_PATH`.
    fn verify(&self, job: &Job, ends: &Endpoints, trajectory: &Trajectory) -> Result<(), PlanError> {
        verify_trajectory(
            &job.prepared.collision,
            trajectory,
            &self.vehicle(),
            ends.start,
            ends.goal,
            job.goal_heading_free,
        )
        .map_err(|e| PlanError::new(StatusCode::NoValidPath, format!("the any-angle path failed verification: {e}")))
    }
}

/// The refiner for `config` at `resolution` (m per cell), sharing Directional A* tables with the
/// first of `holders` whose tables it would build (a profile's previous refiner, then the other
/// profiles' on the same site: tables do not depend on a penalty, a neighbourhood, costs, see
/// [`Directional::tables_serve`]), else building its own. Fails with `INVALID_INPUT` for
/// parameters Directional A* refuses.
pub(super) fn for_config(
    config: &super::PlannerConfig,
    resolution: f64,
    holders: &[&dyn Refine],
) -> Result<Arc<dyn Refine>, PlanError> {
    Ok(match config.refine_params(resolution)? {
        None => Arc::new(OnTheSpot { radius: config.circumradius() / resolution }),
        Some(params) => {
            let invalid = |e: crate::directional::InvalidParam| PlanError::new(StatusCode::InvalidInput, e.to_string());
            let serving = holders.iter().filter_map(|h| h.directional()).find(|d| d.tables_serve(&params));
            match serving {
                Some(d) if *d.params() == params => Arc::new(Curves(d.clone())),
                Some(d) => Arc::new(Curves(Arc::new(d.with_params(params).map_err(invalid)?))),
                None => Arc::new(Curves(Arc::new(Directional::new(params).map_err(invalid)?))),
            }
        }
    })
}
