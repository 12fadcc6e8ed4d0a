//! Reeds-Shepp curves: the shortest path between two poses for a vehicle with a minimum turning
//! radius that may drive forwards and backwards (Reeds and Shepp, 1990).
//!
//! Every shortest path is a word of at most five pieces, each a left arc (L), right arc (R) or
//! straight line (S) driven forwards (+) or backwards (-), with at most two changes of gear
//! (cusps). The words fall in five families: CSC, CCC, CCCC, CCSC and CCSCC (C an arc, S a line).
//! Reeds and Shepp give closed forms for one representative of each family in the normalised
//! problem (start at the origin facing +x, radius 1); the others follow from three symmetries:
//!
//! - **timeflip**: driving the word with every gear inverted reaches the goal mirrored through the
//!   start's lateral axis: `(x, y, phi) -> (-x, y, -phi)`;
//! - **reflect**: swapping left and right reaches the goal mirrored through the start's
//!   longitudinal axis: `(x, y, phi) -> (x, -y, -phi)`;
//! - **backwards**: driving the word's pieces in the opposite order (CCC and CCSC only; the other
//!   families are their own reversal) reaches `(x cos phi + y sin phi, x sin phi - y cos phi, phi)`.
//!
//! Each candidate is rebuilt from [`Segment`]s in the caller's frame and its end checked against
//! the goal, so a word is only ever returned when it really joins the two poses (the closed forms
//! have branch cuts). A segment driven backwards has `reverse` set; its `length` is positive.
//!
//! Units are the caller's (cell units inside the planner, metres at the boundary); angles are
//! radians, counter-clockwise.

use crate::geometry::{normalize_angle, Pose2};
use crate::trajectory::{Segment, Turn};
use std::f64::consts::{FRAC_PI_2, PI};
use Turn::{Left as L, Right as R, Straight as S};

/// Tolerance of the closed forms' sign conditions, in radii: a piece that should be `>= 0` may be
/// this much below zero from rounding (the end check still guards the result).
const SIGN_TOLERANCE: f64 = 1e-10;

/// A piece shorter than this, in radii, is rounding and is dropped (its end error is far below the
/// end check's tolerance). As large as the sign tolerance: a piece that passed a sign condition
/// only by that tolerance would otherwise survive with the wrong gear, a sliver of reverse
/// between two cusps that a planner pricing cusps would pay for.
const EMPTY_PIECE: f64 = SIGN_TOLERANCE;

/// The most pieces a Reeds-Shepp word has (CCSCC).
pub const MAX_PIECES: usize = 5;

/// The family of a word, by the shape of its pieces (C an arc, S a line).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// Arc, line, arc (Reeds and Shepp's formulas 8.1 and 8.2).
    Csc,
    /// Three arcs with a cusp between the first two or the last two (8.3, 8.4).
    Ccc,
    /// Four arcs, the middle two of equal length (8.7, 8.8).
    Cccc,
    /// Two arcs, the second a quarter turn, a line and an arc (8.9, 8.10).
    Ccsc,
    /// Arc, quarter turn, line, quarter turn, arc (8.11).
    Ccscc,
}

/// One piece of a word: its turn and its signed length in radii (negative: driven backwards; for
/// an arc, its turning angle in radians).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Piece {
    /// Left, right or straight.
    pub turn: Turn,
    /// Signed length in radii.
    pub length: f64,
}

/// A Reeds-Shepp curve: a start pose, a radius and up to five pieces.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReedsSheppCurve {
    /// Start pose.
    pub start: Pose2,
    /// Turning radius of the arcs (> 0).
    pub radius: f64,
    /// The family of the word.
    pub family: Family,
    pieces: [Piece; MAX_PIECES],
    count: usize,
}

impl ReedsSheppCurve {
    /// The pieces in driving order, zero-length ones included (lengths in radii).
    pub fn pieces(&self) -> &[Piece] {
        &self.pieces[..self.count]
    }

    /// Total length in the caller's units, whatever the gear.
    pub fn length(&self) -> f64 {
        self.pieces().iter().map(|p| p.length.abs()).sum::<f64>() * self.radius
    }

    /// Length driven backwards, in the caller's units.
    pub fn reverse_length(&self) -> f64 {
        self.pieces().iter().filter(|p| p.length < 0.0).map(|p| -p.length).sum::<f64>() * self.radius
    }

