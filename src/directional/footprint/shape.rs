//! The footprint at one pose: its shape and the cells it covers.

use super::{sampled_radius, SAMPLE_SPACING};
use crate::geometry::Point2;
use crate::geometry::{ceil_i64, floor_i64};

/// The vehicle's footprint in cells: a disk about its reference point, or a square centred on it
/// that turns with the heading (sides parallel and perpendicular to the heading).
///
/// Sampling rule for the square: between samples the square both moves (at most half the sample
/// spacing, [`SAMPLE_SPACING`] / 2) and turns (at most `|curvature|` times that), so every point of
/// it stays within `SAMPLE_SPACING / 2 * (1 + |curvature| * side / sqrt(2))` of where it was at
/// the nearest sample; the square tested at each sample is grown by that much on every side, which
/// contains the true swept footprint (conservative like the disk's rule).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Shape {
    /// A disk of this radius (cells, >= 0).
    Disk(f64),
    /// A square of this side (cells, > 0), turning with the vehicle.
    Square(f64),
}

impl From<f64> for Shape {
    fn from(radius: f64) -> Self {
        Shape::Disk(radius)
    }
}

impl Shape {
    /// Radius of the smallest disk about the reference point holding the footprint in every
    /// heading (the disk itself, or the square's circumscribed circle).
    pub fn circumradius(self) -> f64 {
        match self {
            Shape::Disk(r) => r,
            Shape::Square(a) => a * std::f64::consts::FRAC_1_SQRT_2,
        }
    }

    /// Radius of the largest disk about the reference point inside the footprint in every heading.
    pub fn inradius(self) -> f64 {
        match self {
            Shape::Disk(r) => r,
            Shape::Square(a) => a / 2.0,
        }
    }

    /// Radius of a disk test about a sample that covers the sampled footprint of a segment of
    /// `curvature` (the disk's [`sampled_radius`], or the grown square's circumradius).
    pub fn sampled_circumradius(self, curvature: f64) -> f64 {
        match self {
            Shape::Disk(r) => sampled_radius(r),
            Shape::Square(_) => self.sampled_half_side(curvature) * std::f64::consts::SQRT_2,
        }
    }

    /// Half the side of the square tested at each sample of a segment of `curvature` (see the
    /// type's sampling rule); for a disk, its sampled radius.
    pub fn sampled_half_side(self, curvature: f64) -> f64 {
        match self {
            Shape::Disk(r) => sampled_radius(r),
            Shape::Square(a) => {
                a / 2.0 + SAMPLE_SPACING / 2.0 * (1.0 + curvature.abs() * a * std::f64::consts::FRAC_1_SQRT_2)
            }
        }
    }
}

