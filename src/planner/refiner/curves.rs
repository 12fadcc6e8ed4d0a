//! The refiner of a vehicle with a turning radius: Directional A* (Pinter 2001) over the guide.

use super::{Job, Refine};
use crate::directional::verify::Vehicle;
use crate::directional::{self, Directional, RefineError, Refined};
use crate::geometry::{Point2, Pose2};
use crate::planner::stats::StageClock;
use crate::planner::steps::{Endpoints, Solution};
use crate::planner::{Budget, PlanError, StatusCode};
use std::sync::Arc;

/// Arcs and lines of the turning radius, forward or (Reeds-Shepp) in both gears, with
/// Directional A*'s parameters and tables for the map's resolution.
#[derive(Debug, Clone)]
pub struct Curves(pub Arc<Directional>);

impl Curves {
    /// A solution from what the pipeline `refined` (its stage times onto `clock`), shown with
    /// `guide`, after `expansions` of the guide's search.
    fn solution(refined: Refined, guide: Vec<Point2>, expansions: usize, clock: &mut StageClock) -> Solution {
        clock.extend(&refined.stats.stages);
        let mut solution =
            Solution::new(guide, refined.trajectory, refined.stats.solved_by, expansions + refined.stats.expansions);
        solution.repair_windows = refined.stats.repair_windows;
        solution
    }
}

impl Refine for Curves {
    fn vehicle(&self) -> Vehicle {
        self.0.params().vehicle()
    }

    fn directional(&self) -> Option<&Arc<Directional>> {
        Some(&self.0)
    }

    fn turns_on_the_spot(&self) -> bool {
        false
    }

    /// The footprint in `p`'s heading (free heading: in some heading).
    fn stands_exactly(&self, job: &Job, p: Pose2, free_heading: bool) -> bool {
        let shape = self.0.params().shape();
        match free_heading {
            true => job.prepared.collision.stands_free_in_some_heading(p.point(), &shape),
            false => job.prepared.collision.stands_free(p, &shape),
        }
    }

    /// A proof, not a guess (see `directional::escape`), so no pair a full search could solve
    /// is given up. Only between distinct places.
    fn not_trapped(&self, job: &Job, ends: &Endpoints, clock: &mut StageClock) -> Result<(), PlanError> {
        if ends.same_place() {
            return Ok(());
        }
        let collision = &job.prepared.collision;
        let why =
            directional::escape::trapped_ends(collision, ends.start, ends.goal, job.goal_heading_free, self.0.params());
        clock.mark(crate::stages::Stage::Escape);
        match why {
            Some(why) => Err(PlanError::new(StatusCode::NoValidPath, format!("no turning-radius-legal path: {why}"))),
            None => Ok(()),
        }
    }

    /// Skipped under a turn penalty (see `directional::direct_curve`).
    fn direct(&self, job: &Job, ends: &Endpoints, clock: &mut StageClock) -> Option<Solution> {
        let mut stats = directional::RefineStats::default();
        let collision = &job.prepared.collision;
        let direct =
            directional::direct_curve(&self.0, collision, ends.start, ends.goal, job.goal_heading_free, &mut stats);
        let Some(direct) = direct else {
            clock.extend(&stats.stages);
            return None;
        };
        clock.extend(&direct.stats.stages);
        let guide = vec![ends.start.point(), ends.goal.point()];
        Some(Solution::new(guide, direct.trajectory, direct.stats.solved_by, 0))
    }

    /// Steps 1-6 of `directional::refine` (the direct curve and the trapped-ends proof ran
    /// before).
    fn refine(
        &self,
        job: &Job,
        ends: &Endpoints,
        (guide, expansions): (Vec<Point2>, usize),
        clock: &mut StageClock,
    ) -> Result<Solution, PlanError> {
        let inner = &guide[1..guide.len().saturating_sub(1)];
        let budget = job.budget;
        let mut stop = || budget.should_stop();
        let collision = &job.prepared.collision;
        let refined = directional::refine_guided(
            &self.0,
            collision,
            inner,
            ends.start,
            ends.goal,
            job.goal_heading_free,
            &mut stop,
        )
        .map_err(|e| refine_error(e, budget, &ends.names))?;
        Ok(Self::solution(refined, guide, expansions, clock))
    }

    /// The full Directional A* on the exact collision map decides, within the budget, in the
    /// fallback neighbourhood. The guide shown is the search's chain of poses.
    fn full_search(
        &self,
        job: &Job,
        ends: &Endpoints,
        why: &str,
        clock: &mut StageClock,
    ) -> Result<Solution, PlanError> {
        let budget = job.budget;
        let mut stop = || budget.should_stop();
        let neighbourhood = self.0.params().fallback_neighbourhood;
        let refined = directional::full_search(
            &self.0,
            &job.prepared.collision,
            ends.start,
            ends.goal,
            job.goal_heading_free,
            neighbourhood,
            &mut stop,
        )
        .map_err(|e| match e {
            RefineError::NoPath(m) => PlanError::new(StatusCode::NoValidPath, format!("no path: {why}, and {m}")),
            other => refine_error(other, budget, &ends.names),
        })?;
        let guide = refined.chain.poses.iter().map(|p| p.point()).collect();
        let mut solution = Self::solution(refined, guide, 0, clock);
        // The full search has no repair windows to show.
        solution.repair_windows.clear();
        Ok(solution)
    }
}

/// The status for a refinement error; `ends` names start and goal as the caller gave them
/// (`goal (1.500, 2.000) m`).
fn refine_error(e: RefineError, budget: &Budget, ends: &[String; 2]) -> PlanError {
    match e {
        RefineError::Stopped => budget.stop_error(),
        // The footprint in the pose's heading touches a blocked cell.
        RefineError::StartBlocked => {
            PlanError::new(StatusCode::StartOccupied, format!("the vehicle does not fit at {}", ends[0]))
        }
        RefineError::GoalBlocked => {
            PlanError::new(StatusCode::GoalOccupied, format!("the vehicle does not fit at {}", ends[1]))
        }
        RefineError::InvalidInput(m) => PlanError::new(StatusCode::InvalidInput, m),
        other => PlanError::new(StatusCode::NoValidPath, other.to_string()),
    }
}
