//! The hybrid refinement pipeline: Pinter's six steps, made robust.
//!
//! 0. Beyond Pinter: when the shortest curve from the start to the goal is collision-free it is
//!    the answer (no legal curve is shorter), found with one sweep.
//! 1. The any-angle path (input) is walked into "path points": the centres of the grid cells it
//!    crosses every `lattice_spacing` cells (Pinter's path cells, on the path itself so they keep
//!    its clearance).
//! 2. Smoothing: a directional search restricted to the path points, hopping one to `hops` points
//!    ahead (Pinter's Smoothing-48 hops up to three cells). Because hops only go forward the
//!    search space is a DAG, so it runs as an exact dynamic programme over (path point, heading);
//!    the start may link to every point within reach of a loop, and every point within that reach
//!    of the goal may link to it. Each state's incoming curves are ranked by cost and swept in
//!    that order, so a state usually costs one sweep. (Path points are not lattice-aligned, so
//!    their curves are swept directly rather than looked up.) It fails when no state beyond some
//!    point is reachable. Beyond Pinter: it first runs over coarse path points, twice as far
//!    apart near the vertices with hops that reach as far (about a third of the work), and over
//!    the dense points only when that fails.
//! 3. On failure the same programme runs from the goal backwards; the furthest forward state and
//!    the earliest backward state bound a failure window.
//! 4. Directional A* (Directional-24 by default) inside the window, from the best forward states
//!    at the failure to the best backward states (whose costs to go are known), spliced into the
//!    chain; the window is doubled when that fails.
//!    Beyond Pinter: on a short guide (at most 20 turning radii), when smoothing fails or its
//!    cost shows a loop (more than half a turning circle over the larger of the guide's length
//!    and the free-space Dubins length, typically a start or goal heading against the guide), one
//!    windowed Directional A* from the exact start to the exact
//!    goal around the whole guide replaces steps 3-4 (`loop_repair`); it is kept only if cheaper,
//!    and stops as soon as it cannot be. When smoothing found nothing the search covers the whole
//!    lattice instead, so that its failure settles step 5 too.
//! 5. If every repair fails, a full Directional A* from the exact start to the exact goal, within
//!    the time budget.
//! 6. Final smoothing: a pose is dropped wherever the curve between its neighbours is
//!    collision-free (the Dubins curve between two poses is never longer than any legal curve
//!    through poses between them, so this only shortens).
//!
//! The result is then verified ([`super::verify`]); a trajectory that fails is never returned.

use super::chain::{link, PoseChain};
use super::escape::trapped_ends;
use super::footprint::{CollisionMap, Shape, SEARCH_MARGIN};
use super::lattice::{Lattice, LatticeRect};
use super::motion::{Gear, MotionModel, Priced};
use super::params::Directional;
use super::search::{directional_astar, directional_astar_below, Outcome, Source, Target, TargetPose};
use super::smoothing::{path_points, Ends, PathDp, PathPoint};
use super::verify::{verify_trajectory, VerifyError};
use crate::geometry::{normalize_angle, Point2, Pose2};
use crate::search::OrdF64;
use crate::stages::{SolvedBy, Stage};
use crate::trajectory::Trajectory;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::f64::consts::PI;
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

