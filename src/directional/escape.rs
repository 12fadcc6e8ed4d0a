//! A cheap, sound proof that a pose is trapped: no forward path with curvature at most `1 / R`
//! can leave it (or, backwards, reach it) without the footprint touching a blocked cell.
//!
//! Why it holds. Take any forward path from a pose, in the pose's frame (x ahead, y to the left),
//! with curvature at most `1 / R`, and an arc length `d <= pi R / 2`. Its heading after arc length
//! `s <= d` is at most `s / R <= pi / 2` away from the start heading, so at arc length `d`
//! - `x(d) = int cos(theta) >= int_0^d cos(s / R) ds = R sin(d / R)` and `x(d) <= d`;
//! - `|y(d)| <= int_0^d sin(s / R) ds = R (1 - cos(d / R))`.
//!
//! So the point at arc length `d` lies in the box `[R sin(d/R), d] x [-R(1-cos(d/R)), R(1-cos(d/R))]`.
//! When the footprint (a disk of radius `r`) touches a blocked cell at every point of that box,
//! every path of length at least `d` collides. Every trajectory Directional A* can return (first
//! edge, lattice edges, goal link: one continuous curve of curvature at most `1 / R`, each piece
//! checked with the conservative sampled sweep of [`super::footprint`], which rejects any curve
//! through a point whose true disk touches a blocked cell) is at least as long as the straight
//! distance between start and goal; so when that distance is at least `d`, no search can succeed
//! and the pair can be refused without searching. A path arriving at a goal is such a path run
//! backwards from the goal with the heading reversed, so the same box behind the goal proves that
//! nothing can arrive.
//!
//! The box is tested at sample points spaced `h` apart: every point of the box is within
//! `delta = h / sqrt(2)` of a sample, and a disk of radius `r - delta` that touches a blocked cell
//! at the sample implies the disk of radius `r` touches it at the point. The test is a necessary
//! condition only: `false` proves nothing (the pose may still be trapped by something wider).

use super::footprint::CollisionMap;
use super::motion::MotionModel;
use super::params::RefineParams;
use crate::geometry::{Point2, Pose2};

/// The box (in the pose's frame: `x_min`, `x_max`, `y_half`) holding the point at arc length
/// `d` (cells, `0 < d <= pi R / 2`) of every forward path of curvature at most `1 / turning_radius`.
pub fn funnel_box(turning_radius: f64, d: f64) -> (f64, f64, f64) {
    let r = turning_radius;
    (r * (d / r).sin(), d, r * (1.0 - (d / r).cos()))
}

/// Most arc lengths tried per pose (evenly spaced up to the largest useful one).
const LENGTHS_TRIED: usize = 32;

/// True when it is proven that every forward path of curvature at most `1 / turning_radius`
/// leaving `pose` (cells) collides before it has driven `max_length` cells, for a disk footprint of
/// `footprint_radius` cells on `map`. With `backward`, the same for paths arriving at `pose`.
/// `false` proves nothing. Costs at most a few thousand disk tests.
pub fn trapped(
    map: &CollisionMap,
    pose: Pose2,
    turning_radius: f64,
    footprint_radius: f64,
    max_length: f64,
    backward: bool,
) -> bool {
    let r = footprint_radius;
    if !(r > 0.0 && turning_radius > 0.0 && max_length > 0.0 && pose.is_finite()) {
        return false;
    }
    let yaw = if backward { pose.yaw + std::f64::consts::PI } else { pose.yaw };
    let (c, s) = (yaw.cos(), yaw.sin());
    let d_max = max_length.min(std::f64::consts::FRAC_PI_2 * turning_radius);
    // Sample spacing: fine enough that the shrunken disk keeps a positive radius.
    let h = (r / 2.0).min(0.5);
    for k in 1..=LENGTHS_TRIED {
        let d = d_max * k as f64 / LENGTHS_TRIED as f64;
        let (x0, x1, yh) = funnel_box(turning_radius, d);
        if box_blocked(map, pose.point(), c, s, x0, x1, yh, h, r) {
            return true;
        }
    }
    false
}

/// True when the disk of radius `r` touches a blocked cell at every point of the box
/// `[x0, x1] x [-yh, yh]` in the frame at `o` with heading (cos, sin) = `(c, s)`.
#[allow(clippy::too_many_arguments)]
fn box_blocked(map: &CollisionMap, o: Point2, c: f64, s: f64, x0: f64, x1: f64, yh: f64, h: f64, r: f64) -> bool {
    let nx = (((x1 - x0) / h).ceil() as usize).max(1);
    let ny = ((2.0 * yh / h).ceil() as usize).max(1);
    let (hx, hy) = ((x1 - x0) / nx as f64, 2.0 * yh / ny as f64);
    // Every box point lies within half the sample cell's diagonal of a sample.
    let delta = 0.5 * hx.hypot(hy);
    let shrunk = r - delta - 1e-9;
    if shrunk < 0.0 {
        return false;
    }
    for i in 0..=nx {
        let x = x0 + hx * i as f64;
        for j in 0..=ny {
            let y = -yh + hy * j as f64;
            let q = Point2::new(o.x + c * x - s * y, o.y + s * x + c * y);
            if map.disk_free(q, shrunk) {
                return false;
            }
        }
    }
    true
}

