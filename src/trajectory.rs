//! Arc-and-line trajectories: the exact output of the planner.
//!
//! A [`Trajectory`] is a sequence of [`Segment`]s, each a straight line or a circular arc given by
//! its start pose, its length and its signed curvature, driven forwards or backwards, or a turn on
//! the spot (length 0, a signed rotation). Consecutive segments join with equal position and
//! heading (checked by [`Trajectory::check_continuity`]). Units are those of the
//! caller (cell units inside the search, metres once converted with [`Trajectory::to_world`]).

use crate::geometry::{normalize_angle, Point2, Pose2};
use crate::map::MapInfo;
use serde::{Deserialize, Serialize};

/// Turns on the spot smaller than this (radians) are left out: the headings already agree.
pub const HEADING_TOLERANCE: f64 = 1e-9;

/// Line, arc or turn on the spot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SegmentKind {
    /// Straight line (curvature 0).
    Line,
    /// Circular arc (curvature non-zero).
    Arc,
    /// Turn on the spot (length 0, rotation non-zero): only for a minimum turning radius of 0.
    Rotate,
}

/// Turn direction of an arc.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Turn {
    /// Counter-clockwise (positive curvature).
    Left,
    /// Clockwise (negative curvature).
    Right,
    /// No turn (a line).
    Straight,
}

/// One piece of a trajectory.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    /// Pose at the segment's start.
    pub start: Pose2,
    /// Path length (>= 0), whatever the direction of travel.
    pub length: f64,
    /// Signed curvature (1 / radius): positive turns left (counter-clockwise) when driving
    /// forward, zero is a straight line.
    pub curvature: f64,
    /// True when the vehicle drives backwards along this segment (heading stays the vehicle's
    /// facing; the position moves opposite to it).
    pub reverse: bool,
    /// Signed heading change (radians, positive counter-clockwise) of a turn on the spot; 0 for a
    /// line or an arc. A segment with a rotation has length 0 and curvature 0.
    #[serde(default)]
    pub rotation: f64,
}

impl Segment {
    /// A forward straight segment.
    pub fn line(start: Pose2, length: f64) -> Self {
        Self { start, length, curvature: 0.0, reverse: false, rotation: 0.0 }
    }

    /// A turn on the spot at `start` by `angle` radians (positive counter-clockwise).
    pub fn rotate(start: Pose2, angle: f64) -> Self {
        Self { start, length: 0.0, curvature: 0.0, reverse: false, rotation: angle }
    }

    /// A forward arc of `radius` (> 0) turning `turn` (Left or Right; Straight gives a line).
    pub fn arc(start: Pose2, length: f64, radius: f64, turn: Turn) -> Self {
        let curvature = match turn {
            Turn::Left => 1.0 / radius,
            Turn::Right => -1.0 / radius,
            Turn::Straight => 0.0,
        };
        Self { start, length, curvature, reverse: false, rotation: 0.0 }
    }

    /// Line, arc or turn on the spot.
    pub fn kind(&self) -> SegmentKind {
        if self.rotation != 0.0 {
            SegmentKind::Rotate
        } else if self.curvature == 0.0 {
            SegmentKind::Line
        } else {
            SegmentKind::Arc
        }
    }

    /// Turn direction.
    pub fn turn(&self) -> Turn {
        if self.curvature > 0.0 {
            Turn::Left
        } else if self.curvature < 0.0 {
            Turn::Right
        } else {
            Turn::Straight
        }
    }

    /// Radius of the arc, `f64::INFINITY` for a line.
    pub fn radius(&self) -> f64 {
        if self.curvature == 0.0 {
            f64::INFINITY
        } else {
            1.0 / self.curvature.abs()
        }
    }

    /// Centre of the arc's circle, `None` for a line.
    pub fn center(&self) -> Option<Point2> {
        (self.curvature != 0.0).then(|| {
            let r = 1.0 / self.curvature;
            Point2::new(self.start.x - r * self.start.yaw.sin(), self.start.y + r * self.start.yaw.cos())
        })
    }

