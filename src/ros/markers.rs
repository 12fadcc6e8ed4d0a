//! RViz display of a plan on `~/markers` (`visualization_msgs/MarkerArray`): the trajectory's
//! lines and arcs, the any-angle waypoints, and the vehicle's footprint at sampled poses.
//!
//! The geometry (points along segments, footprint circles, footprint poses) is plain functions
//! tested without ROS messages; [`plan_markers`] only wraps them in messages.

use crate::geometry::{Point2, Pose2};
use crate::planner::Plan;
use crate::trajectory::{Segment, SegmentKind, Trajectory};
use r2r::geometry_msgs::msg as geo;
use r2r::std_msgs::msg::{ColorRGBA, Header};
use r2r::visualization_msgs::msg::{Marker, MarkerArray};

/// Points along `seg` from its start to its end, at most `max_step` apart along the curve (at
/// least the two ends; a non-positive or non-finite step gives just the ends). Arc points lie
/// exactly on the arc's circle.
pub fn segment_points(seg: &Segment, max_step: f64) -> Vec<Point2> {
    let n = if max_step.is_finite() && max_step > 0.0 { (seg.length / max_step).ceil().max(1.0) as usize } else { 1 };
    (0..=n).map(|i| seg.pose_at(seg.length * i as f64 / n as f64).point()).collect()
}

/// A closed polygon of `sides` (>= 3) points on the circle of `radius` around `centre`: the first
/// point is repeated at the end so a line strip draws the whole circle.
pub fn circle_points(centre: Point2, radius: f64, sides: usize) -> Vec<Point2> {
    let sides = sides.max(3);
    (0..=sides)
        .map(|i| {
            let a = std::f64::consts::TAU * (i % sides) as f64 / sides as f64;
            Point2::new(centre.x + radius * a.cos(), centre.y + radius * a.sin())
        })
        .collect()
}

/// The vehicle's outline as the markers draw it (m, vehicle frame: origin `base_link`, x
/// forward).
#[derive(Debug, Clone, PartialEq)]
pub enum Outline {
    /// A disk of this radius (m); 0 draws nothing.
    Disk(f64),
    /// A polygon's vertices (the square's corners, or Nav2's `footprint` padded).
    Polygon(Vec<Point2>),
}

impl Outline {
    /// The footprint `config` plans with: its polygon, else its square, else its disk.
    pub fn of(config: &crate::planner::PlannerConfig) -> Self {
        if let Ok(Some(p)) = config.padded_footprint() {
            Outline::Polygon(p.vertices().to_vec())
        } else if config.robot_side > 0.0 {
            let h = config.robot_side / 2.0;
            Outline::Polygon([(h, h), (-h, h), (-h, -h), (h, -h)].iter().map(|&(x, y)| Point2::new(x, y)).collect())
        } else {
            Outline::Disk(config.robot_radius)
        }
    }

    /// The outline placed at `pose` as a closed line strip, then a line from `base_link` to the
    /// front (the farthest point ahead) showing the heading. Empty for a disk of radius 0.
    pub fn at(&self, pose: Pose2) -> Vec<Point2> {
        let (c, s) = (pose.yaw.cos(), pose.yaw.sin());
        let place = |v: Point2| Point2::new(pose.x + c * v.x - s * v.y, pose.y + s * v.x + c * v.y);
        let (mut points, reach) = match self {
            Outline::Disk(r) if *r > 0.0 => (circle_points(pose.point(), *r, 24), *r),
            Outline::Disk(_) => return Vec::new(),
            Outline::Polygon(vs) if !vs.is_empty() => {
                let mut ring: Vec<Point2> = vs.iter().map(|&v| place(v)).collect();
                ring.push(ring[0]);
                (ring, vs.iter().map(|v| v.x).fold(0.0, f64::max))
            }
            Outline::Polygon(_) => return Vec::new(),
        };
        points.push(pose.point());
        points.push(place(Point2::new(reach, 0.0)));
        points
    }
}

