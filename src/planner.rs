//! The planner facade: one map in, one plan per (start, goal) out.
//!
//! [`Planner`] owns the current map and everything derived from it, and runs the pipeline
//! (traversability for the vehicle, any-angle search, trajectory refinement, verification).
//! It is the single entry point used by the ROS node and the CLI, so both behave identically.
//! World quantities are metres and radians in the map frame; the search works in cell units.

use crate::error::MapError;
use crate::geometry::{Point2, Pose2};
use crate::grid::Grid;
use crate::map::{OccupancyMap, Traversability, DEFAULT_MAX_MAP_CELLS};
use crate::search::octile::octile_astar;
use crate::trajectory::Trajectory;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Outcome codes, equal to the constants of `blockstar_planner_msgs/PlannerStatus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[repr(u8)]
pub enum StatusCode {
    /// A plan was found and verified.
    Success = 0,
    /// No map has been received or loaded.
    NoMap = 1,
    /// The start pose lies outside the map.
    StartOutsideMap = 2,
    /// The goal pose lies outside the map.
    GoalOutsideMap = 3,
    /// The vehicle does not fit at the start pose.
    StartOccupied = 4,
    /// The vehicle does not fit at the goal pose.
    GoalOccupied = 5,
    /// No start pose has been received.
    NoStart = 6,
    /// No legal path exists (or none was found that passes verification).
    NoValidPath = 7,
    /// The time budget ran out.
    Timeout = 8,
    /// The request itself is malformed (NaN, wrong frame, bad quaternion, bad map).
    InvalidInput = 9,
    /// A newer request replaced this one.
    Superseded = 10,
}

impl StatusCode {
    /// The upper-case name used in messages and JSON (`SUCCESS`, `NO_MAP`, ...).
    pub fn name(self) -> &'static str {
        match self {
            StatusCode::Success => "SUCCESS",
            StatusCode::NoMap => "NO_MAP",
            StatusCode::StartOutsideMap => "START_OUTSIDE_MAP",
            StatusCode::GoalOutsideMap => "GOAL_OUTSIDE_MAP",
            StatusCode::StartOccupied => "START_OCCUPIED",
            StatusCode::GoalOccupied => "GOAL_OCCUPIED",
            StatusCode::NoStart => "NO_START",
            StatusCode::NoValidPath => "NO_VALID_PATH",
            StatusCode::Timeout => "TIMEOUT",
            StatusCode::InvalidInput => "INVALID_INPUT",
            StatusCode::Superseded => "SUPERSEDED",
        }
    }
}

/// A failed request: a code and a human-readable reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {message}", code.name())]
pub struct PlanError {
    /// What went wrong.
    pub code: StatusCode,
    /// Why, for a person.
    pub message: String,
}

impl PlanError {
    /// Builds an error.
    pub fn new(code: StatusCode, message: impl Into<String>) -> Self {
        Self { code, message: message.into() }
    }
}

impl From<MapError> for PlanError {
    fn from(e: MapError) -> Self {
        PlanError::new(StatusCode::InvalidInput, e.to_string())
    }
}

/// Planner parameters. Names match the ROS parameters of `config/planner.yaml`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannerConfig {
    /// Radius of the vehicle's circular footprint (m, >= 0).
    pub robot_radius: f64,
    /// Minimum turning radius (m, >= 0; 0 allows turning on the spot).
    pub min_turning_radius: f64,
    /// Whether unknown cells may be driven through.
    pub allow_unknown: bool,
    /// Occupancy value (0..=100) at or above which a cell is an obstacle.
    pub occupied_threshold: i8,
    /// Spacing of the poses in the published path (m, > 0).
    pub path_spacing: f64,
    /// Time budget for one plan (s, > 0).
    pub max_planning_time: f64,
    /// Largest map accepted (cells).
    pub max_map_cells: usize,
}

impl Default for PlannerConfig {
    fn default() -> Self {
        Self {
            robot_radius: 0.2,
            min_turning_radius: 0.5,
            allow_unknown: false,
            occupied_threshold: 65,
            path_spacing: 0.05,
            max_planning_time: 2.0,
            max_map_cells: DEFAULT_MAX_MAP_CELLS,
        }
    }
}

impl PlannerConfig {
    /// Checks every field's range; the message names the offending parameter.
    pub fn validate(&self) -> Result<(), PlanError> {
        let bad = |m: String| Err(PlanError::new(StatusCode::InvalidInput, m));
        if !(self.robot_radius.is_finite() && self.robot_radius >= 0.0) {
            return bad(format!("robot_radius must be >= 0, got {}", self.robot_radius));
        }
        if !(self.min_turning_radius.is_finite() && self.min_turning_radius >= 0.0) {
            return bad(format!("min_turning_radius must be >= 0, got {}", self.min_turning_radius));
        }
        if !(0..=100).contains(&self.occupied_threshold) {
            return bad(format!("occupied_threshold must be in 0..=100, got {}", self.occupied_threshold));
        }
        if !(self.path_spacing.is_finite() && self.path_spacing > 0.0) {
            return bad(format!("path_spacing must be > 0, got {}", self.path_spacing));
        }
        if !(self.max_planning_time.is_finite() && self.max_planning_time > 0.0) {
            return bad(format!("max_planning_time must be > 0, got {}", self.max_planning_time));
        }
        if self.max_map_cells == 0 {
            return bad("max_map_cells must be > 0".into());
        }
        Ok(())
    }

    fn traversability(&self) -> Traversability {
        Traversability { occupied_threshold: self.occupied_threshold, allow_unknown: self.allow_unknown }
    }
}

/// Stops a search when a deadline passes or a flag is raised (a newer goal arrived).
#[derive(Debug, Clone)]
pub struct Budget {
    deadline: Instant,
    cancel: Option<Arc<AtomicBool>>,
}

impl Budget {
    /// A budget of `seconds` from now, optionally cancellable through `cancel`.
    pub fn new(seconds: f64, cancel: Option<Arc<AtomicBool>>) -> Self {
        let d = Duration::try_from_secs_f64(seconds.max(0.0)).unwrap_or(Duration::from_secs(3600));
        Self { deadline: Instant::now() + d, cancel }
    }

    /// True when the search must stop.
    pub fn should_stop(&self) -> bool {
        self.is_cancelled() || Instant::now() >= self.deadline
    }

    /// True when the request was cancelled (rather than timed out).
    pub fn is_cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed))
    }

    /// The error to report after `should_stop()` ended a search.
    pub fn stop_error(&self) -> PlanError {
        if self.is_cancelled() {
            PlanError::new(StatusCode::Superseded, "a newer goal replaced this one")
        } else {
            PlanError::new(StatusCode::Timeout, "the planning time budget ran out")
        }
    }
}

/// Figures about one plan.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PlanStats {
    /// Wall-clock planning time (s).
    pub planning_time: f64,
    /// Search expansions, all stages.
    pub expansions: usize,
    /// Length of the any-angle path (m).
    pub any_angle_length: f64,
    /// Length of the trajectory (m).
    pub trajectory_length: f64,
    /// Time per stage (stage name, milliseconds), in pipeline order.
    pub stage_ms: Vec<(String, f64)>,
}

/// A successful plan, in the map frame (metres, radians).
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Waypoints of the any-angle path, start and goal included.
    pub any_angle: Vec<Point2>,
    /// The drivable trajectory.
    pub trajectory: Trajectory,
    /// The trajectory sampled every `path_spacing`, with headings along the curve.
    pub poses: Vec<Pose2>,
    /// Figures.
    pub stats: PlanStats,
}

/// The map and what is derived from it; immutable once built, shared with in-flight plans.
#[derive(Debug)]
pub struct PreparedMap {
    /// The occupancy map as received.
    pub map: OccupancyMap,
    /// Cells the vehicle's centre may occupy (the obstacle grid inflated by the footprint).
    pub vehicle_grid: Grid,
}

impl PreparedMap {
    /// Derives the vehicle grid from `map` under `config`.
    pub fn new(map: OccupancyMap, config: &PlannerConfig) -> Self {
        let obstacles = map.to_grid(config.traversability());
        let radius_cells = config.robot_radius / map.info.resolution;
        let vehicle_grid = inflate(&obstacles, radius_cells);
        Self { map, vehicle_grid }
    }
}

/// Blocks every cell whose centre lies within `radius` (cells) of a blocked cell's centre.
fn inflate(grid: &Grid, radius: f64) -> Grid {
    let r = radius.ceil() as i64;
    if r <= 0 {
        return grid.clone();
    }
    let offsets: Vec<(i64, i64)> = (-r..=r)
        .flat_map(|dy| (-r..=r).map(move |dx| (dx, dy)))
        .filter(|&(dx, dy)| ((dx * dx + dy * dy) as f64).sqrt() <= radius + 1e-9)
        .collect();
    let (w, h) = (grid.width() as i64, grid.height() as i64);
    let mut out = grid.clone();
    for y in 0..h {
        for x in 0..w {
            if grid.is_blocked(x, y) {
                for &(dx, dy) in &offsets {
                    let (nx, ny) = (x + dx, y + dy);
                    if nx >= 0 && ny >= 0 && nx < w && ny < h {
                        // In bounds by the check above.
                        let _ = out.set_blocked(nx as usize, ny as usize, true);
                    }
                }
            }
        }
    }
    out
}

/// The planner: holds the current map and answers plan requests.
#[derive(Debug, Clone)]
pub struct Planner {
    config: PlannerConfig,
    map: Option<Arc<PreparedMap>>,
}

impl Planner {
    /// A planner with no map. Fails when `config` is out of range.
    pub fn new(config: PlannerConfig) -> Result<Self, PlanError> {
        config.validate()?;
        Ok(Self { config, map: None })
    }

    /// The parameters in force.
    pub fn config(&self) -> &PlannerConfig {
        &self.config
    }

    /// The map in force, if any.
    pub fn map(&self) -> Option<&Arc<PreparedMap>> {
        self.map.as_ref()
    }

    /// Replaces the map. On error (invalid geometry, wrong data length, over the cell cap) the
    /// previous map is kept and an `INVALID_INPUT` error says why.
    pub fn set_map(&mut self, map: OccupancyMap) -> Result<(), PlanError> {
        map.info.validate(self.config.max_map_cells)?;
        if map.data.len() != map.info.width * map.info.height {
            return Err(PlanError::new(
                StatusCode::InvalidInput,
                format!("map data has {} cells but the map is {}x{}", map.data.len(), map.info.width, map.info.height),
            ));
        }
        self.map = Some(Arc::new(PreparedMap::new(map, &self.config)));
        Ok(())
    }

    /// Plans from `start` to `goal` (map frame). `goal.yaw` is the requested final heading;
    /// pass `goal_heading_free = true` when the goal's orientation is unset.
    ///
    /// Fails with the matching [`StatusCode`]: `NO_MAP`, `INVALID_INPUT` (non-finite pose),
    /// `START/GOAL_OUTSIDE_MAP`, `START/GOAL_OCCUPIED`, `NO_VALID_PATH`, `TIMEOUT`, `SUPERSEDED`.
    pub fn plan(&self, start: Pose2, goal: Pose2, goal_heading_free: bool, budget: &Budget) -> Result<Plan, PlanError> {
        let t0 = Instant::now();
        let prepared =
            self.map.as_ref().ok_or_else(|| PlanError::new(StatusCode::NoMap, "no map has been received"))?;
        if !start.is_finite() {
            return Err(PlanError::new(StatusCode::InvalidInput, "start pose is not finite"));
        }
        let goal_usable = goal.is_finite() || (goal_heading_free && goal.point().is_finite());
        if !goal_usable {
            return Err(PlanError::new(StatusCode::InvalidInput, "goal pose is not finite"));
        }
        let info = &prepared.map.info;
        let grid = &prepared.vehicle_grid;
        let s = info.world_to_cell(start.point());
        let g = info.world_to_cell(goal.point());
        let start_cell = info.cell_of(s).ok_or_else(|| {
            PlanError::new(
                StatusCode::StartOutsideMap,
                format!("start ({:.3}, {:.3}) is outside the map", start.x, start.y),
            )
        })?;
        let goal_cell = info.cell_of(g).ok_or_else(|| {
            PlanError::new(
                StatusCode::GoalOutsideMap,
                format!("goal ({:.3}, {:.3}) is outside the map", goal.x, goal.y),
            )
        })?;
        if grid.is_blocked(start_cell.0 as i64, start_cell.1 as i64) {
            return Err(PlanError::new(
                StatusCode::StartOccupied,
                format!("the vehicle does not fit at the start cell {start_cell:?}"),
            ));
        }
        if grid.is_blocked(goal_cell.0 as i64, goal_cell.1 as i64) {
            return Err(PlanError::new(
                StatusCode::GoalOccupied,
                format!("the vehicle does not fit at the goal cell {goal_cell:?}"),
            ));
        }
        let search = octile_astar(grid, start_cell, goal_cell, || budget.should_stop());
        let path = match search {
            Some(p) => p,
            None if budget.should_stop() => return Err(budget.stop_error()),
            None => {
                return Err(PlanError::new(
                    StatusCode::NoValidPath,
                    "no path: the goal is not reachable for this vehicle",
                ))
            }
        };
        let search_ms = t0.elapsed().as_secs_f64() * 1e3;
        // Cell centres between the exact start and goal points.
        let mut pts = Vec::with_capacity(path.cells.len() + 2);
        pts.push(s);
        pts.extend(
            path.cells
                .iter()
                .skip(1)
                .take(path.cells.len().saturating_sub(2))
                .map(|&(x, y)| Point2::new(x as f64 + 0.5, y as f64 + 0.5)),
        );
        pts.push(g);
        let any_angle: Vec<Point2> = pts.iter().map(|&p| info.cell_to_world(p)).collect();
        let trajectory = Trajectory::polyline(&pts).to_world(info);
        let poses = trajectory.sample(self.config.path_spacing);
        let stats = PlanStats {
            planning_time: t0.elapsed().as_secs_f64(),
            expansions: path.expansions,
            any_angle_length: any_angle.windows(2).map(|w| w[0].distance(w[1])).sum(),
            trajectory_length: trajectory.length(),
            stage_ms: vec![("octile_astar".into(), search_ms)],
        };
        Ok(Plan { any_angle, trajectory, poses, stats })
    }
}
