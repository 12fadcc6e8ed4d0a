//! Directional A* (Pinter 2001): A* over (lattice cell, heading bin) states whose edges are the
//! shortest curves between lattice poses, collision-checked by table look-ups only.
//!
//! With reversing ([`super::MotionModel::ReedsShepp`]) a state also holds the gear it was reached
//! in, and every state has edges in both gears (the table's reverse edges: the vehicle turned
//! round, driven backwards), a reverse edge's length priced by `reverse_penalty`, and an edge
//! in the other gear than the state's pays `change_penalty` (a cusp at the state). First edges and
//! goal links are the model's curves (cheapest Reeds-Shepp words), priced the same way.
//!
//! Sources are exact poses (the real start pose, not snapped to a cell centre or a heading bin,
//! or a pose reached earlier at some cost): their first edges to the lattice poses around them
//! are built on the fly. Targets are exact poses too (the goal, heading given or free, or poses
//! with a known cost to go, for the window repair of the pipeline), joined from nearby states by
//! an on-the-fly curve. First edges and goal links are checked lazily: a candidate enters the
//! open list with its length's cost and is collision-checked only when it comes out first, so the
//! search never pays for a link it would not use. With traversal costs, the cost integral along
//! such a link is priced lazily too: the link enters with its length (a lower bound: the integral
//! is never negative), and the first time it comes out first its integral is added and it goes
//! back in; only when it comes out first again, at its exact cost, is it checked. A real start's
//! first edges are a few thousand curves of up to several metres, so pricing them all up front
//! was most of a short search.

use super::footprint::{CollisionMap, SEARCH_MARGIN};
use super::lattice::{Lattice, LatticeRect, Neighbourhood};
use super::motion::{Gear, Motion, Priced};
use super::params::Directional;
use crate::geometry::{Point2, Pose2};
use crate::search::poll::StopPoll;
use crate::search::OrdF64;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Where a search may start: an exact pose already reached at cost `g`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Source {
    /// The pose (cell units).
    pub pose: Pose2,
    /// Cost already paid to reach it.
    pub g: f64,
    /// First edges reach as far as goal links (for the real start, whose heading may need a
    /// loop); otherwise only the neighbourhood around it.
    pub wide: bool,
}

/// A pose the search may end at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TargetPose {
    /// The pose (cell units).
    pub pose: Pose2,
    /// Cost still to pay from it.
    pub cost_to_go: f64,
    /// True when its heading is free (the last link is arc-then-line).
    pub free: bool,
}

/// What a search must reach.
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    /// The exact goal; with `free` the heading is not imposed. The heuristic table guides.
    Pose {
        /// Goal pose (cell units).
        pose: Pose2,
        /// True when the goal heading is free.
        free: bool,
    },
    /// Any of these poses; the heuristic is the distance plus cost to go of the nearest.
    Poses(&'a [TargetPose]),
}

/// A found path.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// Poses from the source's pose to the target's pose.
    pub poses: Vec<Pose2>,
    /// Per link, the gear of a lattice edge (`None` for a first edge or a goal link: the
    /// model's curve), as [`super::chain::PoseChain::gears`].
    pub gears: Vec<Option<Gear>>,
    /// Index of the source the path starts from.
    pub source: usize,
    /// Index of the target reached (0 for [`Target::Pose`]).
    pub target: usize,
    /// Total cost including the source's cost and the target's cost to go.
    pub cost: f64,
    /// States expanded.
    pub expansions: usize,
}

/// How a search ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A path was found.
    Found(Found),
    /// The window holds no path (with the number of expansions made); the window or the cost
    /// bound cut the search, so a wider search might still find one.
    NoPath(usize),
    /// No path exists on the whole lattice: every state reachable from the sources was
    /// expanded, and none of them had a collision-free edge leaving the window (with the number
    /// of expansions made). A larger window would expand exactly the same states.
    Exhausted(usize),
    /// `should_stop` asked to stop.
    Stopped,
}

const NONE: u32 = u32::MAX;
const SOURCE_BIT: u32 = 1 << 31;
const KIND_STATE: u8 = 0;
const KIND_GOAL: u8 = 1;
const KIND_START: u8 = 2;
/// A first edge to a lattice pose outside the window: only checked, to learn whether the window
/// cut the search.
const KIND_OUTSIDE: u8 = 3;