/// A verified trajectory and how it was obtained.
#[derive(Debug, Clone, PartialEq)]
pub struct Refined {
    /// The trajectory (cell units), verified on the map it was planned on.
    pub trajectory: Trajectory,
    /// The poses it passes through (start first, goal last).
    pub chain: PoseChain,
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

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// How many headings per point the window repair starts from or aims at.
const REPAIR_HEADINGS: usize = 3;

/// Path points of the coarse Smoothing pass lie this many times as far apart near the guide's
/// vertices as the dense pass's (one lattice spacing).
const COARSE_SPACINGS: f64 = 2.0;

/// A guide of at most this many turning radii counts as short: its repairs search one window
/// holding the whole of it.
const SHORT_PATH_RADII: f64 = 20.0;

/// Step 0: the model's curve from `start` to `goal` (forwards the shortest Dubins curve; with
/// reversing the cheapest Reeds-Shepp word; arc then line when `goal_heading_free`), returned
/// verified when it is collision-free. Without penalties no legal curve is shorter, so no guide
/// or search can improve on it; under reverse or change penalties it is the cheapest word, which a
/// longer detour could undercut only by avoiding a reverse stretch or a cusp (taken as the answer
/// all the same: it is what the vehicle is expected to drive). With traversal costs on `map` it is
/// taken only when it passes none (else a longer curve may cost less). Under a turn penalty a longer curve
/// may cost less: then `None` at once. Costs one curve and one sweep, so a caller may try it
/// before computing a guide at all. `None` when it collides (or, never seen, fails verification);
/// the stages it ran are appended to `stats` either way. Start and goal are taken as valid
/// (finite, footprint free), as [`refine`] checks.
pub fn direct_curve(
    ctx: &Directional,
    map: &CollisionMap,
    start: Pose2,
    goal: Pose2,
    goal_heading_free: bool,
    stats: &mut RefineStats,
) -> Option<Refined> {
    let p = ctx.params();
    if p.turn_penalty > 0.0 {
        // Under a turn penalty the shortest curve need not be the cheapest one.
        return None;
    }
    let t = Instant::now();
    let segs = p.motion().link(start, goal, goal_heading_free)?;
    if !map.sweep_free(&segs, p.shape(), SEARCH_MARGIN) {
        stats.stages.push(StageStat {
            name: Stage::Direct,
            ms: ms_since(t),
            outcome: "the shortest curve collides".into(),
        });
        return None;
    }
    // With costs the shortest curve is the cheapest only when it passes no cost at all.
    let extra = map.extra_cost(&segs);
    if extra > 0.0 {
        let outcome = format!("the shortest curve is free but passes costs ({extra:.2} above its length)");
        stats.stages.push(StageStat { name: Stage::Direct, ms: ms_since(t), outcome });
        return None;
    }
    stats.stages.push(StageStat { name: Stage::Direct, ms: ms_since(t), outcome: "the shortest curve is free".into() });
    let t = Instant::now();
    let traj = Trajectory { segments: segs, min_turning_radius: p.turning_radius };
    if let Err(e) = verify_trajectory(map, &traj, &p.vehicle(), start, goal, goal_heading_free) {
        stats.stages.push(StageStat { name: Stage::Verify, ms: ms_since(t), outcome: format!("failed: {e}") });
        return None;
    }
    stats.stages.push(StageStat { name: Stage::Verify, ms: ms_since(t), outcome: "passed".into() });
    stats.solved_by = SolvedBy::Direct;
    stats.poses_before_smoothing = 2;
    stats.poses_after_smoothing = 2;
    let chain = PoseChain::new(vec![start, goal], goal_heading_free);
    Some(Refined { trajectory: traj, chain, stats: std::mem::take(stats) })
}

/// Refines an any-angle path into a verified turning-radius-legal trajectory (cell units): the
/// whole pipeline, each step a function of its own.
///
/// `waypoints` is the any-angle path in cell units (from any any-angle planner; start and goal
/// included or not, it is only a guide). `start` is the exact start pose; `goal` the goal pose,
/// whose heading is ignored when `goal_heading_free`. `ctx` holds the parameters and tables and
/// `map` the cells the vehicle may not enter. `should_stop` is polled between and inside stages.
/// A goal at the start's place with another heading (turning round) is planned as a loop.
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
        let p = ctx.params();
        let why = trapped_ends(map, request.start, request.goal, goal_heading_free, p);
        stats.stages.push(StageStat {
            name: Stage::Escape,
            ms: ms_since(t),
            outcome: why.unwrap_or("not trapped").into(),
        });
        if let Some(why) = why {
            return Err(RefineError::NoPath(why.to_string()));
        }
    }
    guided(ctx, map, &request, stats, should_stop)
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
    guided(ctx, map, &request, RefineStats::default(), should_stop)
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
        let shape = ctx.params().shape();
        let goal = if goal_heading_free { Pose2::new(goal.x, goal.y, 0.0) } else { goal };
        if !start.is_finite() || !goal.is_finite() || waypoints.iter().any(|w| !w.is_finite()) {
            return Err(RefineError::InvalidInput("a pose or waypoint is not finite".into()));
        }
        let same_place = start.point().distance(goal.point()) < 1e-9;
        if same_place && (goal_heading_free || normalize_angle(goal.yaw - start.yaw).abs() < 1e-9) {
            return Err(RefineError::InvalidInput("start and goal coincide: there is nothing to drive".into()));
        }
        if !map.stands_free(start, shape) {
            return Err(RefineError::StartBlocked);
        }
        // With a free heading any heading will do at the goal: the disk holding the footprint in
        // every heading is conservative for a square there, and exact for a disk.
        let goal_shape = if goal_heading_free { Shape::Disk(shape.circumradius()) } else { shape };
        if !map.stands_free(goal, goal_shape) {
            return Err(RefineError::GoalBlocked);
        }
        Ok(Self { waypoints, start, goal, goal_heading_free, same_place })
    }
}

/// Steps 1-6 on a validated request; `stats` holds the stages already run.
fn guided(
    ctx: &Directional,
    map: &CollisionMap,
    request: &Request,
    mut stats: RefineStats,
    should_stop: &mut dyn FnMut() -> bool,
) -> Result<Refined, RefineError> {
    if request.same_place {
        return turn_round(ctx, map, request, stats, should_stop);
    }
    // 1. The guide walked into path points.
    let guide = GuideInfo::new(ctx, map, request, &mut stats);
    // 2-4. Smoothing over the path points, coarse then dense, with the window repair.
    let mut chain = smoothing(ctx, map, request, &guide, &mut stats, should_stop)?;
    // Beyond Pinter: a short guide whose chain loops, or has none, gets one search around it.
    let exhausted = loop_repair(ctx, map, request, &guide, &mut chain, &mut stats, should_stop)?;
    // 6. Final smoothing and verification of what was found.
    if let Some(chain) = chain {
        if let Ok(refined) = finish(ctx, map, request, chain, &mut stats) {
            return Ok(refined);
        }
    }
    if exhausted {
        return Err(RefineError::NoPath(
            "smoothing failed and no state reachable from the start leads to the goal".into(),
        ));
    }
    // 5. The full Directional A*, and its chain through step 6.
    let chain = full_search_step(ctx, map, request, &guide.lattice, &mut stats, should_stop)?;
    finish(ctx, map, request, chain, &mut stats).map_err(RefineError::VerificationFailed)
}

