//! Verification of a finished trajectory against the current map: the last gate before a
//! trajectory is returned. A trajectory that fails here is never handed out.

use super::footprint::{CollisionMap, Shape};
use crate::geometry::{normalize_angle, Pose2};
use crate::trajectory::Trajectory;

/// Curvature slack allowed over `1 / min_turning_radius`.
pub const CURVATURE_TOLERANCE: f64 = 1e-9;

/// Largest position/heading gap allowed at a segment joint or at the requested ends.
pub const JOINT_TOLERANCE: f64 = 1e-6;

/// What the vehicle can do, as verification checks it.
#[derive(Debug, Clone, PartialEq)]
pub struct Vehicle {
    /// Its footprint (cells; a plain radius means a disk, a square turns with the heading).
    pub footprint: Shape,
    /// Its minimum turning radius (cells, >= 0; 0 allows turns on the spot).
    pub min_turning_radius: f64,
    /// Whether it may drive backwards (Reeds-Shepp); a forward-only vehicle's trajectory holds no
    /// reverse segment.
    pub may_reverse: bool,
}

impl Vehicle {
    /// A vehicle that drives forwards only.
    pub fn forward(footprint: impl Into<Shape>, min_turning_radius: f64) -> Self {
        Self { footprint: footprint.into(), min_turning_radius, may_reverse: false }
    }
}

/// Why a trajectory was rejected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum VerifyError {
    /// There is no segment.
    #[error("the trajectory is empty")]
    Empty,
    /// A segment holds a NaN or infinite value, or a negative length, or a turn on the spot
    /// with a length or a curvature.
    #[error("segment {0} is malformed (non-finite value, negative length, or a turn on the spot that also moves)")]
    Malformed(usize),
    /// A segment driven backwards by a vehicle that drives forwards only, or a turn on the spot
    /// marked as driven backwards (its gear says nothing: it does not move).
    #[error("segment {0} is driven backwards, which the vehicle may not do there")]
    Reverse(usize),
    /// A turn on the spot where the minimum turning radius is positive.
    #[error("segment {0} turns on the spot, which a positive minimum turning radius forbids")]
    TurnOnTheSpot(usize),
    /// Consecutive segments do not join.
    #[error("segment {0} does not join the next one (gap {1:.3e})")]
    Discontinuous(usize, f64),
    /// An arc is tighter than the minimum turning radius allows.
    #[error("segment {index} has curvature {curvature:.6} above the limit {limit:.6}")]
    Curvature {
        /// Segment index.
        index: usize,
        /// Its |curvature| (1/cells).
        curvature: f64,
        /// The limit (1/cells).
        limit: f64,
    },
    /// The swept footprint touches a cell the vehicle may not enter.
    #[error("the footprint swept along segment {0} touches a blocked cell")]
    Collision(usize),
    /// The trajectory does not start at the requested pose.
    #[error("the trajectory does not start at the start pose")]
    WrongStart,
    /// The trajectory does not end at the requested goal.
    #[error("the trajectory does not end at the goal")]
    WrongGoal,
}

