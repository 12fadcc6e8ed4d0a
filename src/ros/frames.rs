//! Where things are: the transform buffer fed by `/tf` and `/tf_static`, poses of any frame
//! brought into `global_frame`, and the robot's start pose.
//!
//! Where the start pose comes from, first match wins (README, "Where the start pose comes from"):
//! 1. the request's own start (the actions' `use_start`);
//! 2. TF: the pose of `robot_base_frame` in `global_frame` at the latest time both are known; a
//!    pose older than `transform_tolerance` is a `TF_ERROR`, not a fallback, so a robot whose
//!    localisation stopped is not planned for from where it was;
//! 3. only when TF does not connect the two frames: the latest `/initialpose` or `/odom`
//!    (whichever came last; the other when the newer cannot be brought into `global_frame`),
//!    brought into `global_frame` through TF when it is in another frame.
//!
//! When ROS time jumps back (a simulation reset, a bag played again) the buffer's dynamic
//! transforms are cleared, as tf2 does: transforms older than the held ones would otherwise be
//! refused for 10 s. Static ones stay (their latched publisher does not send them again).

use crate::geometry::{planar, unit_quaternion, Number, Pose2};
use crate::planner::{PlanError, StatusCode};
use crate::transform::{Stamp, TransformBuffer, TransformError};
use nalgebra::{Isometry3, Translation3};
use r2r::builtin_interfaces::msg::Time;
use r2r::geometry_msgs::msg as geo;
use std::time::Duration;

/// How long dynamic transforms are kept per edge (tf2's default cache time).
pub const TF_CACHE_TIME: Duration = Duration::from_secs(10);

/// A jump of ROS time back by more than this clears the buffer's dynamic transforms.
pub const TIME_JUMP_BACK: Duration = Duration::from_secs(1);

/// A tolerance in seconds as a duration (negative: zero; beyond an hour: an hour, which no
/// lookup needs and which keeps the conversion in range).
fn tolerance_of(seconds: f64) -> Duration {
    Duration::from_secs_f64(if seconds.is_finite() { seconds.clamp(0.0, 3600.0) } else { 0.0 })
}

fn tf_error(message: String) -> PlanError {
    PlanError::new(StatusCode::TfError, message)
}

fn invalid(message: String) -> PlanError {
    PlanError::new(StatusCode::InvalidInput, message)
}

/// A ROS time as a transform-buffer stamp (zero stays zero: "the latest").
pub fn stamp_of(t: &Time) -> Stamp {
    Stamp::from_sec_nanosec(t.sec, t.nanosec)
}

/// A `geometry_msgs/Pose` as an isometry.
///
/// Fails (`INVALID_INPUT`) when the position is not finite or the quaternion is not a finite unit
/// quaternion (norm within 1e-3 of 1).
pub fn isometry_from_pose(p: &geo::Pose) -> Result<Isometry3<f64>, PlanError> {
    let o = &p.orientation;
    let rotation = unit_quaternion(o.x, o.y, o.z, o.w).ok_or_else(|| super::convert::not_a_unit_quaternion(o))?;
    let t = &p.position;
    if !(t.x.is_finite() && t.y.is_finite() && t.z.is_finite()) {
        let (x, y, z) = (Number(t.x), Number(t.y), Number(t.z));
        return Err(invalid(format!("position ({x}, {y}, {z}) is not finite")));
    }
    Ok(Isometry3::from_parts(Translation3::new(t.x, t.y, t.z), rotation))
}

/// A start pose received on a topic, kept as received so it is brought into `global_frame` with
/// the transforms in force when a plan starts.
struct Received {
    source: &'static str,
    frame: String,
    stamp: Stamp,
    pose: Isometry3<f64>,
}

/// The transform buffer and the start-pose sources.
pub struct Frames {
    buffer: TransformBuffer,
    global: String,
    base: String,
    tolerance: Duration,
    /// The latest pose of each source, the newest first.
    received: Vec<Received>,
    /// The latest ROS time seen (to notice time jumping back).
    last_now: Option<Stamp>,
    /// After a jump back, the time it jumped from, until ROS time reaches it again: dynamic
    /// transforms stamped after `now` + [`TIME_JUMP_BACK`] meanwhile were sent before the jump.
    jumped_from: Option<Stamp>,
    /// How many such transforms were dropped since [`Frames::take_dropped_from_before_jump`].
    dropped_from_before_jump: usize,
    /// Whether the robot's pose ever had a source: a transform to `base`, or a received pose
    /// (see [`Frames::robot_pose_had_source`]).
    robot_pose_had_source: bool,
}

