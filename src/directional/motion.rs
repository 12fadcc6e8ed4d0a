//! How the vehicle may move between two poses and what a move costs: the one place that knows
//! the motion model. Every stage of the pipeline (direct curve, Smoothing, the searches, final
//! smoothing) builds and prices its curves here, so forward-only and forward-and-reverse planning
//! share all the rest.
//!
//! - [`MotionModel::Forward`]: Dubins curves (and arc-then-line to a point), forwards only.
//! - [`MotionModel::ReedsShepp`]: Reeds-Shepp curves (and arc-then-line to a point in either
//!   gear), each segment with its gear.
//!
//! The cost of a curve ([`Motion::cost`]) is its forward length, plus `reverse_penalty` times its
//! reverse length, plus `turn_penalty` per radian turned, plus `change_penalty` per change of gear
//! (all lengths in the caller's units, cells inside the planner). With the defaults (1, 0, 0) it
//! is the length.

use crate::curves::reeds_shepp::reeds_shepp_cheapest_memo;
use crate::curves::{
    dubins_length, dubins_shortest, pose_to_point, reeds_shepp_shortest, DubinsCurve, ReedsSheppCurve,
};
use crate::geometry::{normalize_angle, Pose2};
use crate::trajectory::Segment;
use std::f64::consts::PI;

/// Which motions the vehicle may make.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MotionModel {
    /// Forwards only (Dubins curves): today's default.
    #[default]
    Forward,
    /// Forwards and backwards (Reeds-Shepp curves), priced by the reverse and change penalties.
    ReedsShepp,
}

impl MotionModel {
    /// Every model, in the order of [`MotionModel::name`]'s list.
    pub const ALL: [MotionModel; 2] = [MotionModel::Forward, MotionModel::ReedsShepp];

    /// The parameter value naming the model: `forward` or `reeds_shepp`.
    pub fn name(self) -> &'static str {
        match self {
            MotionModel::Forward => "forward",
            MotionModel::ReedsShepp => "reeds_shepp",
        }
    }

    /// The model called `name` (as [`MotionModel::name`] spells it), `None` for any other.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Length of the shortest curve of this model from `a` to `b` with `radius` (Dubins
    /// forwards, Reeds-Shepp with reversing): a lower bound on the cost of any legal curve between
    /// them. `None` only for non-finite input or radius.
    pub fn shortest_length(self, a: Pose2, b: Pose2, radius: f64) -> Option<f64> {
        match self {
            MotionModel::Forward => dubins_shortest(a, b, radius).map(|c| c.length()),
            MotionModel::ReedsShepp => reeds_shepp_shortest(a, b, radius).map(|c| c.length()),
        }
    }

    /// The gears the model may drive in.
    pub fn gears(self) -> &'static [Gear] {
        match self {
            MotionModel::Forward => &[Gear::Forward],
            MotionModel::ReedsShepp => &[Gear::Forward, Gear::Reverse],
        }
    }
}

/// The direction of travel along a segment, relative to the vehicle's heading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Gear {
    /// Driving the way the vehicle faces.
    Forward,
    /// Driving backwards.
    Reverse,
}

impl Gear {
    /// The gear of `segment` (a turn on the spot counts as forward).
    pub fn of(segment: &Segment) -> Self {
        if segment.reverse {
            Gear::Reverse
        } else {
            Gear::Forward
        }
    }
}

/// The heading turned round: the direction of travel of a vehicle driving backwards.
pub fn flipped(pose: Pose2) -> Pose2 {
    Pose2::new(pose.x, pose.y, normalize_angle(pose.yaw + PI))
}

/// `segments`, driven forwards by a vehicle facing the other way, as the same motion driven
/// backwards by the vehicle: each start heading turned round, curvature negated, gear reverse.
/// (Positions are unchanged; the footprints the crate knows, a disk and a square, are symmetric
/// under a half turn, so the swept cells are unchanged too.)
pub fn driven_backwards(segments: Vec<Segment>) -> Vec<Segment> {
    segments
        .into_iter()
        .map(|s| Segment { start: flipped(s.start), curvature: -s.curvature, reverse: true, ..s })
        .collect()
}

