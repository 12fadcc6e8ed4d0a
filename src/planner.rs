//! The planner facade: one map in, one plan per (start, goal) out.
//!
//! [`Planner`] owns the current map and everything derived from it, and runs the pipeline
//! (traversability for the vehicle, any-angle search, trajectory refinement, verification).
//! It is the single entry point used by the ROS node and the CLI, so both behave identically.
//! World quantities are metres and radians in the map frame; the search works in cell units.

use crate::block_astar::{BlockAStar, BlockGrid};
use crate::clearance::reach::Reach;
use crate::clearance::{self, Capability, ChangedRegion, ClearanceConfig, ClearanceMap, Footprint, PatchRect, Vehicle};
use crate::directional::footprint::Shape;
use crate::directional::{self, CollisionMap, Directional, HeadingBins, Neighbourhood, RefineError, RefineParams};
use crate::error::MapError;
use crate::geometry::{normalize_angle, Point2, Pose2};
use crate::grid::{CellRect, Grid};
use crate::lddb::{Lddb, Metric};
use crate::map::{MapUnits, OccupancyMap, Traversability, DEFAULT_MAX_MAP_CELLS};
use crate::search::los::LosRule;
use crate::search::path::{GridPath, SearchFailure};
use crate::stages::{SolvedBy, Stage};
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
    /// A pose's frame cannot be transformed into the planner's frame (unknown frame, frames not
    /// connected, or a transform too old), or the robot's pose is not known through TF.
    TfError = 11,
    /// The node is not active (lifecycle): goals are refused until it is activated.
    NotActive = 12,
    /// The request names a planner this node does not serve (Nav2's `planner_id`).
    InvalidPlanner = 13,
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
            StatusCode::TfError => "TF_ERROR",
            StatusCode::NotActive => "NOT_ACTIVE",
            StatusCode::InvalidPlanner => "INVALID_PLANNER",
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

/// Planner parameters. Names match the ROS parameters of `config/planner.yaml`, and the defaults
/// are that file's values (a test keeps them equal), so `blockstar plan` without `--params` and
/// the node with the bundled file plan alike.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannerConfig {
    /// Radius of the vehicle's circular footprint (m, >= 0); used when `robot_side` is 0.
    pub robot_radius: f64,
    /// Side of the vehicle's square footprint (m, >= 0; 0 = the circle of `robot_radius`),
    /// centred on the reference point and turning with the heading along arcs and lines.
    ///
    /// Clearance rule: the vehicle mask, regions and any-angle guide use the square's
    /// circumscribed circle (radius `side / sqrt(2)`): wherever that disk fits, the square fits in
    /// every heading it may turn to, so the mask is conservative for a turning square, whereas
    /// true clearance (obstacle-free squares anchored at a cell, axis aligned) only describes a
    /// square that never turns. The trajectory itself (hit-check tables,
    /// searches, verification) is checked with the turning square.
    pub robot_side: f64,
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
    /// Heading bins of Directional A* (8 as Pinter, or 16).
    pub heading_bins: usize,
    /// Neighbourhood of the Directional A* window repair (8, 24 or 48).
    pub neighbourhood: usize,
    /// Extra cost per radian turned, in metres (0 = shortest path).
    pub turn_penalty: f64,
}

impl Default for PlannerConfig {
    fn default() -> Self {
        Self {
            robot_radius: 0.15,
            robot_side: 0.0,
            min_turning_radius: 0.3,
            allow_unknown: false,
            occupied_threshold: 65,
            path_spacing: 0.05,
            max_planning_time: 2.0,
            max_map_cells: DEFAULT_MAX_MAP_CELLS,
            heading_bins: 8,
            neighbourhood: 24,
            turn_penalty: 0.0,
        }
    }
}

impl PlannerConfig {
    /// Checks every field's range, by the node's parameter table ([`crate::params::PARAMS`]: one
    /// set of ranges for the library, the CLI and the node); the message names the offending
    /// parameter, its range and its value.
    pub fn validate(&self) -> Result<(), PlanError> {
        crate::params::NodeParams { planner: self.clone(), ..Default::default() }.validate()
    }

    /// The Directional A* parameters for a map of `resolution` metres per cell (`None` when the
    /// turning radius is 0: the any-angle path is then the trajectory).
    pub fn refine_params(&self, resolution: f64) -> Option<RefineParams> {
        (self.min_turning_radius > 0.0).then(|| RefineParams {
            heading_bins: if self.heading_bins == 16 { HeadingBins::Sixteen } else { HeadingBins::Eight },
            repair_neighbourhood: match self.neighbourhood {
                8 => Neighbourhood::Directional8,
                48 => Neighbourhood::Directional48,
                _ => Neighbourhood::Directional24,
            },
            // Per radian turned: metres of penalty become cells of penalty.
            turn_penalty: self.turn_penalty / resolution,
            footprint_side: self.robot_side / resolution,
            ..RefineParams::from_metres(self.robot_radius, self.min_turning_radius, resolution)
        })
    }