    /// Total absolute turning of the arcs, in radians.
    pub fn turning(&self) -> f64 {
        self.pieces().iter().filter(|p| p.turn != Turn::Straight).map(|p| p.length.abs()).sum()
    }

    /// The word in Reeds and Shepp's notation, for example `L+R-S-L-`: the non-empty pieces, each
    /// with its gear (empty for a curve of no length).
    pub fn word(&self) -> String {
        self.pieces()
            .iter()
            .filter(|p| p.length != 0.0)
            .map(|p| {
                let t = match p.turn {
                    Turn::Left => 'L',
                    Turn::Right => 'R',
                    Turn::Straight => 'S',
                };
                format!("{t}{}", if p.length < 0.0 { '-' } else { '+' })
            })
            .collect()
    }

    /// The curve as segments in the caller's frame and units, each with its gear (`reverse`);
    /// zero-length pieces are left out.
    pub fn segments(&self) -> Vec<Segment> {
        let mut out = Vec::with_capacity(self.count);
        let mut pose = self.start;
        for p in self.pieces() {
            if p.length == 0.0 {
                continue;
            }
            let mut seg = match p.turn {
                Turn::Straight => Segment::line(pose, p.length.abs() * self.radius),
                t => Segment::arc(pose, p.length.abs() * self.radius, self.radius, t),
            };
            seg.reverse = p.length < 0.0;
            pose = seg.end();
            out.push(seg);
        }
        out
    }

    /// Number of changes of gear between consecutive non-empty pieces (at most two).
    pub fn cusps(&self) -> usize {
        let mut gears = self.pieces().iter().filter(|p| p.length != 0.0).map(|p| p.length < 0.0);
        let Some(mut last) = gears.next() else { return 0 };
        gears
            .filter(|&g| {
                let changed = g != last;
                last = g;
                changed
            })
            .count()
    }

    /// The end pose (walked piece by piece, nothing allocated).
    pub fn end(&self) -> Pose2 {
        let mut pose = self.start;
        for p in self.pieces().iter().filter(|p| p.length != 0.0) {
            let mut seg = match p.turn {
                Turn::Straight => Segment::line(pose, p.length.abs() * self.radius),
                t => Segment::arc(pose, p.length.abs() * self.radius, self.radius, t),
            };
            seg.reverse = p.length < 0.0;
            pose = seg.end();
        }
        pose
    }
}

/// Cartesian to polar: `(radius, angle)`.
fn polar(x: f64, y: f64) -> (f64, f64) {
    (x.hypot(y), y.atan2(x))
}

/// A piece length that must be `>= 0` (within rounding).
fn non_negative(v: f64) -> bool {
    v >= -SIGN_TOLERANCE
}

/// A piece length that must be `<= 0` (within rounding).
fn non_positive(v: f64) -> bool {
    v <= SIGN_TOLERANCE
}

/// The normalised problem: the goal in the start's frame, in radii.
#[derive(Debug, Clone, Copy)]
struct Goal {
    x: f64,
    y: f64,
    phi: f64,
    /// `sin(phi)` and `cos(phi)`, computed once: every closed form needs them, and the 48 forms
    /// of one problem share them up to sign.
    sin: f64,
    cos: f64,
}

impl Goal {
    fn new(x: f64, y: f64, phi: f64) -> Self {
        let (sin, cos) = phi.sin_cos();
        Goal { x, y, phi, sin, cos }
    }

    fn timeflip(self) -> Self {
        Goal { x: -self.x, phi: -self.phi, sin: -self.sin, ..self }
    }

    fn reflect(self) -> Self {
        Goal { y: -self.y, phi: -self.phi, sin: -self.sin, ..self }
    }

    fn backwards(self) -> Self {
        let (s, c) = (self.sin, self.cos);
        Goal { x: self.x * c + self.y * s, y: self.x * s - self.y * c, ..self }
    }
}

/// The closed form of one representative word: its turns, and its signed piece lengths for a
/// normalised goal when the word reaches it.
struct BaseWord {
    family: Family,
    turns: &'static [Turn],
    solve: fn(Goal) -> Option<[f64; MAX_PIECES]>,
    /// The family is not its own reversal: the backwards forms are words of their own.
    has_backwards: bool,
}