/// Why the pair `start` -> `goal` (cells) cannot be driven by the vehicle of `params`, when
/// [`trapped`] proves it for the start (forwards) or, with a fixed goal heading, for the goal
/// (backwards); `None` otherwise.
///
/// Gear-aware: the proof covers forward-only paths alone. With reversing
/// ([`MotionModel::ReedsShepp`]) a start boxed in ahead may back out, and one boxed in on both
/// sides may still manoeuvre: a Reeds-Shepp car is small-time locally controllable (by short
/// back-and-forth moves it reaches every pose near its own, whatever its heading), so no box ahead
/// or behind proves anything, only a footprint with no free room around it, or free space that
/// does not join start and goal (what the planner's reachability step settles). So with reversing
/// this returns `None`.
pub fn trapped_ends(
    map: &CollisionMap,
    start: Pose2,
    goal: Pose2,
    goal_heading_free: bool,
    params: &RefineParams,
) -> Option<&'static str> {
    if params.motion_model != MotionModel::Forward {
        return None;
    }
    let (turning_radius, footprint_radius) = (params.turning_radius, params.shape().inradius());
    let dist = start.point().distance(goal.point());
    if trapped(map, start, turning_radius, footprint_radius, dist, false) {
        return Some("every forward move from the start collides (obstacle ahead within a quarter turn)");
    }
    if !goal_heading_free && trapped(map, goal, turning_radius, footprint_radius, dist, true) {
        return Some("every way into the goal pose collides (obstacle behind it within a quarter turn)");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::directional::lattice::Neighbourhood;
    use crate::directional::refine::full_search;
    use crate::directional::{Directional, RefineParams};
    use crate::grid::Grid;

    fn rng(seed: u64) -> impl FnMut() -> f64 {
        let mut state = seed;
        move || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    #[test]
    fn random_curvature_bounded_paths_stay_in_the_box() {
        // Piecewise-constant curvature in [-1/R, 1/R], integrated finely: the point at every arc
        // length d <= pi R / 2 lies in the funnel box.
        let mut rnd = rng(5);
        let radius = 3.0;
        for _ in 0..2000 {
            let (mut x, mut y, mut th) = (0.0f64, 0.0f64, 0.0f64);
            let ds = 1e-3;
            let mut kappa = 0.0;
            let steps = (std::f64::consts::FRAC_PI_2 * radius / ds) as usize;
            for k in 1..=steps {
                if k % 200 == 1 {
                    kappa = match (rnd() * 3.0) as u32 {
                        0 => 1.0 / radius,
                        1 => -1.0 / radius,
                        _ => (rnd() * 2.0 - 1.0) / radius,
                    };
                }
                x += ds * (th + 0.5 * kappa * ds).cos();
                y += ds * (th + 0.5 * kappa * ds).sin();
                th += kappa * ds;
                if k % 97 == 0 {
                    let (x0, x1, yh) = funnel_box(radius, k as f64 * ds);
                    assert!(x >= x0 - 1e-6 && x <= x1 + 1e-9 && y.abs() <= yh + 1e-6, "{k} {x} {y}");
                }
            }
        }
    }

    #[test]
    fn trapped_poses_have_no_path_and_free_ones_are_not_called_trapped() {
        // Random maps and poses: whenever a start (or goal) is called trapped, the full
        // Directional-24 search finds nothing; both outcomes occur.
        let mut rnd = rng(77);
        let params = RefineParams { turning_radius: 6.0, footprint_radius: 1.5, ..RefineParams::default() };
        let ctx = Directional::new(params.clone()).unwrap();
        let (mut trapped_seen, mut free_seen) = (0, 0);
        for _ in 0..12 {
            let (w, h) = (48usize, 40usize);
            let mut g = Grid::new_free(w, h).unwrap();
            for _ in 0..8 {
                let (x, y) = ((rnd() * w as f64) as usize, (rnd() * h as f64) as usize);
                let horizontal = rnd() < 0.5;
                for k in 0..10 {
                    let (cx, cy) = if horizontal { (x + k, y) } else { (x, y + k) };
                    if cx < w && cy < h {
                        g.set_blocked(cx, cy, true).unwrap();
                    }
                }
            }
            let m = CollisionMap::new(&g);
            let rho = crate::directional::footprint::sampled_radius(1.5) + 1e-6;
            let draw = |rnd: &mut dyn FnMut() -> f64| loop {
                let p = Pose2::new(rnd() * w as f64, rnd() * h as f64, rnd() * std::f64::consts::TAU);
                if m.disk_free(p.point(), rho) {
                    return p;
                }
            };
            for _ in 0..12 {
                let s = draw(&mut rnd);
                let e = draw(&mut rnd);
                if s.point().distance(e.point()) < 12.0 {
                    continue;
                }
                let why = trapped_ends(&m, s, e, false, &params);
                let found = full_search(&ctx, &m, s, e, false, Neighbourhood::Directional24, &mut || false).is_ok();
                if why.is_some() {
                    trapped_seen += 1;
                    assert!(!found, "{s:?} -> {e:?} called trapped ({why:?}) but the full search found a path");
                } else if found {
                    free_seen += 1;
                }
            }
        }
        assert!(trapped_seen >= 5 && free_seen >= 5, "trapped {trapped_seen} free {free_seen}");
    }

    #[test]
    fn a_pose_facing_a_near_wall_is_trapped_and_one_facing_away_is_not() {
        let mut g = Grid::new_free(40, 40).unwrap();
        for y in 0..40 {
            g.set_blocked(30, y, true).unwrap();
        }
        let m = CollisionMap::new(&g);
        let facing = Pose2::new(26.0, 20.0, 0.0);
        assert!(trapped(&m, facing, 6.0, 1.5, 20.0, false));
        assert!(!trapped(&m, Pose2::new(26.0, 20.0, std::f64::consts::PI), 6.0, 1.5, 20.0, false));
        // Backwards: a goal with the wall behind it cannot be reached.
        assert!(trapped(&m, Pose2::new(26.0, 20.0, std::f64::consts::PI), 6.0, 1.5, 20.0, true));
        // Too short a trip proves nothing.
        assert!(!trapped(&m, facing, 6.0, 1.5, 1.0, false));
    }
}
