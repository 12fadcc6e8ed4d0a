//! The footprint at one pose: its shape and the cells it covers.

use super::{sampled_radius, SAMPLE_SPACING};
use crate::geometry::{ceil_i64, floor_i64, Point2, Pose2};
use crate::polygon::{Polygon, MAX_VERTICES};
use std::sync::Arc;

/// The vehicle's footprint in cells: a disk about its reference point, a square centred on it, or
/// a polygon in the vehicle's frame (origin at the reference point, x forward); the square and the
/// polygon turn with the heading.
///
/// Sampling rule for the shapes that turn: between samples the footprint both moves (at most half
/// the sample spacing, [`SAMPLE_SPACING`] / 2) and turns (at most `|curvature|` times that), so
/// every point of it stays within `SAMPLE_SPACING / 2 * (1 + |curvature| * R)` of where it was at
/// the nearest sample, `R` its circumradius. The shape tested at each sample is grown by that much
/// (the square on every side; the polygon by [`polygon_runs`]' rule), which contains the true
/// swept footprint (conservative like the disk's rule).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Shape {
    /// A disk of this radius (cells, >= 0).
    Disk(f64),
    /// A square of this side (cells, > 0), turning with the vehicle.
    Square(f64),
    /// A simple polygon (cells, vehicle frame), turning with the vehicle.
    Polygon(Arc<Polygon>),
}

impl From<f64> for Shape {
    fn from(radius: f64) -> Self {
        Shape::Disk(radius)
    }
}

impl From<&Shape> for Shape {
    fn from(shape: &Shape) -> Self {
        shape.clone()
    }
}

impl Shape {
    /// Radius of the smallest disk about the reference point holding the footprint in every
    /// heading (the disk itself, or the square's circumscribed circle).
    pub fn circumradius(&self) -> f64 {
        match self {
            Shape::Disk(r) => *r,
            Shape::Square(a) => a * std::f64::consts::FRAC_1_SQRT_2,
            Shape::Polygon(p) => p.circumradius(),
        }
    }

    /// Radius of the largest disk about the reference point inside the footprint in every heading.
    pub fn inradius(&self) -> f64 {
        match self {
            Shape::Disk(r) => *r,
            Shape::Square(a) => a / 2.0,
            Shape::Polygon(p) => p.inradius(),
        }
    }

    /// Radius of a disk test about a sample that covers the sampled footprint of a segment of
    /// `curvature` (the disk's [`sampled_radius`], the grown square's circumradius, or the
    /// polygon's circumradius plus the reach of [`polygon_runs`]' growth).
    pub fn sampled_circumradius(&self, curvature: f64) -> f64 {
        match self {
            Shape::Disk(r) => sampled_radius(*r),
            Shape::Square(_) => self.sampled_half_side(curvature) * std::f64::consts::SQRT_2,
            Shape::Polygon(p) => p.circumradius() + POLYGON_GROWTH_REACH * self.sampled_growth(curvature),
        }
    }

    /// How far the footprint tested at each sample of a segment of `curvature` is grown (cells):
    /// `SAMPLE_SPACING / 2 * (1 + |curvature| * circumradius)` (see the type's sampling rule; for
    /// a disk, half the spacing).
    pub fn sampled_growth(&self, curvature: f64) -> f64 {
        match self {
            Shape::Disk(_) => SAMPLE_SPACING / 2.0,
            _ => SAMPLE_SPACING / 2.0 * (1.0 + curvature.abs() * self.circumradius()),
        }
    }

    /// Half the side of the square tested at each sample of a segment of `curvature` (see the
    /// type's sampling rule); for a disk, its sampled radius.
    pub fn sampled_half_side(&self, curvature: f64) -> f64 {
        match self {
            Shape::Disk(r) => sampled_radius(*r),
            Shape::Square(a) => {
                a / 2.0 + SAMPLE_SPACING / 2.0 * (1.0 + curvature.abs() * a * std::f64::consts::FRAC_1_SQRT_2)
            }
            Shape::Polygon(p) => p.circumradius() + self.sampled_growth(curvature),
        }
    }
}

