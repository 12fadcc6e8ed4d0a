//! The steps of one plan, in the order [`Planner::plan`] runs them. Each step is a method of
//! [`Request`] (the validated request with its clock and notes) that returns its result, ends the
//! plan with an error, or hands off to a later step.
//!
//! 0. [`Request::new`]: a map is held, the poses are finite, the goal's heading is normalised.
//! 1. [`Request::endpoints`]: the poses in cells and where the vehicle stands for them.
//! 2. [`Request::reachability`]: regions of the vehicle mask, or the margin-free proof.
//! 3. [`Request::not_trapped`]: the trapped-start and trapped-goal proofs.
//! 4. [`Request::at_goal`], [`Request::direct_curve`], [`Request::guide`] then
//!    [`Request::refine`], or [`Request::full_search`]: a [`Solution`] in cell units, verified.
//! 5. [`Request::assemble`]: the plan in metres with its figures.

use super::refiner::{Job, Refine};
use super::stats::StageClock;
use super::{Budget, PathFigures, Plan, PlanError, PlanStats, Planner, PreparedMap, StatusCode};
use crate::block_astar::BlockGrid;
use crate::clearance::{self, reach::Reach};
use crate::directional;
use crate::geometry::{normalize_angle, Coord, Point2, Pose2};
use crate::hierarchy::{CorridorFailure, CorridorSearch};
use crate::lddb::Metric;
use crate::search::cost_astar::pull_strings;
use crate::search::los::LosRule;
use crate::search::path::{GridPath, SearchFailure};
use crate::stages::{SolvedBy, Stage};
use crate::trajectory::Trajectory;
use std::time::{Duration, Instant};

thread_local! {
    /// What this thread's memos add to [`THREAD_STORES_BYTES`]; taken back when the thread
    /// ends.
    static SCRATCH_SHARE: ScratchShare = const { ScratchShare(std::cell::Cell::new(0)) };
}

/// Bytes the per-thread memos hold, over every thread (see [`thread_stores_bytes`]).
static THREAD_STORES_BYTES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The bytes the stores of planning hold now: the guide searchers' scratch, pooled across the
/// planning threads (`planner::search_pool`: as many searchers as plans ran at once, each sized
/// by the latest map it searched, about 33 bytes per cell of address space, resident where its
/// queries reached), and each planning thread's Dubins and Reeds-Shepp memos (fixed tables,
/// each within 3 MiB per thread). Bounded, but allocated at once by the first plan, which a soak
/// must not read as growth. Brought up to date at the end of every plan; the node reports it in
/// `/diagnostics` (`thread_stores_bytes`).
pub fn thread_stores_bytes() -> usize {
    THREAD_STORES_BYTES.load(std::sync::atomic::Ordering::Relaxed) + super::search_pool::pooled_bytes()
}

/// One thread's share of [`THREAD_STORES_BYTES`].
struct ScratchShare(std::cell::Cell<usize>);

impl ScratchShare {
    /// Brings this thread's share up to `bytes`.
    fn set(&self, bytes: usize) {
        use std::sync::atomic::Ordering::Relaxed;
        let before = self.0.replace(bytes);
        if bytes >= before {
            THREAD_STORES_BYTES.fetch_add(bytes - before, Relaxed);
        } else {
            THREAD_STORES_BYTES.fetch_sub(before - bytes, Relaxed);
        }
    }
}

impl Drop for ScratchShare {
    fn drop(&mut self) {
        THREAD_STORES_BYTES.fetch_sub(self.0.get(), std::sync::atomic::Ordering::Relaxed);
    }
}

/// Records what this thread's memos hold (called at the end of every plan; the pooled
/// searchers count themselves).
pub(super) fn account_thread_stores() {
    let memos = crate::curves::memo::memo_bytes() + crate::curves::reeds_shepp::memo_bytes();
    let _ = SCRATCH_SHARE.try_with(|share| share.set(memos));
}