/// The shortest curve from `a` to `b` driven in `gear` alone, with `radius`: the Dubins curve,
/// or backwards the Dubins curve of the vehicle turned round, driven backwards. Returns the Dubins
/// curve (its length and turning) and the segments as driven. The one construction of a
/// single-gear curve: the hit-check table tabulates it and the chain builds it, so what a search
/// checked is what the trajectory holds. `None` only for non-finite input or radius.
pub fn single_gear_curve(a: Pose2, b: Pose2, radius: f64, gear: Gear) -> Option<(DubinsCurve, Vec<Segment>)> {
    match gear {
        Gear::Forward => dubins_shortest(a, b, radius).map(|c| (c, c.segments())),
        Gear::Reverse => dubins_shortest(flipped(a), flipped(b), radius).map(|c| (c, driven_backwards(c.segments()))),
    }
}

/// A curve's cost and the gears it starts and ends in, computed without building its segments
/// where the model allows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Priced {
    /// Cost ([`Motion::cost`] of the curve).
    pub cost: f64,
    /// Gear of the first moving segment; `None` for a curve that does not move (start and end
    /// coincide): it joins either gear without a cusp.
    pub first: Option<Gear>,
    /// Gear of the last moving segment; `None` as for `first`.
    pub last: Option<Gear>,
}

/// The motion model with its radius and prices, for one parameter set (cell units).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Motion {
    /// Which motions.
    pub model: MotionModel,
    /// Minimum turning radius (> 0).
    pub radius: f64,
    /// Cost per radian turned (>= 0).
    pub turn_penalty: f64,
    /// Factor on reverse length (>= 1).
    pub reverse_penalty: f64,
    /// Cost per change of gear (>= 0).
    pub change_penalty: f64,
}

impl Motion {
    /// True when no penalty is in force, so the cheapest curve is the shortest.
    pub fn length_only(&self) -> bool {
        let gear_prices =
            self.model == MotionModel::Forward || (self.reverse_penalty == 1.0 && self.change_penalty == 0.0);
        self.turn_penalty == 0.0 && gear_prices
    }

    /// Cost per unit length in `gear`.
    #[inline]
    pub fn gear_factor(&self, gear: Gear) -> f64 {
        match gear {
            Gear::Forward => 1.0,
            Gear::Reverse => self.reverse_penalty,
        }
    }

    /// Cost of going on in gear `to` after gear `from`.
    #[inline]
    pub fn change(&self, from: Gear, to: Gear) -> f64 {
        if from == to {
            0.0
        } else {
            self.change_penalty
        }
    }

    /// Cost of going on with a curve starting in gear `to` (`None`: it does not move) after gear
    /// `from`.
    #[inline]
    pub fn change_to(&self, from: Gear, to: Option<Gear>) -> f64 {
        to.map_or(0.0, |to| self.change(from, to))
    }

    /// Cost of `segments`: length (reverse length times the reverse penalty), turn penalty per
    /// radian, change penalty per change of gear between consecutive moving segments.
    pub fn cost(&self, segments: &[Segment]) -> f64 {
        let mut cost = 0.0;
        let mut gear = None;
        for s in segments.iter().filter(|s| s.length > 0.0) {
            let g = Gear::of(s);
            cost += s.length * (self.gear_factor(g) + self.turn_penalty * s.curvature.abs());
            if let Some(prev) = gear {
                cost += self.change(prev, g);
            }
            gear = Some(g);
        }
        cost
    }

    /// Cost of a Reeds-Shepp curve (as [`Motion::cost`] of its segments).
    pub fn reeds_shepp_cost(&self, c: &ReedsSheppCurve) -> f64 {
        let fwd = c.length() - c.reverse_length();
        fwd + self.reverse_penalty * c.reverse_length()
            + self.turn_penalty * c.turning()
            + self.change_penalty * c.cusps() as f64
    }

    /// The cheapest Reeds-Shepp word from `a` to `b` under this cost (ties to the shorter).
    pub fn cheapest_reeds_shepp(&self, a: Pose2, b: Pose2) -> Option<ReedsSheppCurve> {
        let prices = [self.reverse_penalty, self.change_penalty, self.turn_penalty];
        reeds_shepp_cheapest_memo(a, b, self.radius, prices, |c| self.reeds_shepp_cost(c))
    }

    /// The curve from `a` to `b` (to the point of `b`, any heading, when `to_point`) that the
    /// model links poses with: forwards, the shortest Dubins curve (arc then line to a point);
    /// with reversing, the cheapest Reeds-Shepp word (the cheaper arc then line of the two gears
    /// to a point). `None` when no such curve exists (a point inside the turning circles, or a
    /// non-finite input).
    pub fn link(&self, a: Pose2, b: Pose2, to_point: bool) -> Option<Vec<Segment>> {
        match (self.model, to_point) {
            (MotionModel::Forward, false) => dubins_shortest(a, b, self.radius).map(|c| c.segments()),
            (_, true) => self.arc_then_line(a, b).map(|(segs, _)| segs),
            (MotionModel::ReedsShepp, false) => self.cheapest_reeds_shepp(a, b).map(|c| c.segments()),
        }
    }