/// The representatives: every Reeds-Shepp word is one of these under timeflip, reflect and
/// (where marked) backwards.
const BASE_WORDS: [BaseWord; 8] = [
    BaseWord { family: Family::Csc, turns: &[L, S, L], solve: lp_sp_lp, has_backwards: false },
    BaseWord { family: Family::Csc, turns: &[L, S, R], solve: lp_sp_rp, has_backwards: false },
    BaseWord { family: Family::Ccc, turns: &[L, R, L], solve: lp_rm_l, has_backwards: true },
    BaseWord { family: Family::Cccc, turns: &[L, R, L, R], solve: lp_rup_lum_rm, has_backwards: false },
    BaseWord { family: Family::Cccc, turns: &[L, R, L, R], solve: lp_rum_lum_rp, has_backwards: false },
    BaseWord { family: Family::Ccsc, turns: &[L, R, S, L], solve: lp_rm_sm_lm, has_backwards: true },
    BaseWord { family: Family::Ccsc, turns: &[L, R, S, R], solve: lp_rm_sm_rm, has_backwards: true },
    BaseWord { family: Family::Ccscc, turns: &[L, R, S, L, R], solve: lp_rm_s_lm_rp, has_backwards: false },
];

/// L+S+L+ (formula 8.1).
fn lp_sp_lp(g: Goal) -> Option<[f64; MAX_PIECES]> {
    let (u, t) = polar(g.x - g.sin, g.y - 1.0 + g.cos);
    let v = normalize_angle(g.phi - t);
    (non_negative(t) && non_negative(v)).then_some([t, u, v, 0.0, 0.0])
}

/// L+S+R+ (formula 8.2).
fn lp_sp_rp(g: Goal) -> Option<[f64; MAX_PIECES]> {
    let (rho, t1) = polar(g.x + g.sin, g.y - 1.0 - g.cos);
    let rho2 = rho * rho;
    if rho2 < 4.0 {
        return None;
    }
    let u = (rho2 - 4.0).sqrt();
    let t = normalize_angle(t1 + 2.0f64.atan2(u));
    let v = normalize_angle(t - g.phi);
    (non_negative(t) && non_negative(v)).then_some([t, u, v, 0.0, 0.0])
}

/// L+R-L (formula 8.3; the last arc's gear is free).
fn lp_rm_l(g: Goal) -> Option<[f64; MAX_PIECES]> {
    let (rho, theta) = polar(g.x - g.sin, g.y - 1.0 + g.cos);
    if rho > 4.0 {
        return None;
    }
    let u = -2.0 * (rho / 4.0).asin();
    let t = normalize_angle(theta + u / 2.0 + PI);
    let v = normalize_angle(g.phi - t + u);
    (non_negative(t) && non_positive(u)).then_some([t, u, v, 0.0, 0.0])
}

/// The first and last arcs of the CCCC words, given the middle arcs `u` and `v` (Reeds and
/// Shepp's tau and omega).
fn tau_omega(u: f64, v: f64, xi: f64, eta: f64, phi: f64) -> (f64, f64) {
    let delta = normalize_angle(u - v);
    let a = u.sin() - delta.sin();
    let b = u.cos() - delta.cos() - 1.0;
    let t1 = (eta * a - xi * b).atan2(xi * a + eta * b);
    let t2 = 2.0 * (delta.cos() - v.cos() - u.cos()) + 3.0;
    let tau = if t2 < 0.0 { normalize_angle(t1 + PI) } else { normalize_angle(t1) };
    (tau, normalize_angle(tau - u + v - phi))
}

/// L+R+L-R- (formula 8.7).
fn lp_rup_lum_rm(g: Goal) -> Option<[f64; MAX_PIECES]> {
    let (xi, eta) = (g.x + g.sin, g.y - 1.0 - g.cos);
    let rho = 0.25 * (2.0 + xi.hypot(eta));
    if rho > 1.0 {
        return None;
    }
    let u = rho.acos();
    let (t, v) = tau_omega(u, -u, xi, eta, g.phi);
    (non_negative(t) && non_positive(v)).then_some([t, u, -u, v, 0.0])
}