/// One plan request, validated, with what the steps record on the way.
pub(super) struct Request<'a> {
    planner: &'a Planner,
    prepared: &'a PreparedMap,
    /// Step 4's motion model, chosen with the map.
    refiner: &'a dyn Refine,
    budget: &'a Budget,
    /// Start and goal as the caller gave them (map frame), for messages.
    start: Pose2,
    goal: Pose2,
    goal_heading_free: bool,
    clock: StageClock,
    /// Notes for the plan's figures (an endpoint moved to a covering cell).
    notes: Vec<String>,
    t0: Instant,
    /// The budget's table filling when the request began (a budget can serve several plans).
    filling_at_start: Duration,
}

/// One end of a plan, named in messages as `start` or `goal`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum End {
    Start,
    Goal,
}

impl std::fmt::Display for End {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            End::Start => "start",
            End::Goal => "goal",
        })
    }
}

/// Where the vehicle stands for start and goal (cell units), and the vehicle-mask cells a guide
/// joins (none where only the exact footprint fits).
pub(super) struct Endpoints {
    pub(super) start: Pose2,
    pub(super) goal: Pose2,
    start_mask_cell: Option<(usize, usize)>,
    goal_mask_cell: Option<(usize, usize)>,
    /// `start` and `goal` named as the caller gave them, for messages (`goal (1.500, 2.000) m`).
    pub(super) names: [String; 2],
}

impl Endpoints {
    /// The goal is at the start's place (perhaps with another heading).
    pub(super) fn same_place(&self) -> bool {
        self.start.point().distance(self.goal.point()) < 1e-9
    }
}

/// The vehicle-mask cells of start and goal, in one region of the mask: a guide joins them.
pub(super) type MaskCells = ((usize, usize), (usize, usize));

/// What step 4 found, in cell units: the guide (for display), the verified trajectory and how.
pub(super) struct Solution {
    guide: Vec<Point2>,
    trajectory: Trajectory,
    solved_by: SolvedBy,
    expansions: usize,
    /// The windows the window repair searched (`[x0, y0, x1, y1]`, cells).
    pub(super) repair_windows: Vec<[f64; 4]>,
}

impl Solution {
    /// A solution with no repair windows.
    pub(super) fn new(guide: Vec<Point2>, trajectory: Trajectory, solved_by: SolvedBy, expansions: usize) -> Self {
        Self { guide, trajectory, solved_by, expansions, repair_windows: Vec::new() }
    }
}

/// The any-angle guide, or why the vehicle mask could not give one (a hand-off to the full
/// search).
pub(super) enum GuideOutcome {
    /// Waypoints from the start to the goal (cells), and the search's expansions.
    Found((Vec<Point2>, usize)),
    /// No path on the mask; the reason.
    None(String),
}

impl<'a> Request<'a> {
    /// Step 0. Fails with `NO_MAP`, or `INVALID_INPUT` for a pose that is not finite (a goal's
    /// heading may be anything when it is free).
    pub(super) fn new(
        planner: &'a Planner,
        start: Pose2,
        goal: Pose2,
        goal_heading_free: bool,
        budget: &'a Budget,
    ) -> Result<Self, PlanError> {
        let t0 = Instant::now();
        let prepared =
            planner.map.as_deref().ok_or_else(|| PlanError::new(StatusCode::NoMap, "no map has been received"))?;
        if !start.is_finite() {
            return Err(PlanError::new(StatusCode::InvalidInput, "start pose is not finite"));
        }
        let goal_usable = goal.is_finite() || (goal_heading_free && goal.point().is_finite());
        if !goal_usable {
            return Err(PlanError::new(StatusCode::InvalidInput, "goal pose is not finite"));
        }
        let goal = if goal_heading_free { Pose2::new(goal.x, goal.y, 0.0) } else { goal };
        Ok(Self {
            planner,
            prepared,
            refiner: prepared.refiner.as_ref(),
            budget,
            start,
            goal,
            goal_heading_free,
            clock: StageClock::new(),
            notes: Vec::new(),
            t0,
            filling_at_start: budget.table_filling(),
        })
    }

