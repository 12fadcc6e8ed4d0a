//! Planar geometry shared by every stage: points, poses and angle helpers.
//!
//! Units are whatever the caller works in: the search stages use **cell units** (one unit is one
//! grid cell, the origin is the low corner of cell (0, 0)); the ROS boundary converts to metres in
//! the map frame with [`crate::map::MapInfo`].

use serde::{Deserialize, Serialize};
use std::f64::consts::PI;

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

/// Converts a unit quaternion (x, y, z, w) to its yaw (rotation about +z), in radians.
///
/// Returns `None` when any component is not finite or the norm differs from 1 by more than
/// `1e-3` (RViz and tf2 send normalised quaternions; anything else is a client bug).
pub fn yaw_from_quaternion(x: f64, y: f64, z: f64, w: f64) -> Option<f64> {
    if !(x.is_finite() && y.is_finite() && z.is_finite() && w.is_finite()) {
        return None;
    }
    let norm = (x * x + y * y + z * z + w * w).sqrt();
    if (norm - 1.0).abs() > 1e-3 {
        return None;
    }
    Some((2.0 * (w * z + x * y)).atan2(1.0 - 2.0 * (y * y + z * z)))
}

/// The quaternion (x, y, z, w) of a pure rotation by `yaw` radians about +z.
pub fn quaternion_from_yaw(yaw: f64) -> (f64, f64, f64, f64) {
    let h = 0.5 * yaw;
    (0.0, 0.0, h.sin(), h.cos())
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
