//! A start where the vehicle's footprint overlaps obstacles by a little: after a localisation
//! jump, or with a robot pushed against a shelf, the robot's pose is a few centimetres inside
//! the inflation or a wall's cells, and it must still be able to leave.
//!
//! [`Planner::plan_out_of_overlap`] measures how deep obstacles reach into the footprint
//! ([`crate::directional::footprint::CollisionMap::overlap_depth`]). Within the allowed depth it
//! looks for the shortest way out the vehicle can drive from where it is, along which the depth
//! never grows: with a turning radius, a line or an arc of that radius in each allowed gear; when
//! turning on the spot, a turn to one of [`HEADINGS`] headings then a line. Each way is walked in
//! steps of half the sweep's sample spacing, every pose's depth at most the previous one's, until
//! the footprint stands free as a trajectory's start must (and on, while it stays free). The rest
//! is planned from the first free pose by the usual pipeline (verified as every plan is), cheapest
//! way first; where the planner would not start exactly there (a covering cell), from further
//! along the way, half a cell at a time; and the stretch is prepended.

use super::stats::StartOverlap;
use super::steps::End;
use super::{Budget, Plan, PlanError, Planner, StatusCode};
use crate::directional::footprint::{CollisionMap, Shape, SAMPLE_SPACING};
use crate::directional::verify::Vehicle;
use crate::geometry::{normalize_angle, Coord, Pose2};
use crate::trajectory::{Segment, Trajectory};

/// Headings a vehicle that turns on the spot may leave in (evenly spaced, plus its own).
pub const HEADINGS: usize = 32;

/// Ways out tried (cheapest first) before the start is refused: each costs a plan.
const MAX_WAYS: usize = 8;

/// Depth differences below this (cells) are rounding, not a deeper pose.
const DEPTH_EPSILON: f64 = 1e-9;

/// Plans tried (ways and lengths along them, cheapest way first) before the start is refused.
const MAX_TRIES: usize = 24;

/// A way out of the overlap, in cells: a first piece (`lead`: a turn on the spot, or nothing),
/// then a line or arc from `from`, free (the footprint standing free) from `free_at` on, up to
/// `free_until` (cells along it, every pose checked).
struct Way {
    lead: Vec<Segment>,
    from: Pose2,
    curvature: f64,
    reverse: bool,
    free_at: f64,
    free_until: f64,
    /// Cost per cell along it: 1, or the reverse penalty backwards.
    rate: f64,
}

impl Way {
    /// The way's segments up to `length` cells along its line or arc.
    fn segments(&self, length: f64) -> Vec<Segment> {
        let mut segments = self.lead.clone();
        segments.push(Segment {
            start: self.from,
            length,
            curvature: self.curvature,
            reverse: self.reverse,
            rotation: 0.0,
        });
        segments
    }

    /// Lengths to end the way at, shortest first: the first free pose, then every half cell
    /// further while it stays free (the planner may not plan from a pose right at an obstacle's
    /// edge exactly there, see `Planner::plan_out_of_overlap`).
    fn ends(&self) -> impl Iterator<Item = f64> + '_ {
        let n = ((self.free_until - self.free_at) / 0.5).floor() as usize;
        (0..=n).map(move |i| self.free_at + 0.5 * i as f64)
    }
}

impl Planner {
    /// How deep (cells) obstacles reach into the vehicle's footprint at `start` (map frame),
    /// when that is more than nothing; `None` when the footprint stands free there, and for a
    /// start that is not finite or not in the map (the plan itself refuses those).
    pub(super) fn start_overlap_depth(&self, start: Pose2) -> Option<f64> {
        let prepared = self.map()?;
        let info = &prepared.site.map().info;
        if !(start.x.is_finite() && start.y.is_finite() && start.yaw.is_finite()) {
            return None;
        }
        let at = info.world_pose_to_cell(start);
        let inside = at.x >= 0.0 && at.y >= 0.0 && at.x < info.width as f64 && at.y < info.height as f64;
        let vehicle = prepared.verified_vehicle();
        let depth = if inside { prepared.collision.overlap_depth(at, &vehicle.footprint) } else { 0.0 };
        (depth > 0.0).then_some(depth)
    }

