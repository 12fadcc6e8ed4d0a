//! The hybrid refinement pipeline: Pinter's six steps, made robust. Each step is a file of its
//! own, run in order by [`refine`] (all of them) or [`refine_guided`] (steps 1-6, for a caller
//! that ran step 0 and the trapped-ends proof itself, as the planner does).
//!
//! 0. `direct`: beyond Pinter, when the shortest curve from the start to the goal is
//!    collision-free it is the answer (no legal curve is shorter), found with one sweep.
//! 1. `guide`: the any-angle path (input) is walked into "path points": the centres of the
//!    grid cells it crosses every `lattice_spacing` cells (Pinter's path cells, on the path itself
//!    so they keep its clearance).
//! 2. `smoothing_pass`: a directional search restricted to the path points, hopping one to
//!    `hops` points ahead (Pinter's Smoothing-48 hops up to three cells). Because hops only go
//!    forward the search space is a DAG, so it runs as an exact dynamic programme over (path
//!    point, heading); the start may link to every point within reach of a loop, and every point
//!    within that reach of the goal may link to it. Each state's incoming curves are ranked by
//!    cost and swept in that order, so a state usually costs one sweep. (Path points are not
//!    lattice-aligned, so their curves are swept directly rather than looked up.) It fails when
//!    no state beyond some point is reachable. Beyond Pinter: it first runs over coarse path
//!    points, twice as far apart near the vertices with hops that reach as far (about a third of
//!    the work), and over the dense points only when that fails.
//! 3. On failure the same programme runs from the goal backwards; the furthest forward state and
//!    the earliest backward state bound a failure window.
//! 4. `window_repair`: Directional A* (Directional-24 by default) inside the window, from the
//!    best forward states at the failure to the best backward states (whose costs to go are
//!    known), spliced into the chain; the window is doubled when that fails.
//!    Beyond Pinter (`loop_repair`): on a short guide (at most 20 turning radii), when
//!    smoothing fails or its cost shows a loop (more than half a turning circle over the larger
//!    of the guide's length and the free-space Dubins length, typically a start or goal heading
//!    against the guide), one windowed Directional A* from the exact start to the exact goal
//!    around the whole guide replaces steps 3-4; it is kept only if cheaper, and stops as soon as
//!    it cannot be. When smoothing found nothing the search covers the whole lattice instead, so
//!    that its failure settles step 5 too.
//! 5. [`full_search`]: if every repair fails, a full Directional A* from the exact start to the
//!    exact goal, within the time budget. Beyond Pinter (`hybrid_search`): when the lattice holds
//!    no path, a hybrid A* over continuous poses (Smac Hybrid-A*'s search), which finds the
//!    tight manoeuvres that fall between the lattice's poses.
//! 6. [`final_smoothing`]: a pose is dropped wherever the curve between its neighbours is
//!    collision-free and no dearer (the Dubins curve between two poses is never longer than any
//!    legal curve through poses between them, so without costs this only shortens).
//!
//! The result is then verified ([`super::verify`]); a trajectory that fails is never returned.
//! Every step records itself in one stage log ([`RefineStats::record`]).

mod direct;
mod final_smoothing;
mod full_search;
mod guide;
mod hybrid_search;
mod loop_repair;
mod smoothing_pass;
mod window_repair;

pub use direct::{direct_curve, DIRECT_COST_SLACK};
pub use final_smoothing::{cheapest_subchain, final_smoothing};
pub use full_search::full_search;

use super::escape::trapped_ends;
use super::footprint::CollisionMap;
use super::motion::Gear;
use super::params::Directional;
use super::verify::VerifyError;
use crate::geometry::{normalize_angle, Point2, Pose2};
use crate::stages::{SolvedBy, Stage};
use crate::trajectory::Trajectory;
use hybrid_search::Hybrid;
use loop_repair::LoopRepair;
use std::time::Instant;

/// Time and outcome of one pipeline stage.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StageStat {
    /// The stage (serialised as `direct`, `path_points`, `smoothing_forward`, `smoothing_backward`, `window_repair`,
    /// `loop_repair`, `full_search`, `final_smoothing`, `verify`).
    pub name: Stage,
    /// Wall-clock time (ms).
    pub ms: f64,
    /// What happened, for a person.
    pub outcome: String,
}

/// Figures about one refinement.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct RefineStats {
    /// Stages in the order they ran.
    pub stages: Vec<StageStat>,
    /// Path points the any-angle path was walked into.
    pub path_points: usize,
    /// Directional A* expansions (window repairs and full search).
    pub expansions: usize,
    /// Which stage produced the chain: `direct` (the shortest curve was free), `smoothing`,
    /// `window_repair`, `loop_repair` or `full_search`.
    pub solved_by: SolvedBy,
    /// Poses in the chain before and after final smoothing.
    pub poses_before_smoothing: usize,
    /// Poses kept by final smoothing.
    pub poses_after_smoothing: usize,
    /// The windows the window repair searched, in order, as `[x0, y0, x1, y1]` in cell units
    /// (lattice cells scaled to grid cells; empty when the repair did not run). For display.
    pub repair_windows: Vec<[f64; 4]>,
}