    /// Arc then line to `b`'s point in the cheaper gear the model allows, with its cost.
    fn arc_then_line(&self, a: Pose2, b: Pose2) -> Option<(Vec<Segment>, f64)> {
        let price = |len: f64, arc: f64, gear| len * self.gear_factor(gear) + self.turn_penalty * arc / self.radius;
        let fwd = pose_to_point(a, b.point(), self.radius).map(|c| (c, price(c.length(), c.arc_length, Gear::Forward)));
        let bwd = match self.model {
            MotionModel::Forward => None,
            MotionModel::ReedsShepp => pose_to_point(flipped(a), b.point(), self.radius)
                .map(|c| (c, price(c.length(), c.arc_length, Gear::Reverse))),
        };
        match (fwd, bwd) {
            (Some((_, cf)), Some((r, cr))) if cr < cf => Some((driven_backwards(r.segments()), cr)),
            (Some((f, cf)), _) => Some((f.segments(), cf)),
            (None, Some((r, cr))) => Some((driven_backwards(r.segments()), cr)),
            (None, None) => None,
        }
    }

    /// The cost and end gears of [`Motion::link`]'s curve, computed without building it where
    /// the model has a closed form (forwards).
    pub fn price(&self, a: Pose2, b: Pose2, to_point: bool) -> Option<Priced> {
        let fwd = |cost| Priced { cost, first: Some(Gear::Forward), last: Some(Gear::Forward) };
        match (self.model, to_point) {
            (MotionModel::Forward, false) => {
                dubins_length(a, b, self.radius).map(|(len, turning)| fwd(len + self.turn_penalty * turning))
            }
            (MotionModel::Forward, true) => pose_to_point(a, b.point(), self.radius)
                .map(|c| fwd(c.length() + self.turn_penalty * c.arc_length / self.radius)),
            (MotionModel::ReedsShepp, true) => self.arc_then_line(a, b).map(|(segs, cost)| {
                let gear = segs.iter().find(|s| s.length > 0.0).map(Gear::of);
                Priced { cost, first: gear, last: gear }
            }),
            (MotionModel::ReedsShepp, false) => self.cheapest_reeds_shepp(a, b).map(|c| {
                let mut moving = c.pieces().iter().filter(|p| p.length != 0.0);
                let gear = |p: &crate::curves::reeds_shepp::Piece| {
                    if p.length < 0.0 {
                        Gear::Reverse
                    } else {
                        Gear::Forward
                    }
                };
                let first = moving.clone().next().map(gear);
                let last = moving.next_back().map(gear);
                Priced { cost: self.reeds_shepp_cost(&c), first, last }
            }),
        }
    }

    /// The cost of [`Motion::in_gear`]'s curve, from the closed form (nothing built).
    pub fn price_in_gear(&self, a: Pose2, b: Pose2, gear: Gear) -> Option<f64> {
        let (a, b) = match gear {
            Gear::Forward => (a, b),
            Gear::Reverse => (flipped(a), flipped(b)),
        };
        dubins_length(a, b, self.radius)
            .map(|(len, turning)| len * self.gear_factor(gear) + self.turn_penalty * turning)
    }

    /// The single-gear curve from `a` to `b` in `gear`: the shortest Dubins curve, driven
    /// backwards with the vehicle facing the other way for [`Gear::Reverse`] (a lattice edge of
    /// Directional A* in that gear). `None` only for non-finite input.
    pub fn in_gear(&self, a: Pose2, b: Pose2, gear: Gear) -> Option<Vec<Segment>> {
        single_gear_curve(a, b, self.radius, gear).map(|(_, segments)| segments)
    }