    /// The points along the segment, with the start heading's sine and cosine computed once: for
    /// sampling many points of one segment (cost integrals, sweeps).
    pub fn points_along(&self) -> PointsAlong {
        let (sin0, cos0) = self.start.yaw.sin_cos();
        PointsAlong { seg: *self, sin0, cos0 }
    }

    /// Pose after travelling `s` (clamped to `0..=length`) along the segment (Pinter's
    /// Listing 2 generalised to either turn direction and to reverse travel). For a turn on the
    /// spot (no length) this is the pose before the turn; [`Segment::end`] is the pose after it.
    pub fn pose_at(&self, s: f64) -> Pose2 {
        let s = clamp_to_length(s, self.length);
        let t = if self.reverse { -s } else { s };
        let Pose2 { x, y, yaw } = self.start;
        if self.curvature == 0.0 {
            Pose2::new(x + t * yaw.cos(), y + t * yaw.sin(), yaw)
        } else {
            let k = self.curvature;
            let yaw2 = yaw + k * t;
            Pose2::new(x + (yaw2.sin() - yaw.sin()) / k, y - (yaw2.cos() - yaw.cos()) / k, normalize_angle(yaw2))
        }
    }

    /// Pose at the end of the segment (after the turn, for a turn on the spot).
    pub fn end(&self) -> Pose2 {
        if self.rotation != 0.0 {
            return Pose2::new(self.start.x, self.start.y, normalize_angle(self.start.yaw + self.rotation));
        }
        self.pose_at(self.length)
    }
}

/// `s` clamped to `0..=length` as `f64::clamp` clamps it, without its panic on a NaN or negative
/// `length` (a segment built from bad input): such a segment gives meaningless points, never a
/// panic.
#[inline]
fn clamp_to_length(s: f64, length: f64) -> f64 {
    if s < 0.0 {
        0.0
    } else if s > length {
        length
    } else {
        s
    }
}

/// The points of one [`Segment`] ([`Segment::points_along`]); each equals the point of
/// [`Segment::pose_at`] bit for bit, by the same arithmetic.
#[derive(Debug, Clone, Copy)]
pub struct PointsAlong {
    seg: Segment,
    /// Sine and cosine of the start heading.
    sin0: f64,
    cos0: f64,
}

impl PointsAlong {
    /// Signed arc length after travelling `s` (clamped to `0..=length`; negative when
    /// reversing), as `pose_at` clamps and signs it.
    #[inline]
    pub fn signed(&self, s: f64) -> f64 {
        let s = clamp_to_length(s, self.seg.length);
        if self.seg.reverse {
            -s
        } else {
            s
        }
    }

    /// The point after travelling `s` (clamped to `0..=length`).
    #[inline]
    pub fn at(&self, s: f64) -> Point2 {
        let t = self.signed(s);
        let Pose2 { x, y, yaw } = self.seg.start;
        let k = self.seg.curvature;
        if k == 0.0 {
            Point2::new(x + t * self.cos0, y + t * self.sin0)
        } else {
            self.on_arc((yaw + k * t).sin_cos())
        }
    }

