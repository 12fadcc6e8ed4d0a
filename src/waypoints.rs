//! Planning through a sequence of poses (Nav2's `ComputePathThroughPoses`): one leg per goal,
//! each leg a [`Planner::plan`] from the previous goal's exact pose, joined into one [`Plan`].
//! ROS-free; map frame, metres and radians throughout.

use crate::directional::verify::JOINT_TOLERANCE;
use crate::geometry::{Point2, Pose2};
use crate::planner::{Budget, Plan, PlanError, PlanStats, Planner, StageTime, StatusCode};
use crate::stages::SolvedBy;
use crate::trajectory::Trajectory;

/// Why [`plan_through`] failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ThroughError {
    /// The list of goals was empty.
    #[error("no goal pose was given")]
    NoGoals,
    /// The leg to `goals[index]` failed. A goal-side code (`GOAL_OCCUPIED`,
    /// `GOAL_OUTSIDE_MAP`) is about `goals[index]`; a start-side code (`START_OCCUPIED`,
    /// `START_OUTSIDE_MAP`) is about the leg's start: the start pose when `index` is 0, else
    /// `goals[index - 1]`.
    #[error("pose {index}: {error}")]
    Leg {
        /// Position in `goals` of the failing leg's goal (0-based).
        index: usize,
        /// The planner's error for that leg.
        error: PlanError,
    },
}

impl ThroughError {
    /// The status to report: the leg's code, or `INVALID_INPUT` for an empty list.
    pub fn code(&self) -> StatusCode {
        match self {
            ThroughError::NoGoals => StatusCode::InvalidInput,
            ThroughError::Leg { error, .. } => error.code,
        }
    }

    /// The index (in `goals`) of the failing leg's goal; `None` for an empty list.
    pub fn index(&self) -> Option<usize> {
        match self {
            ThroughError::NoGoals => None,
            ThroughError::Leg { index, .. } => Some(*index),
        }
    }
}

impl From<ThroughError> for PlanError {
    /// The error as one [`PlanError`]: its code, and a message naming the pose.
    fn from(e: ThroughError) -> Self {
        match e {
            ThroughError::NoGoals => PlanError::new(StatusCode::InvalidInput, "no goal pose was given"),
            ThroughError::Leg { index, error } => {
                PlanError::new(error.code, format!("pose {index}: {}", error.message))
            }
        }
    }
}

