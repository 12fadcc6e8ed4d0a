//! Conversions between ROS messages and the library's types. Every function that reads a message
//! validates it and returns a [`PlanError`] (code `INVALID_INPUT`) instead of panicking, so the
//! node can answer bad input with a `PlannerStatus` and keep what it already holds.

#[cfg(ros_map_msgs)]
use super::updates::Patch;
use crate::geometry::{quaternion_from_yaw, yaw_from_quaternion, Number, Pose2};
use crate::map::{MapInfo, OccupancyMap};
use crate::planner::{Plan, PlanError, StartOverlap, StatusCode};
use crate::trajectory::{SegmentKind, Trajectory, Turn};
use r2r::blockstar_planner_msgs::msg as bs;
use r2r::builtin_interfaces::msg::Time;
use r2r::geometry_msgs::msg as geo;
use r2r::nav_msgs::msg as nav;
use r2r::std_msgs::msg::Header;

fn invalid(message: String) -> PlanError {
    PlanError::new(StatusCode::InvalidInput, message)
}

/// The refusal of an orientation that is not a finite unit quaternion, its components written
/// as [`crate::geometry::Number`] writes them (a `w` of 5e-324 is not 324 digits).
pub(super) fn not_a_unit_quaternion(o: &geo::Quaternion) -> PlanError {
    let (x, y, z, w) = (Number(o.x), Number(o.y), Number(o.z), Number(o.w));
    invalid(format!("orientation ({x}, {y}, {z}, {w}) is not a normalised quaternion"))
}

/// Converts a `geometry_msgs/Pose` to a planar pose (x, y in metres, yaw in radians).
///
/// Fails when the position is not finite or the quaternion is not a finite unit quaternion
/// (norm within 1e-3 of 1).
pub fn pose_from_msg(p: &geo::Pose) -> Result<Pose2, PlanError> {
    let o = &p.orientation;
    let yaw = yaw_from_quaternion(o.x, o.y, o.z, o.w).ok_or_else(|| not_a_unit_quaternion(o))?;
    if !(p.position.x.is_finite() && p.position.y.is_finite()) {
        let (x, y) = (Number(p.position.x), Number(p.position.y));
        return Err(invalid(format!("position ({x}, {y}) is not finite")));
    }
    Ok(Pose2::new(p.position.x, p.position.y, yaw))
}

/// Checks that `frame` is the planner's frame `expected` and names the input in the message.
pub fn check_frame(what: &str, frame: &str, expected: &str) -> Result<(), PlanError> {
    if frame == expected {
        Ok(())
    } else {
        Err(invalid(format!("{what} is in frame {frame:?} but the planner works in {expected:?}")))
    }
}

/// Converts a `nav_msgs/OccupancyGrid` to an [`OccupancyMap`] in frame `map_frame`.
///
/// Fails (`INVALID_INPUT`) when the map's frame is not `map_frame`, the data length is not
/// width x height, the resolution or the origin is refused by [`crate::map::MapInfo::validate`]
/// (a resolution outside 0.1 mm..1 km per cell, an origin not finite or more than 10^9 cells
/// away), the origin is malformed, or the map has more than `max_cells` cells.
pub fn map_from_msg(msg: &nav::OccupancyGrid, map_frame: &str, max_cells: usize) -> Result<OccupancyMap, PlanError> {
    check_frame("the map", &msg.header.frame_id, map_frame)?;
    let origin = pose_from_msg(&msg.info.origin).map_err(|e| invalid(format!("bad map origin: {}", e.message)))?;
    let info = MapInfo {
        width: msg.info.width as usize,
        height: msg.info.height as usize,
        resolution: f64::from(msg.info.resolution),
        origin,
        frame_id: msg.header.frame_id.clone(),
    };
    let data = msg.data.clone();
    OccupancyMap::new(info, data, max_cells).map_err(|e| invalid(format!("bad map: {e}")))
}

/// Builds a `nav_msgs/OccupancyGrid` from a map (used by tests and tools that republish maps).
pub fn map_to_msg(map: &OccupancyMap, stamp: Time) -> nav::OccupancyGrid {
    let (qx, qy, qz, qw) = quaternion_from_yaw(map.info.origin.yaw);
    nav::OccupancyGrid {
        header: Header { stamp: stamp.clone(), frame_id: map.info.frame_id.clone() },
        info: nav::MapMetaData {
            map_load_time: stamp,
            resolution: map.info.resolution as f32,
            width: map.info.width as u32,
            height: map.info.height as u32,
            origin: geo::Pose {
                position: geo::Point { x: map.info.origin.x, y: map.info.origin.y, z: 0.0 },
                orientation: geo::Quaternion { x: qx, y: qy, z: qz, w: qw },
            },
        },
        data: map.data.clone(),
    }
}