/// L+R-L-R+ (formula 8.8).
fn lp_rum_lum_rp(g: Goal) -> Option<[f64; MAX_PIECES]> {
    let (xi, eta) = (g.x + g.sin, g.y - 1.0 - g.cos);
    let rho = (20.0 - xi * xi - eta * eta) / 16.0;
    if !(0.0..=1.0).contains(&rho) {
        return None;
    }
    let u = -rho.acos();
    if u < -FRAC_PI_2 {
        return None;
    }
    let (t, v) = tau_omega(u, u, xi, eta, g.phi);
    (non_negative(t) && non_negative(v)).then_some([t, u, u, v, 0.0])
}

/// L+R-(pi/2) S- L- (formula 8.9).
fn lp_rm_sm_lm(g: Goal) -> Option<[f64; MAX_PIECES]> {
    let (rho, theta) = polar(g.x - g.sin, g.y - 1.0 + g.cos);
    if rho < 2.0 {
        return None;
    }
    let r = (rho * rho - 4.0).sqrt();
    let u = 2.0 - r;
    let t = normalize_angle(theta + r.atan2(-2.0));
    let v = normalize_angle(g.phi - FRAC_PI_2 - t);
    (non_negative(t) && non_positive(u) && non_positive(v)).then_some([t, -FRAC_PI_2, u, v, 0.0])
}

/// L+R-(pi/2) S- R- (formula 8.10).
fn lp_rm_sm_rm(g: Goal) -> Option<[f64; MAX_PIECES]> {
    let (xi, eta) = (g.x + g.sin, g.y - 1.0 - g.cos);
    let (rho, theta) = polar(-eta, xi);
    if rho < 2.0 {
        return None;
    }
    let t = theta;
    let u = 2.0 - rho;
    let v = normalize_angle(t + FRAC_PI_2 - g.phi);
    (non_negative(t) && non_positive(u) && non_positive(v)).then_some([t, -FRAC_PI_2, u, v, 0.0])
}

/// L+R-(pi/2) S- L-(pi/2) R+ (formula 8.11).
fn lp_rm_s_lm_rp(g: Goal) -> Option<[f64; MAX_PIECES]> {
    let (xi, eta) = (g.x + g.sin, g.y - 1.0 - g.cos);
    let (rho, _) = polar(xi, eta);
    if rho < 2.0 {
        return None;
    }
    let u = 4.0 - (rho * rho - 4.0).sqrt();
    if !non_positive(u) {
        return None;
    }
    let t = normalize_angle(((4.0 - u) * xi - 2.0 * eta).atan2(-2.0 * xi + (u - 4.0) * eta));
    let v = normalize_angle(t - g.phi);
    (non_negative(t) && non_negative(v)).then_some([t, -FRAC_PI_2, u, -FRAC_PI_2, v])
}

fn mirror(turn: Turn) -> Turn {
    match turn {
        L => R,
        R => L,
        S => S,
    }
}

/// Every word that the closed forms offer for the normalised goal `g` (before the end check).
fn candidates(start: Pose2, radius: f64, g: Goal) -> Vec<ReedsSheppCurve> {
    let mut out = Vec::with_capacity(48);
    for_each_candidate(start, radius, g, |c| out.push(c));
    out
}

/// Calls `visit` with every word that the closed forms offer for the normalised goal `g`
/// (before the end check), allocating nothing.
fn for_each_candidate(start: Pose2, radius: f64, g: Goal, mut visit: impl FnMut(ReedsSheppCurve)) {
    for base in &BASE_WORDS {
        let forms: &[bool] = if base.has_backwards { &[false, true] } else { &[false] };
        for &backwards in forms {
            let g = if backwards { g.backwards() } else { g };
            for (timeflip, reflect) in [(false, false), (true, false), (false, true), (true, true)] {
                let mut h = g;
                if timeflip {
                    h = h.timeflip();
                }
                if reflect {
                    h = h.reflect();
                }
                let Some(lengths) = (base.solve)(h) else { continue };
                let n = base.turns.len();
                let mut pieces = [Piece { turn: S, length: 0.0 }; MAX_PIECES];
                for (i, piece) in pieces.iter_mut().take(n).enumerate() {
                    // The backwards form drives the representative's pieces in the opposite order.
                    let j = if backwards { n - 1 - i } else { i };
                    let turn = base.turns[j];
                    // Rounding leaves pieces of 1e-16 radii where the word degenerates (a
                    // straight line as L0 S L0): they would be cusps of no length.
                    let length = if lengths[j].abs() < EMPTY_PIECE { 0.0 } else { lengths[j] };
                    *piece = Piece {
                        turn: if reflect { mirror(turn) } else { turn },
                        length: if timeflip { -length } else { length },
                    };
                }
                visit(ReedsSheppCurve { start, radius, family: base.family, pieces, count: n });
            }
        }
    }
}

