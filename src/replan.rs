//! Replanning on a living map: after the map changed, is the rest of the trajectory the vehicle
//! is driving still legal from where the vehicle is now, and if not, a new plan to the same goal.
//! ROS-free (the node calls it on a worker thread with a clone of its [`Planner`]).

use crate::directional::footprint::Shape;
use crate::geometry::{normalize_angle, Point2, Pose2};
use crate::planner::{Budget, Leeway, Plan, PlanError, Planner, StartOverlap, StatusCode};
use crate::trajectory::{Segment, Trajectory};

/// Arc length (same unit as `traj`) of the point of `traj` nearest `p`, searched on samples at
/// most `step` apart (`step` > 0; the answer is within `step / 2` of the true nearest point's arc
/// length on a line). `None` for an empty trajectory.
pub fn nearest_arc_length(traj: &Trajectory, p: Point2, step: f64) -> Option<f64> {
    let step = if step.is_finite() && step > 0.0 { step } else { 0.01 };
    let mut best: Option<(f64, f64)> = None;
    let mut offset = 0.0;
    for seg in &traj.segments {
        let n = ((seg.length / step).ceil() as usize).max(1);
        for i in 0..=n {
            let s = seg.length * i as f64 / n as f64;
            let d = seg.pose_at(s).point().distance(p);
            if best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, offset + s));
            }
        }
        offset += seg.length;
    }
    best.map(|(_, s)| s)
}

/// The part of `traj` after arc length `s` (clamped to the trajectory): the segment holding `s`
/// is cut there, later segments are kept as they are. Empty when `s` is at or past the end.
pub fn remaining(traj: &Trajectory, s: f64) -> Trajectory {
    let mut rest = s.max(0.0);
    let mut segments = Vec::new();
    for seg in &traj.segments {
        if !segments.is_empty() {
            segments.push(*seg);
        } else if rest < seg.length {
            segments.push(Segment { start: seg.pose_at(rest), length: seg.length - rest, ..*seg });
        } else {
            rest -= seg.length;
        }
    }
    Trajectory { segments, min_turning_radius: traj.min_turning_radius }
}

/// Checks the rest of `traj` (map frame, metres), from the point nearest `pose`, against the map
/// `planner` holds now: the vehicle's footprint swept along it (the verification rule of the
/// planner) may touch no blocked cell.
///
/// `overlap`: the plan's start-overlap stretch ([`crate::planner::PlanStats::start_overlap`]),
/// its first `segments` segments, on which the footprint overlaps obstacles by design. While the
/// vehicle is on it, what is left of it is checked as it was planned: obstacles reach no deeper
/// into the footprint at any of its poses (every quarter cell) than `depth`; the rest is swept.
///
/// Fails with `NO_MAP` when no map is held, and `NO_VALID_PATH` with the place (metres) where the
/// footprint first meets an obstacle (or, on the stretch, reaches deeper).
pub fn check_remaining(
    planner: &Planner,
    traj: &Trajectory,
    pose: Pose2,
    overlap: Option<&StartOverlap>,
) -> Result<(), PlanError> {
    let prepared = planner.map().ok_or_else(|| PlanError::new(StatusCode::NoMap, "no map is held"))?;
    let info = &prepared.site.map().info;
    // A quarter cell: the footprint sampling step, fine enough for the nearest point.
    let Some(s) = nearest_arc_length(traj, pose.point(), info.resolution / 4.0) else { return Ok(()) };
    let shape = prepared.verified_vehicle().footprint;
    let in_stretch = overlap.map_or(0, |o| o.segments.min(traj.segments.len()));
    let stretch = Trajectory { segments: traj.segments[..in_stretch].to_vec(), ..traj.clone() };
    let after = Trajectory { segments: traj.segments[in_stretch..].to_vec(), ..traj.clone() };
    if let (Some(o), true) = (overlap, s < stretch.length()) {
        let allowed = o.depth / info.resolution + 1e-9;
        let left = remaining(&stretch, s).to_cells(info);
        if let Some(deeper) =
            left.sample(0.25).into_iter().find(|p| prepared.collision.overlap_depth(*p, &shape) > allowed)
        {
            let w = info.cell_to_world(deeper.point());
            return Err(PlanError::new(
                StatusCode::NoValidPath,
                format!(
                    "obstacles reach deeper than {:.3} m into the footprint at ({:.2}, {:.2}) on the way out of the start",
                    o.depth, w.x, w.y
                ),
            ));
        }
    }
    let rest = remaining(&after, s - stretch.length()).to_cells(info);
    if rest.segments.is_empty() || prepared.collision.sweep_free(&rest.segments, &shape, 0.0) {
        return Ok(());
    }
    let hit = prepared.collision.first_blocked(&rest.segments, shape, 0.0).unwrap_or(rest.segments[0].start.point());
    let w = info.cell_to_world(hit);
    Err(PlanError::new(StatusCode::NoValidPath, format!("the footprint meets an obstacle at ({:.2}, {:.2})", w.x, w.y)))
}