/// A `geometry_msgs/Pose` at `p` (z = 0, rotation about +z by `p.yaw`).
pub fn pose_to_msg(p: Pose2) -> geo::Pose {
    let (x, y, z, w) = quaternion_from_yaw(p.yaw);
    geo::Pose { position: geo::Point { x: p.x, y: p.y, z: 0.0 }, orientation: geo::Quaternion { x, y, z, w } }
}

/// The plan's sampled poses as a `nav_msgs/Path`, every pose with position and orientation.
pub fn path_to_msg(plan: &Plan, header: &Header) -> nav::Path {
    nav::Path {
        header: header.clone(),
        poses: plan.poses.iter().map(|&p| geo::PoseStamped { header: header.clone(), pose: pose_to_msg(p) }).collect(),
    }
}

/// The trajectory as a `blockstar_planner_msgs/Trajectory` (metres, radians, map frame), with
/// the stretch out of a start's overlap when there is one.
pub fn trajectory_to_msg(traj: &Trajectory, overlap: Option<&StartOverlap>, header: &Header) -> bs::Trajectory {
    let segments = traj
        .segments
        .iter()
        .map(|s| {
            let center = s.center();
            bs::TrajectorySegment {
                kind: match s.kind() {
                    SegmentKind::Line => bs::TrajectorySegment::LINE as u8,
                    SegmentKind::Arc => bs::TrajectorySegment::ARC as u8,
                    SegmentKind::Rotate => bs::TrajectorySegment::ROTATE as u8,
                },
                start_x: s.start.x,
                start_y: s.start.y,
                start_yaw: s.start.yaw,
                length: s.length,
                curvature: s.curvature,
                radius: if s.radius().is_finite() { s.radius() } else { 0.0 },
                turn: match s.turn() {
                    Turn::Straight => bs::TrajectorySegment::TURN_STRAIGHT as u8,
                    Turn::Left => bs::TrajectorySegment::TURN_LEFT as u8,
                    Turn::Right => bs::TrajectorySegment::TURN_RIGHT as u8,
                },
                reverse: s.reverse,
                center_x: center.map_or(0.0, |c| c.x),
                center_y: center.map_or(0.0, |c| c.y),
                angle: s.rotation,
            }
        })
        .collect();
    bs::Trajectory {
        header: header.clone(),
        segments,
        total_length: traj.length(),
        min_turning_radius: traj.min_turning_radius,
        start_overlap_segments: overlap.map_or(0, |o| o.segments as u32),
        start_overlap_depth: overlap.map_or(0.0, |o| o.depth),
    }
}

/// What a `PlannerStatus` reports (its `event` field; the message's `EVENT_` constants).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusEvent {
    /// The answer to a goal: exactly one per goal received.
    Goal = 0,
    /// The current goal replanned (or stopped) after a map change, a parameter change or a
    /// periodic replan.
    Replan = 1,
    /// A map, map update or parameter change was refused; the goal field is empty.
    InputRefused = 2,
}

/// The `PlannerStatus` for `event` about `goal` with `result`.
pub fn status_to_msg(
    event: StatusEvent,
    result: &Result<Plan, PlanError>,
    goal: &geo::PoseStamped,
    header: &Header,
) -> bs::PlannerStatus {
    let mut msg =
        bs::PlannerStatus { header: header.clone(), event: event as u8, goal: goal.clone(), ..Default::default() };
    match result {
        Ok(plan) => {
            msg.code = StatusCode::Success as u8;
            msg.code_name = StatusCode::Success.name().into();
            msg.message = format!(
                "path of {:.3} m in {} segments, {} poses",
                plan.stats.trajectory_length,
                plan.trajectory.segments.len(),
                plan.poses.len()
            );
            if let Some(note) = &plan.stats.note {
                msg.message = format!("{}; {note}", msg.message);
            }
            msg.planning_time = plan.stats.planning_time;
            msg.any_angle_length = plan.stats.any_angle_length;
            msg.trajectory_length = plan.stats.trajectory_length;
            msg.expansions = plan.stats.expansions as u64;
            let figures = &plan.stats.figures;
            msg.cost = figures.cost;
            msg.mean_cost = figures.mean_cost;
            msg.max_cost = figures.max_cost;
            msg.min_clearance = figures.min_clearance.unwrap_or(-1.0);
        }
        Err(e) => {
            msg.code = e.code as u8;
            msg.code_name = e.code.name().into();
            msg.message = e.message.clone();
            msg.min_clearance = -1.0;
        }
    }
    msg
}