impl Frames {
    /// Frames for a planner in `global` whose robot is `base`, with lookups allowed to reach
    /// `tolerance` seconds past the transforms held.
    pub fn new(global: &str, base: &str, tolerance: f64) -> Self {
        Self {
            buffer: TransformBuffer::new(TF_CACHE_TIME),
            global: global.to_owned(),
            base: base.to_owned(),
            tolerance: tolerance_of(tolerance),
            received: Vec::new(),
            last_now: None,
            jumped_from: None,
            dropped_from_before_jump: 0,
            robot_pose_had_source: false,
        }
    }

    /// Takes new frame names and tolerance (lifecycle configure), keeping the transforms held:
    /// static ones are latched and would not be sent again.
    pub fn configure(&mut self, global: &str, base: &str, tolerance: f64) {
        if base != self.base {
            self.robot_pose_had_source = !self.received.is_empty();
        }
        self.global = global.to_owned();
        self.base = base.to_owned();
        self.tolerance = tolerance_of(tolerance);
    }

    /// Whether anything ever told the robot's pose: a transform whose child is
    /// `robot_base_frame`, or a pose on `/initialpose` or `/odom` (kept through a jump of time
    /// back, which forgets the poses themselves). A robot whose pose cannot be had now although
    /// it had a source (stale TF, a broken chain, time jumped back) is not where its trajectory
    /// starts; only one that never had a pose (planned for with an explicit start) is taken there.
    pub fn robot_pose_had_source(&self) -> bool {
        self.robot_pose_had_source
    }

    /// Notes ROS time `now`; when it jumped back by more than [`TIME_JUMP_BACK`], every dynamic
    /// transform and received pose is forgotten (they belong to the time before the jump); static
    /// transforms stay, as in tf2 (a latched `/tf_static` is not sent again). Returns whether
    /// that happened.
    pub fn observe_time(&mut self, now: Stamp) -> bool {
        let jumped_from =
            self.last_now.filter(|last| last.as_nanos() - now.as_nanos() > TIME_JUMP_BACK.as_nanos() as i64);
        self.last_now = Some(now);
        if jumped_from.is_some() {
            self.buffer.clear_dynamic();
            self.received.clear();
            // Until time reaches the latest time it jumped from: a second jump before time caught
            // up leaves transforms of both earlier stretches in flight.
            self.jumped_from = self.jumped_from.max(jumped_from);
        } else if self.jumped_from.is_some_and(|from| now >= from) {
            self.jumped_from = None;
        }
        jumped_from.is_some()
    }

    /// How many dynamic transforms were dropped as sent before a jump back since the last call
    /// (and resets the count).
    pub fn take_dropped_from_before_jump(&mut self) -> usize {
        std::mem::take(&mut self.dropped_from_before_jump)
    }

    /// The transforms held (for tests and diagnostics).
    pub fn buffer(&self) -> &TransformBuffer {
        &self.buffer
    }

    /// Takes the transforms of one `tf2_msgs/TFMessage` (`is_static`: from `/tf_static`). Each is
    /// checked alone: a bad one (NaN, a second parent, a loop) is skipped and its error returned,
    /// the others are kept.
    ///
    /// After ROS time jumped back, and until it reaches the time it jumped from again, a dynamic
    /// transform stamped more than [`TIME_JUMP_BACK`] after now is dropped (and counted, see
    /// [`Frames::take_dropped_from_before_jump`]): it was sent before the jump and reached the node
    /// after the clock's message (`/clock` keeps only its last message, `/tf` a queue). Taken, it
    /// would be the edge's newest, and every transform of the new time would be refused as older
    /// than the 10 s the edge keeps behind it: no robot pose for as long as the jump was long.
    pub fn add_transforms(&mut self, transforms: &[geo::TransformStamped], is_static: bool) -> Vec<TransformError> {
        let mut errors = Vec::new();
        let sent_before_jump = match (self.jumped_from, self.last_now) {
            (Some(_), Some(now)) if !is_static => Some(now.as_nanos() + TIME_JUMP_BACK.as_nanos() as i64),
            _ => None,
        };
        for t in transforms {
            if sent_before_jump.is_some_and(|limit| stamp_of(&t.header.stamp).as_nanos() > limit) {
                self.dropped_from_before_jump += 1;
                continue;
            }
            self.robot_pose_had_source |= t.child_frame_id.trim_start_matches('/') == self.base.trim_start_matches('/');
            let (v, q) = (&t.transform.translation, &t.transform.rotation);
            if let Err(e) = self.buffer.set_transform_parts(
                &t.header.frame_id,
                &t.child_frame_id,
                stamp_of(&t.header.stamp),
                [v.x, v.y, v.z],
                [q.x, q.y, q.z, q.w],
                is_static,
            ) {
                errors.push(e);
            }
        }
        errors
    }