/// Indices (ascending, each once) of the poses of a path (map frame, metres and radians) that
/// are not valid on the map `planner` holds now: what Nav2's `IsPathValid` asks.
///
/// The footprint is the one the planner verifies trajectories with: the polygon of `footprint` or
/// the square of `robot_side` turned by the pose's yaw, or the disk of `robot_radius` (with
/// `min_turning_radius` 0, the disk of the footprint's circumscribed radius, since the vehicle
/// turns on the spot at corners).
/// Pose `i` is listed when
/// - it is not finite or lies off the map, or
/// - its footprint at rest (no sampling allowance) touches a blocked cell (the planner's
///   traversability rule: occupied at or above `occupied_threshold`, unknown unless
///   `allow_unknown`) or reaches past the map's edge, or
/// - the footprint swept along the straight segment from pose `i - 1` to pose `i` touches one: the
///   planner's sweep with its sampling allowance of at most `SAMPLE_SPACING / 2` cells, the
///   footprint facing along the segment, or against it (driven backwards) when pose `i - 1`
///   faces away from pose `i` (a path's orientations are the vehicle's headings, so a footprint
///   that is not symmetric, a polygon on its rear axle, is swept the way the vehicle faces); two
///   poses at one place with different headings are a turn on the spot, swept as one (the
///   circumscribed disk; nothing for a disk). Only segments between two poses valid at rest are
///   swept (an invalid pose already marks the path there). The later pose is named: the path is
///   invalid from there on.
///
/// The poses of a trajectory this planner produced on the same map come out valid in practice:
/// the straight segment between two samples `path_spacing` apart leaves the verified curve by at
/// most `path_spacing^2 / (8 * min_turning_radius)` (about a millimetre at the defaults), well
/// inside the sampling allowance the verification already kept. An empty list gives an empty
/// answer. Fails with `NO_MAP` when no map is held.
pub fn invalid_poses(planner: &Planner, poses: &[Pose2]) -> Result<Vec<usize>, PlanError> {
    let prepared = planner.map().ok_or_else(|| PlanError::new(StatusCode::NoMap, "no map is held"))?;
    let info = &prepared.site.map().info;
    let shape = prepared.verified_vehicle().footprint;
    let mut invalid = Vec::new();
    let mut previous: Option<Pose2> = None;
    for (i, &pose) in poses.iter().enumerate() {
        let cell = info.world_pose_to_cell(pose);
        let on_map = pose.is_finite() && info.cell_of(cell.point()).is_some();
        let at_rest = on_map && prepared.collision.pose_free(cell, &shape, 0.0);
        let swept = match previous {
            Some(a) if on_map && a.point().distance(cell.point()) * info.resolution >= 1e-9 => {
                let travel = (cell.y - a.y).atan2(cell.x - a.x);
                let length = a.point().distance(cell.point());
                let backwards = crate::geometry::is_reversing_step(a, cell.point());
                let seg = if backwards {
                    // Facing against the travel, moving backwards along that heading.
                    let heading = normalize_angle(travel + std::f64::consts::PI);
                    Segment { reverse: true, ..Segment::line(Pose2::new(a.x, a.y, heading), length) }
                } else {
                    Segment::line(Pose2::new(a.x, a.y, travel), length)
                };
                prepared.collision.sweep_free(&[seg], &shape, 0.0)
            }
            Some(a) if on_map && !matches!(shape, Shape::Disk(_)) => {
                let turn = normalize_angle(cell.yaw - a.yaw);
                turn.abs() < 1e-9 || prepared.collision.sweep_free(&[Segment::rotate(a, turn)], &shape, 0.0)
            }
            _ => true,
        };
        if !(at_rest && swept) {
            invalid.push(i);
        }
        // A segment leaving an invalid pose is not swept: that pose already marks the path.
        previous = at_rest.then_some(cell);
    }
    Ok(invalid)
}

/// Why a replan ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// The map changed: replan only when the rest of the trajectory is no longer legal.
    MapChange,
    /// The planner's parameters changed (a footprint, a turning radius, the costs): as
    /// [`Trigger::MapChange`], said as what it is.
    ParameterChange,
    /// The `replan_period` elapsed: replan from the latest pose whatever the check says.
    Periodic,
}

impl Trigger {
    /// Why the rest of a trajectory is to be replanned when its check fails with `why`: `map
    /// change blocked the path: ...`, `parameter change ...`, or, for a periodic replan (which
    /// runs after every change was checked, so from the vehicle's latest pose),
    /// `the path is blocked from the latest pose: ...`.
    pub fn blocked(self, why: &str) -> String {
        match self {
            Trigger::MapChange => format!("map change blocked the path: {why}"),
            Trigger::ParameterChange => format!("parameter change blocked the path: {why}"),
            Trigger::Periodic => format!("the path is blocked from the latest pose: {why}"),
        }
    }
}