    /// Plans from a start where obstacles reach `depth` cells (> 0, see
    /// [`Planner::start_overlap_depth`]) into the footprint: when that is at most `max_depth`
    /// (map units) and a way out exists that never goes deeper, `plan_rest` from the end of the
    /// cheapest such way that it can plan from, with the way prepended (see the module doc).
    ///
    /// Fails with `START_OCCUPIED` stating the depth when it exceeds `max_depth` (or
    /// `max_depth` is 0) or no way out exists; with `plan_rest`'s error for the cheapest way when
    /// none could be planned from; `TIMEOUT` / `SUPERSEDED` when the budget ends.
    pub(super) fn plan_out_of_overlap(
        &self,
        start: Pose2,
        depth: f64,
        max_depth: f64,
        budget: &Budget,
        plan_rest: impl Fn(Pose2) -> Result<Plan, PlanError>,
    ) -> Result<Plan, PlanError> {
        let Some(prepared) = self.map() else { return plan_rest(start) };
        let info = &prepared.site.map().info;
        let res = info.resolution;
        let symbol = self.units.symbol();
        let vehicle = prepared.verified_vehicle();
        let reverse_penalty = self.config.reverse_penalty;
        let at = info.world_pose_to_cell(start);
        let refused = |why: String| {
            PlanError::new(
                StatusCode::StartOccupied,
                format!(
                    "the vehicle does not fit at start ({:.3}, {:.3}) {symbol}: {why}",
                    Coord(start.x),
                    Coord(start.y)
                ),
            )
        };
        if depth * res > max_depth || max_depth == 0.0 {
            let why = format!(
                "obstacles reach {:.3} {symbol} into its footprint (start_overlap allows {max_depth:.3} {symbol})",
                depth * res
            );
            // A start whose own cell is an obstacle or unknown space says so first, as plan does.
            let rule = self.config.traversability();
            let centre = info
                .cell_of(at.point())
                .filter(|c| prepared.site.map().value(c.0, c.1).is_none_or(|v| rule.is_blocked(v)));
            return Err(match centre {
                Some(cell) => {
                    let e = self.no_standing_place(prepared, start, cell, End::Start);
                    PlanError::new(e.code, format!("{}; {why}", e.message))
                }
                None => refused(why),
            });
        }
        let ways = ways_out(&prepared.collision, at, &vehicle, reverse_penalty, depth);
        if ways.is_empty() {
            return Err(refused(format!(
                "obstacles reach {:.3} {symbol} into its footprint and no way out of them that never goes \
                 deeper is drivable",
                depth * res
            )));
        }
        // The planner plans from a free pose exactly unless its cell cannot hold the vehicle's mask
        // and obstacles are close (it then starts in a covering cell: not a join), so each way is
        // tried at its first free pose and, when the rest would start elsewhere, further along.
        let mut first_error = None;
        let mut tries = 0;
        'ways: for way in ways.iter().take(MAX_WAYS) {
            for length in way.ends() {
                if tries == MAX_TRIES {
                    break 'ways;
                }
                tries += 1;
                if budget.should_stop() {
                    return Err(budget.stop_error());
                }
                let out = Trajectory { segments: way.segments(length), min_turning_radius: vehicle.min_turning_radius }
                    .to_world(info);
                let from = out.segments.last().map_or(start, Segment::end);
                match plan_rest(from) {
                    Ok(rest) if starts_at(&rest, from) => {
                        return Ok(joined(out, rest, depth * res, start, symbol, self));
                    }
                    Ok(_) => {}
                    Err(e) if matches!(e.code, StatusCode::Timeout | StatusCode::Superseded) => return Err(e),
                    Err(e) => {
                        first_error.get_or_insert((e, out.length()));
                        continue 'ways;
                    }
                }
            }
        }
        Err(match first_error {
            Some((e, length)) => PlanError::new(
                e.code,
                format!(
                    "{} (planned from {length:.3} {symbol} along the way out of the start's overlap of {:.3} \
                     {symbol})",
                    e.message,
                    depth * res
                ),
            ),
            None => refused(format!(
                "obstacles reach {:.3} {symbol} into its footprint; no way out of them joins a plan",
                depth * res
            )),
        })
    }
}

