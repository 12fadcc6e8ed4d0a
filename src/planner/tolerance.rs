//! Nav2's goal `tolerance`: a goal that is occupied or cannot be reached is answered with a plan
//! to the reachable place nearest to it within the tolerance, as NavFn and Smac answer it.
//!
//! [`Planner::plan_near`] (through `plan_to_near_goal`) first plans to the goal itself ([`Planner::plan`], unchanged). Only
//! when that fails with `GOAL_OCCUPIED` or `NO_VALID_PATH` does it look for another goal: the
//! centres of the cells within the tolerance where the vehicle's footprint stands free, less those
//! the vehicle mask's regions prove unreachable, nearest to the goal first (ties in row order),
//! planned to with the goal's heading until one succeeds (at most [`MAX_GOAL_TRIES`]). The answer says where it
//! ends and how far that is from the goal (the plan's note). Place precision is the map's cell.

use super::{Budget, Plan, PlanError, Planner, StatusCode};
use crate::geometry::{Point2, Pose2};

/// Most other goals tried before the request is refused (each is a plan; one the regions prove
/// unreachable is not tried, one they cannot judge is refused fast by the reach proof).
pub const MAX_GOAL_TRIES: usize = 64;

impl Planner {
    /// Plans from `start` to `goal` as [`Planner::plan`]; when that fails with `GOAL_OCCUPIED`
    /// or `NO_VALID_PATH` and `tolerance` (metres, the map's units; finite and >= 0, checked by
    /// the caller) is positive, plans to the reachable cell centre nearest to `goal` within
    /// `tolerance` instead, with `goal`'s heading, and says so in the plan's note (the place
    /// reached and its distance from the goal).
    ///
    /// Fails with the error of the plan to `goal` itself (its message telling that no place within
    /// the tolerance was reachable), or `TIMEOUT` / `SUPERSEDED` when the budget ends while other
    /// goals are tried.
    pub(super) fn plan_to_near_goal(
        &self,
        start: Pose2,
        goal: Pose2,
        goal_heading_free: bool,
        tolerance: f64,
        budget: &Budget,
    ) -> Result<Plan, PlanError> {
        let direct = self.plan(start, goal, goal_heading_free, budget);
        let error = match direct {
            Err(e) if tolerance > 0.0 && matches!(e.code, StatusCode::GoalOccupied | StatusCode::NoValidPath) => e,
            other => return other,
        };
        let symbol = self.units.symbol();
        for place in self.goal_candidates(start, goal, goal_heading_free, tolerance).into_iter().take(MAX_GOAL_TRIES) {
            if budget.should_stop() {
                return Err(budget.stop_error());
            }
            let other = Pose2::new(place.x, place.y, goal.yaw);
            match self.plan(start, other, goal_heading_free, budget) {
                Ok(mut plan) => {
                    // Where the plan ends (the place, unless the planner had to move it too, which
                    // its own note then says).
                    let place = plan.poses.last().map_or(place, |end| end.point());
                    let moved = format!(
                        "goal ({:.3}, {:.3}) {symbol} not reached ({}): planned to ({:.3}, {:.3}) {symbol}, {:.3} {symbol} \
                         from it (tolerance {tolerance:.3} {symbol})",
                        goal.x,
                        goal.y,
                        error.code.name(),
                        place.x,
                        place.y,
                        place.distance(goal.point())
                    );
                    plan.stats.note = Some(match plan.stats.note.take() {
                        Some(note) => format!("{moved}; {note}"),
                        None => moved,
                    });
                    return Ok(plan);
                }
                Err(e) if matches!(e.code, StatusCode::Timeout | StatusCode::Superseded) => return Err(e),
                Err(_) => {}
            }
        }
        Err(PlanError::new(
            error.code,
            format!("{}; no reachable place within the tolerance of {tolerance:.3} {symbol} either", error.message),
        ))
    }

