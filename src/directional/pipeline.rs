//! The hybrid refinement pipeline: Pinter's six steps, made robust.
//!
//! 1. The any-angle path (input) is walked into a chain of lattice cells ("path cells").
//! 2. Smoothing: a directional search restricted to the path cells, hopping one to `hops` path
//!    cells ahead (Pinter's Smoothing-48 hops up to three). Because hops only go forward the
//!    search space is a DAG, so it runs as an exact dynamic programme over (path cell, heading);
//!    it fails when no state beyond some path cell is reachable.
//! 3. On failure the same programme runs from the goal backwards; the furthest forward state and
//!    the earliest backward state bound a failure window.
//! 4. Directional A* (Directional-24 by default) inside the window, from the forward states to the
//!    backward states (whose costs to go are known), spliced into the chain; the window is
//!    doubled when that fails.
//! 5. If every repair fails, a full Directional A* from the exact start to the exact goal, within
//!    the time budget.
//! 6. Final smoothing: a pose is dropped wherever the curve between its neighbours is
//!    collision-free (the Dubins curve between two poses is never longer than any legal curve
//!    through poses between them, so this only shortens).
//!
//! The result is then verified ([`super::verify`]); a trajectory that fails is never returned.

use super::chain::{curve_cost, link, PoseChain};
use super::footprint::{sampled_radius, CollisionMap, SEARCH_MARGIN};
use super::lattice::{Lattice, LatticeRect};
use super::params::Directional;
use super::search::{directional_astar, Outcome, Source, State, Target};
use super::verify::{verify_trajectory, VerifyError};
use crate::geometry::{Point2, Pose2};
use crate::trajectory::Trajectory;
use std::collections::HashMap;
use std::time::Instant;

/// Time and outcome of one pipeline stage.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StageStat {
    /// Stage name (`path_cells`, `smoothing_forward`, `smoothing_backward`, `window_repair`,
    /// `full_search`, `final_smoothing`, `verify`).
    pub name: &'static str,
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
    /// Path cells the any-angle path was walked into.
    pub path_cells: usize,
    /// Directional A* expansions (window repairs and full search).
    pub expansions: usize,
    /// Which stage produced the chain: `smoothing`, `window_repair` or `full_search`.
    pub solved_by: &'static str,
    /// Poses in the chain before and after final smoothing.
    pub poses_before_smoothing: usize,
    /// Poses kept by final smoothing.
    pub poses_after_smoothing: usize,
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

/// The lattice cells an any-angle polyline passes through, in order, consecutive cells distinct
/// and 8-adjacent.
pub fn path_cells(points: &[Point2], lattice: &Lattice) -> Vec<(i64, i64)> {
    let mut out: Vec<(i64, i64)> = Vec::new();
    let step = lattice.spacing as f64 / 2.0;
    let push = |c: (i64, i64), out: &mut Vec<(i64, i64)>| {
        if out.last() != Some(&c) && lattice.contains(c.0, c.1) {
            out.push(c);
        }
    };
    for w in points.windows(2) {
        let len = w[0].distance(w[1]);
        let n = (len / step).ceil().max(1.0) as usize;
        for k in 0..=n {
            let t = k as f64 / n as f64;
            push(lattice.cell_of(Point2::new(w[0].x + t * (w[1].x - w[0].x), w[0].y + t * (w[1].y - w[0].y))), &mut out);
        }
    }
    if let [p] = points {
        push(lattice.cell_of(*p), &mut out);
    }
    out
}

/// Dynamic programme over (path cell, heading) states: index 0 is the start, `1..=m` the path
/// cells, `m + 1` the goal.
struct PathDp<'a> {
    ctx: &'a Directional,
    map: &'a CollisionMap,
    lattice: Lattice,
    cells: &'a [(i64, i64)],
    start: Pose2,
    goal: Pose2,
    goal_free: bool,
    hops: usize,
    nb: usize,
}

const NO_PARENT: (usize, usize) = (usize::MAX, usize::MAX);