fn valid_inputs(start: Pose2, goal: Pose2, radius: f64) -> bool {
    radius.is_finite() && radius > 0.0 && start.is_finite() && goal.is_finite()
}

/// True when `curve` really ends at `goal` (position within 1e-6 relative, heading within 1e-6).
fn ends_at(curve: &ReedsSheppCurve, goal: Pose2) -> bool {
    let s = curve.start;
    let end = curve.end();
    let tol = 1e-6 * (1.0 + curve.radius + (goal.x - s.x).abs() + (goal.y - s.y).abs());
    end.point().distance(goal.point()) <= tol && normalize_angle(end.yaw - goal.yaw).abs() <= 1e-6
}

/// Every Reeds-Shepp word from `start` to `goal` with turning radius `radius`, each checked to end
/// at `goal`, shortest first. Empty when `radius` is not finite and positive or a pose is not
/// finite; never empty otherwise (some CSC or CCC word always joins two poses).
///
/// A caller with its own cost (a penalty on reversing or on cusps) picks among these; for the
/// shortest alone, [`reeds_shepp_shortest`].
pub fn reeds_shepp_all(start: Pose2, goal: Pose2, radius: f64) -> Vec<ReedsSheppCurve> {
    if !valid_inputs(start, goal, radius) {
        return Vec::new();
    }
    let mut all = candidates(start, radius, normalised(start, goal, radius));
    all.retain(|c| ends_at(c, goal));
    all.sort_by(|a, b| a.length().total_cmp(&b.length()));
    all
}

/// The shortest Reeds-Shepp curve from `start` to `goal` with minimum turning radius `radius`.
///
/// Returns `None` only when `radius` is not finite and positive or a pose is not finite.
pub fn reeds_shepp_shortest(start: Pose2, goal: Pose2, radius: f64) -> Option<ReedsSheppCurve> {
    reeds_shepp_cheapest(start, goal, radius, ReedsSheppCurve::length)
}

/// The cheapest Reeds-Shepp word by `cost` (lower is better; ties go to the shorter word), for a
/// planner that prices reversing and cusps. `None` as for [`reeds_shepp_shortest`].
///
/// Only the words that could win are checked to end at `goal` (cheapest first), so this costs
/// the closed forms and one or two end checks, not one per word as [`reeds_shepp_all`].
pub fn reeds_shepp_cheapest(
    start: Pose2,
    goal: Pose2,
    radius: f64,
    cost: impl Fn(&ReedsSheppCurve) -> f64,
) -> Option<ReedsSheppCurve> {
    if !valid_inputs(start, goal, radius) {
        return None;
    }
    let g = normalised(start, goal, radius);
    let better = |a: (f64, f64), b: (f64, f64)| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)).is_lt();
    // The cheapest word almost always ends at the goal: one pass, nothing allocated.
    let mut best: Option<((f64, f64), ReedsSheppCurve)> = None;
    for_each_candidate(start, radius, g, |c| {
        let key = (cost(&c), c.length());
        if best.as_ref().is_none_or(|(k, _)| better(key, *k)) {
            best = Some((key, c));
        }
    });
    match best {
        Some((_, c)) if ends_at(&c, goal) => return Some(c),
        None => return None,
        Some(_) => {}
    }
    // Rounding made the cheapest miss: the cheapest that really ends at the goal.
    let mut all: Vec<(f64, f64, ReedsSheppCurve)> =
        candidates(start, radius, g).into_iter().map(|c| (cost(&c), c.length(), c)).collect();
    while !all.is_empty() {
        let best = (0..all.len())
            .min_by(|&i, &j| all[i].0.total_cmp(&all[j].0).then(all[i].1.total_cmp(&all[j].1)))
            .expect("not empty");
        let (_, _, c) = all.swap_remove(best);
        if ends_at(&c, goal) {
            return Some(c);
        }
    }
    None
}

/// The remembered answer of the Reeds-Shepp memo: the winning word's family, pieces and piece
/// count, or none.
type Remembered = Option<(Family, [Piece; MAX_PIECES], usize)>;