impl Shape {
    /// How far the unit cell `(x, y)` (the square `[x, x + 1] x [y, y + 1]`) reaches into this
    /// footprint standing at `pose` (cells): the footprint's inradius less the distance from its
    /// centre to the cell (Euclidean for the disk; for the square, the max-norm of the square's
    /// own axes, so the square grown by that distance just touches the cell). 0 when the cell is
    /// outside or only touches the outline.
    pub fn depth_of_cell(self, pose: crate::geometry::Pose2, (x, y): (i64, i64)) -> f64 {
        let (x, y) = (x as f64, y as f64);
        match self {
            Shape::Disk(r) => {
                let dx = (x - pose.x).max(pose.x - (x + 1.0)).max(0.0);
                let dy = (y - pose.y).max(pose.y - (y + 1.0)).max(0.0);
                (r - dx.hypot(dy)).max(0.0)
            }
            Shape::Square(a) => {
                let half = a / 2.0;
                // The square grown to half side t meets the cell iff no separating axis exists
                // among the cell's and the square's (convex polygons); that is monotone in t,
                // so the touching t is found by bisection to far below a cell's size.
                let (c, s) = (pose.yaw.cos(), pose.yaw.sin());
                let corners = [(x, y), (x + 1.0, y), (x + 1.0, y + 1.0), (x, y + 1.0)]
                    .map(|(px, py)| ((px - pose.x) * c + (py - pose.y) * s, -(px - pose.x) * s + (py - pose.y) * c));
                let meets = |t: f64| {
                    // The square's own axes: the cell's corners in the square's frame.
                    let (umin, umax) =
                        corners.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |m, p| (m.0.min(p.0), m.1.max(p.0)));
                    let (vmin, vmax) =
                        corners.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |m, p| (m.0.min(p.1), m.1.max(p.1)));
                    if umin > t || umax < -t || vmin > t || vmax < -t {
                        return false;
                    }
                    // The cell's axes (map x and y): the square's extent about its centre.
                    let extent = t * (c.abs() + s.abs());
                    !(x > pose.x + extent
                        || x + 1.0 < pose.x - extent
                        || y > pose.y + extent
                        || y + 1.0 < pose.y - extent)
                };
                if !meets(half) {
                    return 0.0;
                }
                let (mut lo, mut hi) = (0.0, half);
                if meets(0.0) {
                    return half;
                }
                for _ in 0..48 {
                    let mid = 0.5 * (lo + hi);
                    if meets(mid) {
                        hi = mid;
                    } else {
                        lo = mid;
                    }
                }
                (half - hi).max(0.0)
            }
        }
    }
}

/// Calls `f(y, x0, x1)` for every row of cells touched (closed-set intersection) by the square of
/// half side `half` centred at `(cx, cy)` with heading `yaw`; stops early when `f` returns false.
pub fn square_runs(cx: f64, cy: f64, yaw: f64, half: f64, mut f: impl FnMut(i64, i64, i64) -> bool) {
    let (c, s) = (yaw.cos(), yaw.sin());
    let corners = [(half, half), (-half, half), (-half, -half), (half, -half)]
        .map(|(u, v)| (cx + c * u - s * v, cy + s * u + c * v));
    let y_min = corners.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let y_max = corners.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
    for y in floor_i64(y_min)..=floor_i64(y_max) {
        // x-extent of the square within the closed strip [y, y + 1].
        let (lo, hi) = (y as f64, y as f64 + 1.0);
        let (mut x_lo, mut x_hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for k in 0..4 {
            let (a, b) = (corners[k], corners[(k + 1) % 4]);
            if a.1 >= lo && a.1 <= hi {
                x_lo = x_lo.min(a.0);
                x_hi = x_hi.max(a.0);
            }
            for level in [lo, hi] {
                if (a.1 - level) * (b.1 - level) < 0.0 {
                    let x = a.0 + (level - a.1) / (b.1 - a.1) * (b.0 - a.0);
                    x_lo = x_lo.min(x);
                    x_hi = x_hi.max(x);
                }
            }
        }
        if x_lo > x_hi {
            continue;
        }
        if !f(y, ceil_i64(x_lo - 1.0), floor_i64(x_hi)) {
            return;
        }
    }
}

/// Calls `f(y, x0, x1)` for every row of cells touched (closed-set intersection) by the disk of
/// radius `rho` around `p`; stops early when `f` returns false.
pub fn disk_runs(p: Point2, rho: f64, mut f: impl FnMut(i64, i64, i64) -> bool) {
    let y_lo = floor_i64(p.y - rho);
    let y_hi = floor_i64(p.y + rho);
    for y in y_lo..=y_hi {
        let nearest = p.y.clamp(y as f64, y as f64 + 1.0);
        let dy = (p.y - nearest).abs();
        if dy > rho {
            continue;
        }
        let w = (rho * rho - dy * dy).max(0.0).sqrt();
        let x0 = ceil_i64(p.x - w - 1.0);
        let x1 = floor_i64(p.x + w);
        if !f(y, x0, x1) {
            return;
        }
    }
}