/// Converts a `map_msgs/OccupancyGridUpdate` (costmap_2d's `<map topic>_updates`): cells
/// [x, x+width) x [y, y+height) of the map replaced by `data` (row-major).
///
/// Fails (`INVALID_INPUT`) when its frame is not `map_frame`, it is empty, or `data` does not
/// hold `width * height` values.
#[cfg(ros_map_msgs)]
pub fn patch_from_msg(msg: &r2r::map_msgs::msg::OccupancyGridUpdate, map_frame: &str) -> Result<Patch, PlanError> {
    check_frame("the map update", &msg.header.frame_id, map_frame)?;
    let (width, height) = (i64::from(msg.width), i64::from(msg.height));
    if width == 0 || height == 0 {
        return Err(invalid(format!("map update {width}x{height} at ({}, {}) is empty", msg.x, msg.y)));
    }
    if msg.data.len() as i64 != width * height {
        return Err(invalid(format!(
            "map update {width}x{height} at ({}, {}) holds {} values, not {}",
            msg.x,
            msg.y,
            msg.data.len(),
            width * height
        )));
    }
    Ok(Patch { x: i64::from(msg.x), y: i64::from(msg.y), width, height, data: msg.data.clone() })
}

/// An any-angle path as a `nav_msgs/Path` (waypoints in the map frame, each facing the next one;
/// the last keeps the previous heading).
pub fn any_angle_to_msg(points: &[crate::geometry::Point2], header: &Header) -> nav::Path {
    let mut yaw = 0.0;
    let poses = points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if let Some(next) = points.get(i + 1) {
                yaw = (next.y - p.y).atan2(next.x - p.x);
            }
            geo::PoseStamped { header: header.clone(), pose: pose_to_msg(Pose2::new(p.x, p.y, yaw)) }
        })
        .collect();
    nav::Path { header: header.clone(), poses }
}

/// A `builtin_interfaces/Duration` of `seconds` (>= 0; negative or non-finite gives zero).
pub fn duration_msg(seconds: f64) -> r2r::builtin_interfaces::msg::Duration {
    let d = std::time::Duration::try_from_secs_f64(seconds.max(0.0)).unwrap_or_default();
    r2r::builtin_interfaces::msg::Duration { sec: d.as_secs().min(i32::MAX as u64) as i32, nanosec: d.subsec_nanos() }
}