type Open = BinaryHeap<(Reverse<OrdF64>, u32, u8)>;

/// A first edge or a goal link waiting in the open list (see [`Search::start_candidates`] and
/// [`Search::goal_candidates`]).
#[derive(Debug, Clone, Copy)]
struct Candidate {
    from: u32,
    to: u32,
    cost: f64,
    /// False while the cost holds only the link's length (and penalties), not yet the traversal
    /// cost integral along it.
    priced: bool,
}

/// Open-list entries taken (or links priced while seeding) between two polls of `should_stop`:
/// one expansion with a polygon footprint sweeps up to 48 links, tens of microseconds, so a
/// few of them already make a millisecond.
const STOP_POLL_PERIOD: u32 = 16;

/// Runs Directional A* in `window` with `neighbourhood` edges on `map` (cell units).
///
/// `should_stop` is polled every `STOP_POLL_PERIOD` open-list entries taken (stale ones
/// included) or first links priced. Returns [`Outcome::NoPath`] when nothing in
/// the window reaches a target, including when there is no source or no target.
#[allow(clippy::too_many_arguments)]
pub fn directional_astar(
    ctx: &Directional,
    map: &CollisionMap,
    window: LatticeRect,
    neighbourhood: Neighbourhood,
    sources: &[Source],
    target: Target<'_>,
    should_stop: &mut dyn FnMut() -> bool,
) -> Outcome {
    directional_astar_below(ctx, map, window, neighbourhood, sources, target, f64::INFINITY, should_stop)
}

/// [`directional_astar`] looking only for paths cheaper than `bound` (a cost already in hand):
/// it stops with [`Outcome::NoPath`] as soon as the cheapest open entry's estimate reaches the
/// bound, so a search that cannot improve on a known path ends early.
#[allow(clippy::too_many_arguments)]
pub fn directional_astar_below(
    ctx: &Directional,
    map: &CollisionMap,
    window: LatticeRect,
    neighbourhood: Neighbourhood,
    sources: &[Source],
    target: Target<'_>,
    bound: f64,
    should_stop: &mut dyn FnMut() -> bool,
) -> Outcome {
    if window.width() == 0 || window.height() == 0 {
        return Outcome::NoPath(0);
    }
    let single;
    let targets: &[TargetPose] = match target {
        Target::Pose { pose, free } => {
            single = [TargetPose { pose, cost_to_go: 0.0, free }];
            &single
        }
        Target::Poses(t) => t,
    };
    let mut search = Search::new(ctx, map, window, neighbourhood, sources, targets, target);
    let mut poll = StopPoll::new(STOP_POLL_PERIOD, should_stop);
    if search.seed(&mut poll) {
        return Outcome::Stopped;
    }
    search.run(bound, &mut poll)
}

/// One Directional A* search: the problem, its state arrays and its open list. The open list
/// holds four kinds of entry, each handled by its own method: lattice states ([`Search::expand`]),
/// first edges from a source ([`Search::start_edge`]), links to a target ([`Search::goal_link`])
/// and first edges leaving the window ([`Search::outside_edge`]).
struct Search<'a> {
    ctx: &'a Directional,
    map: &'a CollisionMap,
    window: LatticeRect,
    /// The neighbourhood's edge offsets (lattice cells).
    offsets: Vec<(i64, i64)>,
    sources: &'a [Source],
    targets: &'a [TargetPose],
    target: Target<'a>,
    lattice: Lattice,
    /// Heading bins per cell.
    nb: usize,
    /// The motion model and its prices.
    motion: Motion,
    /// The gears a state may be reached in (one forwards, two with reversing).
    gears: &'static [Gear],
    /// Distinct target positions with their smallest cost to go, for the heuristic.
    target_points: Vec<(Point2, f64)>,
    /// Goal links from a lattice pose are tried only near a target, where they are short; the
    /// real start's first edges reach as far.
    connect_radius: f64,
    /// How far the first edges of a narrow source reach.
    narrow_radius: f64,
    g: Vec<f64>,
    parent: Vec<u32>,
    closed: Vec<bool>,
    /// Per heading bin: whether the table entries an expansion facing it looks up are filled
    /// ([`Search::fill_row`]).
    rows_filled: Vec<bool>,
    tried_goal_link: Vec<bool>,
    open: Open,
    /// Goal candidates: from-state index or SOURCE_BIT | source, target, total cost, and
    /// whether the link's cost integral is in it.
    goal_candidates: Vec<Candidate>,
    /// Start candidates: source, state index, cost so far, and whether the first edge's cost
    /// integral is in it; the state's gear is the first edge's last.
    start_candidates: Vec<Candidate>,
    /// First edges leaving the window: (source, lattice pose).
    outside_candidates: Vec<(u32, Pose2)>,
    /// Whether the window (or the bound) kept the search from something it could have reached.
    clipped: bool,
    expansions: usize,
}