    /// The midpoints of `n` equal steps along the segment, in order, each handed to `f`: the
    /// points [`PointsAlong::at`] gives at `(i + 0.5) * length / n`. On an arc each midpoint's
    /// heading is the one before turned by the same angle, so it is stepped by a rotation (two
    /// multiplications and additions) instead of a sine and a cosine per point, taken exactly
    /// again every 64 points so the rounding never builds up (below 1e-12 cells of `at`'s points,
    /// so a point's cell can differ from the exact point's only within that of a cell edge).
    pub fn each_midpoint(&self, n: usize, mut f: impl FnMut(Point2)) {
        /// Points stepped by rotation between two exact ones.
        const REANCHOR: usize = 64;
        let ds = self.seg.length / n as f64;
        let midpoint = |i: usize| self.signed((i as f64 + 0.5) * ds);
        let Pose2 { x, y, yaw } = self.seg.start;
        let k = self.seg.curvature;
        if k == 0.0 {
            // `at`'s points, bit for bit, without its per-point clamp and sign: `(i + 0.5) * ds`
            // never exceeds the length for `i < n` (rounding is monotone), and reversing negates
            // the product exactly.
            let (dx, dy) = if self.seg.reverse { (-self.cos0, -self.sin0) } else { (self.cos0, self.sin0) };
            for i in 0..n {
                let s = (i as f64 + 0.5) * ds;
                f(Point2::new(x + s * dx, y + s * dy));
            }
            return;
        }
        let (sin_step, cos_step) = (k * self.signed(ds)).sin_cos();
        let (mut sin_t, mut cos_t) = (0.0, 0.0);
        for i in 0..n {
            (sin_t, cos_t) = if i % REANCHOR == 0 {
                (yaw + k * midpoint(i)).sin_cos()
            } else {
                (sin_t * cos_step + cos_t * sin_step, cos_t * cos_step - sin_t * sin_step)
            };
            f(self.on_arc((sin_t, cos_t)));
        }
    }

    /// The point of the arc where the heading's sine and cosine are `(sin_t, cos_t)`.
    #[inline]
    fn on_arc(&self, (sin_t, cos_t): (f64, f64)) -> Point2 {
        let (Pose2 { x, y, .. }, k) = (self.seg.start, self.seg.curvature);
        Point2::new(x + (sin_t - self.sin0) / k, y - (cos_t - self.cos0) / k)
    }
}

/// A drivable path made of lines and arcs.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Trajectory {
    /// The segments in driving order.
    pub segments: Vec<Segment>,
    /// The minimum turning radius the trajectory was built for (0 for a polyline).
    pub min_turning_radius: f64,
}

impl Trajectory {
    /// A polyline trajectory through `points` for a vehicle that turns on the spot: a line per
    /// step, with a turn on the spot wherever the heading changes (at each corner), so every
    /// segment joins the next in position and heading. The first line starts in its own
    /// direction. Zero-length steps are skipped.
    pub fn polyline(points: &[Point2]) -> Self {
        Self::turning_on_the_spot(points, None, None)
    }

    /// [`Trajectory::polyline`] from a vehicle facing `start_yaw` (a turn on the spot first when
    /// the first line points elsewhere) that must end facing `goal_yaw` (a turn on the spot last);
    /// `None` for either takes the line's own direction. With a single point and both headings,
    /// just the turn between them. Turns take the shorter way round (at most pi).
    pub fn turning_on_the_spot(points: &[Point2], start_yaw: Option<f64>, goal_yaw: Option<f64>) -> Self {
        let mut segments: Vec<Segment> = Vec::new();
        let mut heading = start_yaw;
        let turn_to = |segments: &mut Vec<Segment>, at: Point2, heading: Option<f64>, yaw: f64| {
            if let Some(h) = heading {
                let angle = normalize_angle(yaw - h);
                if angle.abs() > HEADING_TOLERANCE {
                    segments.push(Segment::rotate(Pose2::new(at.x, at.y, h), angle));
                }
            }
        };
        for w in points.windows(2).filter(|w| w[0].distance(w[1]) > 0.0) {
            let yaw = (w[1].y - w[0].y).atan2(w[1].x - w[0].x);
            turn_to(&mut segments, w[0], heading, yaw);
            segments.push(Segment::line(Pose2::new(w[0].x, w[0].y, yaw), w[0].distance(w[1])));
            heading = Some(yaw);
        }
        if let (Some(goal_yaw), Some(last)) = (goal_yaw, points.last()) {
            turn_to(&mut segments, *last, heading, goal_yaw);
        }
        Self { segments, min_turning_radius: 0.0 }
    }