/// Turning round on the spot: a guide of no length says nothing, so the whole lattice is
/// searched for a loop.
fn turn_round(
    ctx: &Directional,
    map: &CollisionMap,
    request: &Request,
    mut stats: RefineStats,
    should_stop: &mut dyn FnMut() -> bool,
) -> Result<Refined, RefineError> {
    let neighbourhood = ctx.params().fallback_neighbourhood;
    let mut r = full_search(ctx, map, request.start, request.goal, false, neighbourhood, should_stop)?;
    stats.stages.append(&mut r.stats.stages);
    r.stats.stages = stats.stages;
    Ok(r)
}

fn stage(stats: &mut RefineStats, name: Stage, t: Instant, outcome: String) {
    stats.stages.push(StageStat { name, ms: ms_since(t), outcome });
}

/// Step 1: the guide from start to goal, its dense path points, and what the later steps
/// decide by (the lattice, whether the guide is short, the cost above which a chain loops).
struct GuideInfo {
    /// Start, waypoints, goal.
    points: Vec<Point2>,
    /// Path points every lattice spacing (Pinter's path cells), the start's and goal's cells
    /// left out (they are linked exactly).
    path_points: Vec<PathPoint>,
    lattice: Lattice,
    /// At most [`SHORT_PATH_RADII`] turning radii long: its repairs search one window around
    /// the whole of it.
    short: bool,
    /// A chain dearer than this holds a loop.
    loop_bound: f64,
}

impl GuideInfo {
    fn new(ctx: &Directional, map: &CollisionMap, request: &Request, stats: &mut RefineStats) -> Self {
        let p = ctx.params();
        let Request { waypoints, start, goal, goal_heading_free, .. } = *request;
        let t = Instant::now();
        let lattice = Lattice::new(map.width(), map.height(), p.spacing());
        let mut points = Vec::with_capacity(waypoints.len() + 2);
        points.push(start.point());
        points.extend_from_slice(waypoints);
        points.push(goal.point());
        let path_points = Self::path_points(ctx, request, &points, p.spacing() as f64);
        stats.path_points = path_points.len();
        stage(stats, Stage::PathPoints, t, format!("{} points", path_points.len()));
        let length: f64 = points.windows(2).map(|w| w[0].distance(w[1])).sum();
        // A cost well above the guide's length means the chain holds a loop, usually because a
        // start or goal heading fights the guide's direction. On a short path a windowed search
        // from start to goal may then find a better way (for example, swinging out first). The
        // bound is the larger of the guide's length and the obstacle-free Dubins length, both
        // lower bounds.
        let free_space = p.motion_model.shortest_length(start, goal, p.turning_radius).unwrap_or(0.0);
        // With costs, chains are priced with them: so is the guide.
        let extra: f64 = map.costs().map_or(0.0, |c| points.windows(2).map(|w| c.extra_line(w[0], w[1])).sum());
        let loop_bound = (length + extra).max(if goal_heading_free { 0.0 } else { free_space }) + PI * p.turning_radius;
        Self { points, path_points, lattice, short: length <= SHORT_PATH_RADII * p.turning_radius, loop_bound }
    }

    /// Path points `near` apart near the guide's vertices, without the start's and goal's cells.
    fn path_points(ctx: &Directional, request: &Request, guide: &[Point2], near: f64) -> Vec<PathPoint> {
        let p = ctx.params();
        let far = (2.0 * p.turning_radius).min(4.0 * p.spacing() as f64).max(near);
        let mut points = path_points(guide, near, far, 2.5 * p.turning_radius);
        let cell = |q: Pose2| (q.x.floor() as i64, q.y.floor() as i64);
        points.retain(|q| q.cell != cell(request.start) && q.cell != cell(request.goal));
        points
    }
}

/// Steps 2-4: Smoothing over the path points. Coarse first: path points twice as far apart near
/// the guide's vertices, with hops that reach as far, give about a third of the states and
/// candidate links of the dense programme and solve most guides. The dense programme, and the
/// repairs built on its costs, run only when it fails, or when its chain holds a loop on a short
/// guide: the dense points may avoid the loop, which spares the loop repair (far dearer than the
/// dense programme). The cheaper chain found, if any.
fn smoothing(
    ctx: &Directional,
    map: &CollisionMap,
    request: &Request,
    guide: &GuideInfo,
    stats: &mut RefineStats,
    should_stop: &mut dyn FnMut() -> bool,
) -> Result<Option<Chain>, RefineError> {
    let p = ctx.params();
    let near = p.spacing() as f64;
    let ends = Ends { start: request.start, goal: request.goal, goal_free: request.goal_heading_free };
    let mut chain: Option<Chain> = None;
    let coarse_near = COARSE_SPACINGS * near;
    let coarse = GuideInfo::path_points(ctx, request, &guide.points, coarse_near);
    if coarse.len() < guide.path_points.len() {
        let t = Instant::now();
        let hops = (p.hops() as f64 * near / coarse_near).ceil() as usize;
        let dp = PathDp::new(ctx, map, &coarse, ends, hops.max(1), coarse_near);
        let (_, parent, found) = dp.forward(should_stop).ok_or(RefineError::Stopped)?;
        if let Some((c, (t_last, h_last))) = found {
            let mut poses = dp.forward_chain(&parent, t_last, h_last);
            poses.push(request.goal);
            let cost = exact_cost(ctx, map, request.goal_heading_free, &poses, &[], c);
            chain = Some(Chain { poses, gears: Vec::new(), by: SolvedBy::Smoothing, cost });
            let outcome = format!("{} points: reached the goal, cost {c:.2}", coarse.len());
            stage(stats, Stage::SmoothingCoarse, t, outcome);
        } else {
            stage(stats, Stage::SmoothingCoarse, t, format!("{} points: stuck", coarse.len()));
        }
    }
    let cost = chain.as_ref().map_or(f64::INFINITY, |c| c.cost);
    if chain.is_none() || (guide.short && cost > guide.loop_bound) {
        let dp = PathDp::new(ctx, map, &guide.path_points, ends, p.hops(), near);
        if let Some(found) = dense_smoothing(ctx, map, &dp, &guide.lattice, guide.short, stats, should_stop)? {
            if found.cost < cost {
                chain = Some(found);
            }
        }
    }
    Ok(chain)
}