impl<'a> Search<'a> {
    fn new(
        ctx: &'a Directional,
        map: &'a CollisionMap,
        window: LatticeRect,
        neighbourhood: Neighbourhood,
        sources: &'a [Source],
        targets: &'a [TargetPose],
        target: Target<'a>,
    ) -> Self {
        let p = ctx.params();
        let nb = p.heading_bins.count();
        let lattice = Lattice::new(map.width(), map.height(), p.spacing());
        let s = lattice.spacing as f64;
        let mut target_points: Vec<(Point2, f64)> = Vec::new();
        for t in targets {
            match target_points.iter_mut().find(|(q, _)| q.distance(t.pose.point()) < 1e-9) {
                Some(e) => e.1 = e.1.min(t.cost_to_go),
                None => target_points.push((t.pose.point(), t.cost_to_go)),
            }
        }
        let reach = neighbourhood.reach() as f64;
        let gears = p.motion_model.gears();
        let n_states = (window.width() * window.height()) as usize * nb * gears.len();
        Self {
            ctx,
            map,
            window,
            offsets: neighbourhood.offsets(),
            sources,
            targets,
            target,
            lattice,
            nb,
            motion: p.motion(),
            gears,
            target_points,
            connect_radius: (reach + 1.0) * s * std::f64::consts::SQRT_2 + 2.0 * p.turning_radius,
            narrow_radius: (reach + 0.5) * s * std::f64::consts::SQRT_2,
            g: vec![f64::INFINITY; n_states],
            parent: vec![NONE; n_states],
            closed: vec![false; n_states],
            rows_filled: vec![false; nb],
            tried_goal_link: vec![false; n_states],
            open: BinaryHeap::new(),
            goal_candidates: Vec::new(),
            start_candidates: Vec::new(),
            outside_candidates: Vec::new(),
            clipped: false,
            expansions: 0,
        }
    }

    fn index(&self, i: i64, j: i64, b: usize, gear: Gear) -> usize {
        let w = self.window.width();
        let g = if gear == Gear::Reverse { 1 } else { 0 };
        ((((j - self.window.j0) * w + (i - self.window.i0)) as usize) * self.nb + b) * self.gears.len() + g
    }

    fn unindex(&self, k: usize) -> (i64, i64, usize, Gear) {
        let w = self.window.width();
        let ng = self.gears.len();
        let gear = self.gears[k % ng];
        let k = k / ng;
        let c = (k / self.nb) as i64;
        (c % w + self.window.i0, c / w + self.window.j0, k % self.nb, gear)
    }

    fn pose(&self, i: i64, j: i64, b: usize) -> Pose2 {
        self.lattice.pose(i, j, self.ctx.params().heading_bins, b)
    }

    fn heuristic(&self, i: i64, j: i64, b: usize) -> f64 {
        match self.target {
            Target::Pose { pose, free } => self.ctx.heuristic().estimate(i, j, b, pose, free),
            Target::Poses(_) => {
                let c = self.lattice.centre(i, j);
                self.target_points.iter().map(|(t, ctg)| t.distance(c) + ctg).fold(f64::INFINITY, f64::min)
            }
        }
    }

    /// The traversal cost along the model's curve from `a` to `b` above its length (0 without
    /// costs): what [`Motion::price`], from the curve's length alone, leaves out, so that price
    /// is a lower bound a candidate can enter the open list with.
    fn link_extra(&self, a: Pose2, b: Pose2, to_point: bool) -> f64 {
        if self.map.costs().is_none() {
            return 0.0;
        }
        self.motion.link(a, b, to_point).map_or(0.0, |segs| self.map.extra_cost(&segs))
    }

