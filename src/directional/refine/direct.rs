//! Step 0: the model's own curve from start to goal, taken when it is free (beyond Pinter).

use super::{RefineStats, Refined, Refinement};
use crate::directional::chain::PoseChain;
use crate::directional::footprint::{CollisionMap, SEARCH_MARGIN};
use crate::directional::params::Directional;
use crate::directional::verify::verify_trajectory;
use crate::geometry::Pose2;
use crate::stages::{SolvedBy, Stage};
use crate::trajectory::Trajectory;
use std::time::Instant;

/// With traversal costs on the map, the most step 0's curve may carry in traversal costs, as a
/// share of its length, and still be taken without a guide, when no penalty is in force and the
/// goal's heading is given. The curve is then the shortest legal path between the two poses
/// (the shortest Dubins or Reeds-Shepp curve), so no path costs less than its length, and a curve
/// taken costs at most this share more than the cheapest path there is. Under reverse, change or
/// turn penalties (the cheapest word is not proved the cheapest path) or with a free goal heading
/// (the arc-then-line curve may go the long way round) it is taken only when it passes no cost.
///
/// Measured with `bench-nav` (100 pairs, Nav2's inflation) on depot and 100by100_15: the 6
/// curves within 0.5% were the very plans the guide and smoothing found, in 0.25-0.74 ms where
/// step 0 takes 0.04-0.09 ms. At 1% three more were taken, one the same plan, two 0.54% and
/// 0.74% dearer than the guided ones (Nav2 mean costs 1.9 -> 6.4 and 0.0 -> 9.3).
pub const DIRECT_COST_SLACK: f64 = 0.005;

/// Step 0: the model's curve from `start` to `goal` (forwards the shortest Dubins curve; with
/// reversing the cheapest Reeds-Shepp word; arc then line when `goal_heading_free`), returned
/// verified when it is collision-free. Without penalties no legal curve is shorter, so no guide
/// or search can improve on it; under reverse or change penalties it is the cheapest word, which a
/// longer detour could undercut only by avoiding a reverse stretch or a cusp (taken as the answer
/// all the same: it is what the vehicle is expected to drive). With traversal costs on `map` it is
/// taken only when they add at most [`DIRECT_COST_SLACK`] of its length, where that bounds it
/// within the slack of the cheapest path (see there), and otherwise only when it passes no cost
/// (else a longer curve may cost less, and the guide and smoothing look for it). Under a turn
/// penalty a longer curve may cost less: then `None` at once. Costs one curve and one sweep, so a caller
/// may try it before computing a guide at all. `None` when it collides (or, never seen, fails
/// verification); the stages it ran are appended to `stats` either way. Start and goal are taken
/// as valid (finite, footprint free), as [`super::refine`] checks.
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
        stats.record(Stage::Direct, t, "the shortest curve collides");
        return None;
    }
    // With costs the shortest curve is within `DIRECT_COST_SLACK` of the cheapest path when its
    // costs add no more than that share of its price, which is then its length; where the curve
    // is not proved the shortest path there is, only a curve passing no cost is.
    let motion = p.motion();
    let (extra, price) = (map.extra_cost(&segs), motion.cost(&segs));
    let slack = if motion.length_only() && !goal_heading_free { DIRECT_COST_SLACK } else { 0.0 };
    if extra > slack * price {
        stats.record(
            Stage::Direct,
            t,
            format!("the shortest curve is free but passes costs ({extra:.2} above its price {price:.2})"),
        );
        return None;
    }
    if extra > 0.0 {
        stats.record(
            Stage::Direct,
            t,
            format!("the shortest curve is free, its costs {extra:.3} above its price {price:.2}"),
        );
    } else {
        stats.record(Stage::Direct, t, "the shortest curve is free");
    }
    let t = Instant::now();
    let traj = Trajectory { segments: segs, min_turning_radius: p.turning_radius };
    if let Err(e) = verify_trajectory(map, &traj, &p.vehicle(), start, goal, goal_heading_free) {
        stats.record(Stage::Verify, t, format!("failed: {e}"));
        return None;
    }
    stats.record(Stage::Verify, t, "passed");
    stats.solved_by = SolvedBy::Direct;
    stats.poses_before_smoothing = 2;
    stats.poses_after_smoothing = 2;
    let chain = PoseChain::new(vec![start, goal], goal_heading_free);
    Some(Refined { trajectory: traj, chain, stats: std::mem::take(stats) })
}

impl Refinement<'_, '_> {
    /// The cost of step 0's curve (the model's price plus the traversal costs above its length)
    /// when it is collision-free, else `f64::INFINITY`: a chain that cheap exists, so Smoothing
    /// gives up every state that cannot undercut it ([`crate::directional::smoothing`]'s
    /// `PathDp::forward`). Only with traversal costs on the map and no turn penalty: without
    /// costs a free curve is the answer and step 0 took it; under a turn penalty the programme's
    /// own link from the start to the goal may be another word, dearer than this one.
    pub(super) fn direct_bound(&self) -> f64 {
        let (p, map, request) = (self.ctx.params(), self.map, self.request);
        if map.costs().is_none() || p.turn_penalty > 0.0 {
            return f64::INFINITY;
        }
        let motion = p.motion();
        match motion.link(request.start, request.goal, request.goal_heading_free) {
            Some(segs) if map.sweep_free(&segs, p.shape(), SEARCH_MARGIN) => motion.cost(&segs) + map.extra_cost(&segs),
            _ => f64::INFINITY,
        }
    }
}