    /// Radius (m) of the largest disk the footprint covers in every heading: the circle itself,
    /// or half the square's side.
    pub fn inradius(&self) -> f64 {
        if self.robot_side > 0.0 {
            self.robot_side / 2.0
        } else {
            self.robot_radius
        }
    }

    /// Radius (m) of the disk the vehicle mask, regions and start/goal placement use: the circle
    /// itself, or the square's circumscribed circle (see `robot_side`).
    pub fn mask_radius(&self) -> f64 {
        if self.robot_side > 0.0 {
            self.robot_side * std::f64::consts::FRAC_1_SQRT_2
        } else {
            self.robot_radius
        }
    }

    /// The rule turning occupancy values into blocked cells.
    pub fn traversability(&self) -> Traversability {
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
    /// Time per stage, in pipeline order.
    pub stage_ms: Vec<StageTime>,
    /// How the trajectory was obtained (`any_angle` when the turning radius is 0, else the
    /// refinement stage that solved it): one entry, or one per leg that moved for a plan through
    /// several poses ([`crate::waypoints::plan_through`]). [`PlanStats::solved_by_label`] joins
    /// them with `+`.
    pub solved_by: Vec<SolvedBy>,
    /// When the start or goal cell could not hold the vehicle and a covering cell was used
    /// instead (the "subsumed by a clearance square" rule): a note with the offsets, in metres.
    pub note: Option<String>,
    /// Corners (map frame, metres, counter-clockwise) of each window the Directional A* window
    /// repair searched, in order; empty when the repair did not run. For display.
    pub repair_windows: Vec<[Point2; 4]>,
}

impl PlanStats {
    /// How the plan was solved, as printed: `smoothing`, or per leg `direct+smoothing`.
    pub fn solved_by_label(&self) -> String {
        let names: Vec<&str> = self.solved_by.iter().map(|s| s.name()).collect();
        names.join("+")
    }
}

/// The time one stage of a plan took.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StageTime {
    /// The leg (from 1) of a plan through several poses; `None` for a single goal.
    pub leg: Option<usize>,
    /// Which stage.
    pub stage: Stage,
    /// Wall-clock time (ms).
    pub ms: f64,
}

impl StageTime {
    /// The stage's name, prefixed with its leg when there is one: `block_astar`, `leg2/verify`.
    pub fn label(&self) -> String {
        match self.leg {
            Some(leg) => format!("leg{leg}/{}", self.stage),
            None => self.stage.name().to_string(),
        }
    }
}

/// A successful plan, in the map frame (metres, radians).
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Waypoints of the any-angle guide, start and goal included. Just `[start, goal]` when the
    /// shortest curve between them was already collision-free (no guide was searched), and just
    /// `[start]` when the vehicle is already at the goal.
    pub any_angle: Vec<Point2>,
    /// The drivable trajectory, verified on the map it was planned on.
    pub trajectory: Trajectory,
    /// The trajectory sampled every `path_spacing`, with headings along the curve.
    pub poses: Vec<Pose2>,
    /// Figures.
    pub stats: PlanStats,
}

/// The map and what is derived from it. Plans in flight hold an `Arc` of it; updates copy it
/// first when it is shared (copy-on-write), so a plan always sees one consistent map.
#[derive(Debug, Clone)]
pub struct PreparedMap {
    /// The occupancy map as received.
    pub map: OccupancyMap,
    /// Obstacle distance, true clearance, regions and the vehicle mask, kept current.
    pub clearance: ClearanceMap,
    /// The vehicle the clearance map tracks (capability and footprint in cells).
    pub vehicle: Vehicle,
    /// Cells the vehicle's footprint may not touch (what the capability may not enter).
    pub collision: CollisionMap,
    /// Block A* pattern codes of the vehicle mask.
    pub blocks: BlockGrid,
    /// Directional A* parameters and tables for this map's resolution (`None`: turning radius 0).
    pub directional: Option<Arc<Directional>>,
}

/// What a map update changed.
#[derive(Debug, Clone, PartialEq)]
pub struct MapUpdate {
    /// Bounding box of the cells whose traversability class changed (`None`: nothing changed).
    pub changed: Option<CellRect>,
    /// True when everything was derived anew (new geometry, or a change too large to pay for
    /// local updates).
    pub rebuilt: bool,
}

/// Extra radius (cells) of the vehicle mask over the footprint, so the footprint fits at every
/// point of a mask cell, not just its centre: half a cell diagonal plus the sampling allowance of
/// the trajectory check. Any-angle paths through mask cells are then collision-free.
fn mask_margin() -> f64 {
    std::f64::consts::FRAC_1_SQRT_2
        + directional::footprint::sampled_radius(0.0)
        + 2.0 * directional::footprint::SEARCH_MARGIN
}

