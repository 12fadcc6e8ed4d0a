//! Vehicle polygons: a simple polygon in the vehicle's own frame (origin at the reference point,
//! `base_link`; x forward, y left), as Nav2's `footprint` parameter describes a vehicle.
//!
//! Entry points:
//! - [`Polygon::new`]: vertices in order (either orientation), checked to form a simple polygon;
//! - [`Polygon::parse_nav2`] / [`Polygon::to_nav2`]: Nav2's string form,
//!   `"[[0.9, 0.3], [0.9, -0.3], [-0.2, -0.3], [-0.2, 0.3]]"` (`"[]"`: none);
//! - [`Polygon::padded`]: Nav2's `footprint_padding`;
//! - [`Polygon::circumradius`], [`Polygon::inradius`]: the disks about the reference point that
//!   hold the polygon in every heading, and that it holds in every heading.
//!
//! The type is unit-free: the planner's configuration holds it in metres, the collision checks in
//! cells ([`Polygon::scaled`]). A `Polygon` is valid by construction (every constructor checks),
//! so code that receives one never checks it again.

use crate::geometry::Point2;
use serde::{Deserialize, Serialize};

/// Most vertices a footprint may have (Nav2 footprints have a handful; a circle drawn as a
/// polygon a few dozen).
pub const MAX_VERTICES: usize = 64;

/// Most disks [`Polygon::disk_cover`] uses.
pub const MAX_COVER_DISKS: usize = 4;

/// Disks `((x, y), radius)` (vehicle frame, the polygon's units) whose union holds a polygon:
/// [`Polygon::disk_cover`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiskCover {
    disks: [((f64, f64), f64); MAX_COVER_DISKS],
    len: usize,
}

impl DiskCover {
    fn one(disk: ((f64, f64), f64)) -> Self {
        let mut disks = [((0.0, 0.0), 0.0); MAX_COVER_DISKS];
        disks[0] = disk;
        Self { disks, len: 1 }
    }

    /// The disks, `((x, y), radius)`, at least one.
    pub fn disks(&self) -> &[((f64, f64), f64)] {
        &self.disks[..self.len]
    }
}

/// A simple polygon (no two edges meet except neighbours at their shared vertex), at least three
/// vertices, non-zero area, its vertices kept in the order given (so Nav2's string reads back as
/// written).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Vec<Point2>", into = "Vec<Point2>")]
pub struct Polygon {
    vertices: Vec<Point2>,
    /// [`Polygon::disk_cover`], made with the polygon (every sweep sample may read it).
    cover: DiskCover,
}

/// Why a list of vertices is not a vehicle polygon, or a string not Nav2's footprint form.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PolygonError {
    /// The string is not of the form `[[x, y], [x, y], ...]`.
    #[error("not a footprint of the form [[x, y], [x, y], ...]: {0}")]
    Syntax(String),
    /// Fewer than three distinct vertices, or more than [`MAX_VERTICES`].
    #[error("a footprint needs 3 to {MAX_VERTICES} distinct vertices, got {0}")]
    VertexCount(usize),
    /// A coordinate is NaN or infinite.
    #[error("vertex {0} is not finite")]
    NotFinite(usize),
    /// The vertices enclose no area (all on one line).
    #[error("the footprint encloses no area (its vertices lie on one line)")]
    NoArea,
    /// Two edges that are not neighbours meet.
    #[error("the footprint's edges {0} and {1} cross or touch: it is not a simple polygon")]
    SelfIntersecting(usize, usize),
    /// Nav2's padding (each coordinate moved away from 0) would leave part of the vehicle outside
    /// the padded polygon (a notch, or a reference point outside the polygon or on its outline).
    #[error("padding this footprint as Nav2 does would leave part of the vehicle outside it")]
    PaddingExposes,
}

impl TryFrom<Vec<Point2>> for Polygon {
    type Error = PolygonError;
    fn try_from(vertices: Vec<Point2>) -> Result<Self, PolygonError> {
        Polygon::new(vertices)
    }
}

