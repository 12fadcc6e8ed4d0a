//! Directional A* (Pinter 2001): A* over (lattice cell, heading bin) states whose edges are the
//! shortest curves between lattice poses, collision-checked by table look-ups only.
//!
//! Sources are exact poses (the real start pose, not snapped to a cell centre or a heading bin,
//! or a pose reached earlier at some cost): their first edges to the lattice poses around them
//! are built on the fly. Targets are exact poses too (the goal, heading given or free, or poses
//! with a known cost to go, for the window repair of the pipeline), joined from nearby states by
//! an on-the-fly curve. First edges and goal links are checked lazily: a candidate enters the
//! open list with its exact cost and is collision-checked only when it comes out first, so the
//! search never pays for a link it would not use.

use super::chain::{link, link_cost_estimate};
use super::footprint::{CollisionMap, SEARCH_MARGIN};
use super::lattice::{Lattice, LatticeRect, Neighbourhood};
use super::params::Directional;
use crate::geometry::{Point2, Pose2};
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

/// Runs Directional A* in `window` with `neighbourhood` edges on `map` (cell units).
///
/// `should_stop` is polled every 256 expansions. Returns [`Outcome::NoPath`] when nothing in the
/// window reaches a target, including when there is no source or no target.
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
    let p = ctx.params();
    let bins = p.heading_bins;
    let nb = bins.count();
    let lattice = Lattice::new(map.width(), map.height(), p.spacing());
    let s = lattice.spacing;
    let radius = p.turning_radius;
    let fp = p.shape();
    let tp = p.turn_penalty;
    let (w, h) = (window.width(), window.height());
    if w == 0 || h == 0 {
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
    let n_states = (w * h) as usize * nb;
    let index = |i: i64, j: i64, b: usize| (((j - window.j0) * w + (i - window.i0)) as usize) * nb + b;
    let unindex = |k: usize| {
        let b = k % nb;
        let c = (k / nb) as i64;
        (c % w + window.i0, c / w + window.j0, b)
    };
    // Distinct target positions with their smallest cost to go, for the heuristic.
    let mut target_points: Vec<(Point2, f64)> = Vec::new();
    for t in targets {
        match target_points.iter_mut().find(|(q, _)| q.distance(t.pose.point()) < 1e-9) {
            Some(e) => e.1 = e.1.min(t.cost_to_go),
            None => target_points.push((t.pose.point(), t.cost_to_go)),
        }
    }
    let heuristic = |i: i64, j: i64, b: usize| -> f64 {
        match target {
            Target::Pose { pose, free } => ctx.heuristic().estimate(i, j, b, pose, free),
            Target::Poses(_) => {
                let c = lattice.centre(i, j);
                target_points.iter().map(|(t, ctg)| t.distance(c) + ctg).fold(f64::INFINITY, f64::min)
            }
        }
    };
    // Goal links from a lattice pose are tried only near a target, where they are short; the
    // real start's first edges reach as far.
    let reach = neighbourhood.reach() as f64;
    let connect_radius = (reach + 1.0) * s as f64 * std::f64::consts::SQRT_2 + 2.0 * radius;
    let narrow_radius = (reach + 0.5) * s as f64 * std::f64::consts::SQRT_2;

    let mut g = vec![f64::INFINITY; n_states];
    let mut parent = vec![NONE; n_states];
    let mut closed = vec![false; n_states];
    let mut open: Open = BinaryHeap::new();
    // Goal candidates: (from-state index or SOURCE_BIT | source, target, total cost).
    let mut goal_candidates: Vec<(u32, u32, f64)> = Vec::new();
    // Start candidates: (source, state index, cost so far).
    let mut start_candidates: Vec<(u32, u32, f64)> = Vec::new();
    // First edges leaving the window: (source, lattice pose).
    let mut outside_candidates: Vec<(u32, Pose2)> = Vec::new();
    // Whether the window (or the bound) kept the search from something it could have reached.
    let mut clipped = false;
    let push_goal = |open: &mut Open, cands: &mut Vec<(u32, u32, f64)>, from: u32, t: usize, total: f64| {
        cands.push((from, t as u32, total));
        open.push((Reverse(OrdF64::new(total)), (cands.len() - 1) as u32, KIND_GOAL));
    };

    for (k, src) in sources.iter().enumerate() {
        for (ti, t) in targets.iter().enumerate() {
            if src.pose.point().distance(t.pose.point()) <= connect_radius {
                if let Some(c) = link_cost_estimate(src.pose, t.pose, t.free, radius, tp) {
                    let total = src.g + c + t.cost_to_go;
                    push_goal(&mut open, &mut goal_candidates, SOURCE_BIT | k as u32, ti, total);
                }
            }
        }
        let rad = if src.wide { connect_radius } else { narrow_radius };
        let (ci, cj) = lattice.cell_of(src.pose.point());
        let cells = (rad / s as f64).ceil() as i64;
        for dj in -cells..=cells {
            for di in -cells..=cells {
                let (i, j) = (ci + di, cj + dj);
                if lattice.centre(i, j).distance(src.pose.point()) > rad {
                    continue;
                }
                if !window.contains(i, j) {
                    if lattice.contains(i, j) {
                        for b in 0..nb {
                            let pose = lattice.pose(i, j, bins, b);
                            if let Some(c) = link_cost_estimate(src.pose, pose, false, radius, tp) {
                                outside_candidates.push((k as u32, pose));
                                let f = src.g + c + heuristic(i, j, b);
                                let id = (outside_candidates.len() - 1) as u32;
                                open.push((Reverse(OrdF64::new(f)), id, KIND_OUTSIDE));
                            }
                        }
                    }
                    continue;
                }
                for b in 0..nb {
                    let Some(c) = link_cost_estimate(src.pose, lattice.pose(i, j, bins, b), false, radius, tp) else {
                        continue;
                    };
                    let cost = src.g + c;
                    start_candidates.push((k as u32, index(i, j, b) as u32, cost));
                    let f = cost + heuristic(i, j, b);
                    open.push((Reverse(OrdF64::new(f)), (start_candidates.len() - 1) as u32, KIND_START));
                }
            }
        }
    }

    let offsets = neighbourhood.offsets();
    let mut expansions = 0usize;
    let mut tried_goal_link = vec![false; n_states];
    while let Some((Reverse(f), id, kind)) = open.pop() {
        if f.get() >= bound {
            clipped = true;
            break;
        }
        if kind == KIND_OUTSIDE {
            if !clipped {
                let (k, pose) = outside_candidates[id as usize];
                clipped = link(sources[k as usize].pose, pose, false, radius)
                    .is_some_and(|segs| map.sweep_free(&segs, fp, SEARCH_MARGIN));
            }
            continue;
        }
        if kind == KIND_START {
            let (k, idx, cost) = start_candidates[id as usize];
            let idx = idx as usize;
            if closed[idx] || cost >= g[idx] {
                continue;
            }
            let (i, j, b) = unindex(idx);
            let free = link(sources[k as usize].pose, lattice.pose(i, j, bins, b), false, radius)
                .is_some_and(|segs| map.sweep_free(&segs, fp, SEARCH_MARGIN));
            if free {
                g[idx] = cost;
                parent[idx] = SOURCE_BIT | k;
                open.push((Reverse(f), idx as u32, KIND_STATE));
            }
            continue;
        }
        if kind == KIND_GOAL {
            let (from, ti, total) = goal_candidates[id as usize];
            let t = targets[ti as usize];
            let from_pose = if from & SOURCE_BIT != 0 {
                sources[(from & !SOURCE_BIT) as usize].pose
            } else {
                let (i, j, b) = unindex(from as usize);
                lattice.pose(i, j, bins, b)
            };
            // Collision-check the link only now that it is the cheapest thing left.
            if !link(from_pose, t.pose, t.free, radius).is_some_and(|segs| map.sweep_free(&segs, fp, SEARCH_MARGIN)) {
                continue;
            }
            let mut poses = vec![t.pose];
            let mut cur = from;
            let source = loop {
                if cur & SOURCE_BIT != 0 {
                    let k = (cur & !SOURCE_BIT) as usize;
                    poses.push(sources[k].pose);
                    break k;
                }
                let (i, j, b) = unindex(cur as usize);
                poses.push(lattice.pose(i, j, bins, b));
                cur = parent[cur as usize];
            };
            poses.reverse();
            return Outcome::Found(Found { poses, source, target: ti as usize, cost: total, expansions });
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
        if !tried_goal_link[idx] {
            tried_goal_link[idx] = true;
            let here = lattice.pose(i, j, bins, b);
            for (ti, t) in targets.iter().enumerate() {
                if here.point().distance(t.pose.point()) <= connect_radius {
                    if let Some(c) = link_cost_estimate(here, t.pose, t.free, radius, tp) {
                        let total = gi + c + t.cost_to_go;
                        push_goal(&mut open, &mut goal_candidates, idx as u32, ti, total);
                    }
                }
            }
        }
        let (bx, by) = (i * s, j * s);
        for &(dx, dy) in &offsets {
            let (ni, nj) = (i + dx, j + dy);
            if !window.contains(ni, nj) {
                if !clipped && lattice.contains(ni, nj) {
                    clipped = (0..nb).any(|nb_h| {
                        ctx.edges().edge(b, nb_h, dx, dy).is_some_and(|e| map.spans_free(&e.spans, bx, by))
                    });
                }
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
    if clipped {
        Outcome::NoPath(expansions)
    } else {
        Outcome::Exhausted(expansions)
    }
}
