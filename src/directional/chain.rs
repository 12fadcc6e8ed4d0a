//! A refined path as a chain of poses, and the curves that link consecutive poses: the motion
//! model's curve ([`Motion::link`]: Dubins forwards, the cheapest Reeds-Shepp word with
//! reversing, arc then line for the last link to a goal with a free heading), or where a search
//! drove a lattice edge in one gear, that edge's single-gear curve.

use super::footprint::CollisionMap;
use super::motion::{Gear, Motion};
use crate::geometry::Pose2;
use crate::trajectory::{Segment, Trajectory};

/// The curve from `a` to `b` (to the point of `b`, any heading, when `to_point`): in `gear` when
/// given (a lattice edge), else the model's curve. `None` when no such curve exists (an
/// arc-then-line cannot reach a point inside its circles).
pub fn link(motion: &Motion, a: Pose2, b: Pose2, to_point: bool, gear: Option<Gear>) -> Option<Vec<Segment>> {
    match gear {
        Some(g) if !to_point => motion.in_gear(a, b, g),
        _ => motion.link(a, b, to_point),
    }
}

/// A chain of poses from the start to the goal; the last link goes to the goal's point only
/// when `goal_free`.
#[derive(Debug, Clone, PartialEq)]
pub struct PoseChain {
    /// Poses, start first, goal last.
    pub poses: Vec<Pose2>,
    /// True when the goal heading is free (last link is arc-then-line).
    pub goal_free: bool,
    /// Per link (one fewer than poses), the gear it is driven in when a search drove it as a
    /// single-gear lattice edge; `None` (or a shorter list) for the model's curve.
    pub gears: Vec<Option<Gear>>,
}

impl PoseChain {
    /// A chain whose links are all the model's curves.
    pub fn new(poses: Vec<Pose2>, goal_free: bool) -> Self {
        Self { poses, goal_free, gears: Vec::new() }
    }

    /// The gear of link `k` (from pose `k` to pose `k + 1`), `None` for the model's curve.
    pub fn gear(&self, k: usize) -> Option<Gear> {
        self.gears.get(k).copied().flatten()
    }

    /// True when link `k` ends at the goal's point with a free heading.
    pub fn to_point(&self, k: usize) -> bool {
        self.goal_free && k + 2 == self.poses.len()
    }

    /// The curve of link `k`.
    pub fn link(&self, motion: &Motion, k: usize) -> Option<Vec<Segment>> {
        link(motion, self.poses[k], self.poses[k + 1], self.to_point(k), self.gear(k))
    }

    /// The exact cost of [`PoseChain::trajectory`] ([`Motion::cost`]: cusps where links join
    /// counted).
    pub fn cost(&self, motion: &Motion) -> f64 {
        motion.cost(&self.trajectory(motion).segments)
    }

    /// [`PoseChain::cost`] plus the traversal cost along the trajectory on `map` (the price every
    /// stage compares chains by; the cost alone without costs on `map`).
    pub fn priced(&self, motion: &Motion, map: &CollisionMap) -> f64 {
        let segments = self.trajectory(motion).segments;
        motion.cost(&segments) + map.extra_cost(&segments)
    }

    /// The trajectory through the chain (a link that cannot be built is left out, which
    /// verification then reports as a discontinuity).
    pub fn trajectory(&self, motion: &Motion) -> Trajectory {
        let segments = (0..self.poses.len().saturating_sub(1)).flat_map(|k| self.link(motion, k).unwrap_or_default());
        Trajectory { segments: segments.collect(), min_turning_radius: motion.radius }
    }
}