    /// Total length.
    pub fn length(&self) -> f64 {
        // `Sum` starts from -0.0: adding 0.0 makes an empty trajectory's length 0, not "-0.000"
        // in a message, and changes no other sum.
        self.segments.iter().map(|s| s.length).sum::<f64>() + 0.0
    }

    /// Length driven backwards.
    pub fn reverse_length(&self) -> f64 {
        self.segments.iter().filter(|s| s.reverse).map(|s| s.length).sum::<f64>() + 0.0
    }

    /// Changes of gear (cusps) between consecutive moving segments; turns on the spot do not
    /// count.
    pub fn cusps(&self) -> usize {
        let gears: Vec<bool> = self.segments.iter().filter(|s| s.length > 0.0).map(|s| s.reverse).collect();
        gears.windows(2).filter(|w| w[0] != w[1]).count()
    }

    /// True when there is no segment.
    pub fn is_empty(&self) -> bool {
        self.segments.is_empty()
    }

    /// Pose at arc length `s` from the start (clamped to the trajectory), `None` when empty. Where
    /// the vehicle turns on the spot at `s`, the pose before the turn, except at the end: the
    /// final pose, after any last turn.
    pub fn pose_at(&self, s: f64) -> Option<Pose2> {
        if s >= self.length() {
            return self.segments.last().map(Segment::end);
        }
        let mut rest = s.max(0.0);
        for seg in &self.segments {
            if rest <= seg.length {
                return Some(seg.pose_at(rest));
            }
            rest -= seg.length;
        }
        self.segments.last().map(Segment::end)
    }

    /// Poses every `spacing` (> 0) along the trajectory, always including the first and the last
    /// pose and every segment joint. Returns an empty list for an empty trajectory; a non-positive
    /// or non-finite `spacing` is treated as "joints only".
    pub fn sample(&self, spacing: f64) -> Vec<Pose2> {
        let mut out = Vec::new();
        let Some(first) = self.segments.first() else { return out };
        out.push(first.start);
        for seg in &self.segments {
            if spacing.is_finite() && spacing > 0.0 {
                let n = (seg.length / spacing).ceil() as usize;
                for i in 1..n {
                    out.push(seg.pose_at(seg.length * i as f64 / n as f64));
                }
            }
            out.push(seg.end());
        }
        out
    }

    /// Largest position or heading jump between one segment's end and the next one's start.
    pub fn check_continuity(&self) -> f64 {
        self.segments
            .windows(2)
            .map(|w| {
                let a = w[0].end();
                let b = w[1].start;
                a.point().distance(b.point()).max(normalize_angle(a.yaw - b.yaw).abs())
            })
            .fold(0.0, f64::max)
    }

    /// Converts a trajectory in cell units to the map frame (metres) of `info`.
    pub fn to_world(&self, info: &MapInfo) -> Trajectory {
        let r = info.resolution;
        Trajectory {
            segments: self
                .segments
                .iter()
                .map(|s| Segment {
                    start: info.cell_pose_to_world(s.start),
                    length: s.length * r,
                    curvature: s.curvature / r,
                    ..*s
                })
                .collect(),
            min_turning_radius: self.min_turning_radius * r,
        }
    }