impl PathDp<'_> {
    fn m(&self) -> usize {
        self.cells.len()
    }

    fn pose(&self, t: usize, h: usize) -> Pose2 {
        let (i, j) = self.cells[t - 1];
        self.lattice.pose(i, j, self.ctx.params().heading_bins, h)
    }

    /// Cost of the tabulated edge between path states, `None` when blocked or out of the table.
    fn edge(&self, t: usize, h: usize, u: usize, h1: usize, budget: f64) -> Option<f64> {
        let (i, j) = self.cells[t - 1];
        let (ni, nj) = self.cells[u - 1];
        let e = self.ctx.edges().edge(h, h1, ni - i, nj - j)?;
        let c = e.length + self.ctx.params().turn_penalty * e.turning;
        if c >= budget {
            return None;
        }
        let s = self.lattice.spacing;
        self.map.spans_free(&e.spans, i * s, j * s).then_some(c)
    }

    fn link_cost(&self, a: Pose2, b: Pose2, to_point: bool) -> Option<f64> {
        let p = self.ctx.params();
        let segs = link(a, b, to_point, p.turning_radius)?;
        self.map.sweep_free(&segs, p.footprint_radius, SEARCH_MARGIN).then(|| curve_cost(&segs, p.turn_penalty))
    }

    /// Forward costs `fwd[t][h]` with parents; the goal's best (cost, parent) if reached.
    #[allow(clippy::type_complexity)]
    fn forward(
        &self,
        should_stop: &mut dyn FnMut() -> bool,
    ) -> Option<(Vec<f64>, Vec<(usize, usize)>, Option<(f64, (usize, usize))>)> {
        let (m, nb, hops) = (self.m(), self.nb, self.hops);
        let mut cost = vec![f64::INFINITY; (m + 1) * nb];
        let mut parent = vec![NO_PARENT; (m + 1) * nb];
        let mut goal_cands: Vec<(f64, usize, usize)> = Vec::new();
        let tp = self.ctx.params().turn_penalty;
        let radius = self.ctx.params().turning_radius;
        for u in 1..=hops.min(m + 1) {
            if u == m + 1 {
                if let Some(segs) = link(self.start, self.goal, self.goal_free, radius) {
                    goal_cands.push((curve_cost(&segs, tp), 0, 0));
                }
                continue;
            }
            for h1 in 0..nb {
                if let Some(c) = self.link_cost(self.start, self.pose(u, h1), false) {
                    cost[u * nb + h1] = c;
                    parent[u * nb + h1] = (0, 0);
                }
            }
        }
        for t in 1..=m {
            if should_stop() {
                return None;
            }
            for h in 0..nb {
                let g = cost[t * nb + h];
                if !g.is_finite() {
                    continue;
                }
                for u in t + 1..=(t + hops).min(m + 1) {
                    if u == m + 1 {
                        if let Some(segs) = link(self.pose(t, h), self.goal, self.goal_free, radius) {
                            goal_cands.push((g + curve_cost(&segs, tp), t, h));
                        }
                        continue;
                    }
                    for h1 in 0..nb {
                        let k = u * nb + h1;
                        if let Some(c) = self.edge(t, h, u, h1, cost[k] - g) {
                            cost[k] = g + c;
                            parent[k] = (t, h);
                        }
                    }
                }
            }
        }
        // Goal links are checked cheapest first, so the first free one is the optimum.
        goal_cands.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut goal = None;
        for (c, t, h) in goal_cands {
            let from = if t == 0 { self.start } else { self.pose(t, h) };
            if self.link_cost(from, self.goal, self.goal_free).is_some() {
                goal = Some((c, (t, h)));
                break;
            }
        }
        Some((cost, parent, goal))
    }

    /// Backward costs to go `bwd[t][h]` (to the goal) with successors.
    #[allow(clippy::type_complexity)]
    fn backward(&self, should_stop: &mut dyn FnMut() -> bool) -> Option<(Vec<f64>, Vec<(usize, usize)>)> {
        let (m, nb, hops) = (self.m(), self.nb, self.hops);
        let mut cost = vec![f64::INFINITY; (m + 2) * nb];
        let mut next = vec![NO_PARENT; (m + 2) * nb];
        for t in (1..=m).rev() {
            if should_stop() {
                return None;
            }
            for h in 0..nb {
                let k = t * nb + h;
                for u in t + 1..=(t + hops).min(m + 1) {
                    if u == m + 1 {
                        if let Some(c) = self.link_cost(self.pose(t, h), self.goal, self.goal_free) {
                            if c < cost[k] {
                                cost[k] = c;
                                next[k] = (m + 1, 0);
                            }
                        }
                        continue;
                    }
                    for h1 in 0..nb {
                        let rest = cost[u * nb + h1];
                        if !rest.is_finite() {
                            continue;
                        }
                        if let Some(c) = self.edge(t, h, u, h1, cost[k] - rest) {
                            cost[k] = c + rest;
                            next[k] = (u, h1);
                        }
                    }
                }
            }
        }
        Some((cost, next))
    }

    /// Poses from the start to forward state `(t, h)`.
    fn forward_chain(&self, parent: &[(usize, usize)], mut t: usize, mut h: usize) -> Vec<Pose2> {
        let mut out = Vec::new();
        while t != 0 {
            out.push(self.pose(t, h));
            (t, h) = parent[t * self.nb + h];
        }
        out.push(self.start);
        out.reverse();
        out
    }

    /// Poses from backward state `(t, h)` to the goal.
    fn backward_chain(&self, next: &[(usize, usize)], mut t: usize, mut h: usize) -> Vec<Pose2> {
        let mut out = Vec::new();
        while t != self.m() + 1 {
            out.push(self.pose(t, h));
            (t, h) = next[t * self.nb + h];
        }
        out.push(self.goal);
        out
    }
}

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// Refines an any-angle path into a verified turning-radius-legal trajectory (cell units).
///
/// `waypoints` is the any-angle path in cell units (from any any-angle planner; start and goal
/// included or not, it is only a guide). `start` is the exact start pose; `goal` the goal pose,
/// whose heading is ignored when `goal_heading_free`. `ctx` holds the parameters and tables and
/// `map` the cells the vehicle may not enter. `should_stop` is polled between and inside stages.
///
/// Fails with [`RefineError`]: invalid input, start or goal blocked, no path (every stage
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
    let p = ctx.params().clone();
    let goal = if goal_heading_free { Pose2::new(goal.x, goal.y, 0.0) } else { goal };
    if !start.is_finite() || !goal.is_finite() || waypoints.iter().any(|w| !w.is_finite()) {
        return Err(RefineError::InvalidInput("a pose or waypoint is not finite".into()));
    }
    if start.point().distance(goal.point()) < 1e-9 {
        return Err(RefineError::InvalidInput("start and goal are at the same place".into()));
    }
    let rho = sampled_radius(p.footprint_radius) + SEARCH_MARGIN;
    if !map.disk_free(start.point(), rho) {
        return Err(RefineError::StartBlocked);
    }
    if !map.disk_free(goal.point(), rho) {
        return Err(RefineError::GoalBlocked);
    }
    let mut stats = RefineStats::default();
    let stage = |stats: &mut RefineStats, name: &'static str, t: Instant, outcome: String| {
        stats.stages.push(StageStat { name, ms: ms_since(t), outcome });
    };

    let t = Instant::now();
    let lattice = Lattice::new(map.width(), map.height(), p.spacing());
    let mut guide = Vec::with_capacity(waypoints.len() + 2);
    guide.push(start.point());
    guide.extend_from_slice(waypoints);
    guide.push(goal.point());
    let cells = path_cells(&guide, &lattice);
    stats.path_cells = cells.len();
    stage(&mut stats, "path_cells", t, format!("{} cells", cells.len()));

    let dp = PathDp {
        ctx,
        map,
        lattice,
        cells: &cells,
        start,
        goal,
        goal_free: goal_heading_free,
        hops: p.hops(),
        nb: p.heading_bins.count(),
    };
    let (m, nb) = (dp.m(), dp.nb);

    let mut chain: Option<(Vec<Pose2>, &'static str)> = None;
    let t = Instant::now();
    let (fwd, fwd_parent, fwd_goal) = dp.forward(should_stop).ok_or(RefineError::Stopped)?;
    if let Some((c, (t_last, h_last))) = fwd_goal {
        let mut poses = if t_last == 0 { vec![start] } else { dp.forward_chain(&fwd_parent, t_last, h_last) };
        poses.push(goal);
        chain = Some((poses, "smoothing"));
        stage(&mut stats, "smoothing_forward", t, format!("reached the goal, cost {c:.2}"));
    } else {
        let f = (1..=m).rev().find(|&t| (0..nb).any(|h| fwd[t * nb + h].is_finite())).unwrap_or(0);
        stage(&mut stats, "smoothing_forward", t, format!("stuck after path cell {f} of {m}"));

        let t = Instant::now();
        let (bwd, bwd_next) = dp.backward(should_stop).ok_or(RefineError::Stopped)?;
        let b = (1..=m).find(|&t| (0..nb).any(|h| bwd[t * nb + h].is_finite())).unwrap_or(m + 1);
        stage(&mut stats, "smoothing_backward", t, format!("reached back to path cell {b}"));

        // Window repair: forward states near the failure to backward states near it.
        let t = Instant::now();
        let reach = 2 * p.hops();
        let lo = f.saturating_sub(reach);
        let mut sources = Vec::new();
        let mut source_cells = Vec::new();
        if lo == 0 {
            sources.push(Source::Pose(start));
            source_cells.push(lattice.cell_of(start.point()));
        }
        for tt in lo.max(1)..=f {
            for h in 0..nb {
                let g = fwd[tt * nb + h];
                if g.is_finite() {
                    let (i, j) = cells[tt - 1];
                    sources.push(Source::State((i, j, h), g));
                    source_cells.push((i, j));
                }
            }
        }
        let hi = (b + reach).min(m + 1);
        let mut targets: HashMap<State, f64> = HashMap::new();
        let mut target_index: HashMap<State, (usize, usize)> = HashMap::new();
        for tt in b..=hi.min(m) {
            for h in 0..nb {
                let c = bwd[tt * nb + h];
                if c.is_finite() {
                    let (i, j) = cells[tt - 1];
                    let st = (i, j, h);
                    if targets.get(&st).is_none_or(|&old| c < old) {
                        targets.insert(st, c);
                        target_index.insert(st, (tt, h));
                    }
                }
            }
        }
        let target = if targets.is_empty() {
            Target::Pose { pose: goal, free: goal_heading_free }
        } else {
            Target::States(&targets)
        };
        let mut window_cells: Vec<(i64, i64)> = source_cells.clone();
        window_cells.extend(cells[lo.max(1) - 1..hi.min(m)].iter().copied());
        if targets.is_empty() {
            window_cells.push(lattice.cell_of(goal.point()));
        }
        let mut margin = p.margin();
        let mut outcome = String::from("no window");
        for attempt in 0..=p.window_widenings {
            let window = LatticeRect::around(window_cells.iter().copied(), margin, &lattice);
            match directional_astar(ctx, map, window, p.repair_neighbourhood, &sources, target, should_stop) {
                Outcome::Found(found) => {
                    stats.expansions += found.expansions;
                    let mut poses = match sources[found.source] {
                        Source::Pose(_) => Vec::new(),
                        Source::State(_, _) => {
                            let (tt, h) = find_state(&cells, &fwd, nb, &sources[found.source]);
                            let mut c = dp.forward_chain(&fwd_parent, tt, h);
                            c.pop();
                            c
                        }
                    };
                    poses.extend_from_slice(&found.poses);
                    if let Some(st) = found.target_state {
                        let (tt, h) = target_index[&st];
                        poses.pop();
                        poses.extend(dp.backward_chain(&bwd_next, tt, h));
                    }
                    chain = Some((poses, "window_repair"));
                    outcome = format!("found on attempt {} (window {}x{})", attempt + 1, window.width(), window.height());
                    break;
                }
                Outcome::Stopped => return Err(RefineError::Stopped),
                Outcome::NoPath(e) => {
                    stats.expansions += e;
                    outcome = format!("failed {} windows", attempt + 1);
                    if window.covers(&lattice) {
                        break;
                    }
                }
            }
            margin *= 2;
        }
        stage(&mut stats, "window_repair", t, outcome);
    }

    let mut candidates = Vec::new();
    if let Some((poses, by)) = chain {
        candidates.push((poses, by));
    }
    let mut tried_full = false;
    loop {
        if candidates.is_empty() {
            if tried_full {
                return Err(RefineError::NoPath("smoothing, window repair and the full search all failed".into()));
            }
            tried_full = true;
            let t = Instant::now();
            let window = LatticeRect::all(&lattice);
            let target = Target::Pose { pose: goal, free: goal_heading_free };
            match directional_astar(ctx, map, window, p.fallback_neighbourhood, &[Source::Pose(start)], target, should_stop)
            {
                Outcome::Found(found) => {
                    stats.expansions += found.expansions;
                    stage(&mut stats, "full_search", t, format!("found after {} expansions", found.expansions));
                    candidates.push((found.poses, "full_search"));
                }
                Outcome::Stopped => return Err(RefineError::Stopped),
                Outcome::NoPath(e) => {
                    stats.expansions += e;
                    stage(&mut stats, "full_search", t, format!("no path after {e} expansions"));
                    continue;
                }
            }
        }
        let (poses, by) = candidates.remove(0);
        let raw = PoseChain { poses, goal_free: goal_heading_free };
        let t = Instant::now();
        let smooth = final_smoothing(ctx, map, &raw);
        stats.poses_before_smoothing = raw.poses.len();
        stats.poses_after_smoothing = smooth.poses.len();
        stage(&mut stats, "final_smoothing", t, format!("{} -> {} poses", raw.poses.len(), smooth.poses.len()));
        let t = Instant::now();
        let mut last_err = None;
        for c in [smooth, raw] {
            let traj = c.trajectory(p.turning_radius);
            match verify_trajectory(map, &traj, p.footprint_radius, p.turning_radius, start, goal, goal_heading_free) {
                Ok(()) => {
                    stage(&mut stats, "verify", t, "passed".into());
                    stats.solved_by = by;
                    return Ok(Refined { trajectory: traj, chain: c, stats });
                }
                Err(e) => last_err = Some(e),
            }
        }
        let e = last_err.expect("two candidates were verified");
        stage(&mut stats, "verify", t, format!("failed: {e}"));
        if tried_full && candidates.is_empty() {
            return Err(RefineError::VerificationFailed(e));
        }
    }
}

