//! Planar geometry shared by every stage: points, poses, angle and quaternion helpers (on
//! nalgebra), and the conversions between [`Pose2`] and nalgebra isometries.
//!
//! Units are whatever the caller works in: the search stages use **cell units** (one unit is one
//! grid cell, the origin is the low corner of cell (0, 0)); the ROS boundary converts to metres in
//! the map frame with [`crate::map::MapInfo`].

use nalgebra::{Isometry2, Isometry3, Quaternion, Translation3, UnitQuaternion, Vector2, Vector3};
use serde::{Deserialize, Serialize};
use std::f64::consts::PI;

/// A coordinate as a message shows it: at the precision asked (`{:.3}`), in exponent form from
/// 1e9 on, so a pose far off any map (1e300) reads as `1.000e300`, not three hundred digits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Coord(pub f64);

impl std::fmt::Display for Coord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let digits = f.precision().unwrap_or(3);
        if self.0.abs() >= 1e9 {
            write!(f, "{:.*e}", digits, self.0)
        } else {
            write!(f, "{:.*}", digits, self.0)
        }
    }
}

/// A number as a message shows a value the user gave: as Rust writes it (the shortest form that
/// reads back the same) between 1e-4 and 1e9, in exponent form beyond (Rust writes 1e308 as 309
/// digits and 5e-324 as 324), so `1e308` reads `1e308`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Number(pub f64);

impl std::fmt::Display for Number {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let x = self.0;
        if x == 0.0 || !x.is_finite() || (1e-4..1e9).contains(&x.abs()) {
            write!(f, "{x}")
        } else {
            write!(f, "{x:e}")
        }
    }
}

/// Whether going straight from pose `a` to point `b` drives backwards: the direction of travel is
/// more than 90 degrees from `a`'s heading (a path's orientations are the vehicle's headings, as
/// in Nav2). False when `b` is `a`'s point.
pub fn is_reversing_step(a: Pose2, b: Point2) -> bool {
    let travel = (b.y - a.y).atan2(b.x - a.x);
    (b.x != a.x || b.y != a.y) && normalize_angle(travel - a.yaw).abs() > std::f64::consts::FRAC_PI_2
}

/// A point in the plane.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Point2 {
    /// Abscissa.
    pub x: f64,
    /// Ordinate.
    pub y: f64,
}

impl Point2 {
    /// Builds a point from its coordinates.
    pub const fn new(x: f64, y: f64) -> Self {
        Self { x, y }
    }

    /// Euclidean distance to `other`.
    pub fn distance(self, other: Point2) -> f64 {
        (self.x - other.x).hypot(self.y - other.y)
    }

    /// True when both coordinates are finite (not NaN, not infinite).
    pub fn is_finite(self) -> bool {
        self.x.is_finite() && self.y.is_finite()
    }
}

/// A position with a heading.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Pose2 {
    /// Abscissa.
    pub x: f64,
    /// Ordinate.
    pub y: f64,
    /// Heading in radians, counter-clockwise from the +x axis.
    pub yaw: f64,
}

impl Pose2 {
    /// Builds a pose from its coordinates and heading (radians).
    pub const fn new(x: f64, y: f64, yaw: f64) -> Self {
        Self { x, y, yaw }
    }

    /// The position part.
    pub fn point(self) -> Point2 {
        Point2::new(self.x, self.y)
    }

    /// True when position and heading are finite.
    pub fn is_finite(self) -> bool {
        self.x.is_finite() && self.y.is_finite() && self.yaw.is_finite()
    }
}

/// Wraps an angle into `(-pi, pi]`.
pub fn normalize_angle(a: f64) -> f64 {
    let mut r = a.rem_euclid(2.0 * PI);
    if r > PI {
        r -= 2.0 * PI;
    }
    r
}

