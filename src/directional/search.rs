//! Directional A* (Pinter 2001): A* over (lattice cell, heading bin) states whose edges are the
//! shortest curves between lattice poses, collision-checked by table look-ups only.
//!
//! Sources are either exact poses (the real start pose, not snapped to a cell centre or a heading
//! bin: its first edges are built and checked on the fly) or lattice states with a cost already
//! paid. The target is either an exact goal pose (heading given or free), joined from nearby
//! states by an on-the-fly curve, or a set of lattice states with a known cost to go (the window
//! repair of the pipeline). Goal links are checked lazily: a candidate enters the open list with
//! its exact cost and is collision-checked only when it comes out first, so the search never
//! pays for a link it would not use.

use super::chain::{curve_cost, link};
use super::footprint::{CollisionMap, SEARCH_MARGIN};
use super::lattice::{Lattice, LatticeRect, Neighbourhood};
use super::params::Directional;
use crate::geometry::{Point2, Pose2};
use crate::search::OrdF64;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// A lattice state: cell `(i, j)` and heading bin `h`.
pub type State = (i64, i64, usize);

/// Where a search may start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Source {
    /// An exact pose with cost 0.
    Pose(Pose2),
    /// A lattice state reached at cost `g`.
    State(State, f64),
}

/// What a search must reach.
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    /// An exact pose; with `free` the heading is not imposed.
    Pose {
        /// Goal pose (cell units).
        pose: Pose2,
        /// True when the goal heading is free.
        free: bool,
    },
    /// Any of these lattice states, each with the cost still to pay from it.
    States(&'a HashMap<State, f64>),
}

/// A found path.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// Poses from the source's pose to the end (the goal pose for a pose target, the reached
    /// target state's pose otherwise).
    pub poses: Vec<Pose2>,
    /// Index of the source the path starts from.
    pub source: usize,
    /// The target state reached (for a state target).
    pub target_state: Option<State>,
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
    /// The window holds no path (with the number of expansions made).
    NoPath(usize),
    /// `should_stop` asked to stop.
    Stopped,
}

const NONE: u32 = u32::MAX;
const SOURCE_BIT: u32 = 1 << 31;
/// Heap entry kinds.
const KIND_STATE: u8 = 0;
const KIND_GOAL: u8 = 1;