impl PreparedMap {
    /// Derives everything from `map` under `config`, reusing `previous` tables when they still
    /// apply. Fails with `INVALID_INPUT` when the footprint does not suit the map (for example a
    /// robot radius beyond the clearance cap at this resolution).
    pub fn new(
        map: OccupancyMap,
        config: &PlannerConfig,
        lddb: &Lddb,
        previous: Option<&PreparedMap>,
    ) -> Result<Self, PlanError> {
        let invalid = |m: String| PlanError::new(StatusCode::InvalidInput, m);
        let res = map.info.resolution;
        let capability = Capability::from_traversability(config.traversability());
        let radius_cells = config.mask_radius() / res + mask_margin();
        let cap = (radius_cells.floor() as u16 + 2).max(crate::clearance::DEFAULT_CAP);
        let clearance_config = ClearanceConfig { distance_cap: cap.min(127), ..ClearanceConfig::default() };
        let mut clearance = ClearanceMap::new(&map, clearance_config, &[capability])
            .map_err(|e| invalid(format!("map rejected: {e}")))?;
        let vehicle = Vehicle {
            capability,
            footprint: Footprint::circle(radius_cells).map_err(|e| invalid(format!("robot_radius: {e}")))?,
        };
        clearance
            .track_vehicle(vehicle)
            .map_err(|e| invalid(format!("footprint radius {} m: {e}", config.mask_radius())))?;
        let obstacles = map.to_grid(config.traversability());
        let collision = CollisionMap::with_footprint(&obstacles, config.mask_radius() / res);
        let mask = clearance.vehicle_mask(&vehicle).map_err(|e| invalid(e.to_string()))?;
        let blocks = BlockGrid::new(mask, lddb.side()).map_err(|e| invalid(e.to_string()))?;
        let directional = match config.refine_params(res) {
            None => None,
            Some(params) => match previous.and_then(|p| p.directional.clone()) {
                Some(d) if *d.params() == params => Some(d),
                _ => Some(Arc::new(Directional::new(params).map_err(invalid)?)),
            },
        };
        Ok(Self { map, clearance, vehicle, collision, blocks, directional })
    }

    /// Brings the data derived from the clearance map (Block A* pattern codes, collision map)
    /// up to date after the clearance map reported `changed`.
    fn follow(&mut self, changed: &ChangedRegion, config: &PlannerConfig, lddb: &Lddb) -> Result<MapUpdate, PlanError> {
        let invalid = |m: String| PlanError::new(StatusCode::InvalidInput, m);
        let obstacles = self.map.to_grid(config.traversability());
        let res = self.map.info.resolution;
        if changed.rebuilt {
            self.collision = CollisionMap::with_footprint(&obstacles, config.mask_radius() / res);
            let mask = self.clearance.vehicle_mask(&self.vehicle).map_err(|e| invalid(e.to_string()))?;
            self.blocks = BlockGrid::new(mask, lddb.side()).map_err(|e| invalid(e.to_string()))?;
            return Ok(MapUpdate { changed: changed.cells, rebuilt: true });
        }
        if let Some(rect) = changed.cells {
            self.collision.update_rect(&obstacles, rect).map_err(invalid)?;
        }
        let mask = self.clearance.vehicle_mask(&self.vehicle).map_err(|e| invalid(e.to_string()))?;
        for m in changed.masks.iter().filter(|m| m.vehicle == self.vehicle) {
            self.blocks.update_rect(mask, m.rect).map_err(|e| invalid(e.to_string()))?;
        }
        Ok(MapUpdate { changed: changed.cells, rebuilt: false })
    }

    /// The grid the any-angle search runs on: free where the vehicle fits.
    pub fn vehicle_mask(&self) -> &Grid {
        // The vehicle was tracked when this map was prepared.
        self.clearance.vehicle_mask(&self.vehicle).expect("vehicle tracked at construction")
    }
}

/// Verifies a polyline trajectory (turning radius 0: the vehicle turns on the spot at corners, so
/// headings may jump but positions may not): it runs from `s` to `g`, its pieces join, and the
/// swept footprint of `radius` cells touches no blocked cell. Fails with `NO_VALID_PATH`.
fn verify_polyline(map: &CollisionMap, t: &Trajectory, radius: f64, s: Pose2, g: Pose2) -> Result<(), PlanError> {
    let fail = |m: String| {
        Err(PlanError::new(StatusCode::NoValidPath, format!("the any-angle path failed verification: {m}")))
    };
    let (Some(first), Some(last)) = (t.segments.first(), t.segments.last()) else {
        return fail("it is empty".into());
    };
    if first.start.point().distance(s.point()) > 1e-9 || last.end().point().distance(g.point()) > 1e-9 {
        return fail("it does not join the start and the goal".into());
    }
    if let Some(i) = t.segments.windows(2).position(|w| w[0].end().point().distance(w[1].start.point()) > 1e-9) {
        return fail(format!("segment {i} does not join the next one"));
    }
    if t.segments.iter().any(|seg| seg.curvature != 0.0 || !seg.length.is_finite()) {
        return fail("it is not a polyline".into());
    }
    if !map.sweep_free(&t.segments, radius, directional::footprint::SEARCH_MARGIN) {
        return fail("the footprint touches an obstacle".into());
    }
    Ok(())
}