/// Beyond Pinter: on a short guide whose chain loops (costs more than the guide's loop bound) or
/// which has no chain, one windowed Directional A* from the exact start to the exact goal around
/// the whole guide; its chain replaces `chain` only if cheaper, and it stops as soon as it cannot
/// be. Without a chain it covers the whole lattice, so that its failure settles the full search
/// too: then true is returned (exhausted: nothing reachable from the start leads to the goal).
fn loop_repair(
    ctx: &Directional,
    map: &CollisionMap,
    request: &Request,
    guide: &GuideInfo,
    chain: &mut Option<Chain>,
    stats: &mut RefineStats,
    should_stop: &mut dyn FnMut() -> bool,
) -> Result<bool, RefineError> {
    let p = ctx.params();
    let c = chain.as_ref().map_or(f64::INFINITY, |c| c.cost);
    let loopy = chain.is_some() && c > guide.loop_bound;
    if !((loopy || chain.is_none()) && guide.short) {
        return Ok(false);
    }
    let lattice = &guide.lattice;
    let t = Instant::now();
    let mut cells: Vec<(i64, i64)> = guide
        .path_points
        .iter()
        .map(|q| lattice.cell_of(Point2::new(q.cell.0 as f64 + 0.5, q.cell.1 as f64 + 0.5)))
        .collect();
    cells.push(lattice.cell_of(request.start.point()));
    cells.push(lattice.cell_of(request.goal.point()));
    // Without a chain in hand the search must settle whether any path exists, and a window that
    // cuts it would only be repeated by the full search: search the whole lattice (the heuristic
    // keeps a short path's search local all the same).
    let window = if chain.is_none() && p.repair_neighbourhood == p.fallback_neighbourhood {
        LatticeRect::all(lattice)
    } else {
        LatticeRect::around(cells, p.margin(), lattice)
    };
    let src = [Source { pose: request.start, g: 0.0, wide: true }];
    let target = Target::Pose { pose: request.goal, free: request.goal_heading_free };
    let mut exhausted = false;
    // Only a cheaper way is of use, so the search stops once it cannot beat the chain in hand.
    let outcome = match directional_astar_below(ctx, map, window, p.repair_neighbourhood, &src, target, c, should_stop)
    {
        Outcome::Found(found) => {
            stats.expansions += found.expansions;
            if found.cost < c {
                let outcome = format!("cost {:.2} instead of {c:.2}", found.cost);
                *chain =
                    Some(Chain { poses: found.poses, gears: found.gears, by: SolvedBy::LoopRepair, cost: found.cost });
                outcome
            } else {
                format!("no better (cost {:.2})", found.cost)
            }
        }
        Outcome::Stopped => return Err(RefineError::Stopped),
        Outcome::NoPath(e) => {
            stats.expansions += e;
            "nothing cheaper in the window".to_string()
        }
        Outcome::Exhausted(e) => {
            stats.expansions += e;
            // Nothing reachable from the start left the window: the full search (same
            // neighbourhood, same start and goal) would expand the same states.
            exhausted = p.repair_neighbourhood == p.fallback_neighbourhood;
            "nothing reachable from the start leads to the goal".to_string()
        }
    };
    stage(stats, Stage::LoopRepair, t, outcome);
    Ok(exhausted)
}

/// Step 5: the full Directional A* from the exact start to the exact goal over the whole
/// lattice, within the budget. Fails with `NoPath` when it finds nothing.
fn full_search_step(
    ctx: &Directional,
    map: &CollisionMap,
    request: &Request,
    lattice: &Lattice,
    stats: &mut RefineStats,
    should_stop: &mut dyn FnMut() -> bool,
) -> Result<Chain, RefineError> {
    let t = Instant::now();
    let window = LatticeRect::all(lattice);
    let target = Target::Pose { pose: request.goal, free: request.goal_heading_free };
    let src = [Source { pose: request.start, g: 0.0, wide: true }];
    match directional_astar(ctx, map, window, ctx.params().fallback_neighbourhood, &src, target, should_stop) {
        Outcome::Found(found) => {
            stats.expansions += found.expansions;
            stage(stats, Stage::FullSearch, t, format!("found after {} expansions", found.expansions));
            Ok(Chain { poses: found.poses, gears: found.gears, by: SolvedBy::FullSearch, cost: found.cost })
        }
        Outcome::Stopped => Err(RefineError::Stopped),
        Outcome::NoPath(e) | Outcome::Exhausted(e) => {
            stats.expansions += e;
            stage(stats, Stage::FullSearch, t, format!("no path after {e} expansions"));
            Err(RefineError::NoPath("smoothing, window repair and the full search all failed".into()))
        }
    }
}