/// The `ComputePath` action result answering a request with `result`: path, trajectory and
/// planning time on success; `error_code` is the `PlannerStatus` code either way.
pub fn action_result(
    result: &Result<Plan, PlanError>,
    header: &Header,
) -> r2r::blockstar_planner_msgs::action::ComputePath::Result {
    let mut r = r2r::blockstar_planner_msgs::action::ComputePath::Result::default();
    match result {
        Ok(plan) => {
            r.path = path_to_msg(plan, header);
            r.trajectory = trajectory_to_msg(&plan.trajectory, plan.stats.start_overlap.as_ref(), header);
            r.planning_time = duration_msg(plan.stats.planning_time);
            r.error_code = StatusCode::Success as u16;
            // A plan that does not start or end exactly where asked says so (its note).
            r.error_msg = plan.stats.note.clone().unwrap_or_default();
        }
        Err(e) => {
            r.path.header = header.clone();
            r.trajectory.header = header.clone();
            r.error_code = e.code as u16;
            r.error_msg = format!("{}: {}", e.code.name(), e.message);
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Point2;
    use crate::planner::PlanStats;
    use crate::trajectory::Segment;

    fn grid_msg(width: u32, height: u32, data: Vec<i8>, resolution: f32) -> nav::OccupancyGrid {
        let mut m = nav::OccupancyGrid::default();
        m.header.frame_id = "map".into();
        m.info.width = width;
        m.info.height = height;
        m.info.resolution = resolution;
        m.info.origin.orientation.w = 1.0;
        m.info.origin.position.x = -1.0;
        m.data = data;
        m
    }

    fn goal(frame: &str, q: (f64, f64, f64, f64)) -> geo::PoseStamped {
        let mut g = geo::PoseStamped::default();
        g.header.frame_id = frame.into();
        g.pose.position.x = 1.0;
        g.pose.position.y = 2.0;
        g.pose.orientation = geo::Quaternion { x: q.0, y: q.1, z: q.2, w: q.3 };
        g
    }

    #[test]
    fn status_constants_equal_status_codes() {
        use bs::PlannerStatus as S;
        // The generated constants' type is an integer alias; compare the values.
        let pairs = [
            (S::SUCCESS as u8, StatusCode::Success),
            (S::NO_MAP as u8, StatusCode::NoMap),
            (S::START_OUTSIDE_MAP as u8, StatusCode::StartOutsideMap),
            (S::GOAL_OUTSIDE_MAP as u8, StatusCode::GoalOutsideMap),
            (S::START_OCCUPIED as u8, StatusCode::StartOccupied),
            (S::GOAL_OCCUPIED as u8, StatusCode::GoalOccupied),
            (S::NO_START as u8, StatusCode::NoStart),
            (S::NO_VALID_PATH as u8, StatusCode::NoValidPath),
            (S::TIMEOUT as u8, StatusCode::Timeout),
            (S::INVALID_INPUT as u8, StatusCode::InvalidInput),
            (S::SUPERSEDED as u8, StatusCode::Superseded),
            (S::TF_ERROR as u8, StatusCode::TfError),
            (S::NOT_ACTIVE as u8, StatusCode::NotActive),
            (S::INVALID_PLANNER as u8, StatusCode::InvalidPlanner),
        ];
        for (msg_value, code) in pairs {
            assert_eq!(msg_value, code as u8, "{}", code.name());
        }
        let events = [
            (S::EVENT_GOAL as u8, StatusEvent::Goal),
            (S::EVENT_REPLAN as u8, StatusEvent::Replan),
            (S::EVENT_INPUT_REFUSED as u8, StatusEvent::InputRefused),
        ];
        for (msg_value, event) in events {
            assert_eq!(msg_value, event as u8, "{event:?}");
        }
    }

    #[test]
    fn good_map_round_trips() {
        let msg = grid_msg(3, 2, vec![0, 100, -1, 0, 0, 50], 0.5);
        let map = map_from_msg(&msg, "map", 1000).unwrap();
        assert_eq!((map.info.width, map.info.height), (3, 2));
        assert_eq!(map.info.resolution, 0.5);
        assert_eq!(map.info.origin.x, -1.0);
        let back = map_to_msg(&map, Time::default());
        assert_eq!(back.data, msg.data);
        assert_eq!(back.info.width, 3);
    }

    #[test]
    fn bad_maps_are_invalid_input() {
        let cases = [
            grid_msg(3, 2, vec![0; 5], 0.5),
            grid_msg(3, 2, vec![0; 6], 0.0),
            grid_msg(3, 2, vec![0; 6], -1.0),
            grid_msg(3, 2, vec![0; 6], f32::NAN),
            grid_msg(0, 2, vec![], 0.5),
            grid_msg(100, 100, vec![0; 10_000], 0.5),
        ];
        for m in &cases {
            let e = map_from_msg(m, "map", 1000).unwrap_err();
            assert_eq!(e.code, StatusCode::InvalidInput, "{e}");
        }
        let mut other_frame = grid_msg(3, 2, vec![0; 6], 0.5);
        other_frame.header.frame_id = "odom".into();
        assert!(map_from_msg(&other_frame, "map", 1000).unwrap_err().message.contains("odom"));
    }

    #[test]
    fn poses_are_checked() {
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let p = pose_from_msg(&goal("map", (0.0, 0.0, h, h)).pose).unwrap();
        assert!((p.yaw - std::f64::consts::FRAC_PI_2).abs() < 1e-12);
        assert_eq!((p.x, p.y), (1.0, 2.0));
        for q in [(0.0, 0.0, 0.0, 0.0), (0.0, 0.0, 1.0, 1.0), (f64::NAN, 0.0, 0.0, 1.0)] {
            assert_eq!(pose_from_msg(&goal("map", q).pose).unwrap_err().code, StatusCode::InvalidInput);
        }
        let mut nan_pos = goal("map", (0.0, 0.0, 0.0, 1.0));
        nan_pos.pose.position.x = f64::NAN;
        assert!(pose_from_msg(&nan_pos.pose).is_err());
    }

    #[test]
    fn plan_becomes_path_trajectory_and_status() {
        let traj = Trajectory::polyline(&[Point2::new(0.0, 0.0), Point2::new(1.0, 0.0), Point2::new(1.0, 1.0)]);
        let poses = traj.sample(0.5);
        let plan = Plan {
            any_angle: vec![],
            trajectory: traj.clone(),
            poses: poses.clone(),
            stats: PlanStats { trajectory_length: 2.0, expansions: 7, ..Default::default() },
        };
        let header = Header { stamp: Time::default(), frame_id: "map".into() };
        let path = path_to_msg(&plan, &header);
        assert_eq!(path.poses.len(), poses.len());
        for (m, p) in path.poses.iter().zip(&poses) {
            let back = pose_from_msg(&m.pose).unwrap();
            assert!((back.x - p.x).abs() < 1e-12 && (back.y - p.y).abs() < 1e-12);
            assert!(crate::geometry::normalize_angle(back.yaw - p.yaw).abs() < 1e-9);
            assert_eq!(m.header.frame_id, "map");
        }
        let t = trajectory_to_msg(&traj, None, &header);
        // Line, turn on the spot at the corner, line.
        assert_eq!(t.segments.len(), 3);
        assert!((t.total_length - 2.0).abs() < 1e-12);
        assert_eq!(t.segments[0].kind, bs::TrajectorySegment::LINE as u8);
        assert_eq!(t.segments[1].kind, bs::TrajectorySegment::ROTATE as u8);
        assert!((t.segments[1].angle - std::f64::consts::FRAC_PI_2).abs() < 1e-12);
        assert_eq!((t.segments[1].length, t.segments[0].angle), (0.0, 0.0));
        let arc = Trajectory {
            segments: vec![Segment::arc(Pose2::new(0.0, 0.0, 0.0), 1.0, 2.0, Turn::Left)],
            min_turning_radius: 2.0,
        };
        let a = trajectory_to_msg(&arc, None, &header);
        assert_eq!(a.segments[0].kind, bs::TrajectorySegment::ARC as u8);
        assert_eq!(a.segments[0].turn, bs::TrajectorySegment::TURN_LEFT as u8);
        assert!((a.segments[0].radius - 2.0).abs() < 1e-12);
        assert!((a.segments[0].center_y - 2.0).abs() < 1e-12);
        let s = status_to_msg(StatusEvent::Goal, &Ok(plan), &goal("map", (0.0, 0.0, 0.0, 1.0)), &header);
        assert_eq!((s.code, s.expansions, s.code_name.as_str(), s.event), (0, 7, "SUCCESS", 0));
        let e = status_to_msg(
            StatusEvent::Replan,
            &Err(PlanError::new(StatusCode::NoStart, "x")),
            &goal("map", (0.0, 0.0, 0.0, 1.0)),
            &header,
        );
        assert_eq!((e.code, e.code_name.as_str(), e.event), (6, "NO_START", 1));
    }

    #[cfg(ros_map_msgs)]
    #[test]
    fn map_updates_are_checked() {
        use r2r::map_msgs::msg::OccupancyGridUpdate;
        let mut m = OccupancyGridUpdate { x: 2, y: 3, width: 2, height: 1, data: vec![0, 100], ..Default::default() };
        m.header.frame_id = "map".into();
        let p = patch_from_msg(&m, "map").unwrap();
        assert_eq!((p.x, p.y, p.width, p.height, p.data), (2, 3, 2, 1, vec![0, 100]));
        let mut short = m.clone();
        short.data.pop();
        let mut empty = m.clone();
        empty.width = 0;
        let mut frame = m.clone();
        frame.header.frame_id = "odom".into();
        for bad in [short, empty, frame] {
            assert_eq!(patch_from_msg(&bad, "map").unwrap_err().code, StatusCode::InvalidInput);
        }
    }

    #[test]
    fn any_angle_path_faces_the_next_waypoint_and_durations_split() {
        let header = Header { stamp: Time::default(), frame_id: "map".into() };
        let pts = [Point2::new(0.0, 0.0), Point2::new(0.0, 2.0), Point2::new(1.0, 2.0)];
        let path = any_angle_to_msg(&pts, &header);
        let yaws: Vec<f64> = path.poses.iter().map(|p| pose_from_msg(&p.pose).unwrap().yaw).collect();
        assert!(
            (yaws[0] - std::f64::consts::FRAC_PI_2).abs() < 1e-12 && yaws[1].abs() < 1e-12 && yaws[2].abs() < 1e-12
        );
        assert_eq!(path.poses[1].pose.position.y, 2.0);
        let d = duration_msg(1.25);
        assert_eq!((d.sec, d.nanosec), (1, 250_000_000));
        assert_eq!(duration_msg(f64::NAN).sec, 0);
        let e = action_result(&Err(PlanError::new(StatusCode::GoalOccupied, "wall")), &header);
        assert_eq!((e.error_code, e.path.poses.len()), (StatusCode::GoalOccupied as u16, 0));
        assert!(e.error_msg.contains("GOAL_OCCUPIED") && e.error_msg.contains("wall"));
    }
}