    /// A lower bound on the cost of any legal curve of this model from `a` to `b`: the
    /// straight distance, and (towards a heading) the arc the heading change needs at least,
    /// with its turn penalty.
    pub fn lower_bound(&self, distance: f64, heading_change: Option<f64>) -> f64 {
        match heading_change {
            None => distance,
            Some(turn) => distance.max(self.radius * turn) + self.turn_penalty * turn,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curves::{reeds_shepp_shortest, segments_length};
    use crate::trajectory::Trajectory;

    fn motion(model: MotionModel, rp: f64, cp: f64) -> Motion {
        Motion { model, radius: 2.0, turn_penalty: 0.0, reverse_penalty: rp, change_penalty: cp }
    }

    fn rng(seed: u64) -> impl FnMut() -> f64 {
        let mut s = seed;
        move || crate::directional::tests::rnd(&mut s)
    }

    #[test]
    fn names_round_trip_and_only_these_parse() {
        for m in MotionModel::ALL {
            assert_eq!(MotionModel::parse(m.name()), Some(m));
        }
        assert_eq!(MotionModel::parse("Reeds_Shepp"), None);
        assert_eq!(MotionModel::parse(""), None);
    }

    /// A reverse-gear curve ends where the forward curve of the turned-round vehicle ends, with
    /// the vehicle's heading, and is continuous.
    #[test]
    fn driven_backwards_is_the_same_motion_with_the_vehicle_turned_round() {
        let mut r = rng(3);
        let m = motion(MotionModel::ReedsShepp, 1.0, 0.0);
        for _ in 0..500 {
            let a = Pose2::new(r() * 20.0, r() * 20.0, (r() - 0.5) * 6.0);
            let b = Pose2::new(r() * 20.0, r() * 20.0, (r() - 0.5) * 6.0);
            let segs = m.in_gear(a, b, Gear::Reverse).unwrap();
            assert!(segs.iter().all(|s| s.reverse));
            let t = Trajectory { segments: segs.clone(), min_turning_radius: 2.0 };
            assert!(t.check_continuity() < 1e-9);
            let end = segs.last().unwrap().end();
            assert!(end.point().distance(b.point()) < 1e-9 && normalize_angle(end.yaw - b.yaw).abs() < 1e-9);
            // Every segment moves against the heading it starts with.
            for s in segs.iter().filter(|s| s.length > 1e-6) {
                let p = s.pose_at(1e-4_f64.min(s.length));
                let ahead = (p.x - s.start.x) * s.start.yaw.cos() + (p.y - s.start.y) * s.start.yaw.sin();
                assert!(ahead < 0.0);
            }
        }
    }

    /// Linked curves reach the goal, cost what `price` says, and with no penalty are as short as
    /// the shortest Reeds-Shepp curve; a high change penalty never buys more cusps, a high
    /// reverse penalty never more reverse length.
    #[test]
    fn links_price_what_they_build_and_penalties_act() {
        let mut r = rng(11);
        for _ in 0..400 {
            let a = Pose2::new(r() * 10.0, r() * 10.0, (r() - 0.5) * 6.0);
            let b = Pose2::new(r() * 10.0, r() * 10.0, (r() - 0.5) * 6.0);
            let plain = motion(MotionModel::ReedsShepp, 1.0, 0.0);
            let segs = plain.link(a, b, false).unwrap();
            let shortest = reeds_shepp_shortest(a, b, 2.0).unwrap().length();
            assert!((segments_length(&segs) - shortest).abs() < 1e-9);
            for m in [plain, motion(MotionModel::ReedsShepp, 3.0, 5.0), motion(MotionModel::Forward, 1.0, 0.0)] {
                for to_point in [false, true] {
                    let (Some(segs), Some(p)) = (m.link(a, b, to_point), m.price(a, b, to_point)) else { continue };
                    assert!((m.cost(&segs) - p.cost).abs() < 1e-9, "{m:?} {to_point}");
                    assert_eq!(Some(Gear::of(&segs[0])), p.first);
                    assert_eq!(Some(Gear::of(segs.last().unwrap())), p.last);
                    assert!(segs.last().unwrap().end().point().distance(b.point()) < 1e-9);
                    if m.model == MotionModel::Forward {
                        assert!(segs.iter().all(|s| !s.reverse));
                    }
                }
            }
            let cusps = |cp| {
                let segments = motion(MotionModel::ReedsShepp, 1.0, cp).link(a, b, false).unwrap();
                Trajectory { segments, min_turning_radius: 2.0 }.cusps()
            };
            assert!(cusps(100.0) <= cusps(0.0));
            let rev = |rp| {
                let s = motion(MotionModel::ReedsShepp, rp, 0.0).link(a, b, false).unwrap();
                s.iter().filter(|s| s.reverse).map(|s| s.length).sum::<f64>()
            };
            assert!(rev(10.0) <= rev(1.0) + 1e-9);
        }
    }
}