    /// True when a candidate link's cost from its length is already exact: no traversal costs.
    fn no_costs(&self) -> bool {
        self.map.costs().is_none()
    }

    /// True when the model's curve from `a` to `b` (its point only when `to_point`) is
    /// collision-free.
    fn link_free(&self, a: Pose2, b: Pose2, to_point: bool) -> bool {
        let shape = self.ctx.params().shape();
        self.motion.link(a, b, to_point).is_some_and(|segs| self.map.sweep_free(&segs, shape, SEARCH_MARGIN))
    }

    fn push_goal(&mut self, from: u32, t: usize, total: f64) {
        let priced = self.no_costs();
        self.goal_candidates.push(Candidate { from, to: t as u32, cost: total, priced });
        let id = (self.goal_candidates.len() - 1) as u32;
        self.open.push((Reverse(OrdF64::new(total)), id, KIND_GOAL));
    }

    /// The open list's first entries, from every source: direct links to nearby targets, and
    /// first edges to the lattice poses around it (those outside the window only to learn whether
    /// the window cuts the search). All enter unchecked, at their length's cost (exact without
    /// traversal costs, else priced when they first come out).
    fn seed(&mut self, poll: &mut StopPoll<impl FnMut() -> bool>) -> bool {
        let s = self.lattice.spacing as f64;
        for (k, src) in self.sources.iter().enumerate() {
            for (ti, t) in self.targets.iter().enumerate() {
                if poll.stop() {
                    return true;
                }
                if src.pose.point().distance(t.pose.point()) <= self.connect_radius {
                    if let Some(c) = self.motion.price(src.pose, t.pose, t.free) {
                        self.push_goal(SOURCE_BIT | k as u32, ti, src.g + c.cost + t.cost_to_go);
                    }
                }
            }
            let rad = if src.wide { self.connect_radius } else { self.narrow_radius };
            let (ci, cj) = self.lattice.cell_of(src.pose.point());
            let cells = (rad / s).ceil() as i64;
            for dj in -cells..=cells {
                for di in -cells..=cells {
                    let (i, j) = (ci + di, cj + dj);
                    if self.lattice.centre(i, j).distance(src.pose.point()) > rad {
                        continue;
                    }
                    let inside = self.window.contains(i, j);
                    if !inside && !self.lattice.contains(i, j) {
                        continue;
                    }
                    for b in 0..self.nb {
                        if poll.stop() {
                            return true;
                        }
                        let pose = self.pose(i, j, b);
                        let Some(Priced { cost: c, last, .. }) = self.motion.price(src.pose, pose, false) else {
                            continue;
                        };
                        let f = src.g + c + self.heuristic(i, j, b);
                        if inside {
                            // The state of the edge's last gear; a first edge that does not move
                            // (the source is this lattice pose) may go on in either gear.
                            for &gear in self.gears.iter().filter(|&&g| last.is_none_or(|l| l == g)) {
                                let to = self.index(i, j, b, gear) as u32;
                                let priced = self.no_costs();
                                self.start_candidates.push(Candidate { from: k as u32, to, cost: src.g + c, priced });
                                let id = (self.start_candidates.len() - 1) as u32;
                                self.open.push((Reverse(OrdF64::new(f)), id, KIND_START));
                            }
                        } else {
                            self.outside_candidates.push((k as u32, pose));
                            let id = (self.outside_candidates.len() - 1) as u32;
                            self.open.push((Reverse(OrdF64::new(f)), id, KIND_OUTSIDE));
                        }
                    }
                }
            }
        }
        false
    }