/// Stage timings of one plan: each stage's time since the previous mark.
struct StageClock {
    lap: Instant,
    stages: Vec<StageTime>,
}

impl StageClock {
    fn new() -> Self {
        Self { lap: Instant::now(), stages: Vec::new() }
    }

    /// Records the time since the last mark under `name`.
    fn mark(&mut self, stage: Stage) {
        self.stages.push(StageTime { leg: None, stage, ms: self.lap.elapsed().as_secs_f64() * 1e3 });
        self.lap = Instant::now();
    }

    /// Records stages timed elsewhere, in place of the time since the last mark.
    fn extend(&mut self, stages: &[directional::pipeline::StageStat]) {
        self.stages.extend(stages.iter().map(|st| StageTime { leg: None, stage: st.name, ms: st.ms }));
        self.lap = Instant::now();
    }
}

thread_local! {
    /// One Block A* searcher per thread: its scratch memory (sized to the largest map searched on
    /// the thread, about 17 bytes per cell: [`BlockAStar::scratch_bytes`]) is reused across plans
    /// instead of being allocated and cleared for each one, and freed when the thread ends. The
    /// node plans on at most three threads (its capped blocking pool), so at most three copies.
    static BLOCK_SEARCH: std::cell::RefCell<BlockAStar> = std::cell::RefCell::new(BlockAStar::new());
}

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