impl RefineStats {
    /// Appends stage `name`, begun at `since`, with what happened: the one way every step of the
    /// pipeline logs itself.
    pub fn record(&mut self, name: Stage, since: Instant, outcome: impl Into<String>) {
        let ms = since.elapsed().as_secs_f64() * 1e3;
        self.stages.push(StageStat { name, ms, outcome: outcome.into() });
    }
}

/// A verified trajectory and how it was obtained.
#[derive(Debug, Clone, PartialEq)]
pub struct Refined {
    /// The trajectory (cell units), verified on the map it was planned on.
    pub trajectory: Trajectory,
    /// The poses it passes through (start first, goal last).
    pub chain: super::chain::PoseChain,
    /// Figures.
    pub stats: RefineStats,
}

/// Why refinement failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RefineError {
    /// A pose is not finite, or start and goal coincide.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// The footprint at the start pose touches a blocked cell.
    #[error("the vehicle does not fit at the start pose")]
    StartBlocked,
    /// The footprint at the goal pose touches a blocked cell.
    #[error("the vehicle does not fit at the goal pose")]
    GoalBlocked,
    /// No legal trajectory was found.
    #[error("no turning-radius-legal path: {0}")]
    NoPath(String),
    /// `should_stop` ended the work.
    #[error("stopped before a trajectory was found")]
    Stopped,
    /// A trajectory was found but failed verification, so it is not returned.
    #[error("the trajectory failed verification: {0}")]
    VerificationFailed(VerifyError),
}

/// A guide of at most this many turning radii counts as short: its repairs search one window
/// holding the whole of it.
const SHORT_PATH_RADII: f64 = 20.0;

/// Refines an any-angle path into a verified turning-radius-legal trajectory (cell units): the
/// whole pipeline, steps 0-6, for a library user holding waypoints from any any-angle planner.
/// (The planner runs the same steps with its own guide between step 0 and step 1: it calls
/// [`direct_curve`], [`trapped_ends`] and [`refine_guided`].)
///
/// `waypoints` is the any-angle path in cell units (start and goal included or not, it is only
/// a guide). `start` is the exact start pose; `goal` the goal pose, whose heading is ignored
/// when `goal_heading_free`. `ctx` holds the parameters and tables and `map` the cells the
/// vehicle may not enter. `should_stop` is polled between and inside stages. A goal at the
/// start's place with another heading (turning round) is planned as a loop.
///
/// Fails with [`RefineError`]: invalid input (including a goal equal to the start, or at its
/// place with a free heading: nothing to drive), start or goal blocked, no path (every stage
/// failed), stopped, or verification failed (never returns a trajectory that fails it).
pub fn refine(
    ctx: &Directional,
    map: &CollisionMap,
    waypoints: &[Point2],
    start: Pose2,
    goal: Pose2,
    goal_heading_free: bool,
    should_stop: &mut dyn FnMut() -> bool,
) -> Result<Refined, RefineError> {
    let request = Request::validated(ctx, map, waypoints, start, goal, goal_heading_free)?;
    // A spent budget or a cancelled request ends here, before even the cheapest answer.
    if should_stop() {
        return Err(RefineError::Stopped);
    }
    let mut stats = RefineStats::default();
    // Step 0: the shortest curve, when it is free.
    if let Some(r) = direct_curve(ctx, map, request.start, request.goal, goal_heading_free, &mut stats) {
        return Ok(r);
    }
    // A start boxed in ahead, or a goal boxed in behind, is refused at once: no search could
    // succeed (see `escape`), and an exhaustive one would cost the most of any request.
    if !request.same_place {
        let t = Instant::now();
        let why = trapped_ends(map, request.start, request.goal, goal_heading_free, ctx.params());
        stats.record(Stage::Escape, t, why.unwrap_or("not trapped"));
        if let Some(why) = why {
            return Err(RefineError::NoPath(why.to_string()));
        }
    }
    Refinement { ctx, map, request: &request, stats, should_stop }.run()
}

/// Steps 1-6 of [`refine`] alone, for a caller that ran step 0 ([`direct_curve`], which found the
/// shortest curve colliding) and the trapped-ends proof ([`trapped_ends`]) on these poses and
/// map itself, as the planner does before it computes a guide. Validation and everything after
/// the pre-checks, verification included, are as in [`refine`], with the same contract and errors.
pub fn refine_guided(
    ctx: &Directional,
    map: &CollisionMap,
    waypoints: &[Point2],
    start: Pose2,
    goal: Pose2,
    goal_heading_free: bool,
    should_stop: &mut dyn FnMut() -> bool,
) -> Result<Refined, RefineError> {
    let request = Request::validated(ctx, map, waypoints, start, goal, goal_heading_free)?;
    if should_stop() {
        return Err(RefineError::Stopped);
    }
    Refinement { ctx, map, request: &request, stats: RefineStats::default(), should_stop }.run()
}

/// A refinement request, validated once: finite poses and waypoints, something to drive, and
/// the footprint free at both ends.
struct Request<'a> {
    waypoints: &'a [Point2],
    start: Pose2,
    /// The goal, its heading 0 when free.
    goal: Pose2,
    goal_heading_free: bool,
    /// The goal is at the start's place (with another heading: turning round).
    same_place: bool,
}