/// Poses every `spacing` along `traj` from its start, plus its end pose (empty for an empty
/// trajectory; a non-positive spacing gives the two ends).
pub fn footprint_poses(traj: &Trajectory, spacing: f64) -> Vec<Pose2> {
    let length = traj.length();
    let Some(first) = traj.pose_at(0.0) else { return Vec::new() };
    let mut out = vec![first];
    if spacing.is_finite() && spacing > 0.0 {
        let mut s = spacing;
        // Leave out a pose closer than a tenth of the spacing to the end: it would hide the end.
        while s < length - spacing * 0.1 {
            out.extend(traj.pose_at(s));
            s += spacing;
        }
    }
    if length > 0.0 {
        out.extend(traj.pose_at(length));
    }
    out
}

fn point(p: Point2) -> geo::Point {
    geo::Point { x: p.x, y: p.y, z: 0.0 }
}

fn color(r: f32, g: f32, b: f32, a: f32) -> ColorRGBA {
    ColorRGBA { r, g, b, a }
}

fn marker(header: &Header, ns: &str, id: i32, kind: i32, width: f64, c: ColorRGBA, points: Vec<Point2>) -> Marker {
    let mut m = Marker {
        header: header.clone(),
        ns: ns.into(),
        id,
        type_: kind,
        action: Marker::ADD as i32,
        color: c,
        points: points.into_iter().map(point).collect(),
        ..Default::default()
    };
    m.pose.orientation.w = 1.0;
    m.scale = geo::Vector3 { x: width, y: width, z: width };
    m
}

/// Marker namespaces, in the order they appear in the array.
pub const NAMESPACES: [&str; 6] =
    ["trajectory_lines", "trajectory_arcs", "any_angle", "footprint", "repair_window", "trajectory_reverse"];