impl From<Polygon> for Vec<Point2> {
    fn from(p: Polygon) -> Self {
        p.vertices
    }
}

impl Polygon {
    /// The polygon through `vertices` in order (the last joins the first; a repeated closing
    /// vertex and repeated consecutive vertices are dropped). Fails when they do not form a
    /// simple polygon of non-zero area, or hold a non-finite coordinate.
    pub fn new(vertices: Vec<Point2>) -> Result<Self, PolygonError> {
        if let Some(i) = vertices.iter().position(|v| !v.is_finite()) {
            return Err(PolygonError::NotFinite(i));
        }
        let mut vs: Vec<Point2> = Vec::with_capacity(vertices.len());
        for v in vertices {
            if vs.last() != Some(&v) {
                vs.push(v);
            }
        }
        while vs.len() > 1 && vs.first() == vs.last() {
            vs.pop();
        }
        if !(3..=MAX_VERTICES).contains(&vs.len()) {
            return Err(PolygonError::VertexCount(vs.len()));
        }
        let n = vs.len();
        for i in 0..n {
            for j in i + 1..n {
                let neighbours = j == i + 1 || (i == 0 && j == n - 1);
                let (a, b) = (vs[i], vs[(i + 1) % n]);
                let (c, d) = (vs[j], vs[(j + 1) % n]);
                let meet = if neighbours {
                    // Neighbours share one vertex; they may not fold back over each other.
                    let (shared, p, q) = if j == i + 1 { (b, a, d) } else { (a, b, c) };
                    collinear_overlap(shared, p, q)
                } else {
                    segments_meet(a, b, c, d)
                };
                if meet {
                    return Err(PolygonError::SelfIntersecting(i, j));
                }
            }
        }
        let area = signed_area(&vs);
        let scale = vs.iter().map(|v| v.x.abs().max(v.y.abs())).fold(0.0, f64::max);
        if area.abs() <= 1e-12 * scale * scale {
            return Err(PolygonError::NoArea);
        }
        Ok(Self::with_cover(vs))
    }

    /// Parses Nav2's footprint string: `[[x, y], [x, y], ...]` (numbers as Rust reads them, any
    /// whitespace). `"[]"` or an empty string is no polygon (`Ok(None)`), as in Nav2, where the
    /// robot radius then applies.
    pub fn parse_nav2(text: &str) -> Result<Option<Self>, PolygonError> {
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        if compact.is_empty() || compact == "[]" {
            return Ok(None);
        }
        let syntax = || PolygonError::Syntax(text.to_string());
        let inner = compact.strip_prefix("[[").and_then(|s| s.strip_suffix("]]")).ok_or_else(syntax)?;
        let vertices = inner
            .split("],[")
            .map(|pair| {
                let (x, y) = pair.split_once(',').ok_or_else(syntax)?;
                let (x, y) = (x.parse::<f64>().map_err(|_| syntax())?, y.parse::<f64>().map_err(|_| syntax())?);
                Ok(Point2::new(x, y))
            })
            .collect::<Result<Vec<_>, PolygonError>>()?;
        Self::new(vertices).map(Some)
    }

    /// Nav2's string form of `polygon` (`"[]"` for none), which [`Polygon::parse_nav2`] reads
    /// back to the same polygon.
    pub fn to_nav2(polygon: Option<&Self>) -> String {
        let Some(p) = polygon else { return "[]".to_string() };
        let pairs: Vec<String> = p.vertices.iter().map(|v| format!("[{}, {}]", v.x, v.y)).collect();
        format!("[{}]", pairs.join(", "))
    }

    /// The vertices, in the order given.
    pub fn vertices(&self) -> &[Point2] {
        &self.vertices
    }