impl<'a> Request<'a> {
    fn validated(
        ctx: &Directional,
        map: &CollisionMap,
        waypoints: &'a [Point2],
        start: Pose2,
        goal: Pose2,
        goal_heading_free: bool,
    ) -> Result<Self, RefineError> {
        let goal = if goal_heading_free { Pose2::new(goal.x, goal.y, 0.0) } else { goal };
        if !start.is_finite() || !goal.is_finite() || waypoints.iter().any(|w| !w.is_finite()) {
            return Err(RefineError::InvalidInput("a pose or waypoint is not finite".into()));
        }
        let same_place = start.point().distance(goal.point()) < 1e-9;
        if same_place && (goal_heading_free || normalize_angle(goal.yaw - start.yaw).abs() < 1e-9) {
            return Err(RefineError::InvalidInput("start and goal coincide: there is nothing to drive".into()));
        }
        check_ends_free(ctx, map, start, goal, goal_heading_free)?;
        Ok(Self { waypoints, start, goal, goal_heading_free, same_place })
    }
}

/// The footprint must stand free at the start, and at the goal in its heading or, with a free
/// heading, in every heading (the disk holding the footprint: conservative for a square, exact
/// for a disk). The one owner of that check for [`refine`] and [`full_search`].
fn check_ends_free(
    ctx: &Directional,
    map: &CollisionMap,
    start: Pose2,
    goal: Pose2,
    goal_heading_free: bool,
) -> Result<(), RefineError> {
    let shape = ctx.params().shape();
    if !map.stands_free(start, &shape) {
        return Err(RefineError::StartBlocked);
    }
    let goal_stands = if goal_heading_free {
        map.stands_free_in_some_heading(goal.point(), &shape)
    } else {
        map.stands_free(goal, &shape)
    };
    if !goal_stands {
        return Err(RefineError::GoalBlocked);
    }
    Ok(())
}

/// A chain of poses from the start to the goal, with the stage that found it and its cost.
struct Chain {
    poses: Vec<Pose2>,
    /// Per link, the gear of a single-gear lattice edge (see [`super::chain::PoseChain::gears`]).
    gears: Vec<Option<Gear>>,
    by: SolvedBy,
    cost: f64,
}

/// One refinement in progress: what every step reads (the parameters and tables, the map, the
/// validated request) and writes (the stage log), and the stop callback. Each step is a method
/// defined in its own file.
struct Refinement<'a, 'r> {
    ctx: &'a Directional,
    map: &'a CollisionMap,
    request: &'a Request<'r>,
    stats: RefineStats,
    should_stop: &'a mut dyn FnMut() -> bool,
}

impl Refinement<'_, '_> {
    /// Steps 1-6, top to bottom.
    fn run(mut self) -> Result<Refined, RefineError> {
        if self.request.same_place {
            return self.turn_round();
        }
        // 1. The guide walked into path points.
        let guide = self.guide();
        // 2-4. Smoothing over the path points, coarse then dense, with the window repair.
        let mut chain = self.smoothing(&guide)?;
        // Beyond Pinter: a short guide whose chain loops, or has none, gets one search around it.
        let exhausted = match self.loop_repair(&guide, chain.as_ref())? {
            LoopRepair::NotNeeded | LoopRepair::NoCheaper => false,
            LoopRepair::Cheaper(found) => {
                chain = Some(found);
                false
            }
            LoopRepair::Exhausted => true,
        };
        // 6. Final smoothing and verification of what was found.
        if let Some(chain) = chain {
            if let Ok(refined) = self.finish(chain) {
                return Ok(refined);
            }
        }
        // 5. The full Directional A* (unless the loop repair's search already exhausted the
        //    lattice), and its chain through step 6.
        let chain = if exhausted { None } else { self.full_search_step(&guide.lattice)? };
        if let Some(chain) = chain {
            return self.finish(chain).map_err(RefineError::VerificationFailed);
        }
        // Beyond Pinter: the lattice holds no path; poses off the lattice may.
        match self.hybrid_search()? {
            Hybrid::Found(chain) => self.finish(chain).map_err(RefineError::VerificationFailed),
            Hybrid::Nothing(e) => Err(RefineError::NoPath(format!(
                "smoothing, the repairs and the full search found nothing on the lattice{}, and the hybrid \
                 search nothing after {e} expansions",
                if exhausted { " (no state reachable from the start leads to the goal)" } else { "" }
            ))),
        }
    }

    /// Turning round on the spot: a guide of no length says nothing, so the whole lattice is
    /// searched for a loop.
    fn turn_round(self) -> Result<Refined, RefineError> {
        let Refinement { ctx, map, request, mut stats, should_stop } = self;
        let neighbourhood = ctx.params().fallback_neighbourhood;
        let mut r = full_search(ctx, map, request.start, request.goal, false, neighbourhood, should_stop)?;
        stats.stages.append(&mut r.stats.stages);
        r.stats.stages = stats.stages;
        Ok(r)
    }
}
