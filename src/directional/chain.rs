//! A refined path as a chain of poses, and the curves that link consecutive poses: the shortest
//! Dubins curve, or for the last link to a goal with a free heading, the arc-then-line curve.

use crate::curves::{dubins_length, dubins_shortest, pose_to_point};
use crate::geometry::Pose2;
use crate::trajectory::{Segment, Trajectory};

/// The curve from `a` to `b` (to the point of `b`, any heading, when `to_point`), or `None` when
/// no such curve exists for `radius` (an arc-then-line cannot reach a point inside the circle).
pub fn link(a: Pose2, b: Pose2, to_point: bool, radius: f64) -> Option<Vec<Segment>> {
    if to_point {
        pose_to_point(a, b.point(), radius).map(|c| c.segments())
    } else {
        dubins_shortest(a, b, radius).map(|c| c.segments())
    }
}

/// Cost of the curve [`link`] would build, computed without building it.
pub fn link_cost_estimate(a: Pose2, b: Pose2, to_point: bool, radius: f64, turn_penalty: f64) -> Option<f64> {
    if to_point {
        pose_to_point(a, b.point(), radius).map(|c| c.length() + turn_penalty * c.arc_length / radius)
    } else {
        dubins_length(a, b, radius).map(|(len, turning)| len + turn_penalty * turning)
    }
}

/// Cost of a curve: its length plus `turn_penalty` per radian turned.
pub fn curve_cost(segments: &[Segment], turn_penalty: f64) -> f64 {
    segments.iter().map(|s| s.length * (1.0 + turn_penalty * s.curvature.abs())).sum()
}

/// A chain of poses from the start to the goal; the last link goes to the goal's point only
/// when `goal_free`.
#[derive(Debug, Clone, PartialEq)]
pub struct PoseChain {
    /// Poses, start first, goal last.
    pub poses: Vec<Pose2>,
    /// True when the goal heading is free (last link is arc-then-line).
    pub goal_free: bool,
}

impl PoseChain {
    /// The trajectory through the chain (a link that cannot be built is left out, which
    /// verification then reports as a discontinuity).
    pub fn trajectory(&self, radius: f64) -> Trajectory {
        let n = self.poses.len();
        let mut segments = Vec::new();
        for (k, w) in self.poses.windows(2).enumerate() {
            let to_point = self.goal_free && k + 2 == n;
            segments.extend(link(w[0], w[1], to_point, radius).unwrap_or_default());
        }
        Trajectory { segments, min_turning_radius: radius }
    }
}
