//! Smoothing (steps 2 and 3 of the pipeline, see [`super::refine`](mod@super::refine)): the guide path walked
//! into path points, and the dynamic programme over (path point, heading) states that links them
//! with collision-free curves, forward from the start or backward from the goal.

use super::footprint::{CollisionMap, SEARCH_MARGIN};
use super::motion::MotionModel;
use super::params::Directional;
use crate::curves::{dubins_candidate_memo, DubinsCurve, ReedsSheppCurve};
use crate::geometry::{normalize_angle, Point2, Pose2};
use crate::search::OrdF64;
use crate::trajectory::Segment;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A point of the guide path: the centre of grid cell `cell`, and the direction of the guide's
/// segment through it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PathPoint {
    /// The grid cell whose centre is the point.
    pub cell: (i64, i64),
    /// Direction of the guide there (radians).
    pub dir: f64,
}

/// Points along the polyline `points`: every `near` cells within `near_radius` of a vertex
/// (where the turning happens) and every `far` cells elsewhere; the last point included. Each is
/// snapped to the centre of its grid cell, consecutive duplicates removed.
pub fn path_points(points: &[Point2], near: f64, far: f64, near_radius: f64) -> Vec<PathPoint> {
    let mut out: Vec<PathPoint> = Vec::new();
    let mut push = |p: Point2, dir: f64| {
        let c = (crate::geometry::floor_i64(p.x), crate::geometry::floor_i64(p.y));
        if out.last().map(|q| q.cell) != Some(c) {
            out.push(PathPoint { cell: c, dir });
        }
    };
    let mut dir = 0.0;
    for w in points.windows(2) {
        let len = w[0].distance(w[1]);
        if len <= 0.0 {
            continue;
        }
        dir = (w[1].y - w[0].y).atan2(w[1].x - w[0].x);
        let mut d = 0.0;
        while d < len {
            let t = d / len;
            push(Point2::new(w[0].x + t * (w[1].x - w[0].x), w[0].y + t * (w[1].y - w[0].y)), dir);
            let to_vertex = d.min(len - d);
            d += if to_vertex < near_radius { near } else { far.min((len - near_radius - d).max(near)) };
        }
    }
    if let Some(&last) = points.last() {
        push(last, dir);
    }
    out
}

/// The exact ends of a refinement: start pose, goal pose, and whether the goal's heading is free.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Ends {
    /// Start pose (cell units).
    pub start: Pose2,
    /// Goal pose (cell units); its heading is ignored when `goal_free`.
    pub goal: Pose2,
    /// True when the goal heading is free.
    pub goal_free: bool,
}

/// Dynamic programme over (path point, heading) states: index 0 is the start, `1..=m` the path
/// points, `m + 1` the goal.
pub(super) struct PathDp<'a> {
    ctx: &'a Directional,
    map: &'a CollisionMap,
    points: &'a [PathPoint],
    start: Pose2,
    goal: Pose2,
    goal_free: bool,
    pub(super) hops: usize,
    pub(super) nb: usize,
    /// Last point index the start may link to.
    start_reach: usize,
    /// First point index that may link to the goal.
    goal_reach: usize,
    /// `allowed[t * nb + h]`: heading `h` at point `t` is within 45 degrees of the path's
    /// direction there (Pinter's heuristic favouring the path's direction, as a hard filter:
    /// facing away from the path is only useful inside a loop, which one curve already makes, and
    /// the guide's own direction is always a slot, unless an allowed bin has it already). Two or three bins per point instead of five
    /// cut the candidate curves per state by more than half; repairs cover what this misses.
    allowed: Vec<bool>,
    /// Yaw of each heading bin (the guide's slot has the direction of its point).
    bin_yaw: Vec<f64>,
}

const NO_PARENT: (usize, usize) = (usize::MAX, usize::MAX);

/// Relative slack on [`PathDp::forward`]'s bound, for the rounding of costs summed link by link.
const BOUND_SLACK: f64 = 1e-9;