fn find_state(cells: &[(i64, i64)], fwd: &[f64], nb: usize, src: &Source) -> (usize, usize) {
    let Source::State((i, j, h), g) = *src else { return (0, 0) };
    (1..=cells.len()).find(|&t| cells[t - 1] == (i, j) && fwd[t * nb + h] == g).map_or((0, 0), |t| (t, h))
}

/// Step 6: greedily keeps, from each kept pose, the farthest later pose whose direct curve is
/// collision-free (probing 1, 2, 4, 8... poses ahead, then bisecting), and only when that curve
/// is not longer than the chain it replaces.
pub fn final_smoothing(ctx: &Directional, map: &CollisionMap, chain: &PoseChain) -> PoseChain {
    let p = ctx.params();
    let q = &chain.poses;
    let n = q.len();
    if n <= 2 {
        return chain.clone();
    }
    // Prefix lengths of the links.
    let mut prefix = vec![0.0; n];
    for k in 1..n {
        let to_point = chain.goal_free && k == n - 1;
        let len = link(q[k - 1], q[k], to_point, p.turning_radius).map_or(f64::INFINITY, |s| crate::curves::segments_length(&s));
        prefix[k] = prefix[k - 1] + len;
    }
    let ok = |a: usize, b: usize| -> bool {
        let to_point = chain.goal_free && b == n - 1;
        let Some(segs) = link(q[a], q[b], to_point, p.turning_radius) else { return false };
        crate::curves::segments_length(&segs) <= prefix[b] - prefix[a] + 1e-9
            && map.sweep_free(&segs, p.footprint_radius, SEARCH_MARGIN)
    };
    let mut kept = vec![q[0]];
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
        k = good;
    }
    PoseChain { poses: kept, goal_free: chain.goal_free }
}
