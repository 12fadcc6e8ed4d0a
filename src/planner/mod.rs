//! The planner facade: one map in, one plan per (start, goal) out.
//!
//! [`Planner`] owns the current map and everything derived from it, and runs the pipeline
//! (traversability for the vehicle, any-angle search, trajectory refinement, verification).
//! It is the single entry point used by the ROS node and the CLI, so both behave identically.
//! World quantities are metres and radians in the map frame; the search works in cell units.
//!
//! One job per file: [`status`] (outcome codes and errors), [`config`] (parameters), [`budget`]
//! (the time budget), [`prepared`] (the map and what is derived from it, kept current),
//! [`stats`] (the plan and its figures), `figures` ([`PathFigures`]: what a trajectory costs and
//! keeps from obstacles), `steps` (the steps of one plan, in order), `refiner`
//! (step 4's motion model, chosen once with the map: turns on the spot or Directional A*'s
//! curves), `leeway`
//! ([`Planner::plan_near`]: a plan with leeway at its ends), `tolerance` (Nav2's goal tolerance),
//! `overlap` (a start overlapping obstacles, driven out of) and this
//! file (the planner's state and [`Planner::plan`], which reads as the list of steps).

pub mod budget;
pub mod config;
mod figures;
pub mod fleet;
mod leeway;
mod maps;
mod overlap;
pub mod prepared;
mod refiner;
mod search_pool;
pub mod stats;
pub mod status;
mod steps;
mod tolerance;

pub use budget::Budget;
pub use config::{PlannerConfig, MAX_COST_PENALTY, MIN_PATH_SPACING};
pub use figures::PathFigures;
pub use fleet::Fleet;
pub use leeway::{Leeway, DEFAULT_START_OVERLAP};
pub use prepared::{MapUpdate, PreparedMap, ProfileBytes, SiteBytes, SiteMap};
pub use stats::{Plan, PlanStats, StageTime, StartOverlap};
pub use status::{PlanError, StatusCode};
pub use steps::thread_stores_bytes;

use crate::clearance::PatchRect;
use crate::geometry::Pose2;
use crate::lddb::Lddb;
use crate::map::{MapUnits, OccupancyMap};
use std::sync::Arc;
use steps::{GuideOutcome, Request};

/// Block side (cells) of the LDDB the planner uses: 4x4 cells (5x5 vertices), the paper's choice.
pub const LDDB_BLOCK_SIDE: usize = 4;

/// The planner: holds the current map and answers plan requests.
#[derive(Debug, Clone)]
pub struct Planner {
    config: PlannerConfig,
    lddb: Arc<Lddb>,
    map: Option<Arc<PreparedMap>>,
    /// The unit of world coordinates in messages (metres unless a Moving AI map says cells).
    units: MapUnits,
}

impl Planner {
    /// A planner with no map. Loads the LDDB from its cache (building and caching it when the file
    /// is missing or corrupt; see [`Lddb::load_or_build`]). Fails when `config` is out of range
    /// or the LDDB can be neither loaded nor built.
    pub fn new(config: PlannerConfig) -> Result<Self, PlanError> {
        config.validate()?;
        let (lddb, _report) = Lddb::load_or_build(None, LDDB_BLOCK_SIDE, &|_, _| {})
            .map_err(|e| PlanError::new(StatusCode::InvalidInput, format!("local distance database: {e}")))?;
        Ok(Self { config, lddb: Arc::new(lddb), map: None, units: MapUnits::Metres })
    }

    /// A planner sharing an already loaded LDDB (for several planners in one process).
    pub fn with_lddb(config: PlannerConfig, lddb: Arc<Lddb>) -> Result<Self, PlanError> {
        config.validate()?;
        if lddb.side() != LDDB_BLOCK_SIDE {
            return Err(PlanError::new(StatusCode::InvalidInput, format!("LDDB block side must be {LDDB_BLOCK_SIDE}")));
        }
        Ok(Self { config, lddb, map: None, units: MapUnits::Metres })
    }

    /// The parameters in force.
    pub fn config(&self) -> &PlannerConfig {
        &self.config
    }

    /// Sets the unit that messages give world coordinates and lengths in (metres by default; a
    /// Moving AI map is in cells). Planning itself does not depend on it.
    pub fn set_units(&mut self, units: MapUnits) {
        self.units = units;
    }

    /// The shared LDDB.
    pub fn lddb(&self) -> &Arc<Lddb> {
        &self.lddb
    }

    /// The map in force, if any.
    pub fn map(&self) -> Option<&Arc<PreparedMap>> {
        self.map.as_ref()
    }

    /// The heap the map in force holds, by component (`None` with no map): its site's, and this
    /// profile's own. The pooled search scratch is apart:
    /// [`thread_stores_bytes`].
    pub fn memory(&self) -> Option<(SiteBytes, ProfileBytes)> {
        self.map().map(|m| (m.site.bytes(), m.bytes_beside(&[])))
    }

    /// Replaces the map. On error (invalid geometry, wrong data length, over the cell cap, a
    /// footprint the map cannot annotate) the previous map is kept and an `INVALID_INPUT` error
    /// says why.
    pub fn set_map(&mut self, map: OccupancyMap) -> Result<(), PlanError> {
        maps::set_map(&mut [self], map)
    }

