//! Step 6: final smoothing of the chain found, then verification; with the exact cost of a
//! chain put together link by link.

use super::{Chain, Refined, Refinement};
use crate::directional::chain::{link, PoseChain};
use crate::directional::footprint::{CollisionMap, SEARCH_MARGIN};
use crate::directional::motion::{Gear, MotionModel, Priced};
use crate::directional::params::Directional;
use crate::directional::verify::{verify_trajectory, VerifyError};
use crate::geometry::Pose2;
use crate::search::OrdF64;
use crate::stages::Stage;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

impl Refinement<'_, '_> {
    /// Step 6: final smoothing of `chain`, then verification of the smoothed chain, or of the
    /// chain as found when the smoothed one fails. The verified trajectory with the figures so
    /// far, or the verification error.
    pub(super) fn finish(&mut self, chain: Chain) -> Result<Refined, VerifyError> {
        let (ctx, map, request) = (self.ctx, self.map, self.request);
        let p = ctx.params();
        let raw = PoseChain { poses: chain.poses, goal_free: request.goal_heading_free, gears: chain.gears };
        let t = Instant::now();
        let smooth = final_smoothing(ctx, map, &raw);
        self.stats.poses_before_smoothing = raw.poses.len();
        self.stats.poses_after_smoothing = smooth.poses.len();
        self.stats.record(Stage::FinalSmoothing, t, format!("{} -> {} poses", raw.poses.len(), smooth.poses.len()));
        let t = Instant::now();
        let mut last_err = None;
        for c in [smooth, raw] {
            let traj = c.trajectory(&p.motion());
            let (start, goal, free) = (request.start, request.goal, request.goal_heading_free);
            match verify_trajectory(map, &traj, &p.vehicle(), start, goal, free) {
                Ok(()) => {
                    self.stats.record(Stage::Verify, t, "passed");
                    self.stats.solved_by = chain.by;
                    return Ok(Refined { trajectory: traj, chain: c, stats: std::mem::take(&mut self.stats) });
                }
                Err(e) => last_err = Some(e),
            }
        }
        let e = last_err.expect("two candidates were verified");
        self.stats.record(Stage::Verify, t, format!("failed: {e}"));
        Err(e)
    }

    /// The cost of a chain that Smoothing or a repair put together from links priced one by
    /// one: with reversing, recomputed from its trajectory so that the cusps where its links
    /// join are counted; forwards (no cusps) `cost` as given.
    pub(super) fn exact_cost(&self, poses: &[Pose2], gears: &[Option<Gear>], cost: f64) -> f64 {
        let motion = self.ctx.params().motion();
        if motion.model == MotionModel::Forward {
            return cost;
        }
        let chain =
            PoseChain { poses: poses.to_vec(), goal_free: self.request.goal_heading_free, gears: gears.to_vec() };
        chain.priced(&motion, self.map)
    }
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