/// The unit quaternion with components (x, y, z, w), as a ROS `geometry_msgs/Quaternion` sends
/// them, renormalised to exactly unit length.
///
/// Returns `None` when any component is not finite or the norm differs from 1 by more than
/// `1e-3` (RViz and tf2 send normalised quaternions; anything else is a client bug). The same rule
/// guards [`yaw_from_quaternion`] and the transform buffer ([`crate::transform`]).
pub fn unit_quaternion(x: f64, y: f64, z: f64, w: f64) -> Option<UnitQuaternion<f64>> {
    if !(x.is_finite() && y.is_finite() && z.is_finite() && w.is_finite()) {
        return None;
    }
    // nalgebra orders the components (w, i, j, k); ROS orders them (x, y, z, w).
    let q = Quaternion::new(w, x, y, z);
    if (q.norm() - 1.0).abs() > 1e-3 {
        return None;
    }
    Some(UnitQuaternion::from_quaternion(q))
}

/// Converts a unit quaternion (x, y, z, w) to its yaw (rotation about +z), in radians in
/// `(-pi, pi]`: the heading of the rotated +x axis projected on the plane.
///
/// Returns `None` under the rule of [`unit_quaternion`] (a non-finite component, or a norm more
/// than `1e-3` away from 1).
pub fn yaw_from_quaternion(x: f64, y: f64, z: f64, w: f64) -> Option<f64> {
    unit_quaternion(x, y, z, w).map(|q| heading_of(&q))
}

/// The quaternion (x, y, z, w) of a pure rotation by `yaw` radians about +z.
pub fn quaternion_from_yaw(yaw: f64) -> (f64, f64, f64, f64) {
    let q = yaw_rotation(yaw);
    (q.i, q.j, q.k, q.w)
}

/// The rotation by `yaw` radians about +z.
fn yaw_rotation(yaw: f64) -> UnitQuaternion<f64> {
    UnitQuaternion::from_axis_angle(&Vector3::z_axis(), yaw)
}

/// Heading (radians, `(-pi, pi]`) of the +x axis after `rotation`, projected on the xy plane.
/// For a rotation about +z alone this is its angle; when the axis ends up along +-z the
/// projection is (numerically) a point and the result is arbitrary.
fn heading_of(rotation: &UnitQuaternion<f64>) -> f64 {
    let x_axis = rotation * Vector3::x();
    x_axis.y.atan2(x_axis.x)
}

impl Pose2 {
    /// The planar rigid transform that maps points of the pose's own frame into the frame the
    /// pose is expressed in (translation `(x, y)`, rotation `yaw`). Units are unchanged.
    pub fn to_isometry2(self) -> Isometry2<f64> {
        Isometry2::new(Vector2::new(self.x, self.y), self.yaw)
    }

    /// The pose of a planar rigid transform: its translation and its rotation angle, wrapped into
    /// `(-pi, pi]`. Inverse of [`Pose2::to_isometry2`] up to that wrapping.
    pub fn from_isometry2(iso: &Isometry2<f64>) -> Pose2 {
        Pose2::new(iso.translation.x, iso.translation.y, iso.rotation.angle())
    }

    /// The pose lifted into 3D: translation `(x, y, 0)`, rotation `yaw` about +z. Units are
    /// unchanged; [`planar`] goes back.
    pub fn to_isometry3(self) -> Isometry3<f64> {
        Isometry3::from_parts(Translation3::new(self.x, self.y, 0.0), yaw_rotation(self.yaw))
    }
}

/// The planar pose of a 3D rigid transform (for instance a transform-buffer lookup of the robot
/// base in the map frame): `x` and `y` of its translation (`z` is dropped) and, as `yaw`, the
/// heading in `(-pi, pi]` of its rotated +x axis projected on the xy plane (roll and pitch are
/// dropped). The heading is arbitrary when the rotated +x axis points along +-z.
pub fn planar(iso: &Isometry3<f64>) -> Pose2 {
    Pose2::new(iso.translation.x, iso.translation.y, heading_of(&iso.rotation))
}

/// `x.floor() as i64`, without the call to libm's `floor` that baseline x86-64 (no SSE4.1)
/// compiles `f64::floor` to: the cell index of a coordinate in the inner loops. Equal to
/// `x.floor() as i64` for every `x`, NaN and infinities included.
#[inline(always)]
pub fn floor_i64(x: f64) -> i64 {
    let t = x as i64;
    t.saturating_sub(i64::from(x < t as f64))
}