    /// Takes entries off the open list until a target is reached, the bound is met, the open
    /// list runs dry, or `poll` says stop.
    fn run(mut self, bound: f64, poll: &mut StopPoll<impl FnMut() -> bool>) -> Outcome {
        while let Some((Reverse(f), id, kind)) = self.open.pop() {
            // A priced link to a target is tried even when the poll says stop: it may be the answer.
            let answer = kind == KIND_GOAL && self.goal_candidates[id as usize].priced;
            if poll.stop() && !answer {
                return Outcome::Stopped;
            }
            if f.get() >= bound {
                self.clipped = true;
                break;
            }
            match kind {
                KIND_OUTSIDE => self.outside_edge(id as usize),
                KIND_START => self.start_edge(id as usize, f),
                KIND_GOAL if !self.goal_candidates[id as usize].priced => self.price_goal_link(id as usize, f),
                KIND_GOAL => {
                    if let Some(found) = self.goal_link(id as usize) {
                        return Outcome::Found(found);
                    }
                }
                _ => {
                    let idx = id as usize;
                    if self.closed[idx] {
                        continue;
                    }
                    let b = self.unindex(idx).2;
                    if !self.rows_filled[b] {
                        if self.fill_row(b, poll) {
                            return Outcome::Stopped;
                        }
                        self.rows_filled[b] = true;
                    }
                    self.closed[idx] = true;
                    self.expansions += 1;
                    self.expand(idx);
                }
            }
        }
        if self.clipped {
            Outcome::NoPath(self.expansions)
        } else {
            Outcome::Exhausted(self.expansions)
        }
    }

    /// A first edge leaving the window: if it is free, the window cut the search.
    fn outside_edge(&mut self, id: usize) {
        if !self.clipped {
            let (k, pose) = self.outside_candidates[id];
            self.clipped = self.link_free(self.sources[k as usize].pose, pose, false);
        }
    }

    /// A first edge from a source into the window, checked now that it is the cheapest entry: a
    /// free one opens its state.
    fn start_edge(&mut self, id: usize, f: OrdF64) {
        let Candidate { from: k, to: idx, cost, priced } = self.start_candidates[id];
        let idx = idx as usize;
        if self.closed[idx] || cost >= self.g[idx] {
            return;
        }
        let (i, j, b, _) = self.unindex(idx);
        if !priced {
            // Its cost integral, then back in at its exact cost.
            let extra = self.link_extra(self.sources[k as usize].pose, self.pose(i, j, b), false);
            let c = &mut self.start_candidates[id];
            (c.cost, c.priced) = (cost + extra, true);
            self.open.push((Reverse(OrdF64::new(f.get() + extra)), id as u32, KIND_START));
            return;
        }
        if self.link_free(self.sources[k as usize].pose, self.pose(i, j, b), false) {
            self.g[idx] = cost;
            self.parent[idx] = SOURCE_BIT | k;
            self.open.push((Reverse(f), idx as u32, KIND_STATE));
        }
    }

    /// The pose a goal candidate's link leaves from: a source's, or a lattice state's.
    fn link_origin(&self, from: u32) -> Pose2 {
        if from & SOURCE_BIT != 0 {
            self.sources[(from & !SOURCE_BIT) as usize].pose
        } else {
            let (i, j, b, _) = self.unindex(from as usize);
            self.pose(i, j, b)
        }
    }

    /// A link to a target that came out first at its length's cost: its cost integral added, it
    /// goes back in at its exact cost.
    fn price_goal_link(&mut self, id: usize, f: OrdF64) {
        let Candidate { from, to: ti, cost, .. } = self.goal_candidates[id];
        let t = self.targets[ti as usize];
        let extra = self.link_extra(self.link_origin(from), t.pose, t.free);
        let c = &mut self.goal_candidates[id];
        (c.cost, c.priced) = (cost + extra, true);
        self.open.push((Reverse(OrdF64::new(f.get() + extra)), id as u32, KIND_GOAL));
    }

    /// A link to a target, checked now that it is the cheapest entry at its exact cost: a free
    /// one ends the search with the path it closes.
    fn goal_link(&mut self, id: usize) -> Option<Found> {
        let Candidate { from, to: ti, cost: total, .. } = self.goal_candidates[id];
        let t = self.targets[ti as usize];
        let from_pose = self.link_origin(from);
        if !self.link_free(from_pose, t.pose, t.free) {
            return None;
        }
        let mut poses = vec![t.pose];
        // The goal link is the model's curve; so is a first edge (its parent is a source).
        let mut gears = vec![None];
        let mut cur = from;
        let source = loop {
            if cur & SOURCE_BIT != 0 {
                let k = (cur & !SOURCE_BIT) as usize;
                poses.push(self.sources[k].pose);
                break k;
            }
            let (i, j, b, gear) = self.unindex(cur as usize);
            poses.push(self.pose(i, j, b));
            cur = self.parent[cur as usize];
            gears.push(if cur & SOURCE_BIT != 0 { None } else { Some(gear) });
        };
        poses.reverse();
        gears.reverse();
        Some(Found { poses, gears, source, target: ti as usize, cost: total, expansions: self.expansions })
    }