impl Shape {
    /// How far the unit cell `(x, y)` (the square `[x, x + 1] x [y, y + 1]`) reaches into this
    /// footprint standing at `pose` (cells): the footprint's inradius less the distance from its
    /// centre to the cell (Euclidean for the disk; for the square, the max-norm of the square's
    /// own axes, so the square grown by that distance just touches the cell). 0 when the cell is
    /// outside or only touches the outline.
    ///
    /// For the polygon, an upper bound within [`POLYGON_DEPTH_SLACK`] of the largest distance to
    /// its outline of a point of the cell inside it: 0 when the cell does not meet the polygon
    /// (closed sets), else the largest such distance over a 17 x 17 lattice of the cell's points
    /// plus that slack (the distance to the outline changes by at most the lattice's half
    /// diagonal between a point and its nearest lattice point), so a corner just poking into a
    /// cell never reads as no overlap.
    pub fn depth_of_cell(&self, pose: Pose2, (x, y): (i64, i64)) -> f64 {
        let cell = (x, y);
        let (x, y) = (x as f64, y as f64);
        match self {
            Shape::Polygon(p) => {
                let mut meets = false;
                polygon_runs(p, pose, 0.0, |row, x0, x1| {
                    meets = row == cell.1 && (x0..=x1).contains(&cell.0);
                    !meets
                });
                if !meets {
                    return 0.0;
                }
                let (c, s) = (pose.yaw.cos(), pose.yaw.sin());
                let mut depth: f64 = 0.0;
                for i in 0..=16 {
                    for j in 0..=16 {
                        let (px, py) = (x + i as f64 / 16.0 - pose.x, y + j as f64 / 16.0 - pose.y);
                        let q = Point2::new(c * px + s * py, -s * px + c * py);
                        if p.contains(q) {
                            depth = depth.max(p.distance_to_boundary(q));
                        }
                    }
                }
                depth + POLYGON_DEPTH_SLACK
            }
            &Shape::Disk(r) => {
                let dx = (x - pose.x).max(pose.x - (x + 1.0)).max(0.0);
                let dy = (y - pose.y).max(pose.y - (y + 1.0)).max(0.0);
                (r - dx.hypot(dy)).max(0.0)
            }
            &Shape::Square(a) => {
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

/// How far [`Shape::depth_of_cell`] may overstate a polygon's depth (cells): half the diagonal of
/// its 1/16-cell lattice.
pub const POLYGON_DEPTH_SLACK: f64 = std::f64::consts::SQRT_2 / 32.0;

/// How far beyond the polygon, as a multiple of the growth, [`polygon_runs`] may mark a cell: a
/// grown edge is marked row by row over its extent in the row grown by the growth in x and y.
pub const POLYGON_GROWTH_REACH: f64 = std::f64::consts::SQRT_2;

/// Calls `f(y, x0, x1)` for the row runs of cells touched (closed-set intersection) by `polygon`
/// (cells, vehicle frame) standing at `pose`, grown by `grow` (cells, >= 0); stops early when `f`
/// returns false.
///
/// Every cell within `grow` of the polygon (inside it or near its outline) is marked; a marked
/// cell lies within [`POLYGON_GROWTH_REACH`] `* grow` of it. Row by row: the cells each edge's
/// grown band meets (the edge clipped to the row widened by `grow`, then widened by `grow` in x),
/// and the cells whose centres lie inside the polygon (a cell that meets the polygon but not its
/// outline lies wholly inside). Runs come sorted and disjoint within a row.
pub fn polygon_runs(polygon: &Polygon, pose: Pose2, grow: f64, mut f: impl FnMut(i64, i64, i64) -> bool) {
    let (c, s) = (pose.yaw.cos(), pose.yaw.sin());
    let vertices = polygon.vertices();
    let n = vertices.len();
    let mut world = [Point2::default(); MAX_VERTICES];
    for (w, v) in world.iter_mut().zip(vertices) {
        *w = Point2::new(pose.x + c * v.x - s * v.y, pose.y + s * v.x + c * v.y);
    }
    let world = &world[..n];
    let y_min = world.iter().map(|p| p.y).fold(f64::INFINITY, f64::min) - grow;
    let y_max = world.iter().map(|p| p.y).fold(f64::NEG_INFINITY, f64::max) + grow;
    // At most one run per edge and one per pair of crossings.
    let mut runs = [(0i64, 0i64); MAX_VERTICES + MAX_VERTICES / 2];
    let mut crossings = [0f64; MAX_VERTICES];
    for y in floor_i64(y_min)..=floor_i64(y_max) {
        let (lo, hi) = (y as f64 - grow, y as f64 + 1.0 + grow);
        let mut k = 0;
        for i in 0..n {
            let (a, b) = (world[i], world[(i + 1) % n]);
            if a.y.max(b.y) < lo || a.y.min(b.y) > hi {
                continue;
            }
            let (x_lo, x_hi) = if a.y == b.y {
                (a.x.min(b.x), a.x.max(b.x))
            } else {
                let at = |level: f64| {
                    let t = ((level - a.y) / (b.y - a.y)).clamp(0.0, 1.0);
                    a.x + t * (b.x - a.x)
                };
                let (p, q) = (at(lo), at(hi));
                (p.min(q), p.max(q))
            };
            runs[k] = (ceil_i64(x_lo - grow - 1.0), floor_i64(x_hi + grow));
            k += 1;
        }
        // The polygon's interior on the row's centre line (even-odd rule, half-open at vertices).
        let centre = y as f64 + 0.5;
        let mut m = 0;
        for i in 0..n {
            let (a, b) = (world[i], world[(i + 1) % n]);
            if (a.y > centre) != (b.y > centre) {
                crossings[m] = a.x + (centre - a.y) / (b.y - a.y) * (b.x - a.x);
                m += 1;
            }
        }
        let crossings = &mut crossings[..m];
        crossings.sort_unstable_by(f64::total_cmp);
        for pair in crossings.chunks_exact(2) {
            let (x0, x1) = (ceil_i64(pair[0] - 0.5), floor_i64(pair[1] - 0.5));
            if x0 <= x1 {
                runs[k] = (x0, x1);
                k += 1;
            }
        }
        let runs = &mut runs[..k];
        runs.sort_unstable();
        let mut current: Option<(i64, i64)> = None;
        for &(x0, x1) in runs.iter() {
            match current {
                Some((c0, c1)) if x0 <= c1 + 1 => current = Some((c0, c1.max(x1))),
                Some((c0, c1)) => {
                    if !f(y, c0, c1) {
                        return;
                    }
                    current = Some((x0, x1));
                }
                None => current = Some((x0, x1)),
            }
        }
        if let Some((c0, c1)) = current {
            if !f(y, c0, c1) {
                return;
            }
        }
    }
}