    /// The edges `(a, b)`, in the order of the vertices.
    pub fn edges(&self) -> impl Iterator<Item = (Point2, Point2)> + '_ {
        let n = self.vertices.len();
        (0..n).map(move |i| (self.vertices[i], self.vertices[(i + 1) % n]))
    }

    /// Every coordinate times `factor` (> 0): metres to cells with `1 / resolution`.
    pub fn scaled(&self, factor: f64) -> Self {
        Self::with_cover(self.vertices.iter().map(|v| Point2::new(v.x * factor, v.y * factor)).collect())
    }

    /// Nav2's `footprint_padding` (`padFootprint`): every vertex moved `padding` away from the
    /// reference point along x and along y (by the sign of each coordinate; a coordinate of 0 is
    /// kept). That is not an offset of the outline: it fails with
    /// [`PolygonError::PaddingExposes`] where the padded polygon would not hold the vehicle (a
    /// notch it widens, a reference point outside), and like [`Polygon::new`] where the padded
    /// vertices no longer form a simple polygon.
    pub fn padded(&self, padding: f64) -> Result<Self, PolygonError> {
        if padding == 0.0 {
            return Ok(self.clone());
        }
        let sign = |v: f64| {
            if v > 0.0 {
                1.0
            } else if v < 0.0 {
                -1.0
            } else {
                0.0
            }
        };
        let padded = Self::new(
            self.vertices.iter().map(|v| Point2::new(v.x + sign(v.x) * padding, v.y + sign(v.y) * padding)).collect(),
        )?;
        // The original lies within the padded polygon when all its vertices do and no edge of one
        // crosses an edge of the other.
        let crosses = |(a, b): (Point2, Point2), (c, d): (Point2, Point2)| {
            cross(a, b, c) * cross(a, b, d) < 0.0 && cross(c, d, a) * cross(c, d, b) < 0.0
        };
        let crossing = self.edges().any(|e| padded.edges().any(|f| crosses(e, f)));
        if crossing || !self.vertices.iter().all(|&v| padded.contains(v)) {
            return Err(PolygonError::PaddingExposes);
        }
        Ok(padded)
    }

    /// Radius of the smallest disk about the reference point holding the polygon in every heading:
    /// the farthest vertex.
    pub fn circumradius(&self) -> f64 {
        self.vertices.iter().map(|v| v.x.hypot(v.y)).fold(0.0, f64::max)
    }

    /// A disk holding the polygon: centred on the middle of its bounding box (vehicle frame), and
    /// its radius to the farthest vertex. Tighter than [`Polygon::circumradius`] for a vehicle
    /// whose reference point is far from its middle (a rear axle).
    pub fn bounding_disk(&self) -> ((f64, f64), f64) {
        let (mut lo, mut hi) = ((f64::INFINITY, f64::INFINITY), (f64::NEG_INFINITY, f64::NEG_INFINITY));
        for v in &self.vertices {
            lo = (lo.0.min(v.x), lo.1.min(v.y));
            hi = (hi.0.max(v.x), hi.1.max(v.y));
        }
        let c = ((lo.0 + hi.0) / 2.0, (lo.1 + hi.1) / 2.0);
        let r = self.vertices.iter().map(|v| (v.x - c.0).hypot(v.y - c.1)).fold(0.0, f64::max);
        (c, r)
    }

    /// A few disks (vehicle frame, at most [`MAX_COVER_DISKS`]) whose union holds the polygon:
    /// its bounding box cut across its longer side into slabs about as long as they are wide, each
    /// slab's part of the polygon held by a disk about the middle of that part's bounding box.
    /// Where a long vehicle runs beside a wall, these disks stand clear of it long before the one
    /// [`Polygon::bounding_disk`] does, so a sweep proves such samples free from the obstacle
    /// distance alone.
    pub fn disk_cover(&self) -> &DiskCover {
        &self.cover
    }

    /// The polygon of `vertices` (already checked) with its disk cover.
    fn with_cover(vertices: Vec<Point2>) -> Self {
        let mut polygon = Self { vertices, cover: DiskCover::one(((0.0, 0.0), 0.0)) };
        polygon.cover = polygon.make_disk_cover();
        polygon
    }

    fn make_disk_cover(&self) -> DiskCover {
        let (mut lo, mut hi) = ((f64::INFINITY, f64::INFINITY), (f64::NEG_INFINITY, f64::NEG_INFINITY));
        for v in &self.vertices {
            lo = (lo.0.min(v.x), lo.1.min(v.y));
            hi = (hi.0.max(v.x), hi.1.max(v.y));
        }
        // Work along the longer side as `u`, across it as `v`.
        let along_x = hi.0 - lo.0 >= hi.1 - lo.1;
        let uv = |p: Point2| if along_x { (p.x, p.y) } else { (p.y, p.x) };
        let (u0, u1) = if along_x { (lo.0, hi.0) } else { (lo.1, hi.1) };
        let (long, short) = ((hi.0 - lo.0).max(hi.1 - lo.1), (hi.0 - lo.0).min(hi.1 - lo.1));
        // Slabs half again as many as the sides' ratio: each disk about as wide as the vehicle.
        let slabs = ((1.5 * long / short).ceil() as usize).clamp(1, MAX_COVER_DISKS);
        let mut cover = DiskCover { disks: [((0.0, 0.0), 0.0); MAX_COVER_DISKS], len: 0 };
        for k in 0..slabs {
            let a = u0 + (u1 - u0) * k as f64 / slabs as f64;
            let b = if k + 1 == slabs { u1 } else { u0 + (u1 - u0) * (k + 1) as f64 / slabs as f64 };
            // The slab's part of the polygon lies in the convex hull of the vertices inside the
            // slab and the points where edges cross its two sides, so a disk holding those
            // points holds it.
            let mut points: Vec<(f64, f64)> = Vec::with_capacity(2 * self.vertices.len());
            for (p, q) in self.edges() {
                let ((pu, pv), (qu, qv)) = (uv(p), uv(q));
                if (a..=b).contains(&pu) {
                    points.push((pu, pv));
                }
                for side in [a, b] {
                    if (pu - side) * (qu - side) < 0.0 {
                        let t = (side - pu) / (qu - pu);
                        points.push((side, pv + t * (qv - pv)));
                    }
                }
            }
            if points.is_empty() {
                // Not for a polygon spanning its own bounding box, but never a disk holding nothing.
                return DiskCover::one(self.bounding_disk());
            }
            let (mut plo, mut phi) = ((f64::INFINITY, f64::INFINITY), (f64::NEG_INFINITY, f64::NEG_INFINITY));
            for &(u, v) in &points {
                plo = (plo.0.min(u), plo.1.min(v));
                phi = (phi.0.max(u), phi.1.max(v));
            }
            let c = ((plo.0 + phi.0) / 2.0, (plo.1 + phi.1) / 2.0);
            let r = points.iter().map(|&(u, v)| (u - c.0).hypot(v - c.1)).fold(0.0, f64::max);
            let centre = if along_x { c } else { (c.1, c.0) };
            cover.disks[cover.len] = (centre, r);
            cover.len += 1;
        }
        cover
    }

    /// Radius of the largest disk about the reference point inside the polygon in every heading:
    /// the distance to the nearest edge when the reference point is inside, else 0.
    pub fn inradius(&self) -> f64 {
        let origin = Point2::new(0.0, 0.0);
        if self.contains(origin) {
            self.distance_to_boundary(origin)
        } else {
            0.0
        }
    }

    /// Whether `p` lies inside the polygon or on its outline.
    pub fn contains(&self, p: Point2) -> bool {
        if self.distance_to_boundary(p) == 0.0 {
            return true;
        }
        // Even-odd rule: a ray to +x crosses the outline an odd number of times from inside.
        let mut inside = false;
        for (a, b) in self.edges() {
            if (a.y > p.y) != (b.y > p.y) {
                let x = a.x + (p.y - a.y) / (b.y - a.y) * (b.x - a.x);
                if x > p.x {
                    inside = !inside;
                }
            }
        }
        inside
    }

    /// Distance from `p` to the nearest point of the outline.
    pub fn distance_to_boundary(&self, p: Point2) -> f64 {
        self.edges().map(|(a, b)| point_segment_distance(p, a, b)).fold(f64::INFINITY, f64::min)
    }

    /// Area (positive).
    pub fn area(&self) -> f64 {
        signed_area(&self.vertices).abs()
    }
}

