//! Step 4: the window repair. Directional A* inside a window around the failure of Smoothing,
//! from the best forward states before it to the best backward states after it (whose costs to
//! go are known), spliced into one chain; the window doubles when that fails.

use super::{Chain, RefineError, Refinement};
use crate::directional::lattice::{Lattice, LatticeRect};
use crate::directional::search::{directional_astar, Outcome, Source, Target, TargetPose};
use crate::directional::smoothing::PathDp;
use crate::geometry::Point2;
use crate::stages::{SolvedBy, Stage};
use std::time::Instant;

/// How many headings per point the window repair starts from or aims at.
const REPAIR_HEADINGS: usize = 3;

/// The forward and backward Smoothing programmes over the same path points, where each got
/// stuck: the failure window lies between.
pub(super) struct Passes<'a, 'dp> {
    pub(super) dp: &'a PathDp<'dp>,
    /// Cost per (path point, heading) from the start; `forward_parent` its way back.
    pub(super) forward_cost: &'a [f64],
    pub(super) forward_parent: &'a [(usize, usize)],
    /// The furthest path point the forward programme reached (0: none).
    pub(super) last_forward: usize,
    /// Cost to go per (path point, heading); `backward_next` its way on.
    pub(super) backward_cost: &'a [f64],
    pub(super) backward_next: &'a [(usize, usize)],
    /// The earliest path point the backward programme reached (`m + 1`: none).
    pub(super) first_backward: usize,
}

/// The ends of the repair's searches: each source and target with the (path point, heading)
/// state it stands for (path point 0 is the exact start, `m + 1` the exact goal), so that a
/// search's result is spliced between the right partial chains.
struct RepairEnds {
    sources: Vec<Source>,
    source_states: Vec<(usize, usize)>,
    targets: Vec<TargetPose>,
    target_states: Vec<(usize, usize)>,
}

impl RepairEnds {
    fn add_source(&mut self, source: Source, state: (usize, usize)) {
        self.sources.push(source);
        self.source_states.push(state);
    }

    fn add_target(&mut self, target: TargetPose, state: (usize, usize)) {
        self.targets.push(target);
        self.target_states.push(state);
    }
}

impl Refinement<'_, '_> {
    /// Step 4 on the failure `passes` left: the chain through the first window that holds a
    /// way, or `None` when every window failed.
    pub(super) fn window_repair(&mut self, passes: &Passes, lattice: &Lattice) -> Result<Option<Chain>, RefineError> {
        let p = self.ctx.params();
        let dp = passes.dp;
        let t = Instant::now();
        let (ends, near_points) = self.repair_ends(passes);
        let mut window_cells: Vec<(i64, i64)> = ends.sources.iter().map(|s| lattice.cell_of(s.pose.point())).collect();
        window_cells.extend(ends.targets.iter().map(|s| lattice.cell_of(s.pose.point())));
        let points = dp.points();
        window_cells.extend(near_points.filter(|&tt| tt >= 1 && tt <= dp.m()).map(|tt| {
            let (i, j) = points[tt - 1].cell;
            lattice.cell_of(Point2::new(i as f64 + 0.5, j as f64 + 0.5))
        }));
        let mut margin = p.margin();
        let mut outcome = String::from("no window");
        let mut chain = None;
        for attempt in 0..=p.window_widenings {
            let window = LatticeRect::around(window_cells.iter().copied(), margin, lattice);
            let sp = lattice.spacing as f64;
            self.stats.repair_windows.push([
                window.i0 as f64 * sp,
                window.j0 as f64 * sp,
                window.i1 as f64 * sp,
                window.j1 as f64 * sp,
            ]);
            let neighbourhood = p.repair_neighbourhood;
            let targets = Target::Poses(&ends.targets);
            match directional_astar(self.ctx, self.map, window, neighbourhood, &ends.sources, targets, self.should_stop)
            {
                Outcome::Found(found) => {
                    self.stats.expansions += found.expansions;
                    let (st, sh) = ends.source_states[found.source];
                    let mut poses = dp.forward_chain(passes.forward_parent, st, sh);
                    poses.pop();
                    // Smoothing's links are the model's curves; the search's keep their gears.
                    let mut gears = vec![None; poses.len()];
                    gears.extend_from_slice(&found.gears);
                    poses.extend_from_slice(&found.poses);
                    let (tt, th) = ends.target_states[found.target];
                    poses.pop();
                    poses.extend(dp.backward_chain(passes.backward_next, tt, th));
                    let cost = self.exact_cost(&poses, &gears, found.cost);
                    chain = Some(Chain { poses, gears, by: SolvedBy::WindowRepair, cost });
                    outcome =
                        format!("found on attempt {} (window {}x{})", attempt + 1, window.width(), window.height());
                    break;
                }
                Outcome::Stopped => return Err(RefineError::Stopped),
                Outcome::NoPath(e) => {
                    self.stats.expansions += e;
                    outcome = format!("failed {} windows", attempt + 1);
                    if window.covers(lattice) {
                        break;
                    }
                }
                Outcome::Exhausted(e) => {
                    // A wider window would expand the same states.
                    self.stats.expansions += e;
                    outcome = format!("failed {} windows (nothing more reachable)", attempt + 1);
                    break;
                }
            }
            margin *= 2;
        }
        self.stats.record(Stage::WindowRepair, t, outcome);
        Ok(chain)
    }

    /// The repair's sources (the best forward states within a hop before the failure, and the
    /// exact start when it is near) and targets (the best backward states within a hop after
    /// it, and the exact goal when it is near or nothing else is), with the path points the
    /// window must hold besides.
    fn repair_ends(&self, passes: &Passes) -> (RepairEnds, std::ops::RangeInclusive<usize>) {
        let p = self.ctx.params();
        let request = self.request;
        let dp = passes.dp;
        let (m, hops) = (dp.m(), dp.hops);
        let (f, b) = (passes.last_forward, passes.first_backward);
        let near = 4.0 * p.turning_radius;
        let mut ends = RepairEnds {
            sources: Vec::new(),
            source_states: Vec::new(),
            targets: Vec::new(),
            target_states: Vec::new(),
        };
        let lo = f.saturating_sub(hops - 1).max(1);
        let start_near = f < 2 * hops || request.start.point().distance(dp.pose(f.max(1), 0).point()) < near;
        if start_near {
            ends.add_source(Source { pose: request.start, g: 0.0, wide: true }, (0, 0));
        }
        for tt in lo..=f {
            for (h, g) in dp.best_headings(passes.forward_cost, tt, REPAIR_HEADINGS) {
                ends.add_source(Source { pose: dp.pose(tt, h), g, wide: false }, (tt, h));
            }
        }
        let hi = (b + hops - 1).min(m);
        for tt in b..=hi {
            for (h, c) in dp.best_headings(passes.backward_cost, tt, REPAIR_HEADINGS) {
                ends.add_target(TargetPose { pose: dp.pose(tt, h), cost_to_go: c, free: false }, (tt, h));
            }
        }
        let goal_near =
            b + 2 * hops > m + 1 || request.goal.point().distance(dp.pose(b.min(m).max(1), 0).point()) < near;
        if goal_near || ends.targets.is_empty() {
            let goal = TargetPose { pose: request.goal, cost_to_go: 0.0, free: request.goal_heading_free };
            ends.add_target(goal, (m + 1, 0));
        }
        (ends, lo..=hi.max(lo))
    }
}