    /// Keeps the latest start pose received on `source` (`/initialpose`, `/odom`), in any frame.
    ///
    /// Fails (`INVALID_INPUT`, nothing kept) on a malformed pose or an empty frame.
    pub fn set_received(
        &mut self,
        source: &'static str,
        frame: &str,
        stamp: &Time,
        pose: &geo::Pose,
    ) -> Result<(), PlanError> {
        if frame.is_empty() {
            return Err(invalid(format!("{source} has no frame_id")));
        }
        let pose = isometry_from_pose(pose).map_err(|e| invalid(format!("{source}: {}", e.message)))?;
        self.received.retain(|r| r.source != source);
        self.received.insert(0, Received { source, frame: frame.to_owned(), stamp: stamp_of(stamp), pose });
        self.robot_pose_had_source = true;
        Ok(())
    }

    /// `pose` in `frame` at `stamp` (zero: the latest transforms) as a planar pose in
    /// `global_frame`; `what` names it in errors ("the goal").
    ///
    /// Fails with `TF_ERROR` naming both frames when TF cannot bring `frame` into `global_frame`
    /// (unknown frame, not connected, extrapolation beyond `transform_tolerance`), and
    /// `INVALID_INPUT` for a malformed pose or an empty frame.
    pub fn to_global(&self, what: &str, frame: &str, stamp: &Time, pose: &geo::Pose) -> Result<Pose2, PlanError> {
        if frame.is_empty() {
            return Err(invalid(format!(
                "{what} has no frame_id (expected {:?} or a frame TF connects to it)",
                self.global
            )));
        }
        let iso =
            isometry_from_pose(pose).map_err(|e| invalid(format!("{what} is not a valid pose: {}", e.message)))?;
        self.isometry_to_global(what, frame, stamp_of(stamp), &iso)
    }

    /// The pose of frame `base` (another vehicle's `robot_base_frame`) in `global_frame` at ROS
    /// time `now`, through TF alone. Fails with `TF_ERROR` as [`Frames::robot_pose`] does.
    pub fn vehicle_pose(&self, base: &str, now: Stamp) -> Result<Pose2, PlanError> {
        let latest = self
            .buffer
            .latest_common_time(&self.global, base)
            .map_err(|e| tf_error(format!("TF cannot give the pose of {base:?} in {:?}: {e}", self.global)))?;
        self.pose_at(base, latest, now)
    }

    /// The pose of `base` from TF at its latest common time `latest`, refused when older (or
    /// newer) than `transform_tolerance` at `now`.
    fn pose_at(&self, base: &str, latest: Stamp, now: Stamp) -> Result<Pose2, PlanError> {
        let age = now.as_secs_f64() - latest.as_secs_f64();
        // A chain of static transforms only has no time (Stamp::LATEST): never stale. A pose from
        // the future (clocks apart) is as untrustworthy as an old one.
        if latest != Stamp::LATEST && age.abs() > self.tolerance.as_secs_f64() {
            let tolerance = self.tolerance.as_secs_f64();
            return Err(tf_error(if age >= 0.0 {
                format!(
                    "the robot's pose ({base:?} in {:?}) is {age:.2} s old (transform_tolerance {tolerance} s): is \
                     localisation or odometry running?",
                    self.global
                )
            } else {
                // As in tf2, the pose is looked up at the latest time the whole chain covers: one
                // transform stamped ahead keeps that time ahead of the node's clock.
                format!(
                    "the robot's pose ({base:?} in {:?}) is stamped {:.2} s after this node's time \
                     (transform_tolerance {tolerance} s): does a TF publisher's clock run ahead? As in tf2, the \
                     pose is the one at the latest time every transform of its chain covers, which stays ahead until \
                     this node's time catches up",
                    self.global, -age
                )
            }));
        }
        let t = self
            .buffer
            .lookup(&self.global, base, latest, self.tolerance)
            .map_err(|e| tf_error(format!("cannot look up the robot's pose ({base:?} in {:?}): {e}", self.global)))?;
        Ok(planar(&t))
    }