    /// Fills the table entries an expansion of a state facing bin `b` looks up (every gear,
    /// offset and heading), polling after each entry it fills: with new parameters each takes a
    /// fraction of a millisecond and an expansion looks up hundreds, so a cancel would otherwise
    /// wait for all of them. True when the poll said stop. (With the table filled, each row is
    /// checked once per search.)
    fn fill_row(&self, b: usize, poll: &mut StopPoll<impl FnMut() -> bool>) -> bool {
        let edges = self.ctx.edges();
        for &gear in self.gears {
            for &(dx, dy) in &self.offsets {
                for h in 0..self.nb {
                    if !edges.is_filled(gear, b, h, dx, dy) {
                        let _ = edges.edge_in(gear, b, h, dx, dy);
                        if poll.stop_now() {
                            return true;
                        }
                    }
                }
            }
        }
        false
    }

    /// Expands state `idx`: its links to nearby targets (once), then its tabulated edges in
    /// every gear, each checked by the table's swept cells; an edge leaving the window only marks
    /// the search as cut when it is free.
    fn expand(&mut self, idx: usize) {
        let (i, j, b, gear) = self.unindex(idx);
        let gi = self.g[idx];
        if !self.tried_goal_link[idx] {
            self.tried_goal_link[idx] = true;
            let here = self.pose(i, j, b);
            for (ti, t) in self.targets.iter().enumerate() {
                if here.point().distance(t.pose.point()) <= self.connect_radius {
                    if let Some(c) = self.motion.price(here, t.pose, t.free) {
                        let total = gi + c.cost + self.motion.change_to(gear, c.first) + t.cost_to_go;
                        self.push_goal(idx as u32, ti, total);
                    }
                }
            }
        }
        let s = self.lattice.spacing;
        let (bx, by) = (i * s, j * s);
        let tp = self.motion.turn_penalty;
        let edges = self.ctx.edges();
        for &next_gear in self.gears {
            let factor = self.motion.gear_factor(next_gear);
            let change = self.motion.change(gear, next_gear);
            for k in 0..self.offsets.len() {
                let (dx, dy) = self.offsets[k];
                let (ni, nj) = (i + dx, j + dy);
                if !self.window.contains(ni, nj) {
                    if !self.clipped && self.lattice.contains(ni, nj) {
                        let map = self.map;
                        self.clipped = (0..self.nb).any(|h| {
                            edges.edge_in(next_gear, b, h, dx, dy).is_some_and(|e| map.spans_free(&e.spans, bx, by))
                        });
                    }
                    continue;
                }
                for heading in 0..self.nb {
                    let Some(e) = edges.edge_in(next_gear, b, heading, dx, dy) else { continue };
                    let nidx = self.index(ni, nj, heading, next_gear);
                    // The edge's cost integral (>= 0) is read only when the edge can still win
                    // without it. (Priced lazily instead, as first edges are, the edges of a
                    // search over a wide area crowd the open list: measured slower.)
                    let unpriced = gi + e.length * factor + tp * e.turning + change;
                    if self.closed[nidx] || unpriced >= self.g[nidx] {
                        continue;
                    }
                    let ng = unpriced + self.map.costs().map_or(0.0, |c| c.extra_cells(&e.centre, bx, by));
                    if ng >= self.g[nidx] {
                        continue;
                    }
                    if !self.map.spans_free(&e.spans, bx, by) {
                        continue;
                    }
                    self.g[nidx] = ng;
                    self.parent[nidx] = idx as u32;
                    let f = ng + self.heuristic(ni, nj, heading);
                    self.open.push((Reverse(OrdF64::new(f)), nidx as u32, KIND_STATE));
                }
            }
        }
    }
}