    /// Applies a rectangular patch of occupancy values (`data` row-major, `width * height`
    /// values, the meaning of `map_msgs/OccupancyGridUpdate`) to the held map and updates the
    /// clearance annotations, regions, vehicle mask, Block A* pattern codes and collision map
    /// locally. Fails with `NO_MAP` when no map is held, or `INVALID_INPUT` when the patch leaves
    /// the map or `data` has the wrong length; nothing changes then.
    pub fn apply_patch(
        &mut self,
        x: i64,
        y: i64,
        width: i64,
        height: i64,
        data: &[i8],
    ) -> Result<MapUpdate, PlanError> {
        let mut updates = maps::apply_patch(&mut [self], PatchRect { x, y, width, height }, data)?;
        Ok(updates.remove(0))
    }

    /// Replaces the held map with `map`. With the same geometry, only what differs is updated
    /// (SLAM nodes republish the whole grid); otherwise, or with no map held, everything is
    /// derived anew as by [`Planner::set_map`]. On error nothing changes.
    pub fn update_map(&mut self, map: OccupancyMap) -> Result<MapUpdate, PlanError> {
        let mut updates = maps::update_map(&mut [self], map)?;
        Ok(updates.remove(0))
    }

    /// The cost and clearance figures of `trajectory` (map frame) on the held map; all zero
    /// without a map.
    pub fn figures(&self, trajectory: &crate::trajectory::Trajectory) -> PathFigures {
        self.map.as_deref().map_or_else(PathFigures::default, |m| PathFigures::measure(m, trajectory))
    }

    /// Replaces the parameters and re-derives the held map under them (its annotations kept
    /// when the vehicle's size, the map's threshold and the obstacle distance's cap, which the
    /// costs' reach can raise, are unchanged). On error nothing changes.
    pub fn set_config(&mut self, config: PlannerConfig) -> Result<(), PlanError> {
        maps::set_configs(&mut [self], vec![config])
    }

    /// Plans from `start` to `goal` (map frame, metres and radians). `goal.yaw` is the requested
    /// final heading; pass `goal_heading_free = true` when the goal's orientation is unset.
    ///
    /// Fails with the matching [`StatusCode`]: `NO_MAP`, `INVALID_INPUT` (non-finite pose),
    /// `START/GOAL_OUTSIDE_MAP`, `START/GOAL_OCCUPIED` (the vehicle fits neither at the pose nor in
    /// a covering cell; the message gives the pose as passed, in the units of
    /// [`Planner::set_units`], and says whether it lies in an obstacle, in unknown space, or only
    /// too close to one), `NO_VALID_PATH` (unreachable, or no trajectory passed verification),
    /// `TIMEOUT`, `SUPERSEDED`.
    ///
    /// `budget` is bound to the calling thread ([`Budget::on_this_thread`]; kept when already
    /// bound there): time spent filling Directional A*'s tables for parameters new to them does
    /// not count against its deadline (it is reported in [`PlanStats::table_filling_time`]).
    pub fn plan(&self, start: Pose2, goal: Pose2, goal_heading_free: bool, budget: &Budget) -> Result<Plan, PlanError> {
        let budget = budget.on_this_thread();
        let result = self.plan_steps(start, goal, goal_heading_free, &budget);
        // What this thread's memos hold now (a first plan allocates them: /diagnostics says so).
        steps::account_thread_stores();
        result
    }

    /// The steps of [`Planner::plan`], in order.
    fn plan_steps(
        &self,
        start: Pose2,
        goal: Pose2,
        goal_heading_free: bool,
        budget: &Budget,
    ) -> Result<Plan, PlanError> {
        // 0. The request, validated once: a map, finite poses, the goal's heading normalised.
        let mut request = Request::new(self, start, goal, goal_heading_free, budget)?;
        // 1. Where the vehicle stands for start and goal (cells), or why it cannot.
        let ends = request.endpoints()?;
        // 2. Connected on the vehicle mask (regions), or at least not proved separated.
        let on_mask = request.reachability(&ends)?;
        // 3. A start boxed in ahead, or a goal boxed in behind, refused on a proof.
        request.not_trapped(&ends)?;
        // 4. The answer: already there (or a turn on the spot), the shortest curve itself, the any-angle guide refined,
        //    or, where the mask cannot give a guide, the full Directional A* on the exact map.
        let solution = if let Some(solution) = request.at_goal(&ends) {
            solution?
        } else if let Some(solution) = request.direct_curve(&ends) {
            solution
        } else if ends.same_place() {
            request.full_search(&ends, "turning round where it stands needs a loop")?
        } else if let Some(mask_cells) = on_mask {
            match request.guide(&ends, mask_cells)? {
                GuideOutcome::Found(guide) => request.refine(&ends, guide)?,
                GuideOutcome::None(why) => request.full_search(&ends, &why)?,
            }
        } else {
            request.full_search(&ends, "the vehicle mask separates start and goal")?
        };
        // 5. In metres, sampled, with the figures.
        Ok(request.assemble(&ends, solution))
    }
}
