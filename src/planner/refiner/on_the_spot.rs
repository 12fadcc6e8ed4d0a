//! The refiner of a vehicle that turns on the spot (`min_turning_radius` 0).

use super::exact_footprint::{exact_footprint_path, pull_ends, ExactFailure};
use super::{Job, Refine};
use crate::directional::footprint::Shape;
use crate::directional::verify::Vehicle;
use crate::geometry::{Point2, Pose2};
use crate::planner::stats::StageClock;
use crate::planner::steps::{Endpoints, Solution};
use crate::planner::{PlanError, StatusCode};
use crate::stages::{SolvedBy, Stage};
use crate::trajectory::Trajectory;

/// Lines and turns on the spot, the footprint's disk (the square's or the polygon's circumscribed
/// one about the reference point: the vehicle turns in place at corners) swept along them.
#[derive(Debug, Clone, PartialEq)]
pub struct OnTheSpot {
    /// The disk's radius (cells).
    pub radius: f64,
}

impl Refine for OnTheSpot {
    fn vehicle(&self) -> Vehicle {
        Vehicle::forward(Shape::Disk(self.radius), 0.0)
    }

    fn turns_on_the_spot(&self) -> bool {
        true
    }

    /// The disk on the exact map, whatever the heading (the vehicle turns within it).
    fn stands_exactly(&self, job: &Job, p: Pose2, _free_heading: bool) -> bool {
        job.prepared.collision.stands_free(p, &Shape::Disk(self.radius))
    }

    /// The guide's lines, string-pulled at its ends on the exact map, with a turn on the spot at
    /// the start (from the start heading), at each corner and at the goal (to its heading,
    /// unless free). The guide runs from the start pose through mask vertices (cell corners),
    /// taut between them, to the goal pose; pulling drops each vertex near either end that the
    /// footprint's disk can skip on a free line (no dearer, with costs), so a start and goal that
    /// see each other are joined by one line, not by detours through the corners beside them.
    /// The mask's guide can graze an obstacle between its vertices: then the exact map is
    /// searched.
    fn refine(
        &self,
        job: &Job,
        ends: &Endpoints,
        (guide, expansions): (Vec<Point2>, usize),
        clock: &mut StageClock,
    ) -> Result<Solution, PlanError> {
        let guide = pull_ends(&job.prepared.collision, &guide, self.radius);
        let goal_yaw = (!job.goal_heading_free).then_some(ends.goal.yaw);
        let trajectory = Trajectory::turning_on_the_spot(&guide, Some(ends.start.yaw), goal_yaw);
        match self.verify(job, ends, &trajectory) {
            Ok(()) => Ok(Solution::new(guide, trajectory, SolvedBy::AnyAngle, expansions)),
            Err(e) => self.full_search(job, ends, &e.message, clock),
        }
    }

    /// A* over cell centres on the exact collision map ([`exact_footprint_path`]), the disk swept
    /// along every line; turns on the spot between them, and verified. Fails with
    /// `NO_VALID_PATH` (saying `why` the mask could not serve) or the budget's error.
    fn full_search(
        &self,
        job: &Job,
        ends: &Endpoints,
        why: &str,
        clock: &mut StageClock,
    ) -> Result<Solution, PlanError> {
        let budget = job.budget;
        let found =
            exact_footprint_path(&job.prepared.collision, ends.start.point(), ends.goal.point(), self.radius, || {
                budget.should_stop()
            });
        clock.mark(Stage::ExactSearch);
        let path = match found {
            Ok(path) => path,
            Err(ExactFailure::Stopped) => return Err(budget.stop_error()),
            Err(ExactFailure::NoPath) => {
                return Err(PlanError::new(
                    StatusCode::NoValidPath,
                    format!(
                    "no path: {why}, and no chain of cell centres on the exact map holds the vehicle turning on the spot (radius {:.3} {})",
                    crate::geometry::Coord(job.planner.config.circumradius()),
                    job.planner.units.symbol()
                ),
                ))
            }
        };
        let goal_yaw = (!job.goal_heading_free).then_some(ends.goal.yaw);
        let trajectory = Trajectory::turning_on_the_spot(&path.points, Some(ends.start.yaw), goal_yaw);
        self.verify(job, ends, &trajectory)?;
        Ok(Solution::new(path.points, trajectory, SolvedBy::ExactSearch, path.expansions))
    }
}