/// The markers of `plan` (map frame of `header`): first a DELETEALL (so markers of an older plan
/// vanish), then one line strip per trajectory segment (`trajectory_lines` green,
/// `trajectory_arcs` blue, and either driven backwards `trajectory_reverse` magenta), the any-angle path as a line strip plus its waypoints as spheres
/// (`any_angle`, orange), and the vehicle's `outline` (disk, square or polygon) at poses every
/// `footprint_spacing` metres (`footprint`, grey), and each window the Directional A* window repair searched as a
/// closed rectangle (`repair_window`, red; none when the repair did not run). With `plan` None
/// only the DELETEALL is sent (no path any more).
pub fn plan_markers(plan: Option<&Plan>, outline: &Outline, footprint_spacing: f64, header: &Header) -> MarkerArray {
    let mut markers = vec![Marker { header: header.clone(), action: Marker::DELETEALL as i32, ..Default::default() }];
    let Some(plan) = plan else { return MarkerArray { markers } };
    let line_strip = Marker::LINE_STRIP as i32;
    for (i, seg) in plan.trajectory.segments.iter().enumerate() {
        let (ns, c) = match seg.kind() {
            // Backwards, line or arc: where the vehicle reverses is what a person looks for.
            SegmentKind::Line | SegmentKind::Arc if seg.reverse => (NAMESPACES[5], color(0.9, 0.1, 0.8, 1.0)),
            SegmentKind::Line => (NAMESPACES[0], color(0.1, 0.8, 0.2, 1.0)),
            SegmentKind::Arc => (NAMESPACES[1], color(0.2, 0.4, 1.0, 1.0)),
            // A turn on the spot has no length to draw; the footprint markers show the headings.
            SegmentKind::Rotate => continue,
        };
        markers.push(marker(header, ns, i as i32, line_strip, 0.03, c, segment_points(seg, 0.05)));
    }
    let orange = color(1.0, 0.55, 0.0, 0.9);
    markers.push(marker(header, NAMESPACES[2], 0, line_strip, 0.015, orange.clone(), plan.any_angle.clone()));
    markers.push(marker(header, NAMESPACES[2], 1, Marker::SPHERE_LIST as i32, 0.06, orange, plan.any_angle.clone()));
    let grey = color(0.5, 0.5, 0.5, 0.6);
    for (i, p) in footprint_poses(&plan.trajectory, footprint_spacing).into_iter().enumerate() {
        let placed = outline.at(p);
        if !placed.is_empty() {
            markers.push(marker(header, NAMESPACES[3], i as i32, line_strip, 0.01, grey.clone(), placed));
        }
    }
    let red = color(0.9, 0.1, 0.1, 0.8);
    for (i, corners) in plan.stats.repair_windows.iter().enumerate() {
        let mut outline = corners.to_vec();
        outline.push(corners[0]);
        markers.push(marker(header, NAMESPACES[4], i as i32, line_strip, 0.02, red.clone(), outline));
    }
    MarkerArray { markers }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::planner::PlanStats;
    use crate::trajectory::Turn;

    fn arc_and_line() -> Trajectory {
        let arc = Segment::arc(Pose2::new(0.0, 0.0, 0.0), std::f64::consts::FRAC_PI_2, 1.0, Turn::Left);
        let line = Segment::line(arc.end(), 2.0);
        Trajectory { segments: vec![arc, line], min_turning_radius: 1.0 }
    }

    #[test]
    fn segment_points_follow_the_curve_within_the_step() {
        let t = arc_and_line();
        let arc = &t.segments[0];
        let pts = segment_points(arc, 0.1);
        assert_eq!(pts.first().copied(), Some(arc.start.point()));
        assert!(pts.last().unwrap().distance(arc.end().point()) < 1e-12);
        let c = arc.center().unwrap();
        assert!(pts.iter().all(|p| (p.distance(c) - 1.0).abs() < 1e-12), "arc points off the circle");
        // Chords are never longer than the arc step (pi/2 over ceil(15.7) = 16 pieces).
        assert_eq!(pts.len(), 17);
        assert!(pts.windows(2).all(|w| w[0].distance(w[1]) <= 0.1 + 1e-12));
        let line = segment_points(&t.segments[1], 0.3);
        assert_eq!(line.len(), 8);
        assert!(line.iter().all(|p| (p.x - 1.0).abs() < 1e-12), "the line runs along x = 1");
        assert_eq!(segment_points(&t.segments[1], 0.0).len(), 2);
    }

    #[test]
    fn circles_are_closed_and_round() {
        let c = Point2::new(2.0, -1.0);
        let pts = circle_points(c, 0.3, 24);
        assert_eq!(pts.len(), 25);
        assert!(pts[0].distance(pts[24]) < 1e-12);
        assert!(pts.iter().all(|p| (p.distance(c) - 0.3).abs() < 1e-12));
        assert_eq!(circle_points(c, 1.0, 1).len(), 4);
    }

    #[test]
    fn footprint_poses_are_evenly_spaced_and_include_both_ends() {
        let t = arc_and_line();
        let len = t.length();
        let poses = footprint_poses(&t, 0.5);
        // s = 0, 0.5, ..., 3.5 (< len - 0.05 = 3.52) and the end.
        assert_eq!(poses.len(), 9, "length {len}");
        assert_eq!(poses[0], t.pose_at(0.0).unwrap());
        assert_eq!(*poses.last().unwrap(), t.pose_at(len).unwrap());
        assert!(poses[..8].iter().enumerate().all(|(i, p)| *p == t.pose_at(0.5 * i as f64).unwrap()));
        assert!(footprint_poses(&Trajectory::default(), 0.5).is_empty());
        assert_eq!(footprint_poses(&t, 0.0).len(), 2);
    }

    /// A rear-axle rectangle is drawn with its corners where the vehicle's are: 0.7 m ahead of
    /// base_link and 0.2 m behind, turned with the heading, closed, then the heading line.
    #[test]
    fn polygon_outlines_turn_with_the_vehicle() {
        let config = crate::planner::PlannerConfig {
            footprint: crate::polygon::Polygon::parse_nav2("[[0.7, 0.25], [0.7, -0.25], [-0.2, -0.25], [-0.2, 0.25]]")
                .unwrap(),
            ..Default::default()
        };
        let outline = Outline::of(&config);
        let pts = outline.at(Pose2::new(1.0, 2.0, std::f64::consts::FRAC_PI_2));
        let close = |p: Point2, x: f64, y: f64| (p.x - x).abs() < 1e-12 && (p.y - y).abs() < 1e-12;
        assert_eq!(pts.len(), 7);
        assert!(close(pts[0], 0.75, 2.7) && close(pts[1], 1.25, 2.7) && close(pts[2], 1.25, 1.8), "{pts:?}");
        assert!(close(pts[4], 0.75, 2.7), "closed");
        assert!(close(pts[5], 1.0, 2.0) && close(pts[6], 1.0, 2.7), "heading line");
        let square = Outline::of(&crate::planner::PlannerConfig { robot_side: 0.4, ..Default::default() });
        assert_eq!(square.at(Pose2::new(0.0, 0.0, 0.0)).len(), 7);
        assert!(Outline::Disk(0.0).at(Pose2::new(0.0, 0.0, 0.0)).is_empty());
    }

    #[test]
    fn plan_markers_hold_every_part() {
        let t = arc_and_line();
        let plan = Plan {
            any_angle: vec![Point2::new(0.0, 0.0), Point2::new(1.0, 1.0), Point2::new(1.0, 3.0)],
            poses: t.sample(0.05),
            trajectory: t,
            stats: PlanStats {
                repair_windows: vec![[
                    Point2::new(0.0, 0.0),
                    Point2::new(2.0, 0.0),
                    Point2::new(2.0, 1.0),
                    Point2::new(0.0, 1.0),
                ]],
                ..PlanStats::default()
            },
        };
        let header = Header { frame_id: "map".into(), ..Default::default() };
        let m = plan_markers(Some(&plan), &Outline::Disk(0.2), 0.5, &header).markers;
        assert_eq!(m[0].action, Marker::DELETEALL as i32);
        let count = |ns: &str| m.iter().filter(|x| x.ns == ns).count();
        assert_eq!((count("trajectory_arcs"), count("trajectory_lines"), count("any_angle")), (1, 1, 2));
        assert_eq!(count("trajectory_reverse"), 0);
        assert_eq!(count("footprint"), 9);
        let window = m.iter().find(|x| x.ns == "repair_window").unwrap();
        assert_eq!(window.points.len(), 5, "a closed rectangle");
        assert_eq!((window.points[0].x, window.points[0].y), (window.points[4].x, window.points[4].y));
        assert_eq!((window.points[2].x, window.points[2].y), (2.0, 1.0));
        let waypoints = m.iter().find(|x| x.type_ == Marker::SPHERE_LIST as i32).unwrap();
        assert_eq!(waypoints.points.len(), 3);
        assert!(m.iter().all(|x| x.header.frame_id == "map"));
        assert_eq!(plan_markers(None, &Outline::Disk(0.2), 0.5, &header).markers.len(), 1);
    }

    #[test]
    fn reverse_segments_have_their_own_namespace() {
        let mut t = arc_and_line();
        t.segments[1].reverse = true;
        t.segments[1].start.yaw += std::f64::consts::PI;
        let plan = Plan { any_angle: vec![], poses: t.sample(0.05), trajectory: t, stats: PlanStats::default() };
        let header = Header { frame_id: "map".into(), ..Default::default() };
        let m = plan_markers(Some(&plan), &Outline::Disk(0.0), 0.5, &header).markers;
        let ns: Vec<&str> =
            m.iter().skip(1).filter(|x| x.ns.starts_with("trajectory")).map(|x| x.ns.as_str()).collect();
        assert_eq!(ns, ["trajectory_arcs", "trajectory_reverse"]);
    }
}