/// Step 6: final smoothing of `chain`, then verification of the smoothed chain, or of the chain
/// as found when the smoothed one fails. The verified trajectory with the figures so far, or the
/// verification error.
fn finish(
    ctx: &Directional,
    map: &CollisionMap,
    request: &Request,
    chain: Chain,
    stats: &mut RefineStats,
) -> Result<Refined, VerifyError> {
    let p = ctx.params();
    let raw = PoseChain { poses: chain.poses, goal_free: request.goal_heading_free, gears: chain.gears };
    let t = Instant::now();
    let smooth = final_smoothing(ctx, map, &raw);
    stats.poses_before_smoothing = raw.poses.len();
    stats.poses_after_smoothing = smooth.poses.len();
    stage(stats, Stage::FinalSmoothing, t, format!("{} -> {} poses", raw.poses.len(), smooth.poses.len()));
    let t = Instant::now();
    let mut last_err = None;
    for c in [smooth, raw] {
        let traj = c.trajectory(&p.motion());
        let (start, goal, free) = (request.start, request.goal, request.goal_heading_free);
        match verify_trajectory(map, &traj, &p.vehicle(), start, goal, free) {
            Ok(()) => {
                stage(stats, Stage::Verify, t, "passed".into());
                stats.solved_by = chain.by;
                return Ok(Refined { trajectory: traj, chain: c, stats: std::mem::take(stats) });
            }
            Err(e) => last_err = Some(e),
        }
    }
    let e = last_err.expect("two candidates were verified");
    stage(stats, Stage::Verify, t, format!("failed: {e}"));
    Err(e)
}

/// A chain of poses from the start to the goal, with the stage that found it and its cost.
struct Chain {
    poses: Vec<Pose2>,
    /// Per link, the gear of a single-gear lattice edge (see [`PoseChain::gears`]).
    gears: Vec<Option<Gear>>,
    by: SolvedBy,
    cost: f64,
}