/// The outcome of [`check_and_replan`].
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The rest of the trajectory is still legal; nothing to publish.
    StillLegal,
    /// A new plan from the vehicle's pose to the goal; `reason` says why it was made.
    Replanned {
        /// The new plan (boxed: the other outcomes are small).
        plan: Box<Plan>,
        /// Why (for the status message).
        reason: String,
    },
    /// A periodic replan failed but the current trajectory is still legal: it stays.
    Kept {
        /// Why the replan failed.
        error: PlanError,
    },
    /// The current trajectory is no longer legal and no new one was found: the vehicle must stop.
    Blocked {
        /// Why no new plan was found (its code is the status to publish).
        error: PlanError,
        /// Why the current trajectory is illegal.
        reason: String,
    },
}

/// A trajectory the vehicle follows (map frame, metres) and its start-overlap stretch, if it has
/// one (see [`check_remaining`]).
#[derive(Debug, Clone, Copy)]
pub struct Followed<'a> {
    /// The trajectory.
    pub trajectory: &'a Trajectory,
    /// Its stretch out of a start the footprint overlapped ([`crate::planner::PlanStats::start_overlap`]).
    pub start_overlap: Option<&'a StartOverlap>,
}

impl<'a> Followed<'a> {
    /// A trajectory with no start-overlap stretch.
    pub fn plain(trajectory: &'a Trajectory) -> Self {
        Self { trajectory, start_overlap: None }
    }
}

/// After a map change or a period: checks the rest of the `followed` trajectory from `pose` and,
/// when it is no
/// longer legal (or on a periodic trigger), plans from `pose` to `goal` within `budget` with the
/// ends' `leeway` ([`Planner::plan_near`]: a vehicle the changed map now overlaps a little drives
/// out of it first).
pub fn check_and_replan(
    planner: &Planner,
    followed: Followed,
    pose: Pose2,
    goal: Pose2,
    trigger: Trigger,
    leeway: Leeway,
    budget: &Budget,
) -> Outcome {
    let check = check_remaining(planner, followed.trajectory, pose, followed.start_overlap);
    let reason = match (&check, trigger) {
        (Ok(()), Trigger::MapChange | Trigger::ParameterChange) => {
            return cheaper_after_a_cost_change(planner, followed, pose, goal, trigger, leeway, budget)
        }
        (Ok(()), Trigger::Periodic) => "periodic replan from the latest pose".to_string(),
        (Err(e), _) => trigger.blocked(&e.message),
    };
    match planner.plan_near(pose, goal, false, leeway, budget) {
        Ok(plan) => Outcome::Replanned { plan: Box::new(plan), reason },
        Err(error) if check.is_ok() => Outcome::Kept { error },
        Err(error) => Outcome::Blocked { error, reason },
    }
}

/// A new plan replaces a legal trajectory after a map change only when it costs this fraction
/// less than the rest of the trajectory: a change of costs that barely matters (an inflation band
/// a cell further out) does not make the vehicle switch paths.
pub const REPLAN_GAIN: f64 = 0.05;

