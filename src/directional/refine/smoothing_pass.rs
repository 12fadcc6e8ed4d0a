//! Steps 2 and 3: Smoothing over the path points (coarse, then dense), forwards, and on a long
//! guide that it cannot cross, backwards too, handing the failure window to step 4.

use super::guide::{spaced_path_points, GuideInfo};
use super::window_repair::Passes;
use super::{Chain, RefineError, Refinement};
use crate::directional::smoothing::{Ends, PathDp};
use crate::stages::{SolvedBy, Stage};
use std::time::Instant;

/// Path points of the coarse Smoothing pass lie this many times as far apart near the guide's
/// vertices as the dense pass's (one lattice spacing).
const COARSE_SPACINGS: f64 = 2.0;

impl Refinement<'_, '_> {
    /// Steps 2-4: Smoothing over the path points. Coarse first: path points twice as far apart
    /// near the guide's vertices, with hops that reach as far, give about a third of the states
    /// and candidate links of the dense programme and solve most guides. The dense programme, and
    /// the repairs built on its costs, run only when it fails, or when its chain holds a loop on
    /// a short guide: the dense points may avoid the loop, which spares the loop repair (far
    /// dearer than the dense programme). The cheaper chain found, if any.
    pub(super) fn smoothing(&mut self, guide: &GuideInfo) -> Result<Option<Chain>, RefineError> {
        let (ctx, map, request) = (self.ctx, self.map, self.request);
        let p = ctx.params();
        let near = p.spacing() as f64;
        let ends = Ends { start: request.start, goal: request.goal, goal_free: request.goal_heading_free };
        let mut chain: Option<Chain> = None;
        let bound = self.direct_bound();
        let coarse_near = COARSE_SPACINGS * near;
        let coarse = spaced_path_points(ctx, request, &guide.points, coarse_near);
        if coarse.len() < guide.path_points.len() {
            let t = Instant::now();
            let hops = (p.hops() as f64 * near / coarse_near).ceil() as usize;
            let dp = PathDp::new(ctx, map, &coarse, ends, hops.max(1), coarse_near);
            let (_, parent, found) = dp.forward(bound, self.should_stop).ok_or(RefineError::Stopped)?;
            if let Some((c, (t_last, h_last))) = found {
                let mut poses = dp.forward_chain(&parent, t_last, h_last);
                poses.push(request.goal);
                let cost = self.exact_cost(&poses, &[], c);
                chain = Some(Chain { poses, gears: Vec::new(), by: SolvedBy::Smoothing, cost });
                let outcome = format!("{} points: reached the goal, cost {c:.2}", coarse.len());
                self.stats.record(Stage::SmoothingCoarse, t, outcome);
            } else {
                self.stats.record(Stage::SmoothingCoarse, t, format!("{} points: stuck", coarse.len()));
            }
        }
        let cost = chain.as_ref().map_or(f64::INFINITY, |c| c.cost);
        if chain.is_none() || (guide.short && cost > guide.loop_bound) {
            let dp = PathDp::new(ctx, map, &guide.path_points, ends, p.hops(), near);
            if let Some(found) = self.dense_smoothing(&dp, guide, bound)? {
                if found.cost < cost {
                    chain = Some(found);
                }
            }
        }
        Ok(chain)
    }

    /// The dense Smoothing programme over `dp` (steps 2 and 3), and when it cannot reach the
    /// goal on a long guide, the backward programme and the window repair between the two
    /// (step 4). The chain found; `None` when smoothing failed on a short guide (its repair
    /// searches the whole guide's window instead) or the repair failed. `bound` as
    /// [`PathDp::forward`] takes it.
    fn dense_smoothing(&mut self, dp: &PathDp, guide: &GuideInfo, bound: f64) -> Result<Option<Chain>, RefineError> {
        let m = dp.m();
        let t = Instant::now();
        let mut forward = dp.forward(bound, self.should_stop).ok_or(RefineError::Stopped)?;
        if forward.2.is_none() && bound.is_finite() {
            // The repair starts from the forward states' costs, which the bound left unreached.
            forward = dp.forward(f64::INFINITY, self.should_stop).ok_or(RefineError::Stopped)?;
        }
        let (fwd, fwd_parent, fwd_goal) = forward;
        if let Some((c, (t_last, h_last))) = fwd_goal {
            let mut poses = dp.forward_chain(&fwd_parent, t_last, h_last);
            poses.push(self.request.goal);
            let cost = self.exact_cost(&poses, &[], c);
            self.stats.record(Stage::SmoothingForward, t, format!("reached the goal, cost {c:.2}"));
            return Ok(Some(Chain { poses, gears: Vec::new(), by: SolvedBy::Smoothing, cost }));
        }
        if guide.short {
            // A short guide: the windowed start-to-goal search of the loop repair covers it
            // all, cheaper than splicing a repair between partial chains.
            self.stats.record(Stage::SmoothingForward, t, "stuck; short path, searching the whole window");
            return Ok(None);
        }
        let nb = dp.nb;
        let reached = |cost: &[f64], point: usize| (0..nb).any(|h| cost[point * nb + h].is_finite());
        let last_forward = (1..=m).rev().find(|&t| reached(&fwd, t)).unwrap_or(0);
        self.stats.record(Stage::SmoothingForward, t, format!("stuck after path point {last_forward} of {m}"));

        let t = Instant::now();
        let (bwd, bwd_next) = dp.backward(self.should_stop).ok_or(RefineError::Stopped)?;
        let first_backward = (1..=m).find(|&t| reached(&bwd, t)).unwrap_or(m + 1);
        self.stats.record(Stage::SmoothingBackward, t, format!("reached back to path point {first_backward}"));

        let passes = Passes {
            dp,
            forward_cost: &fwd,
            forward_parent: &fwd_parent,
            last_forward,
            backward_cost: &bwd,
            backward_next: &bwd_next,
            first_backward,
        };
        self.window_repair(&passes, &guide.lattice)
    }
}