    /// The centres (world) of the cells within `tolerance` of `goal` where the vehicle's
    /// footprint stands free in the goal's heading, or in some heading when that is free (at rest,
    /// with the sweep's sampling allowance: where a trajectory
    /// may end), nearest to the goal first; those whose cell is on the vehicle mask only when in
    /// the start's region (when the start is on the mask too: a proof they cannot be reached).
    /// Empty without a map.
    fn goal_candidates(&self, start: Pose2, goal: Pose2, goal_heading_free: bool, tolerance: f64) -> Vec<Point2> {
        let Some(prepared) = self.map() else { return Vec::new() };
        let info = &prepared.site.map().info;
        let mask = prepared.vehicle_mask();
        let shape = prepared.verified_vehicle().footprint;
        let g = info.world_to_cell(goal.point());
        let r = tolerance / info.resolution;
        let on_mask = |x: usize, y: usize| mask.is_free(x as i64, y as i64);
        let from = info.cell_of(start.point()).filter(|&(x, y)| on_mask(x, y));
        let separated = |cell: (usize, usize)| {
            from.is_some_and(|a| {
                on_mask(cell.0, cell.1)
                    && !prepared.site.clearance.same_region(&prepared.vehicle, a, cell).unwrap_or(true)
            })
        };
        let (w, h) = (info.width as i64, info.height as i64);
        let (x0, x1) = (((g.x - r).floor() as i64).max(0), ((g.x + r).ceil() as i64).min(w - 1));
        let (y0, y1) = (((g.y - r).floor() as i64).max(0), ((g.y + r).ceil() as i64).min(h - 1));
        let mut found: Vec<(f64, Point2)> = Vec::new();
        for y in y0..=y1 {
            for x in x0..=x1 {
                let centre = Point2::new(x as f64 + 0.5, y as f64 + 0.5);
                let d = centre.distance(g);
                let pose = Pose2::new(centre.x, centre.y, goal.yaw);
                let stands = match goal_heading_free {
                    true => prepared.collision.stands_free_in_some_heading(centre, &shape),
                    false => prepared.collision.stands_free(pose, &shape),
                };
                if d <= r && stands && !separated((x as usize, y as usize)) {
                    found.push((d, info.cell_to_world(centre)));
                }
            }
        }
        // Stable: equal distances keep row order.
        found.sort_by(|a, b| a.0.total_cmp(&b.0));
        found.into_iter().map(|(_, p)| p).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::map::{MapInfo, OccupancyMap};
    use crate::planner::{Leeway, PlannerConfig};

    const RES: f64 = 0.1;

    /// A 6 x 4 m room: border wall, a closed room at x 4..5.5 m, y 2.5..3.5 m (walls one cell
    /// thick), a pillar at x 2..2.6 m, y 1.5..2.1 m.
    fn planner() -> Planner {
        let (w, h) = (60usize, 40usize);
        let mut data = vec![0i8; w * h];
        for y in 0..h {
            for x in 0..w {
                let border = x == 0 || y == 0 || x == w - 1 || y == h - 1;
                let room = (40..=55).contains(&x) && (25..=35).contains(&y);
                let room_wall = room && (x == 40 || x == 55 || y == 25 || y == 35);
                let pillar = (20..26).contains(&x) && (15..21).contains(&y);
                if border || room_wall || pillar {
                    data[y * w + x] = 100;
                }
            }
        }
        let info = MapInfo::at_origin(w, h, RES);
        let config = PlannerConfig { robot_radius: 0.15, min_turning_radius: 0.3, ..PlannerConfig::default() };
        let mut p = Planner::new(config).unwrap();
        p.set_map(OccupancyMap::new(info, data, 1 << 20).unwrap()).unwrap();
        p
    }

    fn budget() -> Budget {
        Budget::without_deadline(None)
    }

    /// The brute-force answer: of every cell centre within `tolerance` of `goal`, nearest first,
    /// the first that `Planner::plan` itself reaches (the oracle of reachability), or None.
    fn nearest_reachable(p: &Planner, start: Pose2, goal: Pose2, tolerance: f64) -> Option<Point2> {
        let mut centres = Vec::new();
        for y in 0..40 {
            for x in 0..60 {
                let c = Point2::new((x as f64 + 0.5) * RES, (y as f64 + 0.5) * RES);
                if c.distance(goal.point()) <= tolerance + 1e-9 {
                    centres.push(c);
                }
            }
        }
        centres.sort_by(|a, b| a.distance(goal.point()).total_cmp(&b.distance(goal.point())));
        // Reached: planned and ending there (the planner may move an endpoint where the vehicle
        // does not fit, and says so in its note: that is not reaching it).
        centres.into_iter().find(|c| {
            p.plan(start, Pose2::new(c.x, c.y, goal.yaw), false, &budget())
                .is_ok_and(|plan| plan.poses.last().is_some_and(|end| end.point().distance(*c) < 1e-6))
        })
    }

    #[test]
    fn a_goal_on_the_pillar_is_answered_with_the_nearest_reachable_place() {
        let p = planner();
        let start = Pose2::new(0.8, 0.8, 0.0);
        for goal in [Pose2::new(2.3, 1.8, 0.0), Pose2::new(2.05, 1.55, 1.0), Pose2::new(2.55, 2.05, -1.0)] {
            let tolerance = 0.6;
            let plan = p.plan_near(start, goal, false, Leeway::goal(tolerance), &budget()).unwrap();
            let end = *plan.poses.last().unwrap();
            let expected = nearest_reachable(&p, start, goal, tolerance).unwrap();
            // The same distance (a tie may pick another cell at it).
            let (d, e) = (end.point().distance(goal.point()), expected.distance(goal.point()));
            assert!((d - e).abs() < 1e-9, "{goal:?}: ended {d:.4} m away, the nearest reachable is {e:.4} m");
            assert!(d <= tolerance + 1e-9);
            assert!((end.yaw - goal.yaw).abs() < 1e-9, "with the goal's heading");
            let note = plan.stats.note.unwrap();
            assert!(note.starts_with(&format!("goal ({:.3}, {:.3}) m not reached", goal.x, goal.y)), "{note}");
            assert!(note.contains(&format!("{d:.3} m from it")), "{note}");
        }
    }

    /// A 6 x 4 m costmap as Nav2 publishes one: no wall on the left edge (the map simply ends
    /// there), a pillar at x 2..2.6 m, y 1.5..2.1 m (100) inside an inscribed ring one cell wide
    /// (99) and a graded band two cells wide (60, then 30); planned with `occupied_threshold` 99.
    fn costmap_planner() -> Planner {
        let (w, h) = (60usize, 40usize);
        let mut data = vec![0i8; w * h];
        // Cells from the pillar (Chebyshev distance; 0 inside it).
        let from_pillar = |x: i64, y: i64| (20 - x).max(x - 25).max(0).max((15 - y).max(y - 20).max(0));
        for y in 0..h {
            for x in 0..w {
                let border = y == 0 || x == w - 1 || y == h - 1;
                data[y * w + x] = match from_pillar(x as i64, y as i64) {
                    _ if border => 100,
                    0 => 100,
                    1 => 99,
                    2 => 60,
                    3 => 30,
                    _ => 0,
                };
            }
        }
        let info = MapInfo::at_origin(w, h, RES);
        let config = PlannerConfig {
            robot_radius: 0.15,
            min_turning_radius: 0.3,
            occupied_threshold: 99,
            ..PlannerConfig::default()
        };
        let mut p = Planner::new(config).unwrap();
        p.set_map(OccupancyMap::new(info, data, 1 << 20).unwrap()).unwrap();
        p
    }

    #[test]
    fn goals_in_the_inflation_and_at_the_maps_edge_end_at_the_nearest_reachable_place_and_say_so() {
        let p = costmap_planner();
        let start = Pose2::new(4.0, 1.0, 0.0);
        let tolerance = 0.5;
        // On the inscribed ring (99, an obstacle at occupied_threshold 99), the vehicle does not
        // stand even near it: refused exactly, answered within the tolerance.
        let ring = Pose2::new(1.95, 1.8, 0.0);
        let exact = p.plan(start, ring, false, &budget()).unwrap_err();
        assert_eq!(exact.code, StatusCode::GoalOccupied);
        // On a graded cell (60) the ring reaches into the footprint of, and 5 cm from the map's
        // open edge (the footprint crosses it): a cell of the vehicle's mask covers each
        // (Harabor's subsumed rule), so even without a tolerance the plan ends at that cell's
        // centre and its note gives the offset.
        for (what, goal, tolerance) in [
            ("on the inscribed ring", ring, tolerance),
            ("on a graded cell the footprint does not fit at", Pose2::new(2.3, 1.3, 0.5), 0.0),
            ("whose footprint crosses the map's edge", Pose2::new(0.05, 2.0, 3.0), 0.0),
        ] {
            let plan = p.plan_near(start, goal, false, Leeway::goal(tolerance), &budget()).unwrap();
            assert_eq!(plan.poses[0], start, "{what}: the plan starts at the start");
            let end = plan.poses.last().unwrap().point();
            // The brute force, over every cell centre within 0.5 m.
            let expected = nearest_reachable(&p, start, goal, 0.5).expect("a reachable place");
            let (d, e) = (end.distance(goal.point()), expected.distance(goal.point()));
            assert!((d - e).abs() < 1e-9, "{what}: ended {d:.4} m away, the nearest reachable is {e:.4} m");
            assert!(d > 0.0, "{what}");
            let note = plan.stats.note.unwrap();
            let says = match tolerance > 0.0 {
                true => format!("planned to ({:.3}, {:.3}) m, {d:.3} m from it", end.x, end.y),
                false => format!(
                    "the vehicle does not fit at the goal; planned to the covering cell ({}, {}), offset ({:.3}, {:.3}) m",
                    (end.x / RES) as usize,
                    (end.y / RES) as usize,
                    end.x - goal.x,
                    end.y - goal.y
                ),
            };
            assert!(note.contains(&says), "{what}: {note} / {says}");
        }
    }

    #[test]
    fn a_goal_in_a_closed_room_is_answered_outside_it_or_refused() {
        let p = planner();
        let start = Pose2::new(0.8, 0.8, 0.0);
        let inside = Pose2::new(4.75, 3.0, 0.0);
        // Within 0.3 m nothing outside the room: refused with the reason.
        let e = p.plan_near(start, inside, false, Leeway::goal(0.3), &budget()).unwrap_err();
        assert_eq!(e.code, StatusCode::NoValidPath);
        assert!(e.message.contains("no reachable place within the tolerance of 0.300 m"), "{}", e.message);
        assert_eq!(nearest_reachable(&p, start, inside, 0.3), None);
        // Within 1 m the nearest place outside the room's wall.
        let plan = p.plan_near(start, inside, false, Leeway::goal(1.0), &budget()).unwrap();
        let end = plan.poses.last().unwrap().point();
        let expected = nearest_reachable(&p, start, inside, 1.0).unwrap();
        assert!(
            (end.distance(inside.point()) - expected.distance(inside.point())).abs() < 1e-9,
            "{end:?} {expected:?}"
        );
    }

    #[test]
    fn a_reachable_goal_is_planned_as_plan_does_and_bad_tolerances_are_refused() {
        let p = planner();
        let (start, goal) = (Pose2::new(0.8, 0.8, 0.0), Pose2::new(5.0, 1.0, 0.0));
        let a = p.plan_near(start, goal, false, Leeway::goal(0.5), &budget()).unwrap();
        let b = p.plan(start, goal, false, &budget()).unwrap();
        assert_eq!(a.poses, b.poses);
        assert_eq!(a.stats.note, None);
        // Zero: Nav2's "exactly there".
        let on_pillar = Pose2::new(2.3, 1.8, 0.0);
        assert_eq!(
            p.plan_near(start, on_pillar, false, Leeway::goal(0.0), &budget()).unwrap_err().code,
            StatusCode::GoalOccupied
        );
        for bad in [-0.1, f64::NAN, f64::INFINITY] {
            assert_eq!(
                p.plan_near(start, goal, false, Leeway::goal(bad), &budget()).unwrap_err().code,
                StatusCode::InvalidInput
            );
        }
    }
}