/// `x.ceil() as i64`, likewise without a libm call; equal to it for every `x`.
#[inline(always)]
pub fn ceil_i64(x: f64) -> i64 {
    let t = x as i64;
    t.saturating_add(i64::from(x > t as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_far_off_read_in_exponent_form() {
        assert_eq!(format!("{:.3}", Coord(1.5)), "1.500");
        assert_eq!(format!("{:.3}", Coord(-2.0e8)), "-200000000.000");
        assert_eq!(format!("{:.3}", Coord(1e300)), "1.000e300");
        assert_eq!(format!("{:.3}", Coord(f64::NAN)), "NaN");
        assert_eq!(format!("{}", Coord(2.0)), "2.000");
    }

    #[test]
    fn backwards_is_against_the_heading() {
        let a = Pose2::new(1.0, 1.0, 0.5);
        assert!(!is_reversing_step(a, Point2::new(2.0, 1.6)));
        assert!(is_reversing_step(a, Point2::new(0.0, 0.4)));
        assert!(is_reversing_step(Pose2::new(0.0, 0.0, PI), Point2::new(1.0, 0.1)));
        assert!(!is_reversing_step(a, a.point()), "staying is not reversing");
    }

    #[test]
    fn numbers_far_from_one_read_in_exponent_form() {
        for (x, text) in [
            (0.05, "0.05"),
            (-2.5, "-2.5"),
            (0.0, "0"),
            (1e308, "1e308"),
            (5e-324, "5e-324"),
            (-1.5e-7, "-1.5e-7"),
            (123456789.0, "123456789"),
            (f64::NAN, "NaN"),
        ] {
            assert_eq!(Number(x).to_string(), text);
        }
    }

    #[test]
    fn floor_and_ceil_equal_the_standard_ones() {
        let mut xs = vec![0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.999_999_999, -2.000_000_001, 1e17, -1e17, 1e300, -1e300];
        xs.extend([f64::NAN, f64::INFINITY, f64::NEG_INFINITY, f64::MIN_POSITIVE, -f64::MIN_POSITIVE]);
        xs.extend((-400..400).map(|k| k as f64 * 0.37 + 1e-12 * k as f64));
        for x in xs {
            assert_eq!(floor_i64(x), x.floor() as i64, "floor {x}");
            assert_eq!(ceil_i64(x), x.ceil() as i64, "ceil {x}");
        }
    }

    #[test]
    fn normalize_wraps_into_half_open_interval() {
        assert!((normalize_angle(3.0 * PI) - PI).abs() < 1e-12);
        assert!((normalize_angle(-PI) - PI).abs() < 1e-12);
        assert!((normalize_angle(0.5) - 0.5).abs() < 1e-12);
        assert!((normalize_angle(-0.5 - 4.0 * PI) + 0.5).abs() < 1e-12);
    }

    #[test]
    fn quaternion_round_trip() {
        for i in -7..=7 {
            let yaw = i as f64 * 0.4;
            let (x, y, z, w) = quaternion_from_yaw(yaw);
            let back = yaw_from_quaternion(x, y, z, w).unwrap();
            assert!((normalize_angle(back - yaw)).abs() < 1e-12);
        }
    }

    #[test]
    fn bad_quaternions_are_rejected() {
        assert!(yaw_from_quaternion(0.0, 0.0, 0.0, 0.0).is_none());
        assert!(yaw_from_quaternion(f64::NAN, 0.0, 0.0, 1.0).is_none());
        assert!(yaw_from_quaternion(0.0, 0.0, 1.0, 1.0).is_none());
        assert!(yaw_from_quaternion(0.0, 0.0, f64::INFINITY, 1.0).is_none());
        assert!(unit_quaternion(0.0, 0.0, 0.0, 1.0 + 2e-3).is_none());
        assert!(unit_quaternion(0.0, 0.0, 0.0, 1.0 - 2e-3).is_none());
        assert!(unit_quaternion(0.0, 0.0, 0.0, f64::NAN).is_none());
    }

    #[test]
    fn unit_quaternion_renormalises_within_tolerance() {
        // ROS order (x, y, z, w): a rotation of 90 degrees about +z, 0.05 % too long.
        let h = std::f64::consts::FRAC_1_SQRT_2 * 1.0005;
        let q = unit_quaternion(0.0, 0.0, h, h).unwrap();
        assert!((q.quaternion().norm() - 1.0).abs() < 1e-15);
        assert!((q.angle() - PI / 2.0).abs() < 1e-12);
        assert!((q.axis().unwrap().z - 1.0).abs() < 1e-12);
    }

    #[test]
    fn yaw_matches_the_closed_form_for_tilted_quaternions() {
        // The closed form tf2 uses for the yaw of a (unit) quaternion.
        let closed = |x: f64, y: f64, z: f64, w: f64| (2.0 * (w * z + x * y)).atan2(1.0 - 2.0 * (y * y + z * z));
        for (roll, pitch, yaw) in [(0.3, -0.2, 1.1), (-1.0, 0.4, -2.9), (2.0, 1.2, 3.0), (0.0, 0.0, -0.7)] {
            let q = UnitQuaternion::from_euler_angles(roll, pitch, yaw);
            let (x, y, z, w) = (q.i, q.j, q.k, q.w);
            let got = yaw_from_quaternion(x, y, z, w).unwrap();
            assert!((got - closed(x, y, z, w)).abs() < 1e-12, "{roll} {pitch} {yaw}: {got}");
            assert!((got - yaw).abs() < 1e-12, "ZYX Euler yaw {yaw}, got {got}");
        }
    }

    #[test]
    fn pose_isometry2_round_trip_and_action() {
        let pose = Pose2::new(1.0, 2.0, PI / 2.0);
        let iso = pose.to_isometry2();
        // The pose's own +x axis, one unit ahead, lands one unit along +y of the outer frame.
        let p = iso * nalgebra::Point2::new(1.0, 0.0);
        assert!((p.x - 1.0).abs() < 1e-12 && (p.y - 3.0).abs() < 1e-12);
        let back = Pose2::from_isometry2(&iso);
        assert!((back.x - 1.0).abs() < 1e-15 && (back.y - 2.0).abs() < 1e-15);
        assert!((back.yaw - PI / 2.0).abs() < 1e-12);
        // Yaw comes back wrapped into (-pi, pi].
        let wrapped = Pose2::from_isometry2(&Pose2::new(0.0, 0.0, 3.0 * PI / 2.0).to_isometry2());
        assert!((wrapped.yaw + PI / 2.0).abs() < 1e-12);
    }

    #[test]
    fn pose_isometry3_and_planar() {
        let pose = Pose2::new(-3.0, 0.5, 2.5);
        let iso = pose.to_isometry3();
        assert_eq!(iso.translation.z, 0.0);
        let p = iso * nalgebra::Point3::new(1.0, 0.0, 7.0);
        assert!((p.x - (-3.0 + 2.5f64.cos())).abs() < 1e-12);
        assert!((p.y - (0.5 + 2.5f64.sin())).abs() < 1e-12);
        assert!((p.z - 7.0).abs() < 1e-12);
        let back = planar(&iso);
        assert!((back.x + 3.0).abs() < 1e-15 && (back.y - 0.5).abs() < 1e-15);
        assert!((back.yaw - 2.5).abs() < 1e-12);
    }

    #[test]
    fn planar_drops_height_roll_and_pitch() {
        let rotation = UnitQuaternion::from_euler_angles(0.4, -0.3, -1.2);
        let iso = Isometry3::from_parts(Translation3::new(4.0, 5.0, 6.0), rotation);
        let pose = planar(&iso);
        assert_eq!((pose.x, pose.y), (4.0, 5.0));
        // The rotated x axis of a ZYX (yaw, pitch, roll) rotation keeps the yaw's heading.
        assert!((pose.yaw + 1.2).abs() < 1e-12, "{}", pose.yaw);
    }
}