/// Straight distance between `a` and `b` (the square root of the sum of squares: the coordinates
/// are cell positions, far from overflow, so `hypot`'s care is not needed here).
#[inline]
fn straight(a: Point2, b: Point2) -> f64 {
    let (dx, dy) = (b.x - a.x, b.y - a.y);
    (dx * dx + dy * dy).sqrt()
}

/// `|normalize_angle(b - a)|`: the heading change from `a` to `b` (radians, in `[0, pi]`), without
/// a floating-point remainder when both lie in `[-pi, pi]` (bins, guide directions).
#[inline]
fn heading_change(a: f64, b: f64) -> f64 {
    use std::f64::consts::{PI, TAU};
    if a.abs() > PI || b.abs() > PI {
        return normalize_angle(b - a).abs();
    }
    let d = b - a;
    (if d > PI {
        d - TAU
    } else if d < -PI {
        d + TAU
    } else {
        d
    })
    .abs()
}

/// The curve a candidate link was ranked by, kept so that checking it does not solve the pair
/// again.
#[derive(Debug, Clone, Copy)]
enum Ranked {
    /// Forwards: the Dubins candidate (its end still to be checked).
    Dubins(DubinsCurve),
    /// With reversing: the cheapest Reeds-Shepp word (already checked to end at the pose).
    ReedsShepp(ReedsSheppCurve),
}

/// Headings closer than this (radians) are one heading: the guide's direction and a bin that
/// differ by rounding only.
const SAME_YAW: f64 = 1e-9;

/// Working memory of [`PathDp::cheapest_free`], reused across the states of one pass.
#[derive(Default)]
struct Scratch {
    /// Candidates `(straight distance, cost so far, t, h)`.
    cands: Vec<(f64, f64, usize, usize)>,
    /// Candidates with exact costs, cheapest first.
    ranked: BinaryHeap<Reverse<(OrdF64, usize)>>,
    /// The Dubins candidate of each ranked link and its cost without traversal costs, by
    /// candidate index.
    curves: Vec<(Option<Ranked>, f64)>,
    /// Whether each candidate's rank includes its traversal cost.
    priced: Vec<bool>,
}

impl<'a> PathDp<'a> {
    /// The programme over `points` (about `spacing` cells apart where they are densest), whose
    /// links hop up to `hops` points ahead.
    pub(super) fn new(
        ctx: &'a Directional,
        map: &'a CollisionMap,
        points: &'a [PathPoint],
        ends: Ends,
        hops: usize,
        spacing: f64,
    ) -> Self {
        let p = ctx.params();
        let Ends { start, goal, goal_free } = ends;
        let m = points.len();
        // Ends link to every point within reach of a loop (or of `hops` points).
        let reach = (hops as f64 * spacing).max(4.0 * p.turning_radius);
        let centre = |t: usize| Point2::new(points[t].cell.0 as f64 + 0.5, points[t].cell.1 as f64 + 0.5);
        let mut along = 0.0;
        let mut start_reach = 0;
        let mut prev = start.point();
        for t in 0..m {
            along += prev.distance(centre(t));
            prev = centre(t);
            if along > reach && t + 1 > hops {
                break;
            }
            start_reach = t + 1;
        }
        let mut along = 0.0;
        let mut goal_reach = m + 1;
        let mut prev = goal.point();
        for t in (0..m).rev() {
            along += prev.distance(centre(t));
            prev = centre(t);
            if along > reach && m - t > hops {
                break;
            }
            goal_reach = t + 1;
        }
        // Heading slots: the bins, plus the guide's own direction (so a straight run of the guide
        // is followed exactly, whatever its angle).
        let bins = p.heading_bins.count();
        let nb = bins + 1;
        let mut allowed = vec![false; (m + 2) * nb];
        for t in 1..=m {
            let before = if t == 1 { start.point() } else { centre(t - 2) };
            let after = if t == m { goal.point() } else { centre(t) };
            let dir = (after.y - before.y).atan2(after.x - before.x);
            for h in 0..bins {
                allowed[t * nb + h] =
                    normalize_angle(p.heading_bins.yaw(h) - dir).abs() <= std::f64::consts::FRAC_PI_4 + 1e-9;
            }
            // The guide's direction is a slot of its own unless an allowed bin already has it
            // (an axis-parallel or diagonal guide segment): the same pose twice would only double
            // the candidates of every later state.
            let dir = points[t - 1].dir;
            allowed[t * nb + bins] = !(0..bins)
                .any(|h| allowed[t * nb + h] && normalize_angle(p.heading_bins.yaw(h) - dir).abs() < SAME_YAW);
        }
        let bin_yaw = (0..bins).map(|h| p.heading_bins.yaw(h)).collect();
        Self { ctx, map, points, start, goal, goal_free, hops, nb, start_reach, goal_reach, allowed, bin_yaw }
    }