/// After a map change that left the rest of `followed` legal: with traversal costs, the change
/// may have raised its cost (a keep-out zone raised on it) or lowered another way's; a new plan
/// from `pose` replaces it when it costs at least [`REPLAN_GAIN`] less than the rest. Without
/// costs, or when no cheaper plan is found, the trajectory stays.
fn cheaper_after_a_cost_change(
    planner: &Planner,
    followed: Followed,
    pose: Pose2,
    goal: Pose2,
    trigger: Trigger,
    leeway: Leeway,
    budget: &Budget,
) -> Outcome {
    let Some(prepared) = planner.map().filter(|m| m.collision.costs().is_some()) else { return Outcome::StillLegal };
    let step = prepared.site.map().info.resolution / 4.0;
    let Some(s) = nearest_arc_length(followed.trajectory, pose.point(), step) else { return Outcome::StillLegal };
    let rest = remaining(followed.trajectory, s);
    let old = planner.figures(&rest).cost;
    match planner.plan_near(pose, goal, false, leeway, budget) {
        Ok(plan) if plan.stats.figures.cost < old * (1.0 - REPLAN_GAIN) => {
            let reason = format!(
                "{} made the rest of the path dearer than a new one (cost {old:.3} against {:.3})",
                if trigger == Trigger::ParameterChange { "parameter change" } else { "map change" },
                plan.stats.figures.cost
            );
            Outcome::Replanned { plan: Box::new(plan), reason }
        }
        _ => Outcome::StillLegal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::map::{MapInfo, OccupancyMap};
    use crate::planner::PlannerConfig;
    use crate::trajectory::Turn;

    const W: usize = 60;
    const H: usize = 30;
    const RES: f64 = 0.1;

    fn planner() -> Planner {
        // A room with a border wall; a wall at x = 30 cells with two doors (y 4..10 and 20..26).
        let mut data = vec![0i8; W * H];
        for y in 0..H {
            for x in 0..W {
                let border = x == 0 || y == 0 || x == W - 1 || y == H - 1;
                let wall = x == 30 && !((4..10).contains(&y) || (20..26).contains(&y));
                if border || wall {
                    data[y * W + x] = 100;
                }
            }
        }
        let info = MapInfo::at_origin(W, H, RES);
        let config = PlannerConfig { robot_radius: 0.1, min_turning_radius: 0.2, ..PlannerConfig::default() };
        let mut p = Planner::new(config).unwrap();
        p.set_map(OccupancyMap::new(info, data, 1 << 20).unwrap()).unwrap();
        p
    }

    fn budget() -> Budget {
        Budget::without_deadline(None)
    }

    /// [`check_and_replan`] of `plan`'s trajectory (no start-overlap stretch) from `pose`, within
    /// [`budget`].
    fn replan(p: &Planner, plan: &Plan, pose: Pose2, goal: Pose2, trigger: Trigger, leeway: Leeway) -> Outcome {
        check_and_replan(p, Followed::plain(&plan.trajectory), pose, goal, trigger, leeway, &budget())
    }

    fn close_door(p: &mut Planner, ys: std::ops::Range<i64>) {
        let h = ys.end - ys.start;
        p.apply_patch(30, ys.start, 1, h, &vec![100; h as usize]).unwrap();
    }

    #[test]
    fn remaining_cuts_inside_a_segment_and_keeps_the_rest() {
        let t = Trajectory {
            segments: vec![
                Segment::line(Pose2::new(0.0, 0.0, 0.0), 2.0),
                Segment::arc(Pose2::new(2.0, 0.0, 0.0), 1.0, 1.0, Turn::Left),
            ],
            min_turning_radius: 1.0,
        };
        for s in [0.0, 0.5, 1.999, 2.0, 2.4, 3.0, 5.0] {
            let r = remaining(&t, s);
            let expected = (t.length() - s).max(0.0);
            assert!((r.length() - expected).abs() < 1e-12, "s {s}: {} vs {expected}", r.length());
            if let Some(first) = r.segments.first() {
                let at = t.pose_at(s).unwrap();
                assert!(first.start.point().distance(at.point()) < 1e-12);
                assert!(crate::geometry::normalize_angle(first.start.yaw - at.yaw).abs() < 1e-12);
                assert!(r.segments.last().unwrap().end().point().distance(t.segments[1].end().point()) < 1e-12);
            }
        }
        assert!(remaining(&t, 3.0).is_empty());
    }

    #[test]
    fn nearest_arc_length_finds_the_closest_sample() {
        let t = Trajectory::polyline(&[Point2::new(0.0, 0.0), Point2::new(4.0, 0.0), Point2::new(4.0, 3.0)]);
        let s = nearest_arc_length(&t, Point2::new(1.3, 0.7), 0.01).unwrap();
        assert!((s - 1.3).abs() <= 0.005 + 1e-12, "{s}");
        let s = nearest_arc_length(&t, Point2::new(5.0, 2.0), 0.01).unwrap();
        assert!((s - 6.0).abs() <= 0.005 + 1e-12, "{s}");
        assert_eq!(nearest_arc_length(&Trajectory::default(), Point2::new(0.0, 0.0), 0.1), None);
    }

    #[test]
    fn a_closed_door_on_the_path_triggers_a_replan_through_the_other() {
        let mut p = planner();
        let start = Pose2::new(1.0, 0.7, 0.0);
        let goal = Pose2::new(5.0, 0.7, 0.0);
        let plan = p.plan(start, goal, false, &budget()).unwrap();
        check_remaining(&p, &plan.trajectory, start, None).unwrap();
        // The path uses the lower door (shorter); closing the upper one changes nothing.
        close_door(&mut p, 20..26);
        assert_eq!(replan(&p, &plan, start, goal, Trigger::MapChange, Leeway::default()), Outcome::StillLegal);
        // Reopen the upper door and close the lower one: the path is blocked.
        p.apply_patch(30, 20, 1, 6, &[0; 6]).unwrap();
        close_door(&mut p, 4..10);
        let e = check_remaining(&p, &plan.trajectory, start, None).unwrap_err();
        assert_eq!(e.code, StatusCode::NoValidPath);
        // Once past the wall, the closed door is behind the vehicle: the rest is legal.
        let past = plan.trajectory.pose_at(plan.trajectory.length() - 0.3).unwrap();
        check_remaining(&p, &plan.trajectory, past, None).unwrap();
        match replan(&p, &plan, start, goal, Trigger::MapChange, Leeway::default()) {
            Outcome::Replanned { plan: new, reason } => {
                assert!(reason.starts_with("map change blocked the path"), "{reason}");
                check_remaining(&p, &new.trajectory, start, None).unwrap();
                // Through the upper door: some pose crosses the wall above y = 2 m.
                assert!(new.poses.iter().any(|q| (q.x - 3.05).abs() < 0.1 && q.y > 2.0));
            }
            other => panic!("expected a replan, got {other:?}"),
        }
        // The same check after a parameter change, or a periodic one, says what it was.
        for (trigger, said) in [
            (Trigger::ParameterChange, "parameter change blocked the path: the footprint meets"),
            (Trigger::Periodic, "the path is blocked from the latest pose: the footprint meets"),
        ] {
            match replan(&p, &plan, start, goal, trigger, Leeway::default()) {
                Outcome::Replanned { reason, .. } => assert!(reason.starts_with(said), "{reason}"),
                other => panic!("expected a replan, got {other:?}"),
            }
        }
        // Both doors closed: no legal path, the vehicle must stop.
        close_door(&mut p, 20..26);
        match replan(&p, &plan, start, goal, Trigger::MapChange, Leeway::default()) {
            Outcome::Blocked { error, .. } => assert_eq!(error.code, StatusCode::NoValidPath),
            other => panic!("expected Blocked, got {other:?}"),
        }
    }

    /// A zone raised on the path (a grade below the occupied threshold) leaves it legal but
    /// dearer: the map change replans through the other door; an unchanged map does not.
    #[test]
    fn a_zone_raised_on_the_path_replans_when_another_way_is_cheaper() {
        let mut p = planner();
        assert!(p.config().cost_penalty > 0.0, "the default prices costs");
        let start = Pose2::new(1.0, 0.7, 0.0);
        let goal = Pose2::new(5.0, 0.7, 0.0);
        let plan = p.plan(start, goal, false, &budget()).unwrap();
        assert_eq!(replan(&p, &plan, start, goal, Trigger::MapChange, Leeway::default()), Outcome::StillLegal);
        // Cells 20..40 x 1..14 (2 m around the lower door) raised to 64, below the threshold of
        // 65; the wall stays.
        let zone: Vec<i8> = (1..14)
            .flat_map(|y| (20..40).map(move |x| if x == 30 && !(4..10).contains(&y) { 100 } else { 64 }))
            .collect();
        p.apply_patch(20, 1, 20, 13, &zone).unwrap();
        check_remaining(&p, &plan.trajectory, start, None).unwrap();
        match replan(&p, &plan, start, goal, Trigger::MapChange, Leeway::default()) {
            Outcome::Replanned { plan: new, reason } => {
                assert!(reason.starts_with("map change made the rest of the path dearer"), "{reason}");
                assert!(new.poses.iter().any(|q| (q.x - 3.05).abs() < 0.1 && q.y > 2.0), "not through the upper door");
                assert!(new.stats.figures.cost < (1.0 - REPLAN_GAIN) * p.figures(&plan.trajectory).cost);
            }
            other => panic!("expected a replan, got {other:?}"),
        }
    }

    #[test]
    fn a_box_dropped_into_the_vehicles_footprint_is_driven_out_of_on_the_replan() {
        let mut p = planner();
        let start = Pose2::new(1.0, 0.71, 0.0);
        let goal = Pose2::new(5.0, 0.7, 0.0);
        let plan = p.plan(start, goal, false, &budget()).unwrap();
        // A box in cell (10, 8), 1 cm into the footprint from above.
        p.apply_patch(10, 8, 1, 1, &[100]).unwrap();
        assert!(check_remaining(&p, &plan.trajectory, start, None).is_err());
        let leeway = Leeway { tolerance: 0.0, start_overlap: 0.05 };
        match replan(&p, &plan, start, goal, Trigger::MapChange, leeway) {
            Outcome::Replanned { plan: new, .. } => {
                assert!(new.poses[0].point().distance(start.point()) < 1e-9, "starts at the vehicle");
                let overlap = new.stats.start_overlap.expect("the stretch out is marked");
                assert!((overlap.depth - 0.01).abs() < 1e-3, "{overlap:?}");
                let (_, rest) = new.trajectory.segments.split_at(overlap.segments);
                let rest =
                    Trajectory { segments: rest.to_vec(), min_turning_radius: new.trajectory.min_turning_radius };
                check_remaining(&p, &rest, rest.segments[0].start, None).unwrap();
                // From the vehicle, the stretch is legal as planned (no needless replan), though a
                // sweep of the whole trajectory meets the box.
                check_remaining(&p, &new.trajectory, start, Some(&overlap)).unwrap();
                assert!(check_remaining(&p, &new.trajectory, start, None).is_err());
                // The box grows down over the vehicle's centre: deeper than planned, it is not.
                let mut deeper = p.clone();
                deeper.apply_patch(10, 7, 1, 1, &[100]).unwrap();
                let e = check_remaining(&deeper, &new.trajectory, start, Some(&overlap)).unwrap_err();
                assert!(e.message.contains("deeper than 0.010 m"), "{}", e.message);
            }
            other => panic!("expected a replan out of the overlap, got {other:?}"),
        }
        // Without leeway the vehicle must stop, told how deep the box reaches.
        match replan(&p, &plan, start, goal, Trigger::MapChange, Leeway::default()) {
            Outcome::Blocked { error, .. } => {
                assert_eq!(error.code, StatusCode::StartOccupied);
                assert!(error.message.contains("reach 0.010 m into its footprint"), "{}", error.message);
            }
            other => panic!("expected Blocked, got {other:?}"),
        }
    }

    #[test]
    fn periodic_replans_from_the_latest_pose_or_keeps_a_legal_path() {
        let p = planner();
        let start = Pose2::new(1.0, 0.7, 0.0);
        let goal = Pose2::new(5.0, 0.7, 0.0);
        let plan = p.plan(start, goal, false, &budget()).unwrap();
        let pose = plan.trajectory.pose_at(1.0).unwrap();
        match replan(&p, &plan, pose, goal, Trigger::Periodic, Leeway::default()) {
            Outcome::Replanned { plan: new, .. } => {
                assert!(new.poses[0].point().distance(pose.point()) < 1e-9);
                assert!(new.stats.trajectory_length <= plan.stats.trajectory_length - 1.0 + 0.1);
            }
            other => panic!("expected a replan, got {other:?}"),
        }
        // A spent budget: the replan fails but the legal path is kept.
        let spent = Budget::new(0.0, None);
        match check_and_replan(
            &p,
            Followed::plain(&plan.trajectory),
            pose,
            goal,
            Trigger::Periodic,
            Leeway::default(),
            &spent,
        ) {
            Outcome::Kept { error } => assert_eq!(error.code, StatusCode::Timeout),
            other => panic!("expected Kept, got {other:?}"),
        }
    }
}

#[cfg(test)]
mod invalid_poses_tests {
    use super::*;
    use crate::directional::footprint::Shape;
    use crate::map::{MapInfo, OccupancyMap};
    use crate::planner::PlannerConfig;
    use std::f64::consts::{FRAC_PI_2, FRAC_PI_4, PI};

    const W: usize = 70;
    const H: usize = 40;
    const RES: f64 = 0.1;

    /// A 7 m x 4 m room (border wall) with a 1 m block in the middle (x 3..4 m, y 1.5..2.5 m).
    fn planner(config: PlannerConfig) -> Planner {
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
        let mut p = Planner::new(config).unwrap();
        p.set_map(OccupancyMap::new(info, data, 1 << 20).unwrap()).unwrap();
        p
    }

    fn disk(min_turning_radius: f64) -> Planner {
        planner(PlannerConfig { robot_radius: 0.1, min_turning_radius, ..PlannerConfig::default() })
    }

    fn square() -> Planner {
        planner(PlannerConfig { robot_side: 0.4, min_turning_radius: 0.3, ..PlannerConfig::default() })
    }

    /// Poses every 5 cm along the line from `a` to `b`, heading along it.
    fn line(a: Point2, b: Point2) -> Vec<Pose2> {
        let n = (a.distance(b) / 0.05).ceil() as usize;
        let yaw = (b.y - a.y).atan2(b.x - a.x);
        (0..=n)
            .map(|i| {
                let t = i as f64 / n as f64;
                Pose2::new(a.x + t * (b.x - a.x), a.y + t * (b.y - a.y), yaw)
            })
            .collect()
    }

    /// A rectangle on its rear axle (0.9 m x 0.5 m, base_link 0.2 m from the rear) backing up
    /// towards the room's right wall, facing away from it: its rear stops 0.25 m short of the wall
    /// (valid), though the same poses swept facing the travel would put its 0.7 m nose through
    /// the wall; backed on until its rear passes the wall's face, it is not.
    #[test]
    fn a_polygon_is_swept_the_way_the_vehicle_faces() {
        let rect =
            crate::polygon::Polygon::parse_nav2("[[0.7, 0.25], [0.7, -0.25], [-0.2, -0.25], [-0.2, 0.25]]").unwrap();
        let p = planner(PlannerConfig { footprint: rect, min_turning_radius: 0.8, ..PlannerConfig::default() });
        // The inner face of the right wall is at x = 6.9 m; backing from x 5.0 to 6.45 m.
        let backing: Vec<Pose2> =
            line(Point2::new(5.0, 0.8), Point2::new(6.45, 0.8)).into_iter().map(|q| Pose2 { yaw: PI, ..q }).collect();
        assert_eq!(invalid_poses(&p, &backing).unwrap(), Vec::<usize>::new());
        let too_far: Vec<Pose2> =
            line(Point2::new(5.0, 0.8), Point2::new(6.8, 0.8)).into_iter().map(|q| Pose2 { yaw: PI, ..q }).collect();
        let bad = invalid_poses(&p, &too_far).unwrap();
        // The rear (0.2 m behind base_link) reaches the wall's face at 6.9 m past x = 6.7 m.
        assert!(!bad.is_empty() && bad.iter().all(|&i| too_far[i].x > 6.6), "{bad:?}");
        // Two poses free at rest, at one place: the turn between them sweeps the circumscribed
        // disk (0.74 m), which reaches the block's corner (3.0, 1.5) m 0.5 m away.
        let at = Pose2::new(2.6, 1.2, -FRAC_PI_2);
        let turned = Pose2 { yaw: PI, ..at };
        assert_eq!(invalid_poses(&p, &[at]).unwrap(), Vec::<usize>::new());
        assert_eq!(invalid_poses(&p, &[turned]).unwrap(), Vec::<usize>::new());
        assert_eq!(invalid_poses(&p, &[at, turned]).unwrap(), vec![1]);
    }

    #[test]
    fn a_path_through_free_space_is_valid() {
        for p in [disk(0.2), disk(0.0), square()] {
            let path = line(Point2::new(0.8, 0.8), Point2::new(6.0, 0.8));
            assert_eq!(invalid_poses(&p, &path).unwrap(), Vec::<usize>::new());
            assert_eq!(invalid_poses(&p, &[]).unwrap(), Vec::<usize>::new());
        }
    }

    #[test]
    fn the_planners_own_paths_are_valid() {
        let start = Pose2::new(0.8, 0.8, 0.0);
        for p in [disk(0.2), disk(0.0), square()] {
            for goal in [Pose2::new(5.5, 3.0, -FRAC_PI_2), Pose2::new(6.0, 2.0, FRAC_PI_2), Pose2::new(2.0, 3.2, 0.0)] {
                let plan = p.plan(start, goal, false, &Budget::without_deadline(None)).unwrap();
                assert_eq!(invalid_poses(&p, &plan.poses).unwrap(), Vec::<usize>::new(), "to {goal:?}");
            }
        }
    }

    #[test]
    fn poses_in_or_touching_an_obstacle_are_listed() {
        let p = disk(0.2);
        let poses = [
            Pose2::new(1.0, 2.0, 0.0),
            Pose2::new(3.5, 2.0, 0.0),  // inside the block
            Pose2::new(2.95, 2.0, 0.0), // centre free, footprint reaches x = 3.05
            Pose2::new(2.85, 2.0, 0.0), // footprint ends at x = 2.95: free
            Pose2::new(2.0, 3.85, 0.0), // touches the top wall (y >= 3.9)
            Pose2::new(2.0, 3.5, 0.0),
        ];
        assert_eq!(invalid_poses(&p, &poses).unwrap(), [1, 2, 4]);
        // At radius 0 the footprint is the same disk.
        assert_eq!(invalid_poses(&disk(0.0), &poses).unwrap(), [1, 2, 4]);
    }

    #[test]
    fn the_rest_of_a_trajectory_is_checked_with_the_square_footprint() {
        // A 40 cm square driving along y = 1.22 m spans y 1.02..1.42 m; the disk of the default
        // robot_radius (15 cm, to 1.37 m) would not reach an obstacle cell at y 1.4..1.5 m.
        let mut p = square();
        let along = |y: f64| Trajectory::polyline(&[Point2::new(1.0, y), Point2::new(6.0, y)]);
        let start = Pose2::new(1.0, 1.22, 0.0);
        check_remaining(&p, &along(1.22), start, None).unwrap();
        p.apply_patch(20, 14, 1, 1, &[100]).unwrap();
        let e = check_remaining(&p, &along(1.22), start, None).unwrap_err();
        assert_eq!(e.code, StatusCode::NoValidPath);
        let at: Vec<f64> = e.message.split(['(', ',', ')']).filter_map(|t| t.trim().parse().ok()).collect();
        assert!(at.len() == 2 && (at[0] - 2.05).abs() <= 0.25 && (at[1] - 1.22).abs() < 0.006, "{}", e.message);
        // 22 cm lower the square passes it; and once past it, the rest is legal.
        check_remaining(&p, &along(1.0), Pose2::new(1.0, 1.0, 0.0), None).unwrap();
        check_remaining(&p, &along(1.22), Pose2::new(2.6, 1.22, 0.0), None).unwrap();
        // What the check did before: the disk of robot_radius swept along it finds nothing.
        let prepared = p.map().unwrap();
        let cells = along(1.22).to_cells(&prepared.site.map().info);
        let disk = Shape::Disk(PlannerConfig::default().robot_radius / RES);
        assert!(prepared.collision.sweep_free(&cells.segments, disk, 0.0), "the disk alone misses the cell");
    }

    #[test]
    fn the_rest_of_a_trajectory_is_checked_with_the_polygon_footprint() {
        // The rear-axle rectangle (0.9 m x 0.5 m, base_link 0.2 m ahead of its rear) driving
        // forwards along y = 0.8 m to x = 2.0 m: its nose reaches x = 2.7 m at the end, where the
        // disk of the default robot_radius around base_link (to x = 2.15 m) reaches nothing.
        let rect =
            crate::polygon::Polygon::parse_nav2("[[0.7, 0.25], [0.7, -0.25], [-0.2, -0.25], [-0.2, 0.25]]").unwrap();
        let mut p = planner(PlannerConfig { footprint: rect, min_turning_radius: 0.8, ..PlannerConfig::default() });
        let along = Trajectory::polyline(&[Point2::new(1.0, 0.8), Point2::new(2.0, 0.8)]);
        let start = Pose2::new(1.0, 0.8, 0.0);
        check_remaining(&p, &along, start, None).unwrap();
        // A box in cell (25, 8): x 2.5..2.6 m, y 0.8..0.9 m, under the nose at the end.
        p.apply_patch(25, 8, 1, 1, &[100]).unwrap();
        let e = check_remaining(&p, &along, start, None).unwrap_err();
        assert_eq!(e.code, StatusCode::NoValidPath);
        let at: Vec<f64> = e.message.split(['(', ',', ')']).filter_map(|t| t.trim().parse().ok()).collect();
        // First met where the nose (0.7 m ahead) reaches x = 2.5 m: base_link at x = 1.8 m.
        assert!(at.len() == 2 && (at[0] - 1.8).abs() <= 0.08 && (at[1] - 0.8).abs() < 0.006, "{}", e.message);
        // Stopping at x = 1.75 m (the nose at 2.45 m) it is clear, and a box beside the
        // rectangle's side (y 1.1..1.2 m, beyond its 1.05 m) touches nothing.
        let shorter = Trajectory::polyline(&[Point2::new(1.0, 0.8), Point2::new(1.75, 0.8)]);
        check_remaining(&p, &shorter, start, None).unwrap();
        p.apply_patch(15, 11, 1, 1, &[100]).unwrap();
        check_remaining(&p, &shorter, start, None).unwrap();
        // What a disk of robot_radius around base_link would have found: nothing.
        let prepared = p.map().unwrap();
        let cells = along.to_cells(&prepared.site.map().info);
        let disk = Shape::Disk(PlannerConfig::default().robot_radius / RES);
        assert!(prepared.collision.sweep_free(&cells.segments, disk, 0.0), "the disk alone misses the box");
    }

    #[test]
    fn poses_off_the_map_or_not_finite_are_listed() {
        let p = disk(0.2);
        let poses = [
            Pose2::new(-0.5, 1.0, 0.0),
            Pose2::new(1.0, 1.0, 0.0),
            Pose2::new(7.5, 1.0, 0.0),
            Pose2::new(1.0, 1.2, 0.0),
            Pose2::new(f64::NAN, 1.0, 0.0),
            Pose2::new(1.0, 1.0, f64::INFINITY),
            Pose2::new(1.0, -3.0, 0.0),
        ];
        assert_eq!(invalid_poses(&p, &poses).unwrap(), [0, 2, 4, 5, 6]);
    }

    #[test]
    fn a_sweep_through_an_obstacle_names_the_later_pose() {
        let p = disk(0.2);
        // Both ends free, the straight segment between them crosses the block.
        let a = Pose2::new(2.5, 2.0, 0.0);
        let b = Pose2::new(4.5, 2.0, 0.0);
        let c = Pose2::new(4.5, 3.2, FRAC_PI_2);
        assert_eq!(invalid_poses(&p, &[a, b, c]).unwrap(), [1]);
        assert_eq!(invalid_poses(&p, &[c, b, a]).unwrap(), [2]);
        // Grazing the block's corner: the footprint swept from (2.5, 2.6) to (4.5, 2.6) comes
        // within 0.1 m of the block's top face (y = 2.5).
        let graze = [Pose2::new(2.5, 2.58, 0.0), Pose2::new(4.5, 2.58, 0.0)];
        assert_eq!(invalid_poses(&p, &graze).unwrap(), [1]);
        let clear = [Pose2::new(2.5, 2.65, 0.0), Pose2::new(4.5, 2.65, 0.0)];
        assert_eq!(invalid_poses(&p, &clear).unwrap(), Vec::<usize>::new());
    }

    #[test]
    fn a_square_footprint_is_checked_turned_by_the_yaw() {
        let p = square();
        // The block's left face is x = 3.0 m; the 0.4 m square centred 0.25 m from it fits
        // axis-aligned (reaches 2.95) but not turned by 45 degrees (reaches 3.03).
        let poses = [
            Pose2::new(2.75, 2.0, 0.0),
            Pose2::new(2.75, 2.0, FRAC_PI_4),
            Pose2::new(2.75, 2.0, FRAC_PI_2),
            Pose2::new(2.75, 2.0, -3.0 * FRAC_PI_4),
        ];
        assert_eq!(invalid_poses(&p, &poses).unwrap(), [1, 3]);
    }

    #[test]
    fn no_map_is_an_error() {
        let p = Planner::new(PlannerConfig::default()).unwrap();
        let e = invalid_poses(&p, &[Pose2::new(1.0, 1.0, 0.0)]).unwrap_err();
        assert_eq!(e.code, StatusCode::NoMap);
    }
}