/// The any-angle guide between mask vertices `sv` and `gv` when no search is needed: the straight
/// segment, when both ends can end a path and it has line of sight on the mask under the rule
/// Block A* uses (no any-angle path is shorter, so Block A* could only return it or a longer
/// one). `None`: search.
fn straight_guide(blocks: &BlockGrid, sv: (u32, u32), gv: (u32, u32)) -> Option<GridPath> {
    let mask = blocks.mask();
    let ends_ok = [sv, gv].iter().all(|v| mask.check_vertex_endpoint(*v).is_ok());
    let (a, b) = ((i64::from(sv.0), i64::from(sv.1)), (i64::from(gv.0), i64::from(gv.1)));
    (ends_ok && mask.los_vertices(LosRule::Conservative, a, b)).then(|| {
        let length = ((b.0 - a.0) as f64).hypot((b.1 - a.1) as f64);
        let points = if sv == gv { vec![sv] } else { vec![sv, gv] };
        GridPath { points, length, expansions: 0 }
    })
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

    /// Replaces the map. On error (invalid geometry, wrong data length, over the cell cap, a
    /// footprint the map cannot annotate) the previous map is kept and an `INVALID_INPUT` error
    /// says why.
    pub fn set_map(&mut self, map: OccupancyMap) -> Result<(), PlanError> {
        map.info.validate(self.config.max_map_cells)?;
        if map.data.len() != map.info.width * map.info.height {
            return Err(PlanError::new(
                StatusCode::InvalidInput,
                format!("map data has {} cells but the map is {}x{}", map.data.len(), map.info.width, map.info.height),
            ));
        }
        let prepared = PreparedMap::new(map, &self.config, &self.lddb, self.map.as_deref())?;
        self.map = Some(Arc::new(prepared));
        Ok(())
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
        let held = self.map.as_mut().ok_or_else(|| PlanError::new(StatusCode::NoMap, "no map to patch"))?;
        let rect = PatchRect { x, y, width, height };
        // Validate against the shared copy first, so a bad patch never triggers a copy.
        let (w, h) = (held.map.info.width as i64, held.map.info.height as i64);
        let fits = x >= 0
            && y >= 0
            && width > 0
            && height > 0
            && x.checked_add(width).is_some_and(|e| e <= w)
            && y.checked_add(height).is_some_and(|e| e <= h);
        if !fits || data.len() as i64 != width.saturating_mul(height) {
            return Err(PlanError::new(
                StatusCode::InvalidInput,
                format!("patch {width}x{height} at ({x}, {y}) with {} values does not fit the {w}x{h} map", data.len()),
            ));
        }
        let next = Arc::make_mut(held);
        let changed = next
            .clearance
            .apply_patch(rect, data)
            .map_err(|e| PlanError::new(StatusCode::InvalidInput, format!("patch rejected: {e}")))?;
        let mw = next.map.info.width;
        for (row, chunk) in data.chunks(width as usize).enumerate() {
            let start = (y as usize + row) * mw + x as usize;
            next.map.data[start..start + chunk.len()].copy_from_slice(chunk);
        }
        next.follow(&changed, &self.config, &self.lddb)
    }

    /// Replaces the held map with `map`. With the same geometry, only what differs is updated
    /// (SLAM nodes republish the whole grid); otherwise, or with no map held, everything is
    /// derived anew as by [`Planner::set_map`]. On error nothing changes.
    pub fn update_map(&mut self, map: OccupancyMap) -> Result<MapUpdate, PlanError> {
        let same_geometry =
            self.map.as_ref().is_some_and(|m| m.map.info == map.info && m.map.data.len() == map.data.len());
        if !same_geometry || map.data.len() != map.info.width * map.info.height {
            let changed = Some(CellRect { x: 0, y: 0, width: map.info.width, height: map.info.height });
            self.set_map(map)?;
            return Ok(MapUpdate { changed, rebuilt: true });
        }
        let held = self.map.as_mut().expect("same geometry implies a held map");
        if held.map.data == map.data {
            return Ok(MapUpdate { changed: None, rebuilt: false });
        }
        let next = Arc::make_mut(held);
        let changed = next
            .clearance
            .replace_map(&map)
            .map_err(|e| PlanError::new(StatusCode::InvalidInput, format!("map rejected: {e}")))?;
        next.map = map;
        next.follow(&changed, &self.config, &self.lddb)
    }

    /// Replaces the parameters and re-derives the held map under them. On error nothing changes.
    pub fn set_config(&mut self, config: PlannerConfig) -> Result<(), PlanError> {
        config.validate()?;
        let map = match &self.map {
            Some(m) => Some(Arc::new(PreparedMap::new(m.map.clone(), &config, &self.lddb, Some(m))?)),
            None => None,
        };
        self.config = config;
        self.map = map;
        Ok(())
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
        let goal = if goal_heading_free { Pose2::new(goal.x, goal.y, 0.0) } else { goal };
        let info = &prepared.map.info;
        let mut clock = StageClock::new();

        // 1. Endpoints in cells, and where the vehicle can stand for them.
        let s = info.world_pose_to_cell(start);
        let g = info.world_pose_to_cell(goal);
        let start_cell = info.cell_of(s.point()).ok_or_else(|| {
            PlanError::new(StatusCode::StartOutsideMap, format!("{} is outside the map", self.named("start", start)))
        })?;
        let goal_cell = info.cell_of(g.point()).ok_or_else(|| {
            PlanError::new(StatusCode::GoalOutsideMap, format!("{} is outside the map", self.named("goal", goal)))
        })?;
        let mut notes = Vec::new();
        let (s, start_mask_cell) = self
            .standing_place(prepared, s, start_cell, "start", false, &mut notes)
            .ok_or_else(|| self.no_standing_place(prepared, start, start_cell, "start"))?;
        let (g, goal_mask_cell) = self
            .standing_place(prepared, g, goal_cell, "goal", goal_heading_free, &mut notes)
            .ok_or_else(|| self.no_standing_place(prepared, goal, goal_cell, "goal"))?;
        // 2. Regions answer "reachable on the vehicle mask" without a search. The mask keeps a
        //    margin (the footprint fits at every point of a mask cell), so a pair it separates
        //    is refused only on a proof free of that margin; otherwise the full Directional A*
        //    below decides (a gap only a little wider than the vehicle).
        let on_mask = match (start_mask_cell, goal_mask_cell) {
            (Some(a), Some(b)) => {
                prepared.clearance.same_region(&prepared.vehicle, a, b).unwrap_or(false).then_some((a, b))
            }
            _ => None,
        };
        clock.mark(Stage::Regions);
        if on_mask.is_none() {
            let (a, b) = (s.point(), g.point());
            let layer = prepared.clearance.layer(prepared.vehicle.capability);
            // Without the layer nothing is proved, so the full search decides.
            let reach = layer.map_or(Reach::Possible, |layer| {
                clearance::reach::may_connect(
                    layer,
                    self.config.inradius() / info.resolution,
                    (a.x as usize, a.y as usize),
                    (b.x as usize, b.y as usize),
                    || budget.should_stop(),
                )
            });
            clock.mark(Stage::Reach);
            match reach {
                Reach::Possible => {}
                Reach::Stopped => return Err(budget.stop_error()),
                Reach::Impossible => {
                    return Err(PlanError::new(
                        StatusCode::NoValidPath,
                        "no path: no gap wide enough for the vehicle joins start and goal",
                    ))
                }
            }
        }
        // A request cancelled or out of time before any search starts ends here.
        if budget.should_stop() {
            return Err(budget.stop_error());
        }
        let same_place = s.point().distance(g.point()) < 1e-9;
        let same_heading = goal_heading_free || normalize_angle(s.yaw - g.yaw).abs() < 1e-9;
        // A start boxed in ahead (or a goal behind) is refused before any search: a proof, not a
        // guess (see `directional::escape`), so no pair a full search could solve is given up.
        if let Some(ctx) = prepared.directional.as_ref().filter(|_| !same_place) {
            let p = ctx.params();
            let why = directional::escape::trapped_ends(
                &prepared.collision,
                s,
                g,
                goal_heading_free,
                p.turning_radius,
                p.shape().inradius(),
            );
            clock.mark(Stage::Escape);
            if let Some(why) = why {
                return Err(PlanError::new(StatusCode::NoValidPath, format!("no turning-radius-legal path: {why}")));
            }
        }
        let ends = [self.named("start", start), self.named("goal", goal)];
        let refine_error = |e: RefineError| refine_error(e, budget, &ends);
        let full_search = |clock, notes, why: &str| {
            self.full_search_plan(prepared, s, g, goal_heading_free, budget, clock, notes, t0, why, &ends)
        };
        // 3. Already there: nothing to drive (a heading change at the goal is planned as a loop
        //    below when the turning radius forbids turning on the spot).
        let mut repair_windows: Vec<[f64; 4]> = Vec::new();
        let (guide, trajectory, solved_by, expansions) = if same_place
            && (same_heading || prepared.directional.is_none())
        {
            let empty = Trajectory {
                segments: Vec::new(),
                min_turning_radius: self.config.min_turning_radius / info.resolution,
            };
            (vec![s.point()], empty, SolvedBy::AtGoal, 0)
        } else if let Some(direct) = prepared.directional.as_ref().filter(|_| !same_place).and_then(|ctx| {
            // 4a. The shortest curve itself, when it is collision-free: nothing is shorter, so
            //     no guide is needed (skipped under a turn penalty, see `direct_curve`).
            let mut stats = directional::RefineStats::default();
            directional::direct_curve(ctx, &prepared.collision, s, g, goal_heading_free, &mut stats)
        }) {
            clock.extend(&direct.stats.stages);
            (vec![s.point(), g.point()], direct.trajectory, direct.stats.solved_by, 0)
        } else if let Some((start_cell, goal_cell)) = on_mask {
            // 4b. Any-angle guide on the vehicle mask (Block A*, conservative line of sight).
            let corner = |p: Point2, cell: (usize, usize)| -> (u32, u32) {
                let x = if p.x - cell.0 as f64 >= 0.5 { cell.0 + 1 } else { cell.0 };
                let y = if p.y - cell.1 as f64 >= 0.5 { cell.1 + 1 } else { cell.1 };
                (x as u32, y as u32)
            };
            let (sv, gv) = (corner(s.point(), start_cell), corner(g.point(), goal_cell));
            let path = if let Some(straight) = straight_guide(&prepared.blocks, sv, gv) {
                clock.mark(Stage::GuideLineOfSight);
                straight
            } else {
                let found = BLOCK_SEARCH.with(|search| {
                    search.borrow_mut().find_path(
                        &self.lddb,
                        &prepared.blocks,
                        sv,
                        gv,
                        Metric::AnyAngle,
                        LosRule::Conservative,
                        || budget.should_stop(),
                    )
                });
                match found {
                    Ok(p) => {
                        clock.mark(Stage::BlockAstar);
                        p
                    }
                    Err(SearchFailure::Stopped) => return Err(budget.stop_error()),
                    Err(e) => {
                        return full_search(clock, notes, &format!("Block A* found no path on the vehicle mask ({e})"))
                    }
                }
            };
            let mut guide: Vec<Point2> = Vec::with_capacity(path.points.len() + 2);
            guide.push(s.point());
            guide.extend(path.points.iter().map(|&(x, y)| Point2::new(f64::from(x), f64::from(y))));
            guide.push(g.point());
            guide.dedup_by(|a, b| a.distance(*b) < 1e-9);
            // 5. Turning-radius-legal trajectory (or the polyline itself at radius 0), verified.
            match &prepared.directional {
                None => {
                    let t = Trajectory::polyline(&guide);
                    verify_polyline(&prepared.collision, &t, self.config.mask_radius() / info.resolution, s, g)?;
                    (guide, t, SolvedBy::AnyAngle, path.expansions)
                }
                Some(ctx) => {
                    let inner = &guide[1..guide.len().saturating_sub(1)];
                    let mut stop = || budget.should_stop();
                    // Away from the start, the direct curve and the trapped-ends test already
                    // ran above on these poses: the refinement does not repeat them.
                    let refine = if same_place { directional::refine } else { directional::refine_prechecked };
                    let refined = refine(ctx, &prepared.collision, inner, s, g, goal_heading_free, &mut stop)
                        .map_err(refine_error)?;
                    clock.extend(&refined.stats.stages);
                    repair_windows = refined.stats.repair_windows.clone();
                    (guide, refined.trajectory, refined.stats.solved_by, path.expansions + refined.stats.expansions)
                }
            }
        } else {
            // 4c. The vehicle mask separates start and goal but a gap may still let the vehicle
            //     through: the full Directional A* on the exact collision map decides.
            return full_search(clock, notes, "the vehicle mask separates start and goal");
        };
        Ok(self.assemble(prepared, s, &guide, trajectory, solved_by, expansions, clock, notes, &repair_windows, t0))
    }

    /// The plan in metres from a result in cells: the any-angle guide (display), the trajectory
    /// and its sampled poses, and the statistics.
    #[allow(clippy::too_many_arguments)]
    fn assemble(
        &self,
        prepared: &PreparedMap,
        s: Pose2,
        guide: &[Point2],
        trajectory: Trajectory,
        solved_by: SolvedBy,
        expansions: usize,
        mut clock: StageClock,
        notes: Vec<String>,
        repair_windows: &[[f64; 4]],
        t0: Instant,
    ) -> Plan {
        let info = &prepared.map.info;
        clock.mark(Stage::ToWorld);
        let to_world = |p: Point2| info.cell_to_world(p);
        let any_angle: Vec<Point2> = guide.iter().map(|&p| to_world(p)).collect();
        let trajectory = trajectory.to_world(info);
        let mut poses = trajectory.sample(self.config.path_spacing);
        if poses.is_empty() {
            poses.push(info.cell_pose_to_world(s));
        }
        let stats = PlanStats {
            planning_time: t0.elapsed().as_secs_f64(),
            expansions,
            any_angle_length: any_angle.windows(2).map(|w| w[0].distance(w[1])).sum(),
            trajectory_length: trajectory.length(),
            stage_ms: clock.stages,
            solved_by: vec![solved_by],
            note: (!notes.is_empty()).then(|| notes.join("; ")),
            repair_windows: repair_windows
                .iter()
                .map(|&[x0, y0, x1, y1]| {
                    [(x0, y0), (x1, y0), (x1, y1), (x0, y1)].map(|(x, y)| to_world(Point2::new(x, y)))
                })
                .collect(),
        };
        Plan { any_angle, trajectory, poses, stats }
    }

    /// Step 4c: a pair the vehicle mask cannot join (its regions separate them, or Block A*
    /// finds no path on it) although the optimistic test allows a route, or an endpoint that no
    /// mask cell covers although the footprint fits there: the full Directional A* on the exact
    /// collision map decides, within the budget, and its result is verified like any other. The
    /// guide shown is the search's chain of poses. `why` says why the mask could not be used;
    /// `ends` names start and goal for messages (see [`refine_error`]).
    #[allow(clippy::too_many_arguments)]
    fn full_search_plan(
        &self,
        prepared: &PreparedMap,
        s: Pose2,
        g: Pose2,
        goal_heading_free: bool,
        budget: &Budget,
        mut clock: StageClock,
        notes: Vec<String>,
        t0: Instant,
        why: &str,
        ends: &[String; 2],
    ) -> Result<Plan, PlanError> {
        let Some(ctx) = prepared.directional.as_ref() else {
            return Err(PlanError::new(
                StatusCode::NoValidPath,
                format!(
                    "no path: {why}; its margin (half a cell) may close a gap the vehicle fits through, \
                     and with min_turning_radius 0 no finer search runs"
                ),
            ));
        };
        let mut stop = || budget.should_stop();
        let neighbourhood = ctx.params().fallback_neighbourhood;
        let refined =
            directional::full_search(ctx, &prepared.collision, s, g, goal_heading_free, neighbourhood, &mut stop)
                .map_err(|e| match e {
                    RefineError::NoPath(m) => {
                        PlanError::new(StatusCode::NoValidPath, format!("no path: {why}, and {m}"))
                    }
                    other => refine_error(other, budget, ends),
                })?;
        clock.extend(&refined.stats.stages);
        let guide: Vec<Point2> = refined.chain.poses.iter().map(|p| p.point()).collect();
        let solved_by = refined.stats.solved_by;
        Ok(self.assemble(
            prepared,
            s,
            &guide,
            refined.trajectory,
            solved_by,
            refined.stats.expansions,
            clock,
            notes,
            &[],
            t0,
        ))
    }

    /// Where the vehicle stands for an endpoint `p` (cells) in `cell`, and the mask cell the
    /// any-angle search starts or ends in:
    /// - the vehicle fits in `cell`'s mask cell: `p` itself, from `cell`;
    /// - the footprint fits at `p` exactly but not everywhere in its cell: `p` itself, searched
    ///   from the nearest mask cell covering it (the refinement joins them);
    /// - else the centre of the nearest covering mask cell (the "subsumed" rule, noted in
    ///   `notes` with the offset);
    /// - else, when no mask cell covers `p` but the footprint fits at `p` exactly (beside a gap
    ///   narrower than the mask's margin): `p` itself with no mask cell, for the full search;
    /// - else `None` (see [`Planner::no_standing_place`]).
    ///
    /// `free_heading`: any heading will do at `p` (a goal with its orientation unset).
    fn standing_place(
        &self,
        prepared: &PreparedMap,
        p: Pose2,
        cell: (usize, usize),
        what: &str,
        free_heading: bool,
        notes: &mut Vec<String>,
    ) -> Option<(Pose2, Option<(usize, usize)>)> {
        if prepared.vehicle_mask().is_free(cell.0 as i64, cell.1 as i64) {
            return Some((p, Some(cell)));
        }
        let sub = prepared.clearance.subsuming_cell(&prepared.vehicle, cell.0, cell.1).ok()?;
        let Some(sub) = sub else {
            // The exact footprint, as the trajectory check will test it.
            let fits_exactly = prepared.directional.as_ref().is_some_and(|ctx| {
                let shape = ctx.params().shape();
                let shape = if free_heading { Shape::Disk(shape.circumradius()) } else { shape };
                prepared.collision.stands_free(p, shape)
            });
            return fits_exactly.then_some((p, None));
        };
        let res = prepared.map.info.resolution;
        let rho = directional::footprint::sampled_radius(self.config.mask_radius() / res)
            + 2.0 * directional::footprint::SEARCH_MARGIN;
        if prepared.collision.disk_free(p.point(), rho) {
            return Some((p, Some(sub.cell)));
        }
        let q = Pose2::new(sub.cell.0 as f64 + 0.5, sub.cell.1 as f64 + 0.5, p.yaw);
        notes.push(format!(
            "the vehicle does not fit at the {what}; planned from the covering cell {:?}, offset ({:.3}, {:.3}) {}",
            sub.cell,
            (q.x - p.x) * res,
            (q.y - p.y) * res,
            self.units.symbol()
        ));
        Some((q, Some(sub.cell)))
    }

    /// `what` (`start` or `goal`) at the point of `pose` as the caller gave it, in the units of
    /// [`Planner::set_units`]: `goal (1.500, 2.000) m`.
    fn named(&self, what: &str, pose: Pose2) -> String {
        format!("{what} ({:.3}, {:.3}) {}", pose.x, pose.y, self.units.symbol())
    }

    /// `START_OCCUPIED` / `GOAL_OCCUPIED` for an endpoint `pose` (as the caller gave it) in `cell`
    /// where the vehicle cannot stand, saying why: the point itself is in an obstacle or in
    /// unknown space, or only the footprint around it is blocked. The node shows this message in
    /// its status, the CLI on stderr, so it names the pose in the caller's units, not cells.
    fn no_standing_place(&self, prepared: &PreparedMap, pose: Pose2, cell: (usize, usize), what: &str) -> PlanError {
        let code = if what == "start" { StatusCode::StartOccupied } else { StatusCode::GoalOccupied };
        let at = self.named(what, pose);
        let rule = self.config.traversability();
        // The cell is inside the map (the caller found it there); -1 is the safe reading anyway.
        let v = prepared.map.value(cell.0, cell.1).unwrap_or(-1);
        let message = if v == -1 && !rule.allow_unknown {
            format!("{at} is in unknown space (occupancy -1, allow_unknown is false)")
        } else if rule.is_blocked(v) {
            format!("{at} is in an obstacle (occupancy {v})")
        } else {
            let near = if rule.allow_unknown { "obstacles" } else { "obstacles or unknown space" };
            format!(
                "the vehicle (radius {} {u}) does not fit at {at} ({near} within its radius)",
                self.config.mask_radius(),
                u = self.units.symbol()
            )
        };
        PlanError::new(code, message)
    }
}

/// The status for a refinement error; `ends` names start and goal as the caller gave them
/// (`goal (1.500, 2.000) m`, see `Planner::named`).
fn refine_error(e: RefineError, budget: &Budget, ends: &[String; 2]) -> PlanError {
    match e {
        RefineError::Stopped => budget.stop_error(),
        // The footprint in the pose's heading touches a blocked cell.
        RefineError::StartBlocked => {
            PlanError::new(StatusCode::StartOccupied, format!("the vehicle does not fit at {}", ends[0]))
        }
        RefineError::GoalBlocked => {
            PlanError::new(StatusCode::GoalOccupied, format!("the vehicle does not fit at {}", ends[1]))
        }
        RefineError::InvalidInput(m) => PlanError::new(StatusCode::InvalidInput, m),
        other => PlanError::new(StatusCode::NoValidPath, other.to_string()),
    }
}