/// Sets of the Reeds-Shepp memo (a power of two; 2 ways each).
pub const MEMO_SETS: usize = 1 << 13;
/// Bytes of the Reeds-Shepp memo of one thread (16 384 entries: key, answer and tag).
pub const MEMO_BYTES: usize = MEMO_SETS * super::memo::WAYS * std::mem::size_of::<Option<([u64; 8], Remembered)>>();
// The stated bound, checked at compile time.
const _: () = assert!(MEMO_BYTES <= 3 << 20, "the Reeds-Shepp memo outgrew its stated 3 MiB per thread");

thread_local! {
    static MEMO: std::cell::RefCell<super::memo::Memo<8, Remembered>> =
        const { std::cell::RefCell::new(super::memo::Memo::new(MEMO_SETS)) };
}

/// Bytes the calling thread's Reeds-Shepp memo holds now (0 before its first call,
/// [`MEMO_BYTES`] after).
pub fn memo_bytes() -> usize {
    MEMO.with(|m| m.borrow().bytes())
}

/// [`reeds_shepp_cheapest`] remembered per thread, by the exact offset `goal - start`, the two
/// headings, the radius and `prices`: the caller's `cost` must be a function of a curve's pieces
/// and these three prices alone (it is computed once per key). A planner that links cell centres
/// in a few heading bins asks the same relative problems again and again; a hit costs one hash
/// lookup instead of 48 closed forms. Memory: [`MEMO_BYTES`] per thread, allocated at its first
/// call, never grown. `None` as for [`reeds_shepp_cheapest`].
pub fn reeds_shepp_cheapest_memo(
    start: Pose2,
    goal: Pose2,
    radius: f64,
    prices: [f64; 3],
    cost: impl Fn(&ReedsSheppCurve) -> f64,
) -> Option<ReedsSheppCurve> {
    if !valid_inputs(start, goal, radius) {
        return None;
    }
    let (dx, dy) = (goal.x - start.x, goal.y - start.y);
    let key = [
        dx.to_bits(),
        dy.to_bits(),
        start.yaw.to_bits(),
        goal.yaw.to_bits(),
        radius.to_bits(),
        prices[0].to_bits(),
        prices[1].to_bits(),
        prices[2].to_bits(),
    ];
    let found = MEMO.with(|m| m.borrow_mut().get(&key));
    let remembered = match found {
        Some(r) => r,
        None => {
            // Solved at the origin: the closed forms see only the offset and the headings.
            let origin = Pose2::new(0.0, 0.0, start.yaw);
            let r = reeds_shepp_cheapest(origin, Pose2::new(dx, dy, goal.yaw), radius, cost)
                .map(|c| (c.family, c.pieces, c.count));
            MEMO.with(|m| m.borrow_mut().insert(key, r));
            r
        }
    };
    remembered.map(|(family, pieces, count)| ReedsSheppCurve { start, radius, family, pieces, count })
}