/// The plan `rest` starts exactly at `from` (a trajectory's first pose, or the lone pose of a
/// plan that does not move).
fn starts_at(rest: &Plan, from: Pose2) -> bool {
    let first = rest.trajectory.segments.first().map(|s| s.start).or_else(|| rest.poses.first().copied());
    first.is_some_and(|p| p.point().distance(from.point()) < 1e-9 && normalize_angle(p.yaw - from.yaw).abs() < 1e-9)
}

/// `out` (world) then `rest`: one trajectory, re-sampled, with the stretch recorded and noted.
fn joined(out: Trajectory, mut rest: Plan, depth: f64, start: Pose2, symbol: &str, planner: &Planner) -> Plan {
    let stretch = StartOverlap { depth, segments: out.segments.len(), length: out.length() };
    let mut segments = out.segments;
    segments.append(&mut rest.trajectory.segments);
    rest.trajectory.segments = segments;
    rest.poses = rest.trajectory.sample(planner.config.path_spacing);
    rest.stats.trajectory_length = rest.trajectory.length();
    rest.stats.figures = planner.figures(&rest.trajectory);
    let said = format!(
        "start ({:.3}, {:.3}) {symbol} overlaps obstacles by {depth:.3} {symbol}: the first {:.3} {symbol} \
         ({} segment{}) drive out of them, never deeper",
        start.x,
        start.y,
        stretch.length,
        stretch.segments,
        if stretch.segments == 1 { "" } else { "s" }
    );
    rest.stats.note = Some(match rest.stats.note.take() {
        Some(note) => format!("{said}; {note}"),
        None => said,
    });
    rest.stats.start_overlap = Some(stretch);
    rest
}

/// Every way out of the overlap at `start` (cells) for `vehicle`, cheapest first by the length
/// to its first free pose (ties in the order tried): no pose along it is deeper than the one
/// before (`depth` at the start), and from its first free pose on every pose stands free.
fn ways_out(collision: &CollisionMap, start: Pose2, vehicle: &Vehicle, reverse_penalty: f64, depth: f64) -> Vec<Way> {
    let shape = &vehicle.footprint;
    // Crossing its own footprint frees any vehicle that can be freed by going straight on.
    let reach = 2.0 * shape.circumradius() + 2.0;
    let step = SAMPLE_SPACING / 2.0;
    let mut ways: Vec<Way> = Vec::new();
    // A first piece, then a line or arc walked pose by pose: never deeper, and once free, as
    // far as it stays free (within the reach).
    let mut walk = |lead: Vec<Segment>, lead_ok: bool, from: Pose2, curvature: f64, reverse: bool| {
        if !lead_ok {
            return;
        }
        let mut last = depth;
        let mut free_at = None;
        let mut s = step;
        while s <= reach + 1e-12 {
            let pose = Segment { start: from, length: s, curvature, reverse, rotation: 0.0 }.end();
            let d = collision.overlap_depth(pose, shape);
            let free = collision.stands_free(pose, shape);
            if d > last + DEPTH_EPSILON || (free_at.is_some() && !free) {
                break;
            }
            last = d;
            if free && free_at.is_none() {
                free_at = Some(s);
            }
            s += step;
        }
        if let Some(free_at) = free_at {
            let rate = if reverse { reverse_penalty } else { 1.0 };
            let free_until = (s - step).max(free_at);
            ways.push(Way { lead, from, curvature, reverse, free_at, free_until, rate });
        }
    };
    if vehicle.min_turning_radius > 0.0 {
        let k = 1.0 / vehicle.min_turning_radius;
        let gears: &[bool] = if vehicle.may_reverse { &[false, true] } else { &[false] };
        for &reverse in gears {
            for curvature in [0.0, k, -k] {
                walk(Vec::new(), true, start, curvature, reverse);
            }
        }
    } else {
        let mut headings = vec![start.yaw];
        headings.extend((0..HEADINGS).map(|i| normalize_angle(i as f64 * std::f64::consts::TAU / HEADINGS as f64)));
        for yaw in headings {
            let turn = normalize_angle(yaw - start.yaw);
            if turn.abs() < 1e-12 {
                walk(Vec::new(), true, start, 0.0, false);
            } else {
                let turned = Pose2::new(start.x, start.y, yaw);
                let ok = turn_never_deeper(collision, start, turn, shape, depth);
                walk(vec![Segment::rotate(start, turn)], ok, turned, 0.0, false);
            }
        }
    }
    ways.sort_by(|a, b| (a.free_at * a.rate).total_cmp(&(b.free_at * b.rate)));
    ways
}