/// The shoelace formula's signed area (positive counter-clockwise).
fn signed_area(vs: &[Point2]) -> f64 {
    let n = vs.len();
    (0..n).map(|i| vs[i].x * vs[(i + 1) % n].y - vs[(i + 1) % n].x * vs[i].y).sum::<f64>() / 2.0
}

fn cross(o: Point2, a: Point2, b: Point2) -> f64 {
    (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x)
}

/// Distance from `p` to the segment `ab`.
pub fn point_segment_distance(p: Point2, a: Point2, b: Point2) -> f64 {
    let (dx, dy) = (b.x - a.x, b.y - a.y);
    let len2 = dx * dx + dy * dy;
    let t = if len2 > 0.0 { (((p.x - a.x) * dx + (p.y - a.y) * dy) / len2).clamp(0.0, 1.0) } else { 0.0 };
    (p.x - (a.x + t * dx)).hypot(p.y - (a.y + t * dy))
}

/// Whether the closed segments `ab` and `cd` share a point.
fn segments_meet(a: Point2, b: Point2, c: Point2, d: Point2) -> bool {
    let (d1, d2) = (cross(c, d, a), cross(c, d, b));
    let (d3, d4) = (cross(a, b, c), cross(a, b, d));
    if ((d1 > 0.0 && d2 < 0.0) || (d1 < 0.0 && d2 > 0.0)) && ((d3 > 0.0 && d4 < 0.0) || (d3 < 0.0 && d4 > 0.0)) {
        return true;
    }
    let on = |p: Point2, q: Point2, r: Point2, side: f64| {
        side == 0.0 && r.x >= p.x.min(q.x) && r.x <= p.x.max(q.x) && r.y >= p.y.min(q.y) && r.y <= p.y.max(q.y)
    };
    on(c, d, a, d1) || on(c, d, b, d2) || on(a, b, c, d3) || on(a, b, d, d4)
}