    pub(super) fn m(&self) -> usize {
        self.points.len()
    }

    /// The path points.
    pub(super) fn points(&self) -> &'a [PathPoint] {
        self.points
    }

    pub(super) fn pose(&self, t: usize, h: usize) -> Pose2 {
        let pt = self.points[t - 1];
        let yaw = self.bin_yaw.get(h).copied().unwrap_or(pt.dir);
        Pose2::new(pt.cell.0 as f64 + 0.5, pt.cell.1 as f64 + 0.5, yaw)
    }

    /// True when the link from `a` to `b` (the model's curve) is collision-free. `curve` is the
    /// Dubins candidate [`Self::link_estimate`] ranked it by, forwards (checked here, so the pair
    /// is not solved twice).
    fn link_free(&self, a: Pose2, b: Pose2, to_point: bool, curve: Option<Ranked>) -> bool {
        let p = self.ctx.params();
        let sweep = |segs: &[Segment]| self.map.sweep_free(segs, p.shape(), SEARCH_MARGIN);
        match curve {
            Some(Ranked::Dubins(c)) if !to_point => c.checked_pieces(b).is_some_and(|pieces| sweep(pieces.as_slice())),
            Some(Ranked::ReedsShepp(c)) if !to_point => sweep(&c.segments()),
            _ => p.motion().link(a, b, to_point).is_some_and(|segs| sweep(&segs)),
        }
    }

    /// The cost of the link from `a` to `b` along the model's curve (as
    /// [`super::Motion::price`]), without the traversal costs, with the Dubins candidate it was
    /// computed from (forwards and not to a point; the memo answers the repeated relative
    /// problems of lattice-like points).
    fn link_estimate(&self, a: Pose2, b: Pose2, to_point: bool) -> Option<(f64, Option<Ranked>)> {
        let p = self.ctx.params();
        if to_point {
            return Some((p.motion().price(a, b, to_point)?.cost, None));
        }
        match p.motion_model {
            MotionModel::Forward => {
                let c = dubins_candidate_memo(a, b, p.turning_radius)?;
                Some((c.length() + p.turn_penalty * c.turning(), Some(Ranked::Dubins(c))))
            }
            MotionModel::ReedsShepp => {
                let motion = p.motion();
                let c = motion.cheapest_reeds_shepp(a, b)?;
                Some((motion.reeds_shepp_cost(&c), Some(Ranked::ReedsShepp(c))))
            }
        }
    }

    /// The traversal cost of that link above its length (`curve` as [`Self::link_estimate`]
    /// returned it): a link that cuts a corner closer to a wall wins only when it is cheaper all
    /// told. `None` when the curve does not reach `b` (the link is dropped).
    fn link_extra(&self, a: Pose2, b: Pose2, to_point: bool, curve: Option<Ranked>) -> Option<f64> {
        Some(match curve {
            Some(Ranked::Dubins(c)) => self.map.extra_cost(c.checked_pieces(b)?.as_slice()),
            Some(Ranked::ReedsShepp(c)) => self.map.extra_cost(&c.segments()),
            None => self.map.extra_cost(&self.ctx.params().motion().link(a, b, to_point)?),
        })
    }

    /// A lower bound on [`Self::link_estimate`] from `a` to `b`, `d` apart, cheaper than solving
    /// the pair: the straight distance, and (towards a heading) the arc the heading change needs
    /// at least, whose turning the turn penalty charges (in either gear: reversing costs at least
    /// its length).
    fn link_lower_bound(&self, a: Pose2, b: Pose2, d: f64, to_point: bool) -> f64 {
        let turn = (!to_point).then(|| heading_change(a.yaw, b.yaw));
        self.ctx.params().motion().lower_bound(d, turn)
    }

    /// The pose of index `t` (`0` the start, `m + 1` the goal).
    fn any_pose(&self, t: usize, h: usize) -> Pose2 {
        if t == 0 {
            self.start
        } else if t == self.m() + 1 {
            self.goal
        } else {
            self.pose(t, h)
        }
    }

    /// Picks the cheapest candidate whose link is collision-free. Candidates are `(lower bound,
    /// cost so far, t, h)`; costs are computed lazily in three levels, each only while the
    /// candidate can still win: the lower bound (straight distance and heading change), then the
    /// curve's exact cost, then (with traversal costs on the map) its cost integral, the dearest
    /// part to compute. Links are swept in exact-cost order, so a state usually costs a few curve
    /// evaluations and one sweep.
    ///
    /// Candidates that cannot cost less than `limit` are given up: `None` when no other is
    /// left (`f64::INFINITY`: no limit).
    fn cheapest_free(
        &self,
        scratch: &mut Scratch,
        limit: f64,
        ends: impl Fn(usize, usize) -> (Pose2, Pose2, bool),
    ) -> Option<(f64, usize, usize)> {
        let Scratch { cands, ranked, curves, priced } = scratch;
        // Rank by cost so far plus a lower bound on the link (straight distance and heading
        // change).
        for c in cands.iter_mut() {
            let (d, g, t, h) = *c;
            let (a, b, to_point) = ends(t, h);
            c.0 = g + self.link_lower_bound(a, b, d, to_point);
        }
        cands.sort_by(|a, b| a.0.total_cmp(&b.0));
        ranked.clear();
        curves.clear();
        curves.resize(cands.len(), (None, 0.0));
        // Without traversal costs a curve's cost is exact at once.
        let no_costs = self.map.costs().is_none();
        priced.clear();
        priced.resize(cands.len(), no_costs);
        let mut next = 0;
        loop {
            let top = ranked.peek().map(|Reverse((c, _))| c.get());
            // Every rank is a lower bound on its candidate's cost, so the least of them bounds
            // what is left.
            let least = top.unwrap_or(f64::INFINITY).min(cands.get(next).map_or(f64::INFINITY, |c| c.0));
            if least > limit {
                return None;
            }
            if next < cands.len() && top.is_none_or(|c| cands[next].0 < c) {
                let (_, g, t, h) = cands[next];
                let (a, b, to_point) = ends(t, h);
                if let Some((c, curve)) = self.link_estimate(a, b, to_point) {
                    curves[next] = (curve, c);
                    ranked.push(Reverse((OrdF64::new(g + c), next)));
                }
                next += 1;
                continue;
            }
            let Reverse((c, i)) = ranked.pop()?;
            let (_, g, t, h) = cands[i];
            let (a, b, to_point) = ends(t, h);
            let (curve, curve_cost) = curves[i];
            if !priced[i] {
                priced[i] = true;
                if let Some(extra) = self.link_extra(a, b, to_point, curve) {
                    ranked.push(Reverse((OrdF64::new(g + (curve_cost + extra)), i)));
                }
                continue;
            }
            if self.link_free(a, b, to_point, curve) {
                return Some((c.get(), t, h));
            }
        }
    }

    /// The heading slots of index `u`: the allowed slots of a path point, slot 0 of the goal.
    fn slots(&self, u: usize) -> impl Iterator<Item = usize> + '_ {
        let is_goal = u == self.m() + 1;
        (0..if is_goal { 1 } else { self.nb }).filter(move |&h| is_goal || self.allowed[u * self.nb + h])
    }

    /// Forward costs `fwd[t][h]` with parents; the goal's best (cost, parent) if reached.
    ///
    /// `bound` is the cost of a chain known to exist (the start linked straight to the goal,
    /// which the goal's candidates include; `f64::INFINITY`: none): a state whose cost so far
    /// plus the least cost on to the goal (the straight distance) exceeds it lies on no cheaper
    /// chain, so it is left unreached and never ranked as a candidate again. The goal's best is
    /// then the same as without the bound; the costs of the states left unreached are not, so a
    /// caller repairing from them runs the programme unbounded.
    #[allow(clippy::type_complexity)]
    pub(super) fn forward(
        &self,
        bound: f64,
        should_stop: &mut dyn FnMut() -> bool,
    ) -> Option<(Vec<f64>, Vec<(usize, usize)>, Option<(f64, (usize, usize))>)> {
        let (m, nb, hops) = (self.m(), self.nb, self.hops);
        let mut cost = vec![f64::INFINITY; (m + 1) * nb];
        let mut parent = vec![NO_PARENT; (m + 1) * nb];
        let mut scratch = Scratch::default();
        for u in 1..=m + 1 {
            if should_stop() {
                return None;
            }
            let is_goal = u == m + 1;
            for h1 in self.slots(u) {
                let cands = &mut scratch.cands;
                cands.clear();
                let to = self.any_pose(u, h1);
                let to_point = is_goal && self.goal_free;
                if u <= self.start_reach || is_goal {
                    cands.push((straight(self.start.point(), to.point()), 0.0, 0, 0));
                }
                let first = if is_goal { self.goal_reach } else { u.saturating_sub(hops).max(1) };
                for t in first..u {
                    let d = straight(self.pose(t, 0).point(), to.point());
                    for h in 0..nb {
                        let g = cost[t * nb + h];
                        if g.is_finite() {
                            cands.push((d, g, t, h));
                        }
                    }
                }
                // The goal keeps its best, whatever it costs; a path point only a chain under
                // the bound (with a little slack for rounding: the bound's chain must not be
                // pruned away by its own cost).
                let limit = if is_goal {
                    f64::INFINITY
                } else {
                    let to_goal = straight(to.point(), self.goal.point());
                    bound * (1.0 + BOUND_SLACK) - self.ctx.params().motion().lower_bound(to_goal, None)
                };
                let ends = |t, h| (self.any_pose(t, h), to, to_point);
                if let Some((c, t, h)) = self.cheapest_free(&mut scratch, limit, ends) {
                    if is_goal {
                        return Some((cost, parent, Some((c, (t, h)))));
                    }
                    cost[u * nb + h1] = c;
                    parent[u * nb + h1] = (t, h);
                }
            }
        }
        Some((cost, parent, None))
    }

    /// Backward costs to go `bwd[t][h]` (to the goal) with successors.
    #[allow(clippy::type_complexity)]
    pub(super) fn backward(&self, should_stop: &mut dyn FnMut() -> bool) -> Option<(Vec<f64>, Vec<(usize, usize)>)> {
        let (m, nb, hops) = (self.m(), self.nb, self.hops);
        let mut cost = vec![f64::INFINITY; (m + 2) * nb];
        let mut next = vec![NO_PARENT; (m + 2) * nb];
        let mut scratch = Scratch::default();
        for t in (1..=m).rev() {
            if should_stop() {
                return None;
            }
            for h in self.slots(t) {
                let cands = &mut scratch.cands;
                cands.clear();
                let from = self.pose(t, h);
                if t >= self.goal_reach {
                    cands.push((straight(from.point(), self.goal.point()), 0.0, m + 1, 0));
                }
                for u in t + 1..=(t + hops).min(m) {
                    let d = straight(self.pose(u, 0).point(), from.point());
                    for h1 in 0..nb {
                        let rest = cost[u * nb + h1];
                        if rest.is_finite() {
                            cands.push((d, rest, u, h1));
                        }
                    }
                }
                let goal_free = self.goal_free;
                if let Some((c, u, h1)) = self.cheapest_free(&mut scratch, f64::INFINITY, |u, h1| {
                    (from, self.any_pose(u, h1), goal_free && u == m + 1)
                }) {
                    cost[t * nb + h] = c;
                    next[t * nb + h] = (u, h1);
                }
            }
        }
        Some((cost, next))
    }

    /// Poses from the start to forward state `(t, h)` (just the start for `t == 0`).
    pub(super) fn forward_chain(&self, parent: &[(usize, usize)], mut t: usize, mut h: usize) -> Vec<Pose2> {
        let mut out = Vec::new();
        while t != 0 {
            out.push(self.pose(t, h));
            (t, h) = parent[t * self.nb + h];
        }
        out.push(self.start);
        out.reverse();
        out
    }

    /// Poses from backward state `(t, h)` to the goal (just the goal for `t == m + 1`).
    pub(super) fn backward_chain(&self, next: &[(usize, usize)], mut t: usize, mut h: usize) -> Vec<Pose2> {
        let mut out = Vec::new();
        while t != self.m() + 1 {
            out.push(self.pose(t, h));
            (t, h) = next[t * self.nb + h];
        }
        out.push(self.goal);
        out
    }

    /// The `keep` cheapest headings of point `t` under `cost`, with their costs.
    pub(super) fn best_headings(&self, cost: &[f64], t: usize, keep: usize) -> Vec<(usize, f64)> {
        let mut v: Vec<(usize, f64)> =
            (0..self.nb).map(|h| (h, cost[t * self.nb + h])).filter(|(_, c)| c.is_finite()).collect();
        v.sort_by(|a, b| a.1.total_cmp(&b.1));
        v.truncate(keep);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::directional::HeadingBins;
    use crate::directional::RefineParams;
    use crate::grid::Grid;
    use std::f64::consts::{FRAC_PI_2, FRAC_PI_4, PI};

    /// The bound of [`PathDp::forward`] changes nothing it returns for the goal: on random
    /// costed maps, with the cost of the free start-to-goal curve as the bound, the goal's cost
    /// and chain are those of the unbounded programme, no state is reached that the unbounded one
    /// does not reach, and some are left unreached (else the bound would save nothing).
    #[test]
    fn the_bound_prunes_states_and_keeps_the_goals_best_chain() {
        use crate::costs::{CostField, CostRule};
        use crate::map::{MapInfo, OccupancyMap, Traversability};
        use crate::test_rng::splitmix;
        let (w, h) = (120usize, 60usize);
        let mut seed = 7u64;
        let (mut compared, mut pruned_some) = (0, false);
        for _ in 0..40 {
            // Pillars (lethal) and graded patches (occupancy 30-60) scattered over the map.
            let mut data = vec![0i8; w * h];
            for _ in 0..12 {
                let (cx, cy) = ((splitmix(&mut seed) * w as f64) as usize, (splitmix(&mut seed) * h as f64) as usize);
                let (value, r) =
                    if splitmix(&mut seed) < 0.5 { (100, 2) } else { (30 + (splitmix(&mut seed) * 30.0) as i8, 6) };
                for y in cy.saturating_sub(r)..(cy + r).min(h) {
                    for x in cx.saturating_sub(r)..(cx + r).min(w) {
                        data[y * w + x] = data[y * w + x].max(value);
                    }
                }
            }
            let blocked = data.iter().map(|&v| v >= 65).collect();
            let mut map = CollisionMap::new(&Grid::from_blocked(w, h, blocked).unwrap());
            let info = MapInfo::at_origin(w, h, 1.0);
            let occupancy = OccupancyMap::new(info, data, usize::MAX).unwrap();
            let traversability = Traversability { occupied_threshold: 65, allow_unknown: false };
            let rule = CostRule { cost_penalty: 3.0, preferred_clearance: 6.0, inscribed: 2.0, traversability };
            map.set_costs(Some(CostField::of_map(&occupancy, rule)));
            let params = RefineParams { turning_radius: 6.0, footprint_radius: 2.0, ..RefineParams::default() };
            let ctx = Directional::new(params).unwrap();
            let p = ctx.params();
            let yaw = |seed: &mut u64| (splitmix(seed) - 0.5) * 2.0 * PI;
            let start = Pose2::new(8.5, 10.5 + splitmix(&mut seed) * 40.0, yaw(&mut seed));
            let goal = Pose2::new(111.5, 10.5 + splitmix(&mut seed) * 40.0, yaw(&mut seed));
            let motion = p.motion();
            let Some(direct) = motion.link(start, goal, false) else { continue };
            if !map.stands_free(start, &p.shape())
                || !map.stands_free(goal, &p.shape())
                || !map.sweep_free(&direct, p.shape(), SEARCH_MARGIN)
            {
                continue;
            }
            let bound = motion.cost(&direct) + map.extra_cost(&direct);
            let near = p.spacing() as f64;
            let points = path_points(&[start.point(), goal.point()], near, 4.0 * near, 4.0 * near);
            let dp = PathDp::new(&ctx, &map, &points, Ends { start, goal, goal_free: false }, p.hops(), near);
            let (all, all_parent, all_goal) = dp.forward(f64::INFINITY, &mut || false).unwrap();
            let (some, some_parent, some_goal) = dp.forward(bound, &mut || false).unwrap();
            let ((c_all, (ta, ha)), (c_some, (ts, hs))) = (all_goal.unwrap(), some_goal.unwrap());
            assert!((c_all - c_some).abs() <= 1e-9 * c_all, "{c_all} {c_some}");
            assert!(c_some <= bound * (1.0 + 1e-9), "{c_some} above the bound {bound}");
            assert_eq!(dp.forward_chain(&all_parent, ta, ha), dp.forward_chain(&some_parent, ts, hs));
            assert!(all.iter().zip(&some).all(|(a, s)| a.is_finite() || !s.is_finite()));
            let reached = |cost: &[f64]| cost.iter().filter(|c| c.is_finite()).count();
            pruned_some |= reached(&some) < reached(&all);
            compared += 1;
        }
        assert!(compared >= 10, "only {compared} maps with a free direct curve");
        assert!(pruned_some, "the bound never pruned a state");
    }

    /// The allowed heading slots of each path point of a straight guide at `angle` (radians).
    fn slots_along(angle: f64) -> Vec<Vec<usize>> {
        let ctx = Directional::new(RefineParams::default()).unwrap();
        let map = CollisionMap::new(&Grid::new_free(200, 200).unwrap());
        let (a, b) = (Point2::new(20.5, 20.5), Point2::new(20.5 + 120.0 * angle.cos(), 20.5 + 120.0 * angle.sin()));
        let points = path_points(&[a, b], 5.0, 20.0, 25.0);
        let ends = Ends { start: Pose2::new(a.x, a.y, angle), goal: Pose2::new(b.x, b.y, angle), goal_free: false };
        let dp = PathDp::new(&ctx, &map, &points, ends, 5, 5.0);
        (1..=dp.m()).map(|t| dp.slots(t).collect()).collect()
    }

    #[test]
    fn heading_change_is_the_normalised_difference() {
        let mut seed = 3u64;
        let mut rnd = move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        for k in 0..20000 {
            // Mostly within [-pi, pi] (the fast path), sometimes beyond (the general one).
            let span = if k % 4 == 0 { 20.0 } else { 2.0 * PI };
            let (a, b) = ((rnd() - 0.5) * span, (rnd() - 0.5) * span);
            let expected = normalize_angle(b - a).abs();
            let got = heading_change(a, b);
            assert!((got - expected).abs() < 1e-12 && (0.0..=PI).contains(&got), "{a} {b}: {got} vs {expected}");
        }
        assert_eq!(heading_change(PI, -PI), 0.0);
        assert_eq!(heading_change(-FRAC_PI_2, FRAC_PI_2), PI);
    }

    #[test]
    fn the_guide_direction_is_a_slot_only_when_no_allowed_bin_has_it() {
        let guide_slot = HeadingBins::Eight.count();
        // Along a bin (axis-parallel or diagonal): the bin within 45 degrees on either side and
        // the bin itself, which is the guide's direction, so no extra slot.
        for (angle, bins) in [(0.0, [0, 1, 7]), (FRAC_PI_4, [0, 1, 2]), (PI, [3, 4, 5]), (-FRAC_PI_2, [5, 6, 7])] {
            for slots in slots_along(angle) {
                let mut slots = slots.clone();
                slots.sort();
                assert_eq!(slots, bins.to_vec(), "guide at {angle}");
            }
        }
        // Between bins: the two bins around it and the guide's own direction.
        for slots in slots_along(0.5) {
            assert_eq!(slots, vec![0, 1, guide_slot]);
        }
    }
}