/// The dense Smoothing programme over `dp` (steps 2 and 3), and when it cannot reach the goal
/// on a long guide, the backward programme and the window repair between the two (step 4).
/// The chain found, with the stage that found it and its cost; `None` when smoothing failed on a
/// short guide (its repair searches the whole guide's window instead) or the repair failed.
#[allow(clippy::too_many_arguments)]
fn dense_smoothing(
    ctx: &Directional,
    map: &CollisionMap,
    dp: &PathDp,
    lattice: &Lattice,
    short: bool,
    stats: &mut RefineStats,
    should_stop: &mut dyn FnMut() -> bool,
) -> Result<Option<Chain>, RefineError> {
    let p = ctx.params();
    let Ends { start, goal, goal_free: goal_heading_free } = dp.ends();
    let points = dp.points();
    let (m, hops) = (dp.m(), dp.hops);
    let stage = |stats: &mut RefineStats, name: Stage, t: Instant, outcome: String| {
        stats.stages.push(StageStat { name, ms: ms_since(t), outcome });
    };
    let mut chain: Option<Chain> = None;
    let t = Instant::now();
    let (fwd, fwd_parent, fwd_goal) = dp.forward(should_stop).ok_or(RefineError::Stopped)?;
    if let Some((c, (t_last, h_last))) = fwd_goal {
        let mut poses = dp.forward_chain(&fwd_parent, t_last, h_last);
        poses.push(goal);
        let cost = exact_cost(ctx, map, goal_heading_free, &poses, &[], c);
        chain = Some(Chain { poses, gears: Vec::new(), by: SolvedBy::Smoothing, cost });
        stage(stats, Stage::SmoothingForward, t, format!("reached the goal, cost {c:.2}"));
    } else if short {
        // A short guide: the windowed start-to-goal search below covers it all, cheaper than
        // splicing a repair between partial chains.
        stage(stats, Stage::SmoothingForward, t, "stuck; short path, searching the whole window".into());
    } else {
        let nb = dp.nb;
        let f = (1..=m).rev().find(|&t| (0..nb).any(|h| fwd[t * nb + h].is_finite())).unwrap_or(0);
        stage(stats, Stage::SmoothingForward, t, format!("stuck after path point {f} of {m}"));

        let t = Instant::now();
        let (bwd, bwd_next) = dp.backward(should_stop).ok_or(RefineError::Stopped)?;
        let b = (1..=m).find(|&t| (0..nb).any(|h| bwd[t * nb + h].is_finite())).unwrap_or(m + 1);
        stage(stats, Stage::SmoothingBackward, t, format!("reached back to path point {b}"));

        // Window repair: the best forward states just before the failure to the best backward
        // states just after it; the exact start or goal join when the window reaches them.
        let t = Instant::now();
        let mut sources = Vec::new();
        let mut source_of = Vec::new();
        let lo = f.saturating_sub(hops - 1).max(1);
        let start_near = f < 2 * hops || start.point().distance(dp.pose(f.max(1), 0).point()) < 4.0 * p.turning_radius;
        if start_near {
            sources.push(Source { pose: start, g: 0.0, wide: true });
            source_of.push((0, 0));
        }
        for tt in lo..=f {
            for (h, g) in dp.best_headings(&fwd, tt, REPAIR_HEADINGS) {
                sources.push(Source { pose: dp.pose(tt, h), g, wide: false });
                source_of.push((tt, h));
            }
        }
        let hi = (b + hops - 1).min(m);
        let mut targets = Vec::new();
        let mut target_of = Vec::new();
        for tt in b..=hi {
            for (h, c) in dp.best_headings(&bwd, tt, REPAIR_HEADINGS) {
                targets.push(TargetPose { pose: dp.pose(tt, h), cost_to_go: c, free: false });
                target_of.push((tt, h));
            }
        }
        let goal_near =
            b + 2 * hops > m + 1 || goal.point().distance(dp.pose(b.min(m).max(1), 0).point()) < 4.0 * p.turning_radius;
        if goal_near || targets.is_empty() {
            targets.push(TargetPose { pose: goal, cost_to_go: 0.0, free: goal_heading_free });
            target_of.push((m + 1, 0));
        }
        let mut window_cells: Vec<(i64, i64)> = sources.iter().map(|s| lattice.cell_of(s.pose.point())).collect();
        window_cells.extend(targets.iter().map(|s| lattice.cell_of(s.pose.point())));
        let grid_cells = |range: std::ops::RangeInclusive<usize>| {
            range.filter(|&tt| tt >= 1 && tt <= m).map(|tt| {
                let (i, j) = points[tt - 1].cell;
                lattice.cell_of(Point2::new(i as f64 + 0.5, j as f64 + 0.5))
            })
        };
        window_cells.extend(grid_cells(lo..=hi.max(lo)));
        let mut margin = p.margin();
        let mut outcome = String::from("no window");
        for attempt in 0..=p.window_widenings {
            let window = LatticeRect::around(window_cells.iter().copied(), margin, lattice);
            let sp = lattice.spacing as f64;
            stats.repair_windows.push([
                window.i0 as f64 * sp,
                window.j0 as f64 * sp,
                window.i1 as f64 * sp,
                window.j1 as f64 * sp,
            ]);
            match directional_astar(
                ctx,
                map,
                window,
                p.repair_neighbourhood,
                &sources,
                Target::Poses(&targets),
                should_stop,
            ) {
                Outcome::Found(found) => {
                    stats.expansions += found.expansions;
                    let (st, sh) = source_of[found.source];
                    let mut poses = dp.forward_chain(&fwd_parent, st, sh);
                    poses.pop();
                    // Smoothing's links are the model's curves; the search's keep their gears.
                    let mut gears = vec![None; poses.len()];
                    gears.extend_from_slice(&found.gears);
                    poses.extend_from_slice(&found.poses);
                    let (tt, th) = target_of[found.target];
                    poses.pop();
                    poses.extend(dp.backward_chain(&bwd_next, tt, th));
                    let cost = exact_cost(ctx, map, goal_heading_free, &poses, &gears, found.cost);
                    chain = Some(Chain { poses, gears, by: SolvedBy::WindowRepair, cost });
                    outcome =
                        format!("found on attempt {} (window {}x{})", attempt + 1, window.width(), window.height());
                    break;
                }
                Outcome::Stopped => return Err(RefineError::Stopped),
                Outcome::NoPath(e) => {
                    stats.expansions += e;
                    outcome = format!("failed {} windows", attempt + 1);
                    if window.covers(lattice) {
                        break;
                    }
                }
                Outcome::Exhausted(e) => {
                    // A wider window would expand the same states.
                    stats.expansions += e;
                    outcome = format!("failed {} windows (nothing more reachable)", attempt + 1);
                    break;
                }
            }
            margin *= 2;
        }
        stage(stats, Stage::WindowRepair, t, outcome);
    }
    Ok(chain)
}