/// Whether the edges `shared → p` and `shared → q` (neighbours) overlap beyond their shared
/// vertex: collinear and pointing the same way.
fn collinear_overlap(shared: Point2, p: Point2, q: Point2) -> bool {
    let (u, v) = ((p.x - shared.x, p.y - shared.y), (q.x - shared.x, q.y - shared.y));
    cross(shared, p, q) == 0.0 && u.0 * v.0 + u.1 * v.1 > 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pts(v: &[(f64, f64)]) -> Vec<Point2> {
        v.iter().map(|&(x, y)| Point2::new(x, y)).collect()
    }

    #[test]
    fn nav2_strings_round_trip_and_bad_ones_say_why() {
        let p = Polygon::parse_nav2("[[0.9, 0.3], [0.9, -0.3], [-0.2, -0.3], [-0.2, 0.3]]").unwrap().unwrap();
        assert_eq!(p.vertices().len(), 4);
        assert!((p.area() - 0.66).abs() < 1e-12);
        let back = Polygon::parse_nav2(&Polygon::to_nav2(Some(&p))).unwrap().unwrap();
        assert_eq!(back, p);
        assert_eq!(Polygon::parse_nav2("[]").unwrap(), None);
        assert_eq!(Polygon::parse_nav2("  ").unwrap(), None);
        assert_eq!(Polygon::to_nav2(None), "[]");
        assert!(Polygon::parse_nav2("[[.5,1e-1],[-1.,0],[0,-1]]").unwrap().is_some());
        for bad in ["[[0, 0], [1, 0]]", "[[0,0],[1,0],[1]]", "[0,0,1,1]", "[[0,0],[1,0],[x,1]]", "[[0,0],[1,0],[2,0]]"]
        {
            assert!(Polygon::parse_nav2(bad).is_err(), "{bad}");
        }
        // A bow tie crosses itself.
        let e = Polygon::parse_nav2("[[0,0],[1,1],[1,0],[0,1]]").unwrap_err();
        assert!(matches!(e, PolygonError::SelfIntersecting(..)), "{e}");
        assert!(matches!(Polygon::parse_nav2("[[0,0],[1,0],[nan,1]]"), Err(PolygonError::NotFinite(2))));
    }

    #[test]
    fn radii_about_the_reference_point() {
        // 0.9 m x 0.5 m, base_link 0.2 m from the rear.
        let p = Polygon::new(pts(&[(0.7, 0.25), (-0.2, 0.25), (-0.2, -0.25), (0.7, -0.25)])).unwrap();
        assert!((p.inradius() - 0.2).abs() < 1e-12);
        assert!((p.circumradius() - 0.7f64.hypot(0.25)).abs() < 1e-12);
        // Reference point outside: no disk fits about it.
        let q = Polygon::new(pts(&[(1.0, 1.0), (2.0, 1.0), (2.0, 2.0)])).unwrap();
        assert_eq!(q.inradius(), 0.0);
        // Clockwise input keeps its order, and its area.
        let cw = Polygon::new(pts(&[(1.0, 1.0), (1.0, -1.0), (-1.0, -1.0), (-1.0, 1.0)])).unwrap();
        assert_eq!(cw.vertices()[1], Point2::new(1.0, -1.0));
        assert_eq!(cw.area(), 4.0);
    }

    #[test]
    fn padding_that_would_expose_the_vehicle_is_refused() {
        // A square with a notch in its top: Nav2's rule widens the notch over the vehicle.
        let notched = Polygon::new(pts(&[
            (1.0, 1.0),
            (0.2, 1.0),
            (0.2, 0.5),
            (-0.2, 0.5),
            (-0.2, 1.0),
            (-1.0, 1.0),
            (-1.0, -1.0),
            (1.0, -1.0),
        ]))
        .unwrap();
        assert_eq!(notched.padded(0.1), Err(PolygonError::PaddingExposes));
        // Reference point outside: the near edge moves towards the vehicle.
        let outside = Polygon::new(pts(&[(0.05, -0.2), (0.9, -0.2), (0.9, 0.2), (0.05, 0.2)])).unwrap();
        assert_eq!(outside.padded(0.1), Err(PolygonError::PaddingExposes));
        // A rectangle about its reference point pads fine.
        let rect = Polygon::new(pts(&[(0.7, 0.25), (-0.2, 0.25), (-0.2, -0.25), (0.7, -0.25)])).unwrap();
        assert!(rect.padded(0.1).is_ok());
    }

    #[test]
    fn padding_follows_nav2() {
        let p = Polygon::new(pts(&[(0.7, 0.25), (-0.2, 0.25), (-0.2, -0.25), (0.7, -0.25)])).unwrap();
        let padded = p.padded(0.05).unwrap();
        let mut xs: Vec<(f64, f64)> = padded.vertices().iter().map(|v| (v.x, v.y)).collect();
        xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let want = [(-0.25, -0.3), (-0.25, 0.3), (0.75, -0.3), (0.75, 0.3)];
        for (got, want) in xs.iter().zip(want) {
            assert!((got.0 - want.0).abs() < 1e-12 && (got.1 - want.1).abs() < 1e-12, "{got:?} {want:?}");
        }
    }

    #[test]
    fn containment_matches_a_brute_force_of_an_l_shape() {
        let l = Polygon::new(pts(&[(0.0, 0.0), (2.0, 0.0), (2.0, 1.0), (1.0, 1.0), (1.0, 2.0), (0.0, 2.0)])).unwrap();
        assert!((l.area() - 3.0).abs() < 1e-12);
        for i in 0..40 {
            for j in 0..40 {
                let p = Point2::new(-0.5 + i as f64 * 0.0731, -0.5 + j as f64 * 0.0731);
                let inside = (0.0..=2.0).contains(&p.x) && (0.0..=2.0).contains(&p.y) && !(p.x > 1.0 && p.y > 1.0);
                assert_eq!(l.contains(p), inside, "{p:?}");
            }
        }
    }

    #[test]
    fn the_disk_cover_holds_every_point_of_the_polygon() {
        let shapes = [
            // Nav2's rectangle on its rear axle, the same turned across, a square, an L, a star
            // (not convex), a thin bar.
            pts(&[(0.7, 0.25), (0.7, -0.25), (-0.2, -0.25), (-0.2, 0.25)]),
            pts(&[(0.25, 0.7), (-0.25, 0.7), (-0.25, -0.2), (0.25, -0.2)]),
            pts(&[(0.3, 0.3), (-0.3, 0.3), (-0.3, -0.3), (0.3, -0.3)]),
            pts(&[(-0.3, -0.4), (1.2, -0.4), (1.2, 0.0), (0.4, 0.0), (0.4, 0.4), (-0.3, 0.4)]),
            (0..10)
                .map(|k| {
                    let (a, r) = (std::f64::consts::TAU * k as f64 / 10.0, if k % 2 == 0 { 1.0 } else { 0.35 });
                    Point2::new(0.4 + 1.6 * r * a.cos(), r * a.sin())
                })
                .collect(),
            pts(&[(-0.1, -0.02), (3.0, -0.02), (3.0, 0.02), (-0.1, 0.02)]),
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        for vertices in shapes {
            let polygon = Polygon::new(vertices).unwrap();
            let cover = polygon.disk_cover();
            let disks = cover.disks();
            assert!((1..=MAX_COVER_DISKS).contains(&disks.len()));
            let covered = |p: Point2| disks.iter().any(|&((x, y), r)| (p.x - x).hypot(p.y - y) <= r + 1e-9);
            // Every vertex, points along every edge, and random points inside.
            for (a, b) in polygon.edges() {
                for k in 0..=50 {
                    let t = k as f64 / 50.0;
                    let p = Point2::new(a.x + t * (b.x - a.x), a.y + t * (b.y - a.y));
                    assert!(covered(p), "{p:?} of {polygon:?} outside {disks:?}");
                }
            }
            let (bd, br) = polygon.bounding_disk();
            let mut inside = 0;
            while inside < 2000 {
                let p = Point2::new(bd.0 + br * (2.0 * next() - 1.0), bd.1 + br * (2.0 * next() - 1.0));
                if polygon.contains(p) {
                    inside += 1;
                    assert!(covered(p), "{p:?} of {polygon:?} outside {disks:?}");
                }
            }
        }
        let rectangle = Polygon::new(pts(&[(0.7, 0.25), (0.7, -0.25), (-0.2, -0.25), (-0.2, 0.25)])).unwrap();
        let cover = rectangle.disk_cover();
        assert_eq!(cover.disks().len(), 3);
        // Slabs of 0.3 m by 0.5 m: half-diagonals of 0.29 m against the bounding disk's 0.51 m
        // (a round polygon's cover need not be tighter than its one disk; the sweeps then skip it).
        assert!(cover.disks().iter().all(|&(_, r)| (r - 0.15f64.hypot(0.25)).abs() < 1e-9), "{cover:?}");
        assert!((rectangle.bounding_disk().1 - 0.45f64.hypot(0.25)).abs() < 1e-9);
    }
}