    /// What the refiner works with.
    fn job(&self) -> Job<'a> {
        let (planner, prepared, budget) = (self.planner, self.prepared, self.budget);
        Job { planner, prepared, budget, goal_heading_free: self.goal_heading_free }
    }

    /// Step 1. Fails with `START/GOAL_OUTSIDE_MAP` or `START/GOAL_OCCUPIED` (see
    /// [`Request::standing_place`]).
    pub(super) fn endpoints(&mut self) -> Result<Endpoints, PlanError> {
        let info = &self.prepared.site.map().info;
        let names = [self.planner.named(End::Start, self.start), self.planner.named(End::Goal, self.goal)];
        let s = info.world_pose_to_cell(self.start);
        let g = info.world_pose_to_cell(self.goal);
        let start_cell = info
            .cell_of(s.point())
            .ok_or_else(|| PlanError::new(StatusCode::StartOutsideMap, format!("{} is outside the map", names[0])))?;
        let goal_cell = info
            .cell_of(g.point())
            .ok_or_else(|| PlanError::new(StatusCode::GoalOutsideMap, format!("{} is outside the map", names[1])))?;
        let (start, start_mask_cell) = self
            .standing_place(s, start_cell, End::Start, false)
            .ok_or_else(|| self.planner.no_standing_place(self.prepared, self.start, start_cell, End::Start))?;
        let (goal, goal_mask_cell) = self
            .standing_place(g, goal_cell, End::Goal, self.goal_heading_free)
            .ok_or_else(|| self.planner.no_standing_place(self.prepared, self.goal, goal_cell, End::Goal))?;
        Ok(Endpoints { start, goal, start_mask_cell, goal_mask_cell, names })
    }

    /// Step 2. Regions answer "reachable on the vehicle mask" without a search: the mask cells to
    /// join, or `None` when the mask cannot join them. The mask keeps a margin (the footprint fits
    /// at every point of a mask cell), so a pair it separates is refused only on a proof free of
    /// that margin; otherwise the full Directional A* decides (a gap only a little wider than the
    /// vehicle). Fails with `NO_VALID_PATH` on that proof, or the budget's error.
    pub(super) fn reachability(&mut self, ends: &Endpoints) -> Result<Option<MaskCells>, PlanError> {
        let prepared = self.prepared;
        let on_mask = match (ends.start_mask_cell, ends.goal_mask_cell) {
            (Some(a), Some(b)) => {
                prepared.site.clearance.same_region(&prepared.vehicle, a, b).unwrap_or(false).then_some((a, b))
            }
            _ => None,
        };
        self.clock.mark(Stage::Regions);
        if on_mask.is_none() {
            let (a, b) = (ends.start.point(), ends.goal.point());
            let layer = prepared.site.clearance.layer(prepared.vehicle.capability);
            let budget = self.budget;
            // Without the layer nothing is proved, so the full search decides.
            let reach = layer.map_or(Reach::Possible, |layer| {
                clearance::reach::may_connect(
                    layer,
                    self.planner.config.inradius() / prepared.site.map().info.resolution,
                    (a.x as usize, a.y as usize),
                    (b.x as usize, b.y as usize),
                    || budget.should_stop(),
                )
            });
            self.clock.mark(Stage::Reach);
            match reach {
                Reach::Possible => {}
                Reach::Stopped => return Err(self.budget.stop_error()),
                Reach::Impossible => {
                    return Err(PlanError::new(
                        StatusCode::NoValidPath,
                        "no path: no gap wide enough for the vehicle joins start and goal",
                    ))
                }
            }
        }
        // A request cancelled or out of time before any search starts ends here.
        if self.budget.should_stop() {
            return Err(self.budget.stop_error());
        }
        Ok(on_mask)
    }

    /// Step 3. A start boxed in ahead (or a goal behind) is refused before any search, where
    /// the refiner can prove it (see [`Refine::not_trapped`]).
    pub(super) fn not_trapped(&mut self, ends: &Endpoints) -> Result<(), PlanError> {
        self.refiner.not_trapped(&self.job(), ends, &mut self.clock)
    }

    /// Step 4, already there: nothing to drive, or at a turning radius of 0 a turn on the spot
    /// to the goal's heading. A heading change at the goal is not this case when the turning
    /// radius forbids turning on the spot (it is planned as a loop).
    pub(super) fn at_goal(&self, ends: &Endpoints) -> Option<Result<Solution, PlanError>> {
        let same_heading = self.goal_heading_free || normalize_angle(ends.start.yaw - ends.goal.yaw).abs() < 1e-9;
        if !(ends.same_place() && (same_heading || self.refiner.turns_on_the_spot())) {
            return None;
        }
        let min_turning_radius = self.planner.config.min_turning_radius / self.prepared.site.map().info.resolution;
        let trajectory = if same_heading {
            Trajectory { segments: Vec::new(), min_turning_radius }
        } else {
            Trajectory::turning_on_the_spot(&[ends.start.point()], Some(ends.start.yaw), Some(ends.goal.yaw))
        };
        if !trajectory.is_empty() {
            if let Err(e) = self.refiner.verify(&self.job(), ends, &trajectory) {
                return Some(Err(e));
            }
        }
        Some(Ok(Solution::new(vec![ends.start.point()], trajectory, SolvedBy::AtGoal, 0)))
    }

    /// Step 4, the shortest curve itself, when the refiner has one and it is free: nothing is
    /// shorter, so no guide is needed.
    pub(super) fn direct_curve(&mut self, ends: &Endpoints) -> Option<Solution> {
        self.refiner.direct(&self.job(), ends, &mut self.clock)
    }

    /// Step 4, the any-angle guide on the vehicle mask between the mask cells of `ends`: the
    /// straight line when it has line of sight, else Block A* (conservative line of sight); with
    /// costs, the cheapest path instead ([`Request::cost_guide`]). Fails with the budget's error
    /// when stopped.
    pub(super) fn guide(
        &mut self,
        ends: &Endpoints,
        (start_cell, goal_cell): MaskCells,
    ) -> Result<GuideOutcome, PlanError> {
        if let Some(costs) = self.prepared.collision.costs() {
            return self.cost_guide(ends, (start_cell, goal_cell), costs);
        }
        self.shortest_guide(ends, (start_cell, goal_cell))
    }

    /// [`Request::guide`] without costs: the straight line when it has line of sight, else
    /// Block A*.
    fn shortest_guide(
        &mut self,
        ends: &Endpoints,
        (start_cell, goal_cell): MaskCells,
    ) -> Result<GuideOutcome, PlanError> {
        let (sv, gv) = mask_vertices(ends, (start_cell, goal_cell));
        let path = if let Some(straight) = straight_guide(&self.prepared.blocks, sv, gv) {
            self.clock.mark(Stage::GuideLineOfSight);
            straight
        } else {
            let (planner, prepared, budget) = (self.planner, self.prepared, self.budget);
            let found = super::search_pool::with_block_search(|search| {
                search.find_path(
                    &planner.lddb,
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
                    self.clock.mark(Stage::BlockAstar);
                    p
                }
                Err(SearchFailure::Stopped) => return Err(self.budget.stop_error()),
                Err(e) => return Ok(GuideOutcome::None(format!("Block A* found no path on the vehicle mask ({e})"))),
            }
        };
        Ok(GuideOutcome::Found((guide_through(ends, &path), path.expansions)))
    }

    /// Step 4's guide with costs: Block A* is a uniform-cost search, so the guide is the cheapest
    /// 16-connected path between the mask cells' centres under the cost field, string-pulled
    /// wherever the straight line costs no more. Never dearer than the 16-connected optimum for
    /// pairs within `hierarchy_min_distance`; farther pairs are searched inside the cluster
    /// graph's corridor ([`Request::corridor`]), where it may be a little dearer.
    fn cost_guide(
        &mut self,
        ends: &Endpoints,
        (start_cell, goal_cell): MaskCells,
        costs: &crate::costs::CostField,
    ) -> Result<GuideOutcome, PlanError> {
        // The straight line, when it is unobstructed and passes no cost, is the cheapest: no
        // path is shorter, and none costs less than its length.
        let (sv, gv) = mask_vertices(ends, (start_cell, goal_cell));
        if let Some(straight) = straight_guide(&self.prepared.blocks, sv, gv) {
            let guide = guide_through(ends, &straight);
            if guide.windows(2).all(|w| costs.extra_line(w[0], w[1]) == 0.0) {
                self.clock.mark(Stage::GuideLineOfSight);
                return Ok(GuideOutcome::Found((guide, 0)));
            }
        }
        let (mask, budget) = (self.prepared.blocks.mask(), self.budget);
        let corridor = match self.corridor(start_cell, goal_cell) {
            Ok(corridor) => corridor,
            Err(CorridorFailure::Stopped) => return Err(self.budget.stop_error()),
            Err(e) => return Ok(GuideOutcome::None(format!("no path on the vehicle mask ({e})"))),
        };
        let extra = costs.extra_per_cell();
        let cell = |c: (usize, usize)| (c.0 as u32, c.1 as u32);
        let found = super::search_pool::with_cost_search(|search| match &corridor {
            Some(CorridorSearch { corridor: c, .. }) => search.find_path_within(
                mask,
                cell(start_cell),
                cell(goal_cell),
                &extra,
                |x, y| c.estimate(x, y),
                || budget.should_stop(),
            ),
            None => {
                search.find_path_kept(self.prepared.revision, mask, cell(start_cell), cell(goal_cell), &extra, || {
                    budget.should_stop()
                })
            }
        });
        let path = match found {
            Ok(p) => p,
            Err(SearchFailure::Stopped) => return Err(self.budget.stop_error()),
            Err(e) => return Ok(GuideOutcome::None(format!("no path on the vehicle mask ({e})"))),
        };
        let cells = pull_strings(
            mask,
            LosRule::Conservative,
            &path.cells,
            |a, b| costs.extra_line(a, b),
            |x, y| costs.cost(x, y) == 0.0,
        );
        self.clock.mark(Stage::CostGuide);
        let mut guide: Vec<Point2> = Vec::with_capacity(cells.len() + 2);
        guide.push(ends.start.point());
        guide.extend(cells.iter().map(|&(x, y)| Point2::new(f64::from(x) + 0.5, f64::from(y) + 0.5)));
        guide.push(ends.goal.point());
        guide.dedup_by(|a, b| a.distance(*b) < 1e-9);
        let graph_expansions = corridor.map_or(0, |c| c.expansions);
        Ok(GuideOutcome::Found((guide, path.expansions + graph_expansions)))
    }

    /// The corridor a costed guide between mask cells `start` and `goal` searches: `None` (the
    /// whole map) when they lie within `hierarchy_min_distance` of each other (or the map has no
    /// graph: no costs), else the cluster graph's ([`crate::hierarchy`]), which holds a path
    /// whenever the mask does.
    fn corridor(
        &mut self,
        start: (usize, usize),
        goal: (usize, usize),
    ) -> Result<Option<CorridorSearch>, CorridorFailure> {
        let Some(graph) = self.prepared.hierarchy.as_ref() else { return Ok(None) };
        let res = self.prepared.site.map().info.resolution;
        let apart = (start.0 as f64 - goal.0 as f64).hypot(start.1 as f64 - goal.1 as f64);
        if apart * res <= self.planner.config.hierarchy_min_distance {
            return Ok(None);
        }
        let budget = self.budget;
        let found = graph.corridor(self.prepared.blocks.mask(), start, goal, || budget.should_stop())?;
        self.clock.mark(Stage::Corridor);
        Ok(Some(found))
    }

    /// Step 4, the guide made drivable by the refiner, and verified.
    pub(super) fn refine(&mut self, ends: &Endpoints, guide: (Vec<Point2>, usize)) -> Result<Solution, PlanError> {
        self.refiner.refine(&self.job(), ends, guide, &mut self.clock)
    }

    /// Step 4, where the vehicle mask cannot give a guide (its regions separate the pair, Block
    /// A* finds no path on it, an endpoint no mask cell covers, or turning round in place): the
    /// refiner's search on the exact collision map decides, within the budget, and its result
    /// is verified like any other. `why` says why the mask could not be used.
    pub(super) fn full_search(&mut self, ends: &Endpoints, why: &str) -> Result<Solution, PlanError> {
        self.refiner.full_search(&self.job(), ends, why, &mut self.clock)
    }

    /// Step 5. The plan in metres from a solution in cells: the any-angle guide (display), the
    /// trajectory and its sampled poses, and the figures.
    pub(super) fn assemble(mut self, ends: &Endpoints, solution: Solution) -> Plan {
        let info = &self.prepared.site.map().info;
        self.clock.mark(Stage::ToWorld);
        let to_world = |p: Point2| info.cell_to_world(p);
        let any_angle: Vec<Point2> = solution.guide.iter().map(|&p| to_world(p)).collect();
        let trajectory = solution.trajectory.to_world(info);
        let mut poses = trajectory.sample(self.planner.config.path_spacing);
        if poses.is_empty() {
            poses.push(info.cell_pose_to_world(ends.start));
        }
        let stats = PlanStats {
            planning_time: self.t0.elapsed().as_secs_f64(),
            table_filling_time: self.budget.table_filling().saturating_sub(self.filling_at_start).as_secs_f64(),
            expansions: solution.expansions,
            any_angle_length: any_angle.windows(2).map(|w| w[0].distance(w[1])).sum(),
            trajectory_length: trajectory.length(),
            stage_ms: self.clock.stages,
            solved_by: vec![solution.solved_by],
            note: (!self.notes.is_empty()).then(|| self.notes.join("; ")),
            start_overlap: None,
            figures: PathFigures::measure(self.prepared, &trajectory),
            repair_windows: solution
                .repair_windows
                .iter()
                .map(|&[x0, y0, x1, y1]| {
                    [(x0, y0), (x1, y0), (x1, y1), (x0, y1)].map(|(x, y)| to_world(Point2::new(x, y)))
                })
                .collect(),
        };
        Plan { any_angle, trajectory, poses, stats }
    }

    /// Where the vehicle stands for an endpoint `p` (cells) in `cell`, and the mask cell the
    /// any-angle search starts or ends in:
    /// - the vehicle fits in `cell`'s mask cell: `p` itself, from `cell`;
    /// - the footprint fits at `p` exactly but not everywhere in its cell: `p` itself, searched
    ///   from the nearest mask cell covering it (the refinement joins them);
    /// - else the centre of the nearest covering mask cell (the "subsumed" rule, noted in the
    ///   plan's notes with the offset);
    /// - else, when no mask cell covers `p` but the footprint fits at `p` exactly (beside a gap
    ///   narrower than the mask's margin): `p` itself with no mask cell, for the full search;
    /// - else `None` (see [`Planner::no_standing_place`]).
    ///
    /// `free_heading`: any heading will do at `p` (a goal with its orientation unset).
    fn standing_place(
        &mut self,
        p: Pose2,
        cell: (usize, usize),
        what: End,
        free_heading: bool,
    ) -> Option<(Pose2, Option<(usize, usize)>)> {
        let prepared = self.prepared;
        if prepared.vehicle_mask().is_free(cell.0 as i64, cell.1 as i64) {
            return Some((p, Some(cell)));
        }
        let sub = prepared.site.clearance.subsuming_cell(&prepared.vehicle, cell.0, cell.1).ok()?;
        let Some(sub) = sub else {
            // The exact footprint, as the trajectory check will test it.
            return self.refiner.stands_exactly(&self.job(), p, free_heading).then_some((p, None));
        };
        let res = prepared.site.map().info.resolution;
        let rho = directional::footprint::sampled_radius(self.planner.config.mask_radius() / res)
            + 2.0 * directional::footprint::SEARCH_MARGIN;
        if prepared.collision.disk_free(p.point(), rho) {
            return Some((p, Some(sub.cell)));
        }
        let q = Pose2::new(sub.cell.0 as f64 + 0.5, sub.cell.1 as f64 + 0.5, p.yaw);
        let towards = match what {
            End::Start => "from",
            End::Goal => "to",
        };
        self.notes.push(format!(
            "the vehicle does not fit at the {what}; planned {towards} the covering cell {:?}, offset ({:.3}, {:.3}) {}",
            sub.cell,
            (q.x - p.x) * res,
            (q.y - p.y) * res,
            self.planner.units.symbol()
        ));
        Some((q, Some(sub.cell)))
    }
}

