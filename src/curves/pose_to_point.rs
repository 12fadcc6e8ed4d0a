//! The shortest arc-then-line curve from a pose to a point (Pinter's first construction): turn
//! left or right at the minimum radius until the heading points at the target, then drive
//! straight. Used for a goal whose final heading is free.

use super::dubins::DubinsWord;
use crate::geometry::{Point2, Pose2};
use crate::trajectory::{Segment, Turn};
use std::f64::consts::PI;

/// An arc (left or right, possibly of length 0) followed by a line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PointCurve {
    /// Start pose.
    pub start: Pose2,
    /// Arc radius (> 0).
    pub radius: f64,
    /// Direction of the arc (Left or Right).
    pub turn: Turn,
    /// Arc length (>= 0).
    pub arc_length: f64,
    /// Line length (>= 0).
    pub line_length: f64,
}

impl PointCurve {
    /// Total length.
    pub fn length(&self) -> f64 {
        self.arc_length + self.line_length
    }

    /// The pieces as forward segments (zero-length pieces left out).
    pub fn segments(&self) -> Vec<Segment> {
        let mut out = Vec::with_capacity(2);
        let mut pose = self.start;
        if self.arc_length > 0.0 {
            let a = Segment::arc(pose, self.arc_length, self.radius, self.turn);
            pose = a.end();
            out.push(a);
        }
        if self.line_length > 0.0 {
            out.push(Segment::line(pose, self.line_length));
        }
        out
    }

    /// The end pose (the target point, heading along the line).
    pub fn end(&self) -> Pose2 {
        self.segments().last().map_or(self.start, Segment::end)
    }

    /// The same curve seen as a degenerate Dubins word (for callers that tabulate words).
    pub fn word(&self) -> DubinsWord {
        if self.turn == Turn::Right {
            DubinsWord::Rsr
        } else {
            DubinsWord::Lsl
        }
    }
}

/// The shortest arc-then-line curve from `start` to `target` with arc radius `radius`.
///
/// Returns `None` when `radius` is not finite and positive, an input is not finite, or the
/// target lies strictly inside both turning circles (impossible unless it is the start point) or
/// inside the one circle whose turn would be needed: then no arc-then-line curve reaches it.
pub fn pose_to_point(start: Pose2, target: Point2, radius: f64) -> Option<PointCurve> {
    if !(radius.is_finite() && radius > 0.0 && start.is_finite() && target.is_finite()) {
        return None;
    }
    let (s, c) = start.yaw.sin_cos();
    let mut best: Option<PointCurve> = None;
    for turn in [Turn::Left, Turn::Right] {
        let side = if turn == Turn::Left { 1.0 } else { -1.0 };
        // Centre of the turning circle on the chosen side.
        let centre = Point2::new(start.x - side * radius * s, start.y + side * radius * c);
        let dc = centre.distance(target);
        if dc < radius * (1.0 - 1e-12) {
            continue;
        }
        let psi = (target.y - centre.y).atan2(target.x - centre.x);
        let gamma = (radius / dc).min(1.0).acos();
        // Angle (seen from the centre) of the start point and of the tangent point.
        let phi0 = start.yaw - side * PI / 2.0;
        let phi = psi - side * gamma;
        let mut sweep = (side * (phi - phi0)).rem_euclid(2.0 * PI);
        if sweep >= 2.0 * PI - 1e-12 {
            sweep = 0.0;
        }
        let line = (dc * dc - radius * radius).max(0.0).sqrt();
        let cand = PointCurve { start, radius, turn, arc_length: sweep * radius, line_length: line };
        if best.is_none_or(|b| cand.length() < b.length()) {
            best = Some(cand);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curves::dubins_shortest;

    #[test]
    fn straight_ahead_and_quarter_turn() {
        let c = pose_to_point(Pose2::new(0.0, 0.0, 0.0), Point2::new(5.0, 0.0), 1.0).unwrap();
        assert!(c.arc_length.abs() < 1e-9 && (c.line_length - 5.0).abs() < 1e-9);
        // Point at (1, 1) with radius 1: a quarter circle to the left, no line.
        let c = pose_to_point(Pose2::new(0.0, 0.0, 0.0), Point2::new(1.0, 1.0), 1.0).unwrap();
        assert!((c.length() - PI / 2.0).abs() < 1e-6, "{c:?}");
        assert_eq!(c.turn, Turn::Left);
        // Behind: left and right are symmetric; length = pi r ... plus the line.
        let c = pose_to_point(Pose2::new(0.0, 0.0, 0.0), Point2::new(-3.0, 2.0), 1.0).unwrap();
        assert_eq!(c.turn, Turn::Left);
    }

    #[test]
    fn ends_at_the_target_and_is_never_longer_than_dubins_to_any_heading() {
        let mut seed = 5u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        for _ in 0..500 {
            let start = Pose2::new(next() * 10.0, next() * 10.0, next() * std::f64::consts::TAU);
            let target = Point2::new(next() * 10.0, next() * 10.0);
            let Some(c) = pose_to_point(start, target, 1.5) else { continue };
            assert!(c.end().point().distance(target) < 1e-6);
            // Dubins to the same point with the heading the curve arrives with is no shorter
            // (the arc-then-line curve is itself such a curve, and Dubins is the shortest).
            let d = dubins_shortest(start, c.end(), 1.5).unwrap();
            assert!(d.length() <= c.length() + 1e-6);
            // And the straight line is a lower bound.
            assert!(c.length() >= start.point().distance(target) - 1e-9);
            // Brute force over 720 headings: no Dubins curve to the point is much shorter when the
            // target lies outside both circles (then arc-then-line is optimal).
            let (s, co) = start.yaw.sin_cos();
            let outside = [1.0, -1.0]
                .iter()
                .all(|side| Point2::new(start.x - side * 1.5 * s, start.y + side * 1.5 * co).distance(target) >= 1.5);
            if !outside {
                continue;
            }
            let best = (0..720)
                .map(|k| dubins_shortest(start, Pose2::new(target.x, target.y, k as f64 * PI / 360.0), 1.5).unwrap())
                .map(|d| d.length())
                .fold(f64::INFINITY, f64::min);
            assert!(c.length() <= best + 0.02, "{} vs {best}", c.length());
        }
    }
}