/// The goal in the start's frame, in radii.
fn normalised(start: Pose2, goal: Pose2, radius: f64) -> Goal {
    let (dx, dy) = (goal.x - start.x, goal.y - start.y);
    let (s, c) = start.yaw.sin_cos();
    Goal::new((c * dx + s * dy) / radius, (-s * dx + c * dy) / radius, normalize_angle(goal.yaw - start.yaw))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curves::dubins_shortest;
    use crate::trajectory::Trajectory;

    use crate::test_rng::{random_pose, splitmix as rng};

    fn shortest(a: Pose2, b: Pose2, r: f64) -> ReedsSheppCurve {
        reeds_shepp_shortest(a, b, r).unwrap_or_else(|| panic!("no curve {a:?} -> {b:?} r {r}"))
    }

    /// A single arc or line, driven forwards or backwards, is its own shortest curve (coverage
    /// beside the Dubins test of the same name: this solver's own closed forms normalise angles
    /// to (-pi, pi], so rounding below zero stays a tiny angle).
    #[test]
    fn single_pieces_are_their_own_shortest_curve() {
        use crate::trajectory::{Segment, Turn};
        let mut seed = 8;
        for i in 0..20_000 {
            let start = random_pose(&mut seed, 40.0);
            let r = 0.3 + 20.0 * rng(&mut seed);
            let angle = if i % 2 == 0 { 0.2 * rng(&mut seed) } else { 0.5 * PI * rng(&mut seed) };
            let mut piece = match i % 3 {
                0 => Segment::arc(start, r * angle, r, Turn::Left),
                1 => Segment::arc(start, r * angle, r, Turn::Right),
                _ => Segment::line(start, r * angle),
            };
            piece.reverse = i % 4 >= 2;
            let c = shortest(start, piece.end(), r);
            let excess = c.length() - piece.length;
            assert!(excess.abs() < 1e-6 * (1.0 + r), "{piece:?}: {} is {excess} longer", c.word());
        }
    }

    #[test]
    fn closed_forms() {
        let o = Pose2::new(0.0, 0.0, 0.0);
        // Straight ahead and straight back.
        let c = shortest(o, Pose2::new(4.0, 0.0, 0.0), 1.0);
        assert!((c.length() - 4.0).abs() < 1e-9 && c.reverse_length() == 0.0);
        let c = shortest(o, Pose2::new(-3.0, 0.0, 0.0), 1.0);
        assert!((c.length() - 3.0).abs() < 1e-9 && (c.reverse_length() - 3.0).abs() < 1e-9, "{}", c.word());
        let segs = c.segments();
        assert_eq!(segs.len(), 1);
        assert!(segs[0].reverse);
        // A quarter circle forwards, and the same backwards.
        let c = shortest(o, Pose2::new(2.0, 2.0, FRAC_PI_2), 2.0);
        assert!((c.length() - PI).abs() < 1e-9, "{}", c.word());
        let c = shortest(o, Pose2::new(-2.0, 2.0, -FRAC_PI_2), 2.0);
        assert!((c.length() - PI).abs() < 1e-9 && (c.reverse_length() - PI).abs() < 1e-9, "{}", c.word());
        // Sideways by one diameter with the same heading: forwards only needs a loop; with a cusp
        // it is shorter.
        let side = shortest(o, Pose2::new(0.0, 2.0, 0.0), 1.0);
        assert!(side.length() < dubins_shortest(o, Pose2::new(0.0, 2.0, 0.0), 1.0).unwrap().length());
        assert!(side.cusps() >= 1);
        // Same pose: zero length; bad inputs: none.
        let p = Pose2::new(1.0, 2.0, 0.3);
        assert!(shortest(p, p, 1.0).length() < 1e-9);
        assert!(reeds_shepp_shortest(p, p, 0.0).is_none());
        assert!(reeds_shepp_shortest(p, p, f64::NAN).is_none());
        assert!(reeds_shepp_shortest(p, Pose2::new(f64::INFINITY, 0.0, 0.0), 1.0).is_none());
    }

    #[test]
    fn turning_around_in_place_is_a_three_point_turn() {
        // Facing the other way at the same place: the classic answer is a CCC word with cusps,
        // much shorter than the forward-only loop.
        let o = Pose2::new(0.0, 0.0, 0.0);
        let g = Pose2::new(0.0, 0.0, PI);
        let c = shortest(o, g, 1.0);
        let d = dubins_shortest(o, g, 1.0).unwrap();
        assert!(c.length() < d.length() - 1.0, "{} {} vs {}", c.word(), c.length(), d.length());
        assert!(c.cusps() >= 1);
    }

    #[test]
    fn every_word_ends_at_the_goal_and_joins() {
        let mut seed = 5;
        let mut families = std::collections::HashSet::new();
        for i in 0..4000 {
            let span = if i % 2 == 0 { 3.0 } else { 20.0 };
            let (a, b) = (random_pose(&mut seed, span), random_pose(&mut seed, span));
            let r = 0.3 + 2.0 * rng(&mut seed);
            let all = reeds_shepp_all(a, b, r);
            assert!(!all.is_empty());
            for c in &all {
                families.insert(c.family);
                let t = Trajectory { segments: c.segments(), min_turning_radius: r };
                assert!(t.check_continuity() < 1e-9);
                assert!(t.segments.iter().all(|s| s.length > 0.0 && s.curvature.abs() <= 1.0 / r + 1e-12));
                let e = c.end();
                assert!(
                    e.point().distance(b.point()) < 1e-6 * (1.0 + span) && normalize_angle(e.yaw - b.yaw).abs() < 1e-6
                );
                assert!(c.cusps() <= 2, "{}", c.word());
                // The gear of each segment is the one its piece says.
                assert!(
                    (t.segments.iter().filter(|s| s.reverse).map(|s| s.length).sum::<f64>() - c.reverse_length()).abs()
                        < 1e-9
                );
            }
        }
        assert_eq!(families.len(), 5, "every family should join some pair: {families:?}");
    }

    #[test]
    fn never_longer_than_dubins_and_symmetric() {
        let mut seed = 3;
        for _ in 0..3000 {
            let a = random_pose(&mut seed, 10.0);
            let b = random_pose(&mut seed, 10.0);
            let r = 0.5 + 2.0 * rng(&mut seed);
            let len = shortest(a, b, r).length();
            assert!(len >= a.point().distance(b.point()) - 1e-9);
            assert!(len <= dubins_shortest(a, b, r).unwrap().length() + 1e-9);
            // Reversal: the same path driven from b to a.
            let back = shortest(b, a, r).length();
            assert!((back - len).abs() < 1e-9 * (1.0 + len), "{len} vs {back}");
            // Reflection through any line: mirror both poses.
            let m = |p: Pose2| Pose2::new(p.x, -p.y, -p.yaw);
            let mirrored = shortest(m(a), m(b), r).length();
            assert!((mirrored - len).abs() < 1e-9 * (1.0 + len));
            // Timeflip: both headings turned by pi.
            let f = |p: Pose2| Pose2::new(p.x, p.y, p.yaw + PI);
            let flipped = shortest(f(a), f(b), r).length();
            assert!((flipped - len).abs() < 1e-9 * (1.0 + len));
            // Scaling positions and radius together scales the length.
            let k = 0.3 + 3.0 * rng(&mut seed);
            let sc = |p: Pose2| Pose2::new(p.x * k, p.y * k, p.yaw);
            assert!((shortest(sc(a), sc(b), r * k).length() - k * len).abs() < 1e-7 * (1.0 + k * len));
        }
    }

    #[test]
    fn a_cost_can_price_reversing() {
        // Directly behind: the shortest drives back; with reversing priced tenfold, a forward word
        // wins when one exists among the candidates.
        let o = Pose2::new(0.0, 0.0, 0.0);
        let g = Pose2::new(-1.0, 0.0, 0.0);
        let cheap = reeds_shepp_cheapest(o, g, 1.0, |c| c.length() + 9.0 * c.reverse_length()).unwrap();
        let short = shortest(o, g, 1.0);
        assert!(short.reverse_length() > 0.9);
        assert!(cheap.reverse_length() < short.reverse_length());
        assert!(reeds_shepp_cheapest(o, g, -1.0, |c| c.length()).is_none());
    }
    /// The memo answers what a fresh solve answers, wherever the pair is placed, and stays at its
    /// stated size however many problems it sees.
    #[test]
    fn the_memo_equals_fresh_solves_and_keeps_its_size() {
        std::thread::spawn(|| {
            let mut seed = 77u64;
            let cost = |c: &ReedsSheppCurve| c.length() + c.reverse_length() + 2.0 * c.cusps() as f64;
            for _ in 0..3000 {
                let (dx, dy) = ((rng(&mut seed) * 30.0 - 15.0).round(), (rng(&mut seed) * 30.0 - 15.0).round());
                let (ya, yb) =
                    ((rng(&mut seed) * 8.0).floor() * std::f64::consts::FRAC_PI_4, rng(&mut seed) * 6.0 - 3.0);
                for (x, y) in [(0.5, 0.5), (317.5, 41.5)] {
                    let (a, b) = (Pose2::new(x, y, ya), Pose2::new(x + dx, y + dy, yb));
                    let fresh = reeds_shepp_cheapest(a, b, 3.0, cost).map(|c| c.segments());
                    for _ in 0..2 {
                        let memo = reeds_shepp_cheapest_memo(a, b, 3.0, [2.0, 2.0, 0.0], cost).map(|c| c.segments());
                        let (Some(m), Some(f)) = (&memo, &fresh) else { panic!("no curve") };
                        assert_eq!(m.len(), f.len());
                        for (p, q) in m.iter().zip(f) {
                            assert!((p.length - q.length).abs() < 1e-9 && p.reverse == q.reverse);
                            assert!(p.start.point().distance(q.start.point()) < 1e-9);
                        }
                    }
                }
            }
            let held = MEMO.with(|m| m.borrow().bytes());
            assert_eq!(held, MEMO_BYTES);
        })
        .join()
        .unwrap();
    }
}