/// Runs Directional A* in `window` with `neighbourhood` edges on `map` (cell units).
///
/// `should_stop` is polled every 256 expansions. Returns [`Outcome::NoPath`] when nothing in the
/// window reaches the target, including when there is no source.
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
    let p = ctx.params();
    let bins = p.heading_bins;
    let nb = bins.count();
    let lattice = Lattice::new(map.width(), map.height(), p.spacing());
    let s = lattice.spacing;
    let radius = p.turning_radius;
    let fp = p.footprint_radius;
    let tp = p.turn_penalty;
    let (w, h) = (window.width(), window.height());
    if w == 0 || h == 0 {
        return Outcome::NoPath(0);
    }
    let n_states = (w * h) as usize * nb;
    let index = |i: i64, j: i64, b: usize| (((j - window.j0) * w + (i - window.i0)) as usize) * nb + b;
    let unindex = |k: usize| {
        let b = k % nb;
        let c = (k / nb) as i64;
        (c % w + window.i0, c / w + window.j0, b)
    };
    // Heuristic.
    let target_points: Vec<Point2> = match target {
        Target::Pose { .. } => Vec::new(),
        Target::States(m) => {
            let mut pts: Vec<(i64, i64)> = m.keys().map(|&(i, j, _)| (i, j)).collect();
            pts.sort_unstable();
            pts.dedup();
            pts.into_iter().map(|(i, j)| lattice.centre(i, j)).collect()
        }
    };
    let heuristic = |i: i64, j: i64, b: usize| -> f64 {
        match target {
            Target::Pose { pose, free } => ctx.heuristic().estimate(i, j, b, pose, free),
            Target::States(_) => {
                let c = lattice.centre(i, j);
                target_points.iter().map(|t| t.distance(c)).fold(f64::INFINITY, f64::min)
            }
        }
    };
    // Goal links from a lattice pose are tried only near the goal, where they are short.
    let connect_radius = (neighbourhood.reach() as f64 + 1.0) * s as f64 * std::f64::consts::SQRT_2 + 2.0 * radius;

    let mut g = vec![f64::INFINITY; n_states];
    let mut parent = vec![NONE; n_states];
    let mut closed = vec![false; n_states];
    let mut open: BinaryHeap<(Reverse<OrdF64>, u32, u8)> = BinaryHeap::new();
    // Goal candidates: (cost, from-state index or SOURCE_BIT | source, curve cost).
    let mut goal_candidates: Vec<(u32, f64)> = Vec::new();

    let push_goal_candidate =
        |open: &mut BinaryHeap<(Reverse<OrdF64>, u32, u8)>, from: u32, total: f64, cands: &mut Vec<(u32, f64)>| {
            cands.push((from, total));
            open.push((Reverse(OrdF64::new(total)), (cands.len() - 1) as u32, KIND_GOAL));
        };

    for (k, src) in sources.iter().enumerate() {
        match *src {
            Source::State((i, j, b), g0) => {
                if !window.contains(i, j) || b >= nb {
                    continue;
                }
                let idx = index(i, j, b);
                if g0 < g[idx] {
                    g[idx] = g0;
                    parent[idx] = SOURCE_BIT | k as u32;
                    open.push((Reverse(OrdF64::new(g0 + heuristic(i, j, b))), idx as u32, KIND_STATE));
                }
            }
            Source::Pose(pose) => {
                // Direct link to an exact goal.
                if let Target::Pose { pose: goal, free } = target {
                    if let Some(segs) = link(pose, goal, free, radius) {
                        push_goal_candidate(&mut open, SOURCE_BIT | k as u32, curve_cost(&segs, tp), &mut goal_candidates);
                    }
                }
                // First edges to the lattice poses around the exact pose, checked on the fly.
                let (ci, cj) = lattice.cell_of(pose.point());
                let reach = neighbourhood.reach();
                for dj in -reach..=reach {
                    for di in -reach..=reach {
                        let (i, j) = (ci + di, cj + dj);
                        if !window.contains(i, j) {
                            continue;
                        }
                        for b in 0..nb {
                            let Some(segs) = link(pose, lattice.pose(i, j, bins, b), false, radius) else { continue };
                            let cost = curve_cost(&segs, tp);
                            let idx = index(i, j, b);
                            if cost < g[idx] && map.sweep_free(&segs, fp, SEARCH_MARGIN) {
                                g[idx] = cost;
                                parent[idx] = SOURCE_BIT | k as u32;
                                open.push((Reverse(OrdF64::new(cost + heuristic(i, j, b))), idx as u32, KIND_STATE));
                            }
                        }
                    }
                }
            }
        }
    }

    let offsets = neighbourhood.offsets();
    let mut expansions = 0usize;
    let mut tried_goal_link = vec![false; 0];
    if matches!(target, Target::Pose { .. }) {
        tried_goal_link = vec![false; n_states];
    }
    while let Some((_, id, kind)) = open.pop() {
        if kind == KIND_GOAL {
            let (from, total) = goal_candidates[id as usize];
            // Collision-check the link only now that it is the cheapest thing left.
            let (from_pose, target_state) = if from & SOURCE_BIT != 0 {
                match sources[(from & !SOURCE_BIT) as usize] {
                    Source::Pose(p) => (p, None),
                    Source::State((i, j, b), _) => (lattice.pose(i, j, bins, b), Some((i, j, b))),
                }
            } else {
                let (i, j, b) = unindex(from as usize);
                (lattice.pose(i, j, bins, b), Some((i, j, b)))
            };
            let ok = match target {
                Target::Pose { pose, free } => {
                    link(from_pose, pose, free, radius).is_some_and(|segs| map.sweep_free(&segs, fp, SEARCH_MARGIN))
                }
                Target::States(_) => true,
            };
            if !ok {
                continue;
            }
            // Rebuild the chain of poses.
            let mut poses = Vec::new();
            let mut cur = from;
            let source;
            loop {
                if cur & SOURCE_BIT != 0 {
                    source = (cur & !SOURCE_BIT) as usize;
                    if let Source::Pose(p) = sources[source] {
                        poses.push(p);
                    }
                    break;
                }
                let (i, j, b) = unindex(cur as usize);
                poses.push(lattice.pose(i, j, bins, b));
                cur = parent[cur as usize];
            }
            poses.reverse();
            let target_state = match target {
                Target::Pose { pose, .. } => {
                    poses.push(pose);
                    None
                }
                Target::States(_) => target_state,
            };
            return Outcome::Found(Found { poses, source, target_state, cost: total, expansions });
        }
        let idx = id as usize;
        if closed[idx] {
            continue;
        }
        closed[idx] = true;
        expansions += 1;
        if expansions % 256 == 0 && should_stop() {
            return Outcome::Stopped;
        }
        let (i, j, b) = unindex(idx);
        let gi = g[idx];
        match target {
            Target::Pose { pose, free } => {
                let here = lattice.pose(i, j, bins, b);
                if !tried_goal_link[idx] && here.point().distance(pose.point()) <= connect_radius {
                    tried_goal_link[idx] = true;
                    if let Some(segs) = link(here, pose, free, radius) {
                        push_goal_candidate(&mut open, idx as u32, gi + curve_cost(&segs, tp), &mut goal_candidates);
                    }
                }
            }
            Target::States(m) => {
                if let Some(&to_go) = m.get(&(i, j, b)) {
                    push_goal_candidate(&mut open, idx as u32, gi + to_go, &mut goal_candidates);
                }
            }
        }
        let (bx, by) = (i * s, j * s);
        for &(dx, dy) in &offsets {
            let (ni, nj) = (i + dx, j + dy);
            if !window.contains(ni, nj) {
                continue;
            }
            for nb_h in 0..nb {
                let Some(e) = ctx.edges().edge(b, nb_h, dx, dy) else { continue };
                let ng = gi + e.length + tp * e.turning;
                let nidx = index(ni, nj, nb_h);
                if ng >= g[nidx] || closed[nidx] {
                    continue;
                }
                if !map.spans_free(&e.spans, bx, by) {
                    continue;
                }
                g[nidx] = ng;
                parent[nidx] = idx as u32;
                open.push((Reverse(OrdF64::new(ng + heuristic(ni, nj, nb_h))), nidx as u32, KIND_STATE));
            }
        }
    }
    Outcome::NoPath(expansions)
}