/// Checks `traj` (cell units) on `map` for `vehicle`: well-formed, continuous in position and
/// heading (at cusps too: the heading is the vehicle's facing, which a change of gear keeps),
/// curvature at most `1 / min_turning_radius` (+[`CURVATURE_TOLERANCE`]; turns on the spot only
/// when it is 0, swept as the footprint's circumscribed disk), reverse segments only for a vehicle
/// that may reverse (a segment's gear is consistent with its motion because its end is computed
/// from it: a wrong gear sends the end the other way, which the joins and the goal check catch), the footprint never touching a blocked cell along any segment whatever its
/// gear, starting at `start` and ending at `goal` (heading ignored when `goal_heading_free`).
/// Returns the first violation found.
pub fn verify_trajectory(
    map: &CollisionMap,
    traj: &Trajectory,
    vehicle: &Vehicle,
    start: Pose2,
    goal: Pose2,
    goal_heading_free: bool,
) -> Result<(), VerifyError> {
    let Vehicle { footprint, min_turning_radius, may_reverse } = vehicle;
    let (min_turning_radius, may_reverse) = (*min_turning_radius, *may_reverse);
    let segs = &traj.segments;
    let (Some(first), Some(last)) = (segs.first(), segs.last()) else { return Err(VerifyError::Empty) };
    let limit = if min_turning_radius > 0.0 { 1.0 / min_turning_radius } else { f64::INFINITY };
    for (i, s) in segs.iter().enumerate() {
        let well_formed = s.start.is_finite() && s.length.is_finite() && s.curvature.is_finite() && s.length >= 0.0;
        let turn_ok = s.rotation.is_finite() && (s.rotation == 0.0 || (s.length == 0.0 && s.curvature == 0.0));
        if !(well_formed && turn_ok) {
            return Err(VerifyError::Malformed(i));
        }
        if s.reverse && (!may_reverse || s.rotation != 0.0) {
            return Err(VerifyError::Reverse(i));
        }
        if s.rotation != 0.0 && limit.is_finite() {
            return Err(VerifyError::TurnOnTheSpot(i));
        }
        if s.curvature.abs() > limit + CURVATURE_TOLERANCE {
            return Err(VerifyError::Curvature { index: i, curvature: s.curvature.abs(), limit });
        }
    }
    for (i, w) in segs.windows(2).enumerate() {
        let (a, b) = (w[0].end(), w[1].start);
        let gap = a.point().distance(b.point()).max(normalize_angle(a.yaw - b.yaw).abs());
        if gap > JOINT_TOLERANCE {
            return Err(VerifyError::Discontinuous(i, gap));
        }
    }
    let s0 = first.start;
    if s0.point().distance(start.point()) > JOINT_TOLERANCE
        || normalize_angle(s0.yaw - start.yaw).abs() > JOINT_TOLERANCE
    {
        return Err(VerifyError::WrongStart);
    }
    let e = last.end();
    if e.point().distance(goal.point()) > JOINT_TOLERANCE
        || (!goal_heading_free && normalize_angle(e.yaw - goal.yaw).abs() > JOINT_TOLERANCE)
    {
        return Err(VerifyError::WrongGoal);
    }
    for (i, s) in segs.iter().enumerate() {
        if !map.sweep_free(std::slice::from_ref(s), footprint, 0.0) {
            return Err(VerifyError::Collision(i));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curves::dubins_shortest;
    use crate::grid::Grid;

    #[test]
    fn catches_each_violation() {
        let mut g = Grid::new_free(40, 40).unwrap();
        let m0 = CollisionMap::new(&g);
        let a = Pose2::new(5.5, 5.5, 0.0);
        let b = Pose2::new(25.5, 15.5, 1.0);
        let t = Trajectory { segments: dubins_shortest(a, b, 4.0).unwrap().segments(), min_turning_radius: 4.0 };
        assert_eq!(verify_trajectory(&m0, &t, &Vehicle::forward(1.0, 4.0), a, b, false), Ok(()));
        assert!(matches!(
            verify_trajectory(&m0, &t, &Vehicle::forward(1.0, 5.0), a, b, false),
            Err(VerifyError::Curvature { .. })
        ));
        assert_eq!(verify_trajectory(&m0, &t, &Vehicle::forward(1.0, 4.0), b, b, false), Err(VerifyError::WrongStart));
        assert_eq!(
            verify_trajectory(&m0, &t, &Vehicle::forward(1.0, 4.0), a, Pose2::new(25.5, 15.5, 0.0), false),
            Err(VerifyError::WrongGoal)
        );
        assert_eq!(
            verify_trajectory(&m0, &t, &Vehicle::forward(1.0, 4.0), a, Pose2::new(25.5, 15.5, 0.0), true),
            Ok(())
        );
        let mut broken = t.clone();
        broken.segments.remove(1);
        assert!(matches!(
            verify_trajectory(&m0, &broken, &Vehicle::forward(1.0, 4.0), a, b, false),
            Err(VerifyError::Discontinuous(..))
        ));
        assert_eq!(
            verify_trajectory(&m0, &Trajectory::default(), &Vehicle::forward(1.0, 4.0), a, b, false),
            Err(VerifyError::Empty)
        );
        // Block a cell on the curve.
        let mid = t.pose_at(t.length() / 2.0).unwrap();
        g.set_blocked(mid.x as usize, mid.y as usize, true).unwrap();
        let m1 = CollisionMap::new(&g);
        assert!(matches!(
            verify_trajectory(&m1, &t, &Vehicle::forward(1.0, 4.0), a, b, false),
            Err(VerifyError::Collision(_))
        ));
        // A cell 1.1 cells beside the curve is touched by a footprint of radius 1.5 only.
        let mut g2 = Grid::new_free(40, 40).unwrap();
        g2.set_blocked(15, 7, true).unwrap();
        let line = Trajectory {
            segments: vec![crate::trajectory::Segment::line(Pose2::new(5.5, 5.5, 0.0), 20.0)],
            min_turning_radius: 4.0,
        };
        let (s, e) = (Pose2::new(5.5, 5.5, 0.0), Pose2::new(25.5, 5.5, 0.0));
        let m2 = CollisionMap::new(&g2);
        assert_eq!(verify_trajectory(&m2, &line, &Vehicle::forward(1.0, 4.0), s, e, false), Ok(()));
        assert!(verify_trajectory(&m2, &line, &Vehicle::forward(1.5, 4.0), s, e, false).is_err());
    }

    /// Reverse segments pass only for a vehicle that may reverse; a cusp keeps the heading (a
    /// join that flips the heading is a discontinuity); a turn on the spot has no gear.
    #[test]
    fn gears_are_checked() {
        let m = CollisionMap::new(&Grid::new_free(40, 40).unwrap());
        let a = Pose2::new(20.5, 20.5, 0.0);
        let mut back = crate::trajectory::Segment::line(a, 5.0);
        back.reverse = true;
        let ahead = crate::trajectory::Segment::line(back.end(), 8.0);
        let t = Trajectory { segments: vec![back, ahead], min_turning_radius: 4.0 };
        let end = ahead.end();
        assert_eq!(end.x, 23.5);
        let forward = Vehicle::forward(1.0, 4.0);
        let reversing = Vehicle { may_reverse: true, ..forward.clone() };
        assert_eq!(verify_trajectory(&m, &t, &forward, a, end, false), Err(VerifyError::Reverse(0)));
        assert_eq!(verify_trajectory(&m, &t, &reversing, a, end, false), Ok(()));
        // The same geometry with a wrong gear on either segment does not join or end at the goal.
        for k in 0..2 {
            let mut wrong = t.clone();
            wrong.segments[k].reverse = !wrong.segments[k].reverse;
            let got = verify_trajectory(&m, &wrong, &reversing, a, end, false);
            assert!(matches!(got, Err(VerifyError::Discontinuous(..) | VerifyError::WrongGoal)), "{k}: {got:?}");
        }
        // The same motion with the heading flipped at the cusp (direction of travel, not facing).
        let mut flipped = t.clone();
        flipped.segments[0].start.yaw = std::f64::consts::PI;
        flipped.segments[0].reverse = false;
        assert!(verify_trajectory(&m, &flipped, &reversing, a, end, false).is_err());
        // A turn on the spot marked as reverse is refused whatever the vehicle.
        let mut spin = crate::trajectory::Segment::rotate(a, 1.0);
        spin.reverse = true;
        let t = Trajectory { segments: vec![spin], min_turning_radius: 0.0 };
        let turned = Pose2::new(a.x, a.y, 1.0);
        let spot = Vehicle { min_turning_radius: 0.0, ..reversing };
        assert_eq!(verify_trajectory(&m, &t, &spot, a, turned, false), Err(VerifyError::Reverse(0)));
    }
}
