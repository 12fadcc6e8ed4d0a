//! Step 5: the full Directional A* from the exact start to the exact goal over the whole
//! lattice, within the budget; and the same search as a reference planner of its own.

use super::{check_ends_free, Chain, RefineError, RefineStats, Refined, Refinement, Request};
use crate::directional::footprint::CollisionMap;
use crate::directional::lattice::{Lattice, LatticeRect, Neighbourhood};
use crate::directional::params::Directional;
use crate::directional::search::{directional_astar, Outcome, Source, Target};
use crate::geometry::Pose2;
use crate::stages::{SolvedBy, Stage};
use std::time::Instant;

impl Refinement<'_, '_> {
    /// Step 5, with the fallback neighbourhood: the chain, or `None` when the lattice holds none.
    pub(super) fn full_search_step(&mut self, lattice: &Lattice) -> Result<Option<Chain>, RefineError> {
        let neighbourhood = self.ctx.params().fallback_neighbourhood;
        self.search_whole_lattice(lattice, neighbourhood)
    }

    /// Directional A* in `neighbourhood` from the exact start to the exact goal over all of
    /// `lattice`: the chain, or `None` when there is none.
    fn search_whole_lattice(
        &mut self,
        lattice: &Lattice,
        neighbourhood: Neighbourhood,
    ) -> Result<Option<Chain>, RefineError> {
        let t = Instant::now();
        let request = self.request;
        let window = LatticeRect::all(lattice);
        let target = Target::Pose { pose: request.goal, free: request.goal_heading_free };
        let src = [Source { pose: request.start, g: 0.0, wide: true }];
        match directional_astar(self.ctx, self.map, window, neighbourhood, &src, target, self.should_stop) {
            Outcome::Found(found) => {
                self.stats.expansions += found.expansions;
                self.stats.record(Stage::FullSearch, t, format!("found after {} expansions", found.expansions));
                Ok(Some(Chain { poses: found.poses, gears: found.gears, by: SolvedBy::FullSearch, cost: found.cost }))
            }
            Outcome::Stopped => Err(RefineError::Stopped),
            Outcome::NoPath(e) | Outcome::Exhausted(e) => {
                self.stats.expansions += e;
                self.stats.record(Stage::FullSearch, t, format!("no path after {e} expansions"));
                Ok(None)
            }
        }
    }
}

/// A full Directional A* (the references of `bench-nav`: Directional-8/-24/-48) from the exact
/// `start` to `goal` over the whole lattice, followed by the same final smoothing and
/// verification as [`super::refine`]. Same contract and errors as [`super::refine`], except
/// that a goal equal to the start is not refused.
pub fn full_search(
    ctx: &Directional,
    map: &CollisionMap,
    start: Pose2,
    goal: Pose2,
    goal_heading_free: bool,
    neighbourhood: Neighbourhood,
    should_stop: &mut dyn FnMut() -> bool,
) -> Result<Refined, RefineError> {
    let goal = if goal_heading_free { Pose2::new(goal.x, goal.y, 0.0) } else { goal };
    if !start.is_finite() || !goal.is_finite() {
        return Err(RefineError::InvalidInput("a pose is not finite".into()));
    }
    check_ends_free(ctx, map, start, goal, goal_heading_free)?;
    let same_place = start.point().distance(goal.point()) < 1e-9;
    let request = Request { waypoints: &[], start, goal, goal_heading_free, same_place };
    let mut refinement = Refinement { ctx, map, request: &request, stats: RefineStats::default(), should_stop };
    let lattice = Lattice::new(map.width(), map.height(), ctx.params().spacing());
    let Some(chain) = refinement.search_whole_lattice(&lattice, neighbourhood)? else {
        let e = refinement.stats.expansions;
        return Err(RefineError::NoPath(format!("{} found nothing after {e} expansions", neighbourhood.name())));
    };
    refinement.finish(chain).map_err(RefineError::VerificationFailed)
}