/// Step 6: drops poses wherever the model's curve between the neighbours left is collision-free
/// and costs no more (length, penalties) than the chain it replaces.
///
/// Without penalties: greedily keeps, from each kept pose, the farthest later pose whose direct
/// curve is collision-free (probing 1, 2, 4, 8... poses ahead, then bisecting); the shortest
/// curve between two poses (Dubins forwards, Reeds-Shepp with reversing) is never longer than the
/// chain between them, so the farthest free shortcut is the useful one. Under a penalty that no
/// longer holds (a shortcut may cost more than the turns, reversing or cusps it replaces, and
/// skipping further may cost less again), so the greedy choice can miss cheaper combinations:
/// then an exact dynamic programme picks the cheapest sub-chain of the poses (see
/// [`cheapest_subchain`]). Links kept as they were keep their gear.
pub fn final_smoothing(ctx: &Directional, map: &CollisionMap, chain: &PoseChain) -> PoseChain {
    let p = ctx.params();
    let motion = p.motion();
    let q = &chain.poses;
    let n = q.len();
    if n <= 2 {
        return chain.clone();
    }
    if !motion.length_only() {
        return cheapest_subchain(ctx, map, chain);
    }
    // Prefix costs of the links.
    let mut prefix = vec![0.0; n];
    for k in 1..n {
        let cost = chain.link(&motion, k - 1).map_or(f64::INFINITY, |s| motion.cost(&s) + map.extra_cost(&s));
        prefix[k] = prefix[k - 1] + cost;
    }
    // A shortcut must be free and, with costs, no dearer than the way it replaces.
    let ok = |a: usize, b: usize| -> bool {
        let to_point = chain.goal_free && b == n - 1;
        let Some(segs) = link(&motion, q[a], q[b], to_point, None) else { return false };
        motion.cost(&segs) + map.extra_cost(&segs) <= prefix[b] - prefix[a] + 1e-9
            && map.sweep_free(&segs, p.shape(), SEARCH_MARGIN)
    };
    let mut kept = vec![q[0]];
    let mut gears = Vec::new();
    let mut k = 0;
    while k < n - 1 {
        let mut good = k + 1;
        let mut step = 1;
        let mut bad = None;
        while good + step < n {
            let j = good + step;
            if ok(k, j) {
                good = j;
                step *= 2;
            } else {
                bad = Some(j);
                break;
            }
        }
        if bad.is_none() && good < n - 1 {
            if ok(k, n - 1) {
                good = n - 1;
            } else {
                bad = Some(n - 1);
            }
        }
        if let Some(mut hi) = bad {
            while hi - good > 1 {
                let mid = (good + hi) / 2;
                if ok(k, mid) {
                    good = mid;
                } else {
                    hi = mid;
                }
            }
        }
        kept.push(q[good]);
        gears.push(if good == k + 1 { chain.gear(k) } else { None });
        k = good;
    }
    PoseChain { poses: kept, goal_free: chain.goal_free, gears }
}

/// The cheapest sub-chain of `chain` (start and goal kept, every link a collision-free curve of
/// [`link`]), by cost (length and penalties): a shortest path over the poses in order, where
/// pose `j` may follow any earlier pose `i`. The chain's own links are assumed free (they were
/// checked by the search), so the result never costs more than the chain. For each pose the
/// candidates are ranked by a lower bound (cost so far plus straight distance), exact curve costs
/// are computed only while they can still win, and curves are swept in exact-cost order, so most
/// poses cost a few curve evaluations and one sweep; O(n^2) curve evaluations at worst.
pub fn cheapest_subchain(ctx: &Directional, map: &CollisionMap, chain: &PoseChain) -> PoseChain {
    let p = ctx.params();
    let motion = p.motion();
    let q = &chain.poses;
    let n = q.len();
    if n <= 2 {
        return chain.clone();
    }
    let to_point = |j: usize| chain.goal_free && j == n - 1;
    // The cost and gears of a link from pose `i` to pose `j` (in `gear`: a lattice edge kept).
    // With costs, the traversal cost along the link's curve is added.
    let price = |i: usize, j: usize, gear: Option<Gear>| -> Option<Priced> {
        let priced = match gear {
            Some(g) if !to_point(j) => {
                motion.price_in_gear(q[i], q[j], g).map(|cost| Priced { cost, first: Some(g), last: Some(g) })
            }
            _ => motion.price(q[i], q[j], to_point(j)),
        }?;
        if map.costs().is_none() {
            return Some(priced);
        }
        let segs = link(&motion, q[i], q[j], to_point(j), gear.filter(|_| !to_point(j)))?;
        Some(Priced { cost: priced.cost + map.extra_cost(&segs), ..priced })
    };
    // A cusp where a link starting in `to` follows one that arrived in `from`.
    let join = |from: Option<Gear>, to: Option<Gear>| match (from, to) {
        (Some(a), Some(b)) => motion.change(a, b),
        _ => 0.0,
    };
    let mut best = vec![f64::INFINITY; n];
    let mut from = vec![0usize; n];
    // The gear each pose is reached in by its best link (priced at the next join).
    let mut arrive: Vec<Option<Gear>> = vec![None; n];
    best[0] = 0.0;
    let mut cands: Vec<(f64, usize)> = Vec::with_capacity(n);
    for j in 1..n {
        // The chain's own link: always a fallback (free, as the search checked it).
        if let Some(c) = price(j - 1, j, chain.gear(j - 1)) {
            best[j] = best[j - 1] + c.cost + join(arrive[j - 1], c.first);
            arrive[j] = c.last.or(arrive[j - 1]);
        }
        from[j] = j - 1;
        cands.clear();
        cands.extend((0..j - 1).map(|i| (best[i] + q[i].point().distance(q[j].point()), i)));
        cands.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut ranked: BinaryHeap<Reverse<(OrdF64, usize)>> = BinaryHeap::new();
        let mut next = 0;
        loop {
            let top = ranked.peek().map(|Reverse((c, _))| c.get());
            let bound = top.unwrap_or(f64::INFINITY).min(best[j]);
            if next < cands.len() && cands[next].0 < bound {
                let i = cands[next].1;
                if let Some(c) = price(i, j, None) {
                    let total = best[i] + c.cost + join(arrive[i], c.first);
                    if total < best[j] {
                        ranked.push(Reverse((OrdF64::new(total), i)));
                    }
                }
                next += 1;
                continue;
            }
            let Some(Reverse((c, i))) = ranked.pop() else { break };
            if c.get() >= best[j] {
                break;
            }
            let free = link(&motion, q[i], q[j], to_point(j), None)
                .is_some_and(|segs| map.sweep_free(&segs, p.shape(), SEARCH_MARGIN));
            if free {
                best[j] = c.get();
                from[j] = i;
                arrive[j] = price(i, j, None).and_then(|c| c.last).or(arrive[i]);
                break;
            }
        }
    }
    let mut kept = vec![q[n - 1]];
    let mut gears = Vec::new();
    let mut j = n - 1;
    while j != 0 {
        let i = from[j];
        gears.push(if i + 1 == j { chain.gear(i) } else { None });
        j = i;
        kept.push(q[j]);
    }
    kept.reverse();
    gears.reverse();
    let sub = PoseChain { poses: kept, goal_free: chain.goal_free, gears };
    // With reversing the programme keeps one arrival gear per pose, so a join's cusp can tip the
    // choice the wrong way: the exact costs of both chains settle it.
    if motion.model == MotionModel::ReedsShepp && sub.priced(&motion, map) > chain.priced(&motion, map) {
        return chain.clone();
    }
    sub
}