impl Planner {
    /// `what` (`start` or `goal`) at the point of `pose` as the caller gave it, in the units of
    /// [`Planner::set_units`]: `goal (1.500, 2.000) m`.
    fn named(&self, what: End, pose: Pose2) -> String {
        format!("{what} ({:.3}, {:.3}) {}", Coord(pose.x), Coord(pose.y), self.units.symbol())
    }

    /// `START_OCCUPIED` / `GOAL_OCCUPIED` for an endpoint `pose` (as the caller gave it) in `cell`
    /// where the vehicle cannot stand, saying why: the point itself is in an obstacle or in
    /// unknown space, or only the footprint around it is blocked. The node shows this message in
    /// its status, the CLI on stderr, so it names the pose in the caller's units, not cells.
    pub(super) fn no_standing_place(
        &self,
        prepared: &PreparedMap,
        pose: Pose2,
        cell: (usize, usize),
        what: End,
    ) -> PlanError {
        let code = match what {
            End::Start => StatusCode::StartOccupied,
            End::Goal => StatusCode::GoalOccupied,
        };
        let at = self.named(what, pose);
        let rule = self.config.traversability();
        // The cell is inside the map (the caller found it there); -1 is the safe reading anyway.
        let v = prepared.site.map().value(cell.0, cell.1).unwrap_or(-1);
        let message = if v == -1 && !rule.allow_unknown {
            format!("{at} is in unknown space (occupancy -1, allow_unknown is false)")
        } else if rule.is_blocked(v) {
            format!("{at} is in an obstacle (occupancy {v})")
        } else {
            let near = if rule.allow_unknown { "obstacles" } else { "obstacles or unknown space" };
            format!(
                "the vehicle ({}) does not fit at {at} ({near} within its radius {} {u})",
                self.config.footprint_words(self.units.symbol()),
                self.config.mask_radius(),
                u = self.units.symbol()
            )
        };
        PlanError::new(code, message)
    }
}

/// The mask vertices an any-angle guide joins for `ends`: of each mask cell, the corner nearest
/// the pose.
fn mask_vertices(ends: &Endpoints, (start_cell, goal_cell): MaskCells) -> ((u32, u32), (u32, u32)) {
    let corner = |p: Point2, cell: (usize, usize)| -> (u32, u32) {
        let x = if p.x - cell.0 as f64 >= 0.5 { cell.0 + 1 } else { cell.0 };
        let y = if p.y - cell.1 as f64 >= 0.5 { cell.1 + 1 } else { cell.1 };
        (x as u32, y as u32)
    };
    (corner(ends.start.point(), start_cell), corner(ends.goal.point(), goal_cell))
}

/// The guide from the start pose through a vertex path to the goal pose (cells).
fn guide_through(ends: &Endpoints, path: &GridPath) -> Vec<Point2> {
    let mut guide: Vec<Point2> = Vec::with_capacity(path.points.len() + 2);
    guide.push(ends.start.point());
    guide.extend(path.points.iter().map(|&(x, y)| Point2::new(f64::from(x), f64::from(y))));
    guide.push(ends.goal.point());
    guide.dedup_by(|a, b| a.distance(*b) < 1e-9);
    guide
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