    /// Converts a trajectory in the map frame (metres) of `info` to cell units (the inverse of
    /// [`Trajectory::to_world`]).
    pub fn to_cells(&self, info: &MapInfo) -> Trajectory {
        let r = info.resolution;
        Trajectory {
            segments: self
                .segments
                .iter()
                .map(|s| Segment {
                    start: info.world_pose_to_cell(s.start),
                    length: s.length / r,
                    curvature: s.curvature * r,
                    ..*s
                })
                .collect(),
            min_turning_radius: self.min_turning_radius / r,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_trajectory_is_0_long_not_minus_0() {
        let t = Trajectory { segments: vec![], min_turning_radius: 0.0 };
        assert_eq!(format!("{:.3} {:.3}", t.length(), t.reverse_length()), "0.000 0.000");
    }

    #[test]
    fn segments_of_bad_lengths_give_points_not_panics() {
        let start = Pose2::new(1.0, 2.0, 0.3);
        for length in [f64::NAN, -1.0, f64::NEG_INFINITY, f64::INFINITY] {
            for seg in [Segment::line(start, length), Segment::arc(start, length, 2.0, Turn::Left)] {
                for s in [f64::NAN, -1.0, 0.0, 0.5, 1e9] {
                    let _ = seg.pose_at(s);
                    let _ = seg.points_along().at(s);
                }
                let _ = seg.end();
                seg.points_along().each_midpoint(3, |_| {});
            }
        }
        // Valid lengths clamp as `f64::clamp` does, signed zeros included.
        let seg = Segment::line(start, 2.0);
        for s in [-1.0, -0.0, 0.0, 0.7, 2.0, 3.0] {
            assert_eq!(clamp_to_length(s, 2.0).to_bits(), s.clamp(0.0, 2.0).to_bits());
        }
        assert_eq!(seg.pose_at(5.0), seg.end());
    }

    #[test]
    fn points_along_equal_pose_at_bit_for_bit() {
        let mut seed = 11u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        for _ in 0..500 {
            let start = Pose2::new(next() * 100.0, next() * 100.0, (next() - 0.5) * 8.0);
            let curvature = [0.0, next() * 2.0, -next() * 2.0][(next() * 3.0) as usize % 3];
            let seg = Segment { start, length: next() * 20.0, curvature, reverse: next() < 0.5, rotation: 0.0 };
            let points = seg.points_along();
            for k in 0..=20 {
                let s = seg.length * k as f64 / 20.0;
                let (a, b) = (points.at(s), seg.pose_at(s).point());
                assert_eq!((a.x.to_bits(), a.y.to_bits()), (b.x.to_bits(), b.y.to_bits()), "{seg:?} at {s}");
            }
        }
    }
    use std::f64::consts::PI;

    #[test]
    fn world_and_back() {
        let info = MapInfo {
            width: 10,
            height: 10,
            resolution: 0.05,
            origin: Pose2::new(-1.0, 2.0, 0.4),
            frame_id: "map".into(),
        };
        let t = Trajectory {
            segments: vec![Segment::arc(Pose2::new(1.0, 2.0, 0.3), 2.0, 3.0, Turn::Right)],
            min_turning_radius: 3.0,
        };
        let back = t.to_world(&info).to_cells(&info);
        assert!((back.segments[0].curvature - t.segments[0].curvature).abs() < 1e-9);
        assert!(back.segments[0].end().point().distance(t.segments[0].end().point()) < 1e-9);
        assert!((back.min_turning_radius - 3.0).abs() < 1e-9);
    }

    #[test]
    fn half_circle_left_and_right() {
        let left = Segment::arc(Pose2::new(0.0, 0.0, 0.0), PI, 1.0, Turn::Left);
        let e = left.end();
        assert!((e.x).abs() < 1e-12 && (e.y - 2.0).abs() < 1e-12 && (e.yaw.abs() - PI).abs() < 1e-12);
        assert_eq!(left.center(), Some(Point2::new(0.0, 1.0)));
        let right = Segment::arc(Pose2::new(0.0, 0.0, 0.0), PI / 2.0, 1.0, Turn::Right);
        let e = right.end();
        assert!((e.x - 1.0).abs() < 1e-12 && (e.y + 1.0).abs() < 1e-12 && (e.yaw + PI / 2.0).abs() < 1e-12);
    }

    #[test]
    fn turning_on_the_spot_joins_every_segment_in_heading() {
        let pts = [Point2::new(0.0, 0.0), Point2::new(2.0, 0.0), Point2::new(2.0, 3.0), Point2::new(2.0, 3.0)];
        let t = Trajectory::turning_on_the_spot(&pts, Some(PI), Some(-PI / 4.0));
        let kinds: Vec<SegmentKind> = t.segments.iter().map(Segment::kind).collect();
        use SegmentKind::{Line, Rotate};
        assert_eq!(kinds, [Rotate, Line, Rotate, Line, Rotate]);
        assert!(t.check_continuity() < 1e-12);
        // From facing pi to facing east: pi either way, normalised into (-pi, pi].
        assert!((t.segments[0].rotation.abs() - PI).abs() < 1e-12);
        assert!((t.segments[2].rotation - PI / 2.0).abs() < 1e-12);
        // North to south-east: a right turn of 3 pi / 4, the shorter way.
        assert!((t.segments[4].rotation + 3.0 * PI / 4.0).abs() < 1e-12);
        let end = t.segments.last().unwrap().end();
        assert!((end.yaw + PI / 4.0).abs() < 1e-12 && end.point().distance(Point2::new(2.0, 3.0)) < 1e-12);
        assert!((t.length() - 5.0).abs() < 1e-12, "turns add no length");
        // Sampled poses show the turn: the same place twice, before and after.
        let poses = t.sample(0.5);
        assert_eq!(poses.first().map(|p| p.yaw), Some(PI));
        assert!((poses.last().unwrap().yaw + PI / 4.0).abs() < 1e-12);
        // Headings that already agree add no turn; a single point with two headings is one turn.
        let plain = Trajectory::turning_on_the_spot(&pts[..2], Some(0.0), Some(0.0));
        assert_eq!(plain.segments.len(), 1);
        let spin = Trajectory::turning_on_the_spot(&pts[..1], Some(0.0), Some(1.0));
        assert_eq!(spin.segments, [Segment::rotate(Pose2::new(0.0, 0.0, 0.0), 1.0)]);
        // The world conversion keeps the turn.
        let info = MapInfo {
            width: 10,
            height: 10,
            resolution: 0.05,
            origin: Pose2::new(-1.0, 2.0, 0.4),
            frame_id: "map".into(),
        };
        let w = t.to_world(&info);
        assert_eq!(w.segments[2].rotation, t.segments[2].rotation);
        assert!(w.check_continuity() < 1e-9);
    }

    #[test]
    fn sampling_is_continuous_and_hits_joints() {
        let a = Segment::arc(Pose2::new(0.0, 0.0, 0.0), PI / 2.0, 1.0, Turn::Left);
        let b = Segment::line(a.end(), 2.0);
        let t = Trajectory { segments: vec![a, b], min_turning_radius: 1.0 };
        assert!(t.check_continuity() < 1e-12);
        let poses = t.sample(0.1);
        assert!(poses.windows(2).all(|w| w[0].point().distance(w[1].point()) <= 0.1 + 1e-9));
        let last = *poses.last().unwrap();
        assert!((last.x - 1.0).abs() < 1e-12 && (last.y - 3.0).abs() < 1e-12);
        assert!((t.length() - (PI / 2.0 + 2.0)).abs() < 1e-12);
    }

    #[test]
    fn world_conversion_scales_curvature() {
        let info = MapInfo {
            width: 10,
            height: 10,
            resolution: 0.5,
            origin: Pose2::new(1.0, 1.0, 0.0),
            frame_id: "map".into(),
        };
        let t = Trajectory {
            segments: vec![Segment::arc(Pose2::new(0.0, 0.0, 0.0), 1.0, 2.0, Turn::Left)],
            min_turning_radius: 2.0,
        };
        let w = t.to_world(&info);
        assert!((w.segments[0].radius() - 1.0).abs() < 1e-12);
        assert!((w.min_turning_radius - 1.0).abs() < 1e-12);
        let end_cells = info.cell_pose_to_world(t.segments[0].end());
        assert!(end_cells.point().distance(w.segments[0].end().point()) < 1e-12);
    }
}