/// The cost of a chain that Smoothing or a repair put together from links priced one by one:
/// with reversing, recomputed from its trajectory so that the cusps where its links join are
/// counted; forwards (no cusps) `cost` as given.
fn exact_cost(
    ctx: &Directional,
    map: &CollisionMap,
    goal_free: bool,
    poses: &[Pose2],
    gears: &[Option<Gear>],
    cost: f64,
) -> f64 {
    let motion = ctx.params().motion();
    if motion.model == MotionModel::Forward {
        return cost;
    }
    let chain = PoseChain { poses: poses.to_vec(), goal_free, gears: gears.to_vec() };
    chain.priced(&motion, map)
}

/// A full Directional A* (the references of `bench-nav`: Directional-8/-24/-48) from the exact
/// `start` to `goal` over the whole lattice, followed by the same final smoothing and
/// verification as [`refine`]. Same contract and errors as [`refine`].
pub fn full_search(
    ctx: &Directional,
    map: &CollisionMap,
    start: Pose2,
    goal: Pose2,
    goal_heading_free: bool,
    neighbourhood: super::lattice::Neighbourhood,
    should_stop: &mut dyn FnMut() -> bool,
) -> Result<Refined, RefineError> {
    let p = ctx.params();
    let goal = if goal_heading_free { Pose2::new(goal.x, goal.y, 0.0) } else { goal };
    if !start.is_finite() || !goal.is_finite() {
        return Err(RefineError::InvalidInput("a pose is not finite".into()));
    }
    if !map.stands_free(start, p.shape()) {
        return Err(RefineError::StartBlocked);
    }
    // With a free heading any heading will do at the goal: the disk holding the footprint in
    // every heading is conservative for a square there, and exact for a disk.
    let goal_fits = if goal_heading_free {
        map.stands_free(goal, Shape::Disk(p.shape().circumradius()))
    } else {
        map.stands_free(goal, p.shape())
    };
    if !goal_fits {
        return Err(RefineError::GoalBlocked);
    }
    let mut stats = RefineStats::default();
    let t = Instant::now();
    let lattice = Lattice::new(map.width(), map.height(), p.spacing());
    let target = Target::Pose { pose: goal, free: goal_heading_free };
    let found = match directional_astar(
        ctx,
        map,
        LatticeRect::all(&lattice),
        neighbourhood,
        &[Source { pose: start, g: 0.0, wide: true }],
        target,
        should_stop,
    ) {
        Outcome::Found(f) => f,
        Outcome::Stopped => return Err(RefineError::Stopped),
        Outcome::NoPath(e) | Outcome::Exhausted(e) => {
            return Err(RefineError::NoPath(format!("{} found nothing after {e} expansions", neighbourhood.name())))
        }
    };
    stats.expansions = found.expansions;
    stats.stages.push(StageStat {
        name: Stage::FullSearch,
        ms: ms_since(t),
        outcome: format!("{} expansions", found.expansions),
    });
    let raw = PoseChain { poses: found.poses, goal_free: goal_heading_free, gears: found.gears };
    let t = Instant::now();
    let smooth = final_smoothing(ctx, map, &raw);
    stats.poses_before_smoothing = raw.poses.len();
    stats.poses_after_smoothing = smooth.poses.len();
    stats.stages.push(StageStat { name: Stage::FinalSmoothing, ms: ms_since(t), outcome: String::new() });
    let mut last = None;
    for c in [smooth, raw] {
        let traj = c.trajectory(&p.motion());
        match verify_trajectory(map, &traj, &p.vehicle(), start, goal, goal_heading_free) {
            Ok(()) => {
                stats.solved_by = SolvedBy::FullSearch;
                return Ok(Refined { trajectory: traj, chain: c, stats });
            }
            Err(e) => last = Some(e),
        }
    }
    Err(RefineError::VerificationFailed(last.expect("two candidates were verified")))
}