/// Plans from `start` through every pose of `goals` in order (map frame, metres and radians;
/// every heading is required, none is free) within one `budget` (its deadline covers all legs).
///
/// Leg `k` is `planner.plan(from, goals[k], false, budget)`, where `from` is `start` for the
/// first leg and `goals[k - 1]` as given afterwards, so the vehicle passes every via pose with
/// its heading. (When the planner had to end a leg in a covering cell because the vehicle does
/// not fit at the goal itself, its note says so and the next leg starts where that leg ended.)
/// The legs are joined into one [`Plan`]:
/// - `any_angle`: the legs' waypoints in order, a join point not repeated;
/// - `trajectory`: the legs' segments in order; every join is checked continuous (position, and
///   heading, within `2 * JOINT_TOLERANCE`: metres, scaled
///   by the resolution on maps coarser than 1 m per cell, and radians);
/// - `poses`: the legs' poses in order, the pose at a join (same position) not repeated;
/// - `stats`: lengths, planning times and expansions summed, `solved_by` the legs' in order
///   (`[at_goal]` when none moved), stage timings and notes prefixed with the leg (`leg1/regions`, `pose 1: ...`) when
///   there is more than one goal, repair windows concatenated.
///
/// A goal equal to the pose before it makes an empty leg, which contributes nothing. With a
/// single goal the result is that of [`Planner::plan`].
///
/// Fails with [`ThroughError::NoGoals`] for an empty `goals`, and with [`ThroughError::Leg`]
/// (the planner's error and the goal's index) as soon as a leg fails; `NO_VALID_PATH` also when
/// two legs would not join (a guard: the planner ends each leg at its goal).
pub fn plan_through(planner: &Planner, start: Pose2, goals: &[Pose2], budget: &Budget) -> Result<Plan, ThroughError> {
    if goals.is_empty() {
        return Err(ThroughError::NoGoals);
    }
    // One binding for every leg: filling tables in one leg is not the next one's time.
    let budget = &budget.on_this_thread();
    let resolution = planner.map().map_or(1.0, |m| m.site.map().info.resolution);
    let tolerance = 2.0 * JOINT_TOLERANCE * resolution.max(1.0);
    let several = goals.len() > 1;
    let mut any_angle: Vec<Point2> = Vec::new();
    let mut trajectory = Trajectory::default();
    let mut poses: Vec<Pose2> = Vec::new();
    let mut stats = PlanStats::default();
    let mut notes: Vec<String> = Vec::new();
    let mut from = start;
    for (index, &goal) in goals.iter().enumerate() {
        let leg = planner.plan(from, goal, false, budget).map_err(|error| ThroughError::Leg { index, error })?;
        let join_error = |what: String| ThroughError::Leg {
            index,
            error: PlanError::new(StatusCode::NoValidPath, format!("the legs do not join: {what}")),
        };
        // The join: the new leg's first segment must continue the trajectory so far.
        if let (Some(last), Some(first)) = (trajectory.segments.last(), leg.trajectory.segments.first()) {
            // Every leg ends at its pose's heading and the next starts there (turning on the spot
            // first at radius 0), so legs join in position and heading.
            let join = Trajectory { segments: vec![*last, *first], min_turning_radius: 0.0 };
            let gap = join.check_continuity();
            if gap > tolerance {
                return Err(join_error(format!("gap {gap:.3e} before pose {index}")));
            }
        }
        let end = leg.trajectory.segments.last().map(|s| s.end());
        // The next leg starts at the goal as given, unless this leg ended elsewhere (a covering
        // cell, see the planner's note).
        from = match end {
            Some(e) if e.point().distance(goal.point()) > tolerance => e,
            _ => goal,
        };
        let joins = |a: Point2, b: Point2| a.distance(b) <= tolerance;
        for p in leg.any_angle {
            if !any_angle.last().is_some_and(|&q| joins(q, p)) {
                any_angle.push(p);
            }
        }
        let mut leg_poses = leg.poses.into_iter().peekable();
        if let (Some(q), Some(p)) = (poses.last(), leg_poses.peek()) {
            if joins(q.point(), p.point()) {
                leg_poses.next();
            }
        }
        poses.extend(leg_poses);
        let empty = leg.trajectory.is_empty();
        trajectory.min_turning_radius = leg.trajectory.min_turning_radius;
        trajectory.segments.extend(leg.trajectory.segments);

        let s = leg.stats;
        stats.planning_time += s.planning_time;
        stats.table_filling_time += s.table_filling_time;
        stats.expansions += s.expansions;
        stats.any_angle_length += s.any_angle_length;
        stats.trajectory_length += s.trajectory_length;
        let leg_number = several.then_some(index + 1);
        stats.stage_ms.extend(s.stage_ms.into_iter().map(|t| StageTime { leg: leg_number, ..t }));
        if !empty {
            stats.solved_by.extend(s.solved_by);
        }
        if let Some(note) = s.note {
            notes.push(if several { format!("pose {index}: {note}") } else { note });
        }
        stats.repair_windows.extend(s.repair_windows);
    }
    if stats.solved_by.is_empty() {
        stats.solved_by.push(SolvedBy::AtGoal);
    }
    stats.note = (!notes.is_empty()).then(|| notes.join("; "));
    stats.figures = planner.figures(&trajectory);
    Ok(Plan { any_angle, trajectory, poses, stats })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::normalize_angle;
    use crate::map::{MapInfo, OccupancyMap};
    use crate::planner::PlannerConfig;
    use std::f64::consts::FRAC_PI_2;

    const W: usize = 70;
    const H: usize = 40;
    const RES: f64 = 0.1;

    /// A 7 m x 4 m room (border wall) with a 1 m block in the middle (x 3..4 m, y 1.5..2.5 m).
    fn room() -> OccupancyMap {
        let mut data = vec![0i8; W * H];
        for y in 0..H {
            for x in 0..W {
                let border = x == 0 || y == 0 || x == W - 1 || y == H - 1;
                let block = (30..40).contains(&x) && (15..25).contains(&y);
                if border || block {
                    data[y * W + x] = 100;
                }
            }
        }
        let info = MapInfo::at_origin(W, H, RES);
        OccupancyMap::new(info, data, 1 << 20).unwrap()
    }

    fn planner(min_turning_radius: f64) -> Planner {
        let config = PlannerConfig { robot_radius: 0.1, min_turning_radius, ..PlannerConfig::default() };
        let mut p = Planner::new(config).unwrap();
        p.set_map(room()).unwrap();
        p
    }

    fn budget() -> Budget {
        Budget::without_deadline(None)
    }

    const START: Pose2 = Pose2::new(0.8, 0.8, 0.0);

    /// Filling Directional A*'s tables in one leg is not the next leg's time: the first leg
    /// (turning round where it stands: the full search on the lattice, entries made slow)
    /// fills for longer than the whole budget, and the second (a straight run, which looks
    /// nothing up) still has its budget.
    #[test]
    fn filling_tables_in_one_leg_does_not_spend_the_next_legs_budget() {
        let p = planner(0.5);
        crate::directional::tables::slow_filling_on_this_thread(std::time::Duration::from_millis(2));
        let seconds = 0.25;
        let turned = Pose2::new(START.x, START.y + 1.0, std::f64::consts::PI);
        let round = Pose2::new(START.x, START.y + 1.0, 0.0);
        let ahead = Pose2::new(START.x + 2.0, START.y + 1.0, 0.0);
        let plan = plan_through(&p, round, &[turned, round, ahead], &Budget::new(seconds, None));
        let plan = plan.unwrap_or_else(|e| panic!("{e:?}"));
        assert!(plan.stats.table_filling_time > seconds, "the premise: {} s of filling", plan.stats.table_filling_time);
        assert_eq!(plan.poses.last().map(|q| q.point()), Some(ahead.point()));
    }

    fn vias() -> [Pose2; 3] {
        [Pose2::new(2.0, 3.0, FRAC_PI_2), Pose2::new(5.5, 3.0, -FRAC_PI_2), Pose2::new(6.0, 0.8, 0.0)]
    }

    fn same_pose(a: Pose2, b: Pose2) -> bool {
        a.point().distance(b.point()) <= 1e-6 && normalize_angle(a.yaw - b.yaw).abs() <= 1e-6
    }

    #[test]
    fn via_poses_are_reached_in_order_with_their_headings() {
        let p = planner(0.2);
        let goals = vias();
        let plan = plan_through(&p, START, &goals, &budget()).unwrap();
        // Each leg alone, for the lengths and the joins.
        let mut legs = Vec::new();
        let mut from = START;
        for g in goals {
            legs.push(p.plan(from, g, false, &budget()).unwrap());
            from = g;
        }
        let sum = |f: &dyn Fn(&Plan) -> f64| legs.iter().map(f).sum::<f64>();
        assert!((plan.stats.trajectory_length - sum(&|l| l.stats.trajectory_length)).abs() < 1e-9);
        assert!((plan.stats.any_angle_length - sum(&|l| l.stats.any_angle_length)).abs() < 1e-9);
        assert!((plan.trajectory.length() - plan.stats.trajectory_length).abs() < 1e-9);
        let segments: usize = legs.iter().map(|l| l.trajectory.segments.len()).sum();
        assert_eq!(plan.trajectory.segments.len(), segments);
        assert_eq!(plan.stats.expansions, legs.iter().map(|l| l.stats.expansions).sum::<usize>());
        let solved: Vec<SolvedBy> = legs.iter().flat_map(|l| l.stats.solved_by.clone()).collect();
        assert_eq!(plan.stats.solved_by, solved);
        assert!(plan.stats.stage_ms.iter().any(|t| t.label().starts_with("leg3/")), "{:?}", plan.stats.stage_ms);

        // Continuous, from the start through every via pose at the cumulative leg lengths.
        assert!(plan.trajectory.check_continuity() <= 1e-6);
        assert!(same_pose(plan.trajectory.segments[0].start, START));
        let mut s = 0.0;
        for (leg, g) in legs.iter().zip(goals) {
            s += leg.trajectory.length();
            assert!(same_pose(plan.trajectory.pose_at(s).unwrap(), g), "{:?} vs {g:?}", plan.trajectory.pose_at(s));
        }
        // The poses pass every via pose, in order, once each, and end at the last.
        let mut at = 0;
        for g in goals {
            let k = plan.poses[at..].iter().position(|&q| same_pose(q, g)).expect("via pose in the poses");
            at += k + 1;
        }
        assert_eq!(at, plan.poses.len());
        let leg_poses: usize = legs.iter().map(|l| l.poses.len()).sum();
        assert_eq!(plan.poses.len(), leg_poses - (goals.len() - 1));
        for w in plan.poses.windows(2) {
            assert!(w[0].point().distance(w[1].point()) > 1e-9, "a repeated pose");
        }
        // Waypoints: each leg's, the join points not repeated.
        let waypoints: usize = legs.iter().map(|l| l.any_angle.len()).sum();
        assert_eq!(plan.any_angle.len(), waypoints - (goals.len() - 1));
        assert!(plan.any_angle.last().unwrap().distance(goals[2].point()) < 1e-9);
    }

    #[test]
    fn a_single_goal_gives_the_planners_plan() {
        let p = planner(0.2);
        let g = vias()[0];
        let through = plan_through(&p, START, &[g], &budget()).unwrap();
        let direct = p.plan(START, g, false, &budget()).unwrap();
        assert_eq!(through.trajectory, direct.trajectory);
        assert_eq!(through.poses, direct.poses);
        assert_eq!(through.any_angle, direct.any_angle);
        assert_eq!(through.stats.solved_by, direct.stats.solved_by);
        let names = |p: &Plan| p.stats.stage_ms.iter().map(StageTime::label).collect::<Vec<_>>();
        assert_eq!(names(&through), names(&direct));
    }

    #[test]
    fn a_repeated_pose_contributes_nothing() {
        let p = planner(0.2);
        let [a, b, _] = vias();
        let plain = plan_through(&p, START, &[a, b], &budget()).unwrap();
        let repeated = plan_through(&p, START, &[a, a, b, b], &budget()).unwrap();
        assert_eq!(repeated.trajectory, plain.trajectory);
        assert_eq!(repeated.poses, plain.poses);
        assert_eq!(repeated.any_angle, plain.any_angle);
        assert_eq!(repeated.stats.solved_by, plain.stats.solved_by);
        // Only repeats of the start: an empty plan at the start.
        let still = plan_through(&p, START, &[START, START], &budget()).unwrap();
        assert!(still.trajectory.is_empty());
        assert_eq!(still.poses, [START]);
        assert_eq!(still.any_angle, [START.point()]);
        assert_eq!(still.stats.solved_by, [SolvedBy::AtGoal]);
    }

    #[test]
    fn polyline_legs_join_at_radius_zero() {
        let p = planner(0.0);
        let goals = vias();
        let plan = plan_through(&p, START, &goals, &budget()).unwrap();
        assert_eq!(plan.trajectory.min_turning_radius, 0.0);
        // Turns on the spot make every joint meet in heading too, and each pose is reached
        // facing its heading.
        assert!(plan.trajectory.check_continuity() < 1e-6);
        assert!(plan.trajectory.segments.iter().any(|s| s.rotation != 0.0));
        for g in goals {
            let at = |q: &Pose2| q.point().distance(g.point()) < 1e-6 && normalize_angle(q.yaw - g.yaw).abs() < 1e-6;
            assert!(plan.poses.iter().any(at), "{g:?}");
        }
        assert!(plan.poses.last().unwrap().point().distance(goals[2].point()) < 1e-6);
    }

    #[test]
    fn a_failing_via_pose_is_named_by_its_index() {
        let p = planner(0.2);
        let [a, b, c] = vias();
        let inside_block = Pose2::new(3.5, 2.0, 0.0);
        let e = plan_through(&p, START, &[a, b, inside_block, c], &budget()).unwrap_err();
        assert_eq!(e.index(), Some(2));
        assert_eq!(e.code(), StatusCode::GoalOccupied);
        match &e {
            ThroughError::Leg { index: 2, error } => assert_eq!(error.code, StatusCode::GoalOccupied),
            other => panic!("expected leg 2 to fail, got {other:?}"),
        }
        let pe = PlanError::from(e);
        assert_eq!(pe.code, StatusCode::GoalOccupied);
        assert!(pe.message.starts_with("pose 2: "), "{}", pe.message);

        let off_map = Pose2::new(9.0, 1.0, 0.0);
        let e = plan_through(&p, START, &[a, off_map], &budget()).unwrap_err();
        assert_eq!((e.index(), e.code()), (Some(1), StatusCode::GoalOutsideMap));
        // A bad start fails the first leg.
        let e = plan_through(&p, inside_block, &[a], &budget()).unwrap_err();
        assert_eq!((e.index(), e.code()), (Some(0), StatusCode::StartOccupied));
    }

    #[test]
    fn no_goal_and_no_map_are_errors() {
        let p = planner(0.2);
        let e = plan_through(&p, START, &[], &budget()).unwrap_err();
        assert_eq!(e, ThroughError::NoGoals);
        assert_eq!((e.index(), e.code()), (None, StatusCode::InvalidInput));
        assert_eq!(PlanError::from(e).code, StatusCode::InvalidInput);
        let empty = Planner::with_lddb(PlannerConfig::default(), p.lddb().clone()).unwrap();
        let e = plan_through(&empty, START, &vias(), &budget()).unwrap_err();
        assert_eq!((e.index(), e.code()), (Some(0), StatusCode::NoMap));
    }
}