    fn isometry_to_global(
        &self,
        what: &str,
        frame: &str,
        stamp: Stamp,
        iso: &Isometry3<f64>,
    ) -> Result<Pose2, PlanError> {
        if frame.trim_start_matches('/') == self.global.trim_start_matches('/') {
            return Ok(planar(iso));
        }
        let t = self.buffer.lookup(&self.global, frame, stamp, self.tolerance).map_err(|e| {
            tf_error(format!("cannot transform {what} from frame {frame:?} into {:?}: {e}", self.global))
        })?;
        Ok(planar(&(t * iso)))
    }

    /// The robot's start pose in `global_frame` at ROS time `now` (see the module's order of
    /// sources).
    ///
    /// Fails with `TF_ERROR` when the TF pose is older than `transform_tolerance`, or when TF does
    /// not connect `robot_base_frame` to `global_frame` and no received pose can be used (the
    /// message names both frames and why).
    pub fn robot_pose(&self, now: Stamp) -> Result<Pose2, PlanError> {
        match self.buffer.latest_common_time(&self.global, &self.base) {
            Ok(latest) => self.pose_at(&self.base, latest, now),
            Err(tf_reason) => match self.received.split_first() {
                // The newest source first; the other when the newer cannot be transformed.
                Some((newest, older)) => {
                    let bring = |r: &Received| {
                        self.isometry_to_global(
                            &format!("the start pose from {}", r.source),
                            &r.frame,
                            r.stamp,
                            &r.pose,
                        )
                    };
                    bring(newest).or_else(|e| older.iter().find_map(|r| bring(r).ok()).ok_or(e))
                }
                None => Err(tf_error(format!(
                    "no start pose: TF cannot give the robot's pose ({:?} in {:?}: {tf_reason}), and no /initialpose \
                     or /odom was received",
                    self.base, self.global
                ))),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tf(parent: &str, child: &str, sec: i32, x: f64, yaw: f64) -> geo::TransformStamped {
        let mut t = geo::TransformStamped::default();
        t.header.frame_id = parent.into();
        t.header.stamp.sec = sec;
        t.child_frame_id = child.into();
        t.transform.translation.x = x;
        t.transform.rotation.z = (yaw / 2.0).sin();
        t.transform.rotation.w = (yaw / 2.0).cos();
        t
    }

    fn pose(x: f64, y: f64) -> geo::Pose {
        let mut p = geo::Pose::default();
        p.position.x = x;
        p.position.y = y;
        p.orientation.w = 1.0;
        p
    }

    fn at(sec: i32) -> Time {
        Time { sec, nanosec: 0 }
    }

    #[test]
    fn the_robot_pose_comes_from_tf_and_goals_in_other_frames_are_transformed() {
        let mut f = Frames::new("map", "base_link", 0.1);
        assert_eq!(f.robot_pose(stamp_of(&at(10))).unwrap_err().code, StatusCode::TfError);
        assert!(f.add_transforms(&[tf("map", "odom", 0, 1.0, std::f64::consts::FRAC_PI_2)], true).is_empty());
        assert!(f.add_transforms(&[tf("odom", "base_link", 10, 2.0, 0.0)], false).is_empty());
        let p = f.robot_pose(stamp_of(&at(10))).unwrap();
        assert!((p.x - 1.0).abs() < 1e-9 && (p.y - 2.0).abs() < 1e-9, "{p:?}");
        assert!((p.yaw - std::f64::consts::FRAC_PI_2).abs() < 1e-9);
        // A goal 1 m ahead of the robot, in base_link.
        let g = f.to_global("the goal", "base_link", &at(0), &pose(1.0, 0.0)).unwrap();
        assert!((g.x - 1.0).abs() < 1e-9 && (g.y - 3.0).abs() < 1e-9, "{g:?}");
        // Stale: 5 s later with no new odom -> base_link.
        let e = f.robot_pose(stamp_of(&at(15))).unwrap_err();
        assert!(e.code == StatusCode::TfError && e.message.contains("5.00 s old"), "{e}");
        // Unknown frame: TF_ERROR naming both frames.
        let e = f.to_global("the goal", "elsewhere", &at(0), &pose(0.0, 0.0)).unwrap_err();
        assert!(e.code == StatusCode::TfError && e.message.contains("\"elsewhere\"") && e.message.contains("\"map\""));
    }

    #[test]
    fn received_poses_serve_only_when_tf_does_not_connect_the_robot() {
        let mut f = Frames::new("map", "base_link", 0.1);
        f.add_transforms(&[tf("map", "odom", 0, 1.0, 0.0)], true);
        f.set_received("/odom", "odom", &at(0), &pose(2.0, 0.0)).unwrap();
        let p = f.robot_pose(stamp_of(&at(3))).unwrap();
        assert!((p.x - 3.0).abs() < 1e-9, "odom pose brought into map: {p:?}");
        f.add_transforms(&[tf("odom", "base_link", 3, 0.5, 0.0)], false);
        let p = f.robot_pose(stamp_of(&at(3))).unwrap();
        assert!((p.x - 1.5).abs() < 1e-9, "TF wins once it connects: {p:?}");
        assert!(f.set_received("/initialpose", "", &at(0), &pose(0.0, 0.0)).is_err());
        // Without TF to base_link: the newest source, or the other when the newest cannot be
        // brought into map (an /odom in a frame TF does not know).
        let mut g = Frames::new("map", "base_link", 0.1);
        g.set_received("/initialpose", "map", &at(0), &pose(4.0, 1.0)).unwrap();
        g.set_received("/odom", "odom", &at(0), &pose(2.0, 0.0)).unwrap();
        assert!((g.robot_pose(stamp_of(&at(3))).unwrap().x - 4.0).abs() < 1e-9);
        g.add_transforms(&[tf("map", "odom", 0, 1.0, 0.0)], true);
        assert!((g.robot_pose(stamp_of(&at(3))).unwrap().x - 3.0).abs() < 1e-9, "the newest, /odom");
        let mut bad = pose(0.0, 0.0);
        bad.orientation.w = 0.0;
        assert_eq!(f.set_received("/initialpose", "map", &at(0), &bad).unwrap_err().code, StatusCode::InvalidInput);
    }

    #[test]
    fn time_jumping_back_clears_the_dynamic_transforms_and_future_poses_are_stale() {
        let mut f = Frames::new("map", "base_link", 0.1);
        f.add_transforms(&[tf("map", "base_link", 100, 1.0, 0.0)], false);
        f.add_transforms(&[tf("base_link", "laser", 0, 0.2, 0.0)], true);
        assert!(!f.observe_time(stamp_of(&at(100))));
        // A pose 5 s in the future of the node's clock: refused like an old one.
        let e = f.robot_pose(stamp_of(&at(95))).unwrap_err();
        assert!(e.code == StatusCode::TfError && e.message.contains("is stamped 5.00 s after this node's time"), "{e}");
        // Simulation reset: time back to 2 s; the old dynamic transforms go (the static one,
        // sent once by a latched publisher, stays), new ones are taken.
        assert!(f.observe_time(stamp_of(&at(2))));
        assert_eq!(f.buffer().len(), 1);
        assert_eq!(f.buffer().parent("laser").unwrap(), Some("base_link"));
        assert!(f.robot_pose(stamp_of(&at(2))).is_err());
        assert!(f.add_transforms(&[tf("map", "base_link", 2, 3.0, 0.0)], false).is_empty());
        assert!((f.robot_pose(stamp_of(&at(2))).unwrap().x - 3.0).abs() < 1e-9);
        // A tolerance out of range is clamped, not a panic.
        assert_eq!(tolerance_of(1e20), Duration::from_secs(3600));
        assert_eq!(tolerance_of(f64::NAN), Duration::ZERO);
    }

    #[test]
    fn a_robot_pose_that_had_a_source_is_remembered_as_such_when_it_fails() {
        let mut f = Frames::new("map", "base_link", 0.1);
        // Transforms not about the robot, a refused one (no parent), a start pose refused: none
        // is a source of the robot's pose.
        f.add_transforms(&[tf("map", "odom", 0, 1.0, 0.0), tf("base_link", "laser", 0, 0.2, 0.0)], true);
        assert!(!f.robot_pose_had_source());
        assert!(f.set_received("/initialpose", "", &at(1), &pose(1.0, 1.0)).is_err());
        assert!(!f.robot_pose_had_source());
        // Odometry's transform to base_link: a source, also once stale and after a jump back
        // forgot it.
        f.add_transforms(&[tf("odom", "base_link", 10, 1.0, 0.0)], false);
        assert!(f.robot_pose_had_source());
        assert!(f.robot_pose(stamp_of(&at(20))).is_err());
        f.observe_time(stamp_of(&at(100)));
        assert!(f.observe_time(stamp_of(&at(2))));
        assert!(f.robot_pose(stamp_of(&at(2))).is_err());
        assert!(f.robot_pose_had_source());
        // Another robot frame: not yet; a received start pose is one.
        f.configure("map", "other_base", 0.1);
        assert!(!f.robot_pose_had_source());
        f.set_received("/initialpose", "map", &at(3), &pose(1.0, 1.0)).unwrap();
        assert!(f.robot_pose_had_source());
    }

    /// A looping bag: /clock jumps from 100 s back to 70 s while transforms stamped just before
    /// the jump are still queued. Taken after the jump they would be the edge's newest and refuse
    /// every transform of the new time for 20 s; they are dropped until time reaches 100 s again.
    #[test]
    fn transforms_sent_before_a_jump_back_and_taken_after_it_are_dropped() {
        let mut f = Frames::new("map", "base_link", 0.5);
        for sec in 95..=100 {
            f.observe_time(stamp_of(&at(sec)));
            f.add_transforms(&[tf("map", "base_link", sec, 1.0, 0.0)], false);
        }
        assert!(f.observe_time(stamp_of(&at(70))));
        // Sent at 100 s, before the jump, taken now.
        f.add_transforms(&[tf("map", "base_link", 100, 9.0, 0.0)], false);
        assert_eq!(f.take_dropped_from_before_jump(), 1);
        assert_eq!(f.take_dropped_from_before_jump(), 0, "the count is reset");
        f.observe_time(stamp_of(&at(71)));
        assert!(f.add_transforms(&[tf("map", "base_link", 71, 2.0, 0.0)], false).is_empty());
        let p = f.robot_pose(stamp_of(&at(71))).expect("the robot's pose of the new time");
        assert!((p.x - 2.0).abs() < 1e-9, "{p:?}");
        // Static transforms are never dropped; a transform just ahead of the clock (within
        // TIME_JUMP_BACK: the clock's message lags the publisher's) is taken.
        assert!(f.add_transforms(&[tf("map", "odom", 500, 0.0, 0.0)], true).is_empty());
        assert!(f.add_transforms(&[tf("base_link", "laser", 71, 0.1, 0.0)], false).is_empty());
        f.add_transforms(&[tf("map", "base_link", 72, 3.0, 0.0)], false);
        assert_eq!(f.take_dropped_from_before_jump(), 0);
        // Once time passes the point it jumped from, a transform ahead of the clock is taken
        // again (clocks of different machines differ; only a jump makes it stale).
        f.observe_time(stamp_of(&at(100)));
        f.add_transforms(&[tf("map", "base_link", 105, 4.0, 0.0)], false);
        assert_eq!(f.take_dropped_from_before_jump(), 0);
        // Two jumps before time caught up (200 -> 150, then at 160 -> 120): transforms of both
        // stretches are dropped until time is back at 200.
        f.observe_time(stamp_of(&at(200)));
        assert!(f.observe_time(stamp_of(&at(150))));
        f.observe_time(stamp_of(&at(160)));
        assert!(f.observe_time(stamp_of(&at(120))));
        f.observe_time(stamp_of(&at(170)));
        f.add_transforms(&[tf("map", "base_link", 199, 5.0, 0.0)], false);
        assert_eq!(f.take_dropped_from_before_jump(), 1, "sent before the first jump, taken at 170 s");
    }
}
