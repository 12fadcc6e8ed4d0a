//! Beyond Pinter: the loop repair. On a short guide whose chain loops, or which has none, one
//! windowed Directional A* from the exact start to the exact goal around the whole guide.

use super::guide::GuideInfo;
use super::{Chain, RefineError, Refinement};
use crate::directional::lattice::LatticeRect;
use crate::directional::search::{directional_astar_below, Outcome, Source, Target};
use crate::geometry::Point2;
use crate::stages::{SolvedBy, Stage};
use std::time::Instant;

/// What the loop repair concluded.
pub(super) enum LoopRepair {
    /// The guide is long, or its chain holds no loop: the repair did not run.
    NotNeeded,
    /// It ran and found nothing cheaper than the chain in hand (or nothing at all in a window).
    NoCheaper,
    /// A cheaper chain than the one in hand (or the first one).
    Cheaper(Chain),
    /// Nothing reachable from the start leads to the goal: the full search (same neighbourhood,
    /// same start and goal) would expand the same states, so it need not run.
    Exhausted,
}

impl Refinement<'_, '_> {
    /// On a short guide whose `chain` loops (costs more than the guide's loop bound) or which
    /// has no chain, one windowed Directional A* from the exact start to the exact goal around
    /// the whole guide, stopped as soon as it cannot beat the chain. Without a chain it covers
    /// the whole lattice, so that its failure settles the full search too.
    pub(super) fn loop_repair(&mut self, guide: &GuideInfo, chain: Option<&Chain>) -> Result<LoopRepair, RefineError> {
        let p = self.ctx.params();
        let request = self.request;
        let c = chain.map_or(f64::INFINITY, |c| c.cost);
        let loopy = chain.is_some() && c > guide.loop_bound;
        if !((loopy || chain.is_none()) && guide.short) {
            return Ok(LoopRepair::NotNeeded);
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
        // Without a chain in hand the search must settle whether any path exists, and a window
        // that cuts it would only be repeated by the full search: search the whole lattice (the
        // heuristic keeps a short path's search local all the same).
        let whole_lattice = chain.is_none() && p.repair_neighbourhood == p.fallback_neighbourhood;
        let window =
            if whole_lattice { LatticeRect::all(lattice) } else { LatticeRect::around(cells, p.margin(), lattice) };
        let src = [Source { pose: request.start, g: 0.0, wide: true }];
        let target = Target::Pose { pose: request.goal, free: request.goal_heading_free };
        // Only a cheaper way is of use, so the search stops once it cannot beat the chain in hand.
        let found = directional_astar_below(
            self.ctx,
            self.map,
            window,
            p.repair_neighbourhood,
            &src,
            target,
            c,
            self.should_stop,
        );
        let (result, outcome) = match found {
            Outcome::Found(found) => {
                self.stats.expansions += found.expansions;
                if found.cost < c {
                    let outcome = format!("cost {:.2} instead of {c:.2}", found.cost);
                    let chain =
                        Chain { poses: found.poses, gears: found.gears, by: SolvedBy::LoopRepair, cost: found.cost };
                    (LoopRepair::Cheaper(chain), outcome)
                } else {
                    (LoopRepair::NoCheaper, format!("no better (cost {:.2})", found.cost))
                }
            }
            Outcome::Stopped => return Err(RefineError::Stopped),
            Outcome::NoPath(e) => {
                self.stats.expansions += e;
                (LoopRepair::NoCheaper, "nothing cheaper in the window".to_string())
            }
            Outcome::Exhausted(e) => {
                self.stats.expansions += e;
                let exhausted = p.repair_neighbourhood == p.fallback_neighbourhood;
                let result = if exhausted { LoopRepair::Exhausted } else { LoopRepair::NoCheaper };
                (result, "nothing reachable from the start leads to the goal".to_string())
            }
        };
        self.stats.record(Stage::LoopRepair, t, outcome);
        Ok(result)
    }
}