/// Turning on the spot at `start` by `turn` never takes the footprint deeper than `depth` (nor
/// deeper than it was a step before): the disk does not change; the square is checked at steps
/// that move its corners at most half the sample spacing.
fn turn_never_deeper(collision: &CollisionMap, start: Pose2, turn: f64, shape: &Shape, depth: f64) -> bool {
    if matches!(shape, Shape::Disk(_)) {
        return true;
    }
    let n = ((turn.abs() * shape.circumradius()) / (SAMPLE_SPACING / 2.0)).ceil().max(1.0) as usize;
    let mut last = depth;
    (1..=n).all(|i| {
        let pose = Pose2::new(start.x, start.y, start.yaw + turn * i as f64 / n as f64);
        let d = collision.overlap_depth(pose, shape);
        let ok = d <= last + DEPTH_EPSILON;
        last = d;
        ok
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::directional::MotionModel;
    use crate::geometry::Point2;
    use crate::map::{MapInfo, OccupancyMap};
    use crate::planner::{Leeway, PlannerConfig};
    use std::f64::consts::{FRAC_PI_2, PI};

    const RES: f64 = 0.05;
    const W: usize = 120;
    const H: usize = 80;

    /// A 6 x 4 m room at 5 cm: a border wall one cell thick (its inner faces at x = 0.05 m,
    /// y = 0.05 m, x = 5.95 m, y = 3.95 m) and a pillar at x 2..2.6 m, y 1.5..2.1 m.
    fn blocked(x: usize, y: usize) -> bool {
        x == 0 || y == 0 || x == W - 1 || y == H - 1 || ((40..52).contains(&x) && (30..42).contains(&y))
    }

    fn planner(config: PlannerConfig) -> Planner {
        let data = (0..W * H).map(|k| if blocked(k % W, k / W) { 100 } else { 0 }).collect();
        let info = MapInfo::at_origin(W, H, RES);
        let mut p = Planner::new(config).unwrap();
        p.set_map(OccupancyMap::new(info, data, 1 << 20).unwrap()).unwrap();
        p
    }

    fn disk(min_turning_radius: f64, motion_model: MotionModel) -> PlannerConfig {
        PlannerConfig { robot_radius: 0.15, min_turning_radius, motion_model, ..PlannerConfig::default() }
    }

    fn budget() -> Budget {
        Budget::without_deadline(None)
    }

    fn leeway() -> Leeway {
        Leeway { tolerance: 0.0, start_overlap: 0.05 }
    }

    /// Independent of the crate's footprint code: how deep the blocked cells reach into the
    /// footprint at `pose` (m): for the disk its radius less the distance to the nearest blocked
    /// square; for the square (side `side`) its half side less the max-norm distance, found on a
    /// lattice of points 1/40 cell apart.
    fn depth(pose: Pose2, radius: f64, side: f64) -> f64 {
        let mut deepest: f64 = 0.0;
        for y in 0..H {
            for x in 0..W {
                if !blocked(x, y) {
                    continue;
                }
                let (x0, y0) = (x as f64 * RES, y as f64 * RES);
                if (pose.x - x0 - RES / 2.0).hypot(pose.y - y0 - RES / 2.0) > radius.max(side) + RES {
                    continue;
                }
                if side == 0.0 {
                    let dx = (x0 - pose.x).max(pose.x - x0 - RES).max(0.0);
                    let dy = (y0 - pose.y).max(pose.y - y0 - RES).max(0.0);
                    deepest = deepest.max(radius - dx.hypot(dy));
                } else {
                    let (c, s) = (pose.yaw.cos(), pose.yaw.sin());
                    for j in 0..=40 {
                        for i in 0..=40 {
                            let (px, py) = (x0 + RES * i as f64 / 40.0 - pose.x, y0 + RES * j as f64 / 40.0 - pose.y);
                            let (u, v) = (px * c + py * s, -px * s + py * c);
                            deepest = deepest.max(side / 2.0 - u.abs().max(v.abs()));
                        }
                    }
                }
            }
        }
        deepest
    }

    /// Poses every 5 mm along the segments (and through each turn on the spot).
    fn poses_along(segments: &[Segment]) -> Vec<Pose2> {
        let mut out = Vec::new();
        for s in segments {
            if s.rotation != 0.0 {
                let n = (s.rotation.abs() / 0.02).ceil() as usize;
                out.extend(
                    (0..=n).map(|i| Pose2::new(s.start.x, s.start.y, s.start.yaw + s.rotation * i as f64 / n as f64)),
                );
            } else {
                let n = (s.length / 0.005).ceil().max(1.0) as usize;
                out.extend((0..=n).map(|i| s.pose_at(s.length * i as f64 / n as f64)));
            }
        }
        out
    }

    /// The plan starts exactly at `start`, drives out of an overlap of `expected` m never deeper
    /// (by the independent depth), and the rest never overlaps at all.
    fn check_way_out(plan: &Plan, start: Pose2, expected: f64, radius: f64, side: f64) {
        let first = plan.trajectory.segments[0].start;
        assert!(first.point().distance(start.point()) < 1e-9 && (first.yaw - start.yaw).abs() < 1e-9, "{first:?}");
        assert!(plan.poses[0].point().distance(start.point()) < 1e-9);
        let stretch = plan.stats.start_overlap.expect("the stretch is recorded");
        assert!((stretch.depth - expected).abs() < 2e-3 * RES / 0.05, "{} vs {expected}", stretch.depth);
        let (out, rest) = plan.trajectory.segments.split_at(stretch.segments);
        assert!((out.iter().map(|s| s.length).sum::<f64>() - stretch.length).abs() < 1e-9);
        let mut last = depth(start, radius, side);
        for pose in poses_along(out) {
            let d = depth(pose, radius, side);
            // The independent depth of the square is a lattice's: within its spacing.
            assert!(d <= last + 2e-3, "deeper along the way out at {pose:?}: {d} after {last}");
            last = last.max(d).min(d + 2e-3);
        }
        for pose in poses_along(rest) {
            assert!(depth(pose, radius, side) <= 1e-9, "the rest overlaps at {pose:?}");
        }
        let note = plan.stats.note.as_deref().unwrap();
        assert!(note.contains(&format!("overlaps obstacles by {:.3} m", stretch.depth)), "{note}");
        for pair in plan.trajectory.segments.windows(2) {
            assert!(pair[0].end().point().distance(pair[1].start.point()) < 1e-6, "joined");
        }
    }

    #[test]
    fn a_start_a_centimetre_into_the_wall_is_driven_out_of_never_deeper() {
        let p = planner(disk(0.3, MotionModel::Forward));
        // Along the left wall (inner face x = 0.05 m), 1 cm into it.
        let start = Pose2::new(0.19, 2.0, FRAC_PI_2);
        let goal = Pose2::new(4.5, 1.0, 0.0);
        let plan = p.plan_near(start, goal, false, leeway(), &budget()).unwrap();
        check_way_out(&plan, start, 0.01, 0.15, 0.0);
        assert!(plan.poses.last().unwrap().point().distance(goal.point()) < 1e-9);
    }

    #[test]
    fn overlaps_up_to_the_limit_are_driven_out_of_and_deeper_ones_refused_with_the_depth() {
        let p = planner(disk(0.3, MotionModel::Forward));
        let goal = Pose2::new(4.5, 1.0, 0.0);
        let at = |overlap: f64| Pose2::new(0.05 + 0.15 - overlap, 2.0, FRAC_PI_2);
        let plan = p.plan_near(at(0.0499), goal, false, leeway(), &budget()).unwrap();
        check_way_out(&plan, at(0.0499), 0.0499, 0.15, 0.0);
        let e = p.plan_near(at(0.06), goal, false, leeway(), &budget()).unwrap_err();
        assert_eq!(e.code, StatusCode::StartOccupied);
        assert!(e.message.contains("reach 0.060 m into its footprint (start_overlap allows 0.050 m)"), "{}", e.message);
        // start_overlap 0: any overlap is refused, with its depth.
        let e = p.plan_near(at(0.01), goal, false, Leeway::goal(0.0), &budget()).unwrap_err();
        assert_eq!(e.code, StatusCode::StartOccupied);
        assert!(e.message.contains("reach 0.010 m"), "{}", e.message);
        // A start in the wall itself is as deep as the footprint.
        let e = p.plan_near(Pose2::new(0.02, 2.0, 0.0), goal, false, leeway(), &budget()).unwrap_err();
        assert!(e.message.contains("reach 0.150 m"), "{}", e.message);
    }

    #[test]
    fn a_nose_in_the_wall_backs_out_with_reverse_and_is_refused_forwards_only() {
        let start = Pose2::new(0.18, 2.0, PI);
        let goal = Pose2::new(4.5, 1.0, 0.0);
        let e =
            planner(disk(0.3, MotionModel::Forward)).plan_near(start, goal, false, leeway(), &budget()).unwrap_err();
        assert_eq!(e.code, StatusCode::StartOccupied);
        assert!(e.message.contains("no way out of them that never goes deeper"), "{}", e.message);
        let plan =
            planner(disk(0.3, MotionModel::ReedsShepp)).plan_near(start, goal, false, leeway(), &budget()).unwrap();
        check_way_out(&plan, start, 0.02, 0.15, 0.0);
        assert!(plan.trajectory.segments[0].reverse, "backs out");
    }

    #[test]
    fn turning_on_the_spot_leaves_in_the_heading_of_growing_clearance() {
        let start = Pose2::new(0.18, 2.0, PI);
        let goal = Pose2::new(4.5, 1.0, 0.0);
        let plan = planner(disk(0.0, MotionModel::Forward)).plan_near(start, goal, false, leeway(), &budget()).unwrap();
        check_way_out(&plan, start, 0.02, 0.15, 0.0);
        assert_eq!(plan.trajectory.segments[0].kind(), crate::trajectory::SegmentKind::Rotate);
    }

    #[test]
    fn a_turned_square_with_a_corner_in_the_wall_drives_out_and_one_flush_against_it_cannot() {
        let config = PlannerConfig { robot_side: 0.3, ..disk(0.3, MotionModel::Forward) };
        let p = planner(config);
        let goal = Pose2::new(4.5, 1.0, 0.0);
        // Turned 0.3 rad, its rear-left corner 1 cm past the wall's face (x = 0.05 m): straight on
        // takes the corner out of it.
        let half_extent = 0.15 * (0.3f64.cos() + 0.3f64.sin());
        let start = Pose2::new(0.05 + half_extent - 0.01, 2.0, 0.3);
        let expected = depth(start, 0.0, 0.3);
        assert!(expected > 0.005 && expected < 0.01, "{expected}");
        let plan = p.plan_near(start, goal, false, leeway(), &budget()).unwrap();
        check_way_out(&plan, start, expected, 0.0, 0.3);
        // Flush along the wall, 1 cm into it, forwards only: every turn swings a corner deeper and
        // straight on never leaves it.
        let e = p.plan_near(Pose2::new(0.19, 2.0, FRAC_PI_2), goal, false, leeway(), &budget()).unwrap_err();
        assert_eq!(e.code, StatusCode::StartOccupied);
        assert!(e.message.contains("reach 0.010 m into its footprint and no way out"), "{}", e.message);
    }

    #[test]
    fn a_free_start_is_planned_as_plan_does() {
        let p = planner(disk(0.3, MotionModel::Forward));
        let (start, goal) = (Pose2::new(1.0, 1.0, 0.0), Pose2::new(4.5, 1.0, 0.0));
        let a = p.plan_near(start, goal, false, leeway(), &budget()).unwrap();
        assert_eq!(a.poses, p.plan(start, goal, false, &budget()).unwrap().poses);
        assert_eq!(a.stats.start_overlap, None);
        assert!(Point2::new(1.0, 1.0).distance(a.poses[0].point()) < 1e-12);
    }
}
