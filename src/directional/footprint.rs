//! The vehicle footprint (a disk of radius `r` cells) swept along curves, and the map it is
//! checked against.
//!
//! Sweeping is done by sampling each segment from its own start at a spacing of at most
//! [`SAMPLE_SPACING`] cells and inflating the disk by half that spacing: every point of the curve
//! lies within `spacing / 2` of a sample, so the union of the inflated disks contains the true
//! swept footprint and a curve that passes is truly collision-free (the check is conservative by
//! at most `SAMPLE_SPACING / 2` cells). The hit-check tables, the on-the-fly checks of the search
//! and the final verification all use this one rule, so what the search accepts, verification
//! accepts too (the search adds [`SEARCH_MARGIN`] so rounding can never tip a cell the other way).

use crate::clearance::distance::DistanceField;
use crate::geometry::{Point2, Pose2};
use crate::grid::Grid;
use crate::trajectory::Segment;

/// Largest distance (cells) between consecutive footprint samples along a segment.
pub const SAMPLE_SPACING: f64 = 0.25;

/// Sample stride of the first, coarse look of a sweep (see [`CollisionMap::sweep_free`]).
const COARSE_STRIDE: usize = 8;

/// Extra radius (cells) the search uses over verification, so floating-point differences between
/// a tabulated curve and the same curve rebuilt elsewhere never make verification stricter.
pub const SEARCH_MARGIN: f64 = 1e-6;

/// The disk radius actually tested around each sample for a footprint of `radius` cells.
pub fn sampled_radius(radius: f64) -> f64 {
    radius + SAMPLE_SPACING / 2.0
}

/// A horizontal run of cells `x0..=x1` in row `y`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Span {
    /// Row.
    pub y: i32,
    /// First column.
    pub x0: i32,
    /// Last column (inclusive).
    pub x1: i32,
}

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

/// Calls `f(y, x0, x1)` for every row of cells touched (closed-set intersection) by the square of
/// half side `half` centred at `(cx, cy)` with heading `yaw`; stops early when `f` returns false.
pub fn square_runs(cx: f64, cy: f64, yaw: f64, half: f64, mut f: impl FnMut(i64, i64, i64) -> bool) {
    let (c, s) = (yaw.cos(), yaw.sin());
    let corners = [(half, half), (-half, half), (-half, -half), (half, -half)]
        .map(|(u, v)| (cx + c * u - s * v, cy + s * u + c * v));
    let y_min = corners.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let y_max = corners.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
    for y in y_min.floor() as i64..=y_max.floor() as i64 {
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
        if !f(y, (x_lo - 1.0).ceil() as i64, x_hi.floor() as i64) {
            return;
        }
    }
}

/// Blocked cells with per-row prefix counts, so a whole run of cells is tested in O(1).
/// Built once per map (O(cells)); everything outside the grid is blocked.
#[derive(Debug, Clone, PartialEq)]
pub struct CollisionMap {
    width: usize,
    height: usize,
    /// `prefix[y * (width + 1) + x]` = blocked cells among columns `0..x` of row `y`.
    prefix: Vec<u32>,
    /// Cells in which every point's disk of radius `safe_radius` is free (a shortcut that spares
    /// the exact test for most samples), when prepared for a footprint.
    safe: Vec<bool>,
    safe_radius: f64,
    /// Squared distance from each cell centre to the nearest blocked (or outside) cell centre,
    /// capped. A sweep skips every sample that lies closer along the curve than the obstacle
    /// distance's excess over the disk radius (arc length bounds the straight distance), so only
    /// samples near obstacles pay for the exact disk test.
    field: DistanceField,
}

/// Largest obstacle distance (cells) the clearance field resolves: a sweep skips at most
/// `CLEARANCE_CAP - radius` cells per sample, and a map update recomputes the field within
/// `CLEARANCE_CAP` cells of the change.
const CLEARANCE_CAP: u16 = 32;

impl CollisionMap {
    /// Builds the prefix counts of `grid`.
    pub fn new(grid: &Grid) -> Self {
        let (w, h) = (grid.width(), grid.height());
        let mut prefix = vec![0u32; h * (w + 1)];
        let cells = grid.blocked_cells();
        for y in 0..h {
            let row = &cells[y * w..(y + 1) * w];
            let out = &mut prefix[y * (w + 1)..(y + 1) * (w + 1)];
            let mut n = 0u32;
            for (x, &b) in row.iter().enumerate() {
                n += b as u32;
                out[x + 1] = n;
            }
        }
        // Centre-to-centre obstacle distances (outside counted blocked; capped values are lower
        // bounds).
        let field = DistanceField::new(w, h, cells, CLEARANCE_CAP);
        Self { width: w, height: h, prefix, safe: Vec::new(), safe_radius: -1.0, field }
    }

    /// A lower bound on the distance from `p` to the nearest blocked cell or the outside
    /// (negative when unknown or small).
    ///
    /// From the centre distance `d` of `p`'s cell: the nearest blocked square's centre lies at
    /// least `d - |p - centre|` from `p`, and its points within half a diagonal of that centre.
    #[inline]
    fn clearance_at(&self, p: Point2) -> f64 {
        if p.x >= 0.0 && p.y >= 0.0 {
            let (x, y) = (p.x as usize, p.y as usize);
            if x < self.width && y < self.height {
                let (dx, dy) = (p.x - x as f64 - 0.5, p.y - y as f64 - 0.5);
                let off = (dx * dx + dy * dy).sqrt();
                let centre = f64::from(self.field.values()[y * self.width + x]).sqrt();
                // The 1e-6 absorbs rounding.
                return centre - off - std::f64::consts::FRAC_1_SQRT_2 - 1e-6;
            }
        }
        -1.0
    }

    /// Like [`CollisionMap::new`], and also marks the cells in which a footprint of `radius`
    /// cells fits anywhere (O(cells x radius) once), which makes every sweep much cheaper.
    /// Results are identical to an unprepared map.
    pub fn with_footprint(grid: &Grid, radius: f64) -> Self {
        let mut m = Self::new(grid);
        let rho = sampled_radius(radius) + SEARCH_MARGIN;
        // Any point of a cell lies within half a diagonal of its centre.
        let outer = rho + std::f64::consts::FRAC_1_SQRT_2;
        let w = m.width;
        m.safe = (0..w * m.height)
            .map(|k| m.disk_free(Point2::new((k % w) as f64 + 0.5, (k / w) as f64 + 0.5), outer))
            .collect();
        m.safe_radius = rho;
        m
    }

    /// Columns.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Rows.
    pub fn height(&self) -> usize {
        self.height
    }

    /// True when every cell `x0..=x1` of row `y` is inside the grid and free.
    #[inline]
    pub fn run_free(&self, y: i64, x0: i64, x1: i64) -> bool {
        if y < 0 || y >= self.height as i64 || x0 < 0 || x1 >= self.width as i64 {
            return false;
        }
        if x1 < x0 {
            return true;
        }
        let base = y as usize * (self.width + 1);
        self.prefix[base + x1 as usize + 1] == self.prefix[base + x0 as usize]
    }

    /// True when every span, shifted by `(dx, dy)`, is free.
    #[inline]
    pub fn spans_free(&self, spans: &[Span], dx: i64, dy: i64) -> bool {
        spans.iter().all(|s| self.run_free(s.y as i64 + dy, s.x0 as i64 + dx, s.x1 as i64 + dx))
    }

    /// True when the disk of radius `rho` around `p` touches no blocked cell.
    pub fn disk_free(&self, p: Point2, rho: f64) -> bool {
        if rho <= self.safe_radius && p.x >= 0.0 && p.y >= 0.0 {
            let (x, y) = (p.x as usize, p.y as usize);
            if x < self.width && y < self.height && self.safe[y * self.width + x] {
                return true;
            }
        }
        let mut ok = true;
        disk_runs(p, rho, |y, x0, x1| {
            ok = ok && self.run_free(y, x0, x1);
            ok
        });
        ok
    }

    /// The cells whose centre the vehicle (footprint `radius` cells, sampled radius plus
    /// `margin`) may not occupy: the traversability mask an any-angle planner should run on so
    /// its path stays where the footprint fits.
    pub fn centre_mask(&self, radius: f64, margin: f64) -> Grid {
        let rho = sampled_radius(radius) + margin;
        let (w, h) = (self.width, self.height);
        let blocked: Vec<bool> =
            (0..w * h).map(|k| !self.disk_free(Point2::new((k % w) as f64 + 0.5, (k / w) as f64 + 0.5), rho)).collect();
        // Same size as the map this was built from, which was a valid grid.
        Grid::from_blocked(w, h, blocked).expect("same size as a valid grid")
    }

    /// Brings the map up to date after the cells of `rect` changed in `grid` (same size as the
    /// grid this map was built from): the prefix counts of the rows of `rect`, and the "fits
    /// anywhere" shortcut of every cell whose test disk can reach `rect`. The result equals a
    /// fresh build on `grid`. Fails, changing nothing, when the sizes differ or `rect` leaves the
    /// grid.
    pub fn update_rect(&mut self, grid: &Grid, rect: crate::grid::CellRect) -> Result<(), String> {
        let (w, h) = (self.width, self.height);
        if grid.width() != w || grid.height() != h {
            return Err(format!("grid is {}x{}, the collision map {w}x{h}", grid.width(), grid.height()));
        }
        if rect.x + rect.width > w || rect.y + rect.height > h {
            return Err(format!("rectangle {rect:?} leaves the {w}x{h} grid"));
        }
        if rect.is_empty() {
            return Ok(());
        }
        let cells = grid.blocked_cells();
        for y in rect.y..rect.y + rect.height {
            let row = &cells[y * w..(y + 1) * w];
            let out = &mut self.prefix[y * (w + 1)..(y + 1) * (w + 1)];
            let mut n = 0u32;
            for (x, &b) in row.iter().enumerate() {
                n += b as u32;
                out[x + 1] = n;
            }
        }
        self.field.update(cells, rect);
        if self.safe_radius >= 0.0 {
            // A cell's shortcut tests the disk of radius `outer` around its centre: it can reach a
            // changed cell only when that cell is within `outer + 1` cells.
            let outer = self.safe_radius + std::f64::consts::FRAC_1_SQRT_2;
            let grow = outer.ceil() as usize + 1;
            let (x0, y0) = (rect.x.saturating_sub(grow), rect.y.saturating_sub(grow));
            let (x1, y1) = ((rect.x + rect.width + grow).min(w), (rect.y + rect.height + grow).min(h));
            let rho = self.safe_radius;
            for y in y0..y1 {
                for x in x0..x1 {
                    // Test without the shortcut being recomputed.
                    self.safe_radius = -1.0;
                    let fits = self.disk_free(Point2::new(x as f64 + 0.5, y as f64 + 0.5), outer);
                    self.safe_radius = rho;
                    self.safe[y * w + x] = fits;
                }
            }
        }
        Ok(())
    }

    /// True when the square of half side `half` centred at `p` with heading `yaw` touches no
    /// blocked cell.
    pub fn square_free(&self, p: Point2, yaw: f64, half: f64) -> bool {
        let mut ok = true;
        square_runs(p.x, p.y, yaw, half, |y, x0, x1| {
            ok = ok && self.run_free(y, x0, x1);
            ok
        });
        ok
    }

    /// True when the footprint `shape` at `pose` passes the test a sweep applies to one sample
    /// (sampling allowance and [`SEARCH_MARGIN`] included): the start and goal check of the
    /// searches.
    pub fn stands_free(&self, pose: crate::geometry::Pose2, shape: Shape) -> bool {
        match shape {
            Shape::Disk(r) => self.disk_free(pose.point(), sampled_radius(r) + SEARCH_MARGIN),
            Shape::Square(_) => self.square_free(pose.point(), pose.yaw, shape.sampled_half_side(0.0) + SEARCH_MARGIN),
        }
    }

    /// True when the footprint `shape` standing at `pose` (at rest: no sampling allowance),
    /// grown by `margin`, touches no blocked cell.
    pub fn pose_free(&self, pose: crate::geometry::Pose2, shape: impl Into<Shape>, margin: f64) -> bool {
        match shape.into() {
            Shape::Disk(r) => self.disk_free(pose.point(), r + margin),
            Shape::Square(a) => self.square_free(pose.point(), pose.yaw, a / 2.0 + margin),
        }
    }

    /// True when the footprint `shape` (cells; a plain radius means a disk) swept along
    /// `segments` touches no blocked cell, with the sampling rule of this module plus `margin`.
    ///
    /// Same answer as testing every sample of [`sample_segment`] with [`CollisionMap::disk_free`]
    /// (or [`CollisionMap::square_free`]); samples that the clearance bound proves free are skipped
    /// without being computed.
    pub fn sweep_free(&self, segments: &[Segment], shape: impl Into<Shape>, margin: f64) -> bool {
        let shape = shape.into();
        // A colliding curve usually collides somewhere in its middle: a first look at every
        // `COARSE_STRIDE`-th sample finds most collisions after a fraction of the samples a
        // sequential pass would test. It only ever answers "blocked" for a sample the full pass
        // tests the same way, so the answer is the full pass's; the samples it proves free (the
        // first segments' only) the full pass does not test again.
        let mut proofs = [Proven::default(); PROVEN_SEGMENTS];
        for (k, seg) in segments.iter().enumerate() {
            let mut none = Proven::default();
            let proof = proofs.get_mut(k).unwrap_or(&mut none);
            if !self.segment_coarse_free(seg, shape, margin, proof) {
                return false;
            }
        }
        let none = Proven::default();
        segments
            .iter()
            .enumerate()
            .all(|(k, seg)| self.segment_free(seg, shape, margin, proofs.get(k).unwrap_or(&none)))
    }

    /// False when one of every [`COARSE_STRIDE`]-th sample of `seg` (the samples of
    /// [`CollisionMap::segment_free`]) fails its footprint test; true says nothing more, but
    /// `proof` then holds the samples this look proved free.
    ///
    /// Coarse samples that the clearance bound of an earlier coarse sample already proves free
    /// are skipped, as the sequential pass skips them: on a free curve through open space the
    /// first look then costs a few samples instead of one in every `COARSE_STRIDE`.
    fn segment_coarse_free(&self, seg: &Segment, shape: Shape, margin: f64, proof: &mut Proven) -> bool {
        let half = shape.sampled_half_side(seg.curvature) + margin;
        let rho = shape.sampled_circumradius(seg.curvature) + margin;
        let n = sample_count(seg);
        let step = seg.length / n as f64;
        let at = SamplePoints::new(seg, n);
        let first = COARSE_STRIDE / 2;
        let mut i = first;
        while i < n {
            let p = at.point(i);
            let slack = self.clearance_at(p) - rho;
            if slack > 0.0 {
                // Samples within `slack` of p along the curve (on either side) are free, as in
                // `segment_free`: the next one to look at is the first coarse sample beyond them.
                let reach = if step > 0.0 { ceil_index(slack / step).max(1) } else { n + 1 };
                proof.add(i.saturating_sub(reach - 1), i + (reach - 1));
                let next = i + reach;
                i = first + (next.saturating_sub(first)).div_ceil(COARSE_STRIDE) * COARSE_STRIDE;
                continue;
            }
            if !self.sample_free(shape, p, at.yaw(i), rho, half) {
                return false;
            }
            proof.add(i, i);
            i += COARSE_STRIDE;
        }
        true
    }

    /// The footprint test of one sweep sample at `p` heading `yaw`: a disk of radius `rho`, or a
    /// square of half side `half` (both already grown by the sampling allowance and margin).
    #[inline(always)]
    fn sample_free(&self, shape: Shape, p: Point2, yaw: f64, rho: f64, half: f64) -> bool {
        match shape {
            Shape::Disk(_) => self.disk_free(p, rho),
            Shape::Square(_) => self.square_free(p, yaw, half),
        }
    }

    /// True when no sample of `seg` fails its footprint test, testing only samples outside
    /// `proven` (samples already proved free).
    fn segment_free(&self, seg: &Segment, shape: Shape, margin: f64, proven: &Proven) -> bool {
        let half = shape.sampled_half_side(seg.curvature) + margin;
        let rho = shape.sampled_circumradius(seg.curvature) + margin;
        let n = sample_count(seg);
        let step = seg.length / n as f64;
        let at = SamplePoints::new(seg, n);
        let mut runs = proven.runs().iter().peekable();
        let mut i = 0;
        while i <= n {
            while runs.next_if(|r| (r.1 as usize) < i).is_some() {}
            if let Some(&&(lo, hi)) = runs.peek() {
                if lo as usize <= i {
                    i = hi as usize + 1;
                    continue;
                }
            }
            let p = at.point(i);
            let slack = self.clearance_at(p) - rho;
            if slack > 0.0 {
                // Sample j lies within (j - i) * step of p along the curve, hence in straight
                // distance: its disk is free while (j - i) * step < slack.
                i += if step > 0.0 { ceil_index(slack / step).max(1) } else { n + 1 };
                continue;
            }
            if !self.sample_free(shape, p, at.yaw(i), rho, half) {
                return false;
            }
            i += 1;
        }
        true
    }
}

/// Segments of one sweep whose coarse proofs [`CollisionMap::sweep_free`] keeps (a Dubins curve
/// has three); later segments are swept without them.
const PROVEN_SEGMENTS: usize = 3;

/// Runs of samples of one segment proved free, disjoint and increasing, up to a fixed number
/// (later proofs are dropped, which only costs their samples a second test).
#[derive(Debug, Clone, Copy, Default)]
struct Proven {
    runs: [(u32, u32); 24],
    len: usize,
}

impl Proven {
    /// Records that samples `lo..=hi` are free, for runs recorded in increasing order of their
    /// ends: a run that overlaps or touches the last one extends it (dropping whatever part of it
    /// lies before the last one's start, which keeps the runs disjoint and costs nothing but a
    /// second test of those samples).
    fn add(&mut self, lo: usize, hi: usize) {
        let (lo, hi) = (lo.min(u32::MAX as usize) as u32, hi.min(u32::MAX as usize) as u32);
        if let Some(last) = self.len.checked_sub(1).map(|k| &mut self.runs[k]) {
            if lo <= last.1.saturating_add(1) {
                last.1 = last.1.max(hi);
                return;
            }
        }
        if self.len < self.runs.len() {
            self.runs[self.len] = (lo, hi);
            self.len += 1;
        }
    }

    fn runs(&self) -> &[(u32, u32)] {
        &self.runs[..self.len]
    }
}

/// `x.ceil()` as an index, for finite `x >= 0` (a float-to-integer conversion instead of a
/// call to `ceil`, which the baseline x86-64 target does not inline).
#[inline]
fn ceil_index(x: f64) -> usize {
    let i = x as usize;
    if (i as f64) < x {
        i + 1
    } else {
        i
    }
}

/// The sample points of one segment, `0..=n`, computed as [`Segment::pose_at`] computes them
/// (same arithmetic, so the same points) but with the trigonometry of the segment's start done
/// once instead of once per sample, and the heading only when asked for: a sweep evaluates many
/// samples of one segment, and a disk needs no heading.
struct SamplePoints {
    seg: Segment,
    n: f64,
    /// Sine and cosine of the start heading.
    sin0: f64,
    cos0: f64,
}

impl SamplePoints {
    fn new(seg: &Segment, n: usize) -> Self {
        let (sin0, cos0) = seg.start.yaw.sin_cos();
        Self { seg: *seg, n: n as f64, sin0, cos0 }
    }

    /// Signed arc length of sample `i` (negative when reversing), as `pose_at` clamps and signs it.
    #[inline]
    fn t(&self, i: usize) -> f64 {
        let s = (self.seg.length * i as f64 / self.n).clamp(0.0, self.seg.length);
        if self.seg.reverse {
            -s
        } else {
            s
        }
    }

    #[inline]
    fn point(&self, i: usize) -> Point2 {
        let t = self.t(i);
        let Pose2 { x, y, yaw } = self.seg.start;
        let k = self.seg.curvature;
        if k == 0.0 {
            Point2::new(x + t * self.cos0, y + t * self.sin0)
        } else {
            let (s2, c2) = (yaw + k * t).sin_cos();
            Point2::new(x + (s2 - self.sin0) / k, y - (c2 - self.cos0) / k)
        }
    }

    #[inline]
    fn yaw(&self, i: usize) -> f64 {
        crate::geometry::normalize_angle(self.seg.start.yaw + self.seg.curvature * self.t(i))
    }
}

/// Calls `f` with the sample points of `seg` (both ends included, spacing at most
/// [`SAMPLE_SPACING`]); stops early when `f` returns false.
pub fn sample_segment(seg: &Segment, mut f: impl FnMut(Point2) -> bool) {
    let n = sample_count(seg);
    for i in 0..=n {
        if !f(seg.pose_at(seg.length * i as f64 / n as f64).point()) {
            return;
        }
    }
}

/// Number of sample intervals of `seg` (samples `0..=n`).
#[inline]
fn sample_count(seg: &Segment) -> usize {
    ((seg.length / SAMPLE_SPACING).ceil() as usize).max(1)
}

/// Calls `f(y, x0, x1)` for every row of cells touched (closed-set intersection) by the disk of
/// radius `rho` around `p`; stops early when `f` returns false.
pub fn disk_runs(p: Point2, rho: f64, mut f: impl FnMut(i64, i64, i64) -> bool) {
    let y_lo = (p.y - rho).floor() as i64;
    let y_hi = (p.y + rho).floor() as i64;
    for y in y_lo..=y_hi {
        let nearest = p.y.clamp(y as f64, y as f64 + 1.0);
        let dy = (p.y - nearest).abs();
        if dy > rho {
            continue;
        }
        let w = (rho * rho - dy * dy).max(0.0).sqrt();
        let x0 = (p.x - w - 1.0).ceil() as i64;
        let x1 = (p.x + w).floor() as i64;
        if !f(y, x0, x1) {
            return;
        }
    }
}

/// The cells swept by the footprint `shape` (a plain radius means a disk) along `segments` (with
/// `margin` extra), by the sampling rule of this module, as disjoint spans sorted by row then
/// column.
pub fn swept_spans(segments: &[Segment], shape: impl Into<Shape>, margin: f64) -> Vec<Span> {
    let shape = shape.into();
    let mut raw = Vec::new();
    let mut push = |y: i64, x0: i64, x1: i64| {
        raw.push(Span { y: y as i32, x0: x0 as i32, x1: x1 as i32 });
        true
    };
    for seg in segments {
        let n = sample_count(seg);
        for i in 0..=n {
            let pose = seg.pose_at(seg.length * i as f64 / n as f64);
            match shape {
                Shape::Disk(r) => disk_runs(pose.point(), sampled_radius(r) + margin, &mut push),
                Shape::Square(_) => {
                    let half = shape.sampled_half_side(seg.curvature) + margin;
                    square_runs(pose.x, pose.y, pose.yaw, half, &mut push)
                }
            }
        }
    }
    merge_spans(raw)
}

fn merge_spans(mut raw: Vec<Span>) -> Vec<Span> {
    raw.sort_unstable();
    let mut out: Vec<Span> = Vec::with_capacity(raw.len() / 4 + 1);
    for s in raw {
        match out.last_mut() {
            Some(last) if last.y == s.y && s.x0 <= last.x1 + 1 => last.x1 = last.x1.max(s.x1),
            _ => out.push(s),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Pose2;
    use crate::trajectory::Turn;

    /// Brute force: cells whose square lies within `rho` of some sample.
    fn brute(points: &[Point2], rho: f64) -> Vec<(i64, i64)> {
        let mut out = Vec::new();
        for y in -20..40 {
            for x in -20..40 {
                let hit = points.iter().any(|p| {
                    let nx = p.x.clamp(x as f64, x as f64 + 1.0);
                    let ny = p.y.clamp(y as f64, y as f64 + 1.0);
                    (p.x - nx).hypot(p.y - ny) <= rho
                });
                if hit {
                    out.push((x, y));
                }
            }
        }
        out
    }

    #[test]
    fn spans_match_brute_force() {
        let a = Segment::arc(Pose2::new(5.3, 4.1, 0.4), 7.0, 4.0, Turn::Left);
        let b = Segment::line(a.end(), 3.0);
        let segs = [a, b];
        let spans = swept_spans(&segs, 1.7, 0.0);
        let mut cells: Vec<(i64, i64)> = spans
            .iter()
            .flat_map(|s| (s.x0..=s.x1).map(move |x| (x as i64, s.y as i64)))
            .filter(|&(x, y)| (-20..40).contains(&x) && (-20..40).contains(&y))
            .collect();
        cells.sort_by_key(|&(x, y)| (y, x));
        let mut pts = Vec::new();
        for s in &segs {
            sample_segment(s, |p| {
                pts.push(p);
                true
            });
        }
        let mut expect = brute(&pts, sampled_radius(1.7));
        expect.sort_by_key(|&(x, y)| (y, x));
        assert_eq!(cells, expect);
    }

    #[test]
    fn collision_map_runs() {
        let g = Grid::from_rows(&["....", ".@..", "...."]).unwrap();
        let m = CollisionMap::new(&g);
        assert!(m.run_free(0, 0, 3));
        assert!(!m.run_free(1, 0, 3));
        assert!(m.run_free(1, 2, 3));
        assert!(!m.run_free(1, 2, 4));
        assert!(!m.run_free(-1, 0, 0));
        assert!(m.disk_free(Point2::new(3.5, 2.5), 0.4));
        assert!(!m.disk_free(Point2::new(2.5, 2.5), 1.0));
        // A line through the blocked cell is caught, one beside it is not (radius 0).
        let hit = Segment::line(Pose2::new(0.5, 1.5, 0.0), 3.0);
        assert!(!m.sweep_free(&[hit], 0.0, 0.0));
        let miss = Segment::line(Pose2::new(0.5, 2.5, 0.0), 3.0);
        assert!(m.sweep_free(&[miss], 0.0, 0.0));
    }

    /// The sample-by-sample rule the skipping sweep must reproduce.
    /// A reproducible stream of numbers uniform in `[0, 1)` (a linear congruential generator).
    fn uniform(mut state: u64) -> impl FnMut() -> f64 {
        move || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    fn reference_sweep(m: &CollisionMap, segs: &[Segment], radius: f64, margin: f64) -> bool {
        let rho = sampled_radius(radius) + margin;
        segs.iter().all(|seg| {
            let mut ok = true;
            sample_segment(seg, |p| {
                ok = ok && m.disk_free(p, rho);
                ok
            });
            ok
        })
    }

    #[test]
    fn skipping_sweep_answers_like_every_sample() {
        // Random obstacles, random arcs and lines, several footprints: both outcomes occur and
        // the answers always agree.
        let mut g = Grid::new_free(80, 60).unwrap();
        let mut rnd = uniform(12345);
        for _ in 0..60 {
            g.set_blocked((rnd() * 80.0) as usize, (rnd() * 60.0) as usize, true).unwrap();
        }
        let plain = CollisionMap::new(&g);
        let prepared = CollisionMap::with_footprint(&g, 1.5);
        let (mut free, mut hit) = (0, 0);
        for _ in 0..3000 {
            let start = Pose2::new(rnd() * 80.0, rnd() * 60.0, rnd() * 6.3);
            let len = rnd() * 30.0;
            let seg = match (rnd() * 3.0) as u32 {
                0 => Segment::line(start, len),
                1 => Segment::arc(start, len, 2.0 + rnd() * 8.0, Turn::Left),
                _ => Segment::arc(start, len, 2.0 + rnd() * 8.0, Turn::Right),
            };
            for radius in [0.0, 1.5, 3.0] {
                let expect = reference_sweep(&plain, &[seg], radius, SEARCH_MARGIN);
                assert_eq!(plain.sweep_free(&[seg], radius, SEARCH_MARGIN), expect, "{seg:?} {radius}");
                assert_eq!(prepared.sweep_free(&[seg], radius, SEARCH_MARGIN), expect, "{seg:?} {radius}");
                if expect {
                    free += 1;
                } else {
                    hit += 1;
                }
            }
        }
        assert!(free > 500 && hit > 500, "free {free} hit {hit}");
    }

    #[test]
    fn multi_segment_sweeps_answer_like_every_sample() {
        // Dubins curves (up to three segments, each with its own coarse proofs) and longer runs
        // of segments (beyond the segments whose proofs are kept), near and far from obstacles.
        let mut g = Grid::new_free(90, 70).unwrap();
        let mut rnd = uniform(777);
        for _ in 0..40 {
            let (x, y) = ((rnd() * 86.0) as usize, (rnd() * 66.0) as usize);
            for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                g.set_blocked(x + dx, y + dy, true).unwrap();
            }
        }
        let prepared = CollisionMap::with_footprint(&g, 2.0);
        let (mut free, mut hit) = (0, 0);
        for k in 0..2000 {
            let a = Pose2::new(5.0 + rnd() * 80.0, 5.0 + rnd() * 60.0, rnd() * 6.3);
            let b = Pose2::new(5.0 + rnd() * 80.0, 5.0 + rnd() * 60.0, rnd() * 6.3);
            let mut segs = crate::curves::dubins_shortest(a, b, 3.0 + rnd() * 6.0).unwrap().segments();
            if k % 3 == 0 {
                // A longer chain: the same curve continued by a second one.
                let end = segs.last().map_or(a, |s| s.end());
                let c = Pose2::new(5.0 + rnd() * 80.0, 5.0 + rnd() * 60.0, rnd() * 6.3);
                segs.extend(crate::curves::dubins_shortest(end, c, 4.0).unwrap().segments());
            }
            for radius in [0.5, 2.0] {
                let expect = reference_sweep(&prepared, &segs, radius, SEARCH_MARGIN);
                assert_eq!(prepared.sweep_free(&segs, radius, SEARCH_MARGIN), expect, "{segs:?} {radius}");
                if expect {
                    free += 1;
                } else {
                    hit += 1;
                }
            }
        }
        assert!(free > 300 && hit > 300, "free {free} hit {hit}");
    }

    #[test]
    fn prepared_map_answers_like_the_plain_one() {
        let mut g = Grid::new_free(30, 30).unwrap();
        for (x, y) in [(10, 10), (11, 10), (20, 5), (5, 25)] {
            g.set_blocked(x, y, true).unwrap();
        }
        let plain = CollisionMap::new(&g);
        let prepared = CollisionMap::with_footprint(&g, 2.0);
        for k in 0..3000 {
            let p = Point2::new((k % 59) as f64 * 0.51, (k / 59) as f64 * 0.53 + 0.1);
            for rho in [sampled_radius(2.0), sampled_radius(2.0) + SEARCH_MARGIN, 1.0, 3.0] {
                assert_eq!(plain.disk_free(p, rho), prepared.disk_free(p, rho), "{p:?} {rho}");
            }
        }
    }

    #[test]
    fn local_updates_equal_a_fresh_build() {
        let mut seed = 11u64;
        let mut rnd = |n: usize| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((seed >> 33) as usize) % n
        };
        let (w, h) = (40, 30);
        let cells: Vec<bool> = (0..w * h).map(|_| rnd(10) == 0).collect();
        let mut grid = Grid::from_blocked(w, h, cells).unwrap();
        let mut map = CollisionMap::with_footprint(&grid, 2.3);
        for _ in 0..40 {
            let rect = crate::grid::CellRect { x: rnd(w - 5), y: rnd(h - 5), width: 1 + rnd(5), height: 1 + rnd(5) };
            let value = rnd(2) == 0;
            for y in rect.y..rect.y + rect.height {
                for x in rect.x..rect.x + rect.width {
                    grid.set_blocked(x, y, value).unwrap();
                }
            }
            map.update_rect(&grid, rect).unwrap();
            assert_eq!(map, CollisionMap::with_footprint(&grid, 2.3));
        }
        let before = map.clone();
        let outside = crate::grid::CellRect { x: 38, y: 0, width: 5, height: 1 };
        assert!(map.update_rect(&grid, outside).is_err());
        assert!(map.update_rect(&Grid::new_free(3, 3).unwrap(), outside).is_err());
        assert_eq!(map, before);
    }

    /// Brute force: does the closed square of half side `half` at `(cx, cy, yaw)` intersect the
    /// closed cell `(x, y)`? Separating axis test on the two squares' axes.
    fn square_hits_cell(cx: f64, cy: f64, yaw: f64, half: f64, x: i64, y: i64) -> bool {
        let (c, s) = (yaw.cos(), yaw.sin());
        let corners: Vec<(f64, f64)> = [(half, half), (-half, half), (-half, -half), (half, -half)]
            .iter()
            .map(|&(u, v)| (cx + c * u - s * v, cy + s * u + c * v))
            .collect();
        let cell = [
            (x as f64, y as f64),
            (x as f64 + 1.0, y as f64),
            (x as f64 + 1.0, y as f64 + 1.0),
            (x as f64, y as f64 + 1.0),
        ];
        let axes = [(1.0, 0.0), (0.0, 1.0), (c, s), (-s, c)];
        axes.iter().all(|&(ax, ay)| {
            let proj = |pts: &[(f64, f64)]| {
                let v: Vec<f64> = pts.iter().map(|p| p.0 * ax + p.1 * ay).collect();
                (v.iter().cloned().fold(f64::INFINITY, f64::min), v.iter().cloned().fold(f64::NEG_INFINITY, f64::max))
            };
            let (a0, a1) = proj(&corners);
            let (b0, b1) = proj(&cell);
            a0 <= b1 + 1e-12 && b0 <= a1 + 1e-12
        })
    }

    #[test]
    fn square_runs_equal_brute_force_cells() {
        let mut rnd = uniform(3);
        for _ in 0..300 {
            let (cx, cy, yaw, half) = (10.0 + rnd() * 5.0, 10.0 + rnd() * 5.0, rnd() * 7.0 - 3.5, 0.3 + rnd() * 3.0);
            let mut got = Vec::new();
            square_runs(cx, cy, yaw, half, |y, x0, x1| {
                got.extend((x0..=x1).map(|x| (x, y)));
                true
            });
            got.sort_by_key(|&(x, y)| (y, x));
            let mut expect = Vec::new();
            for y in 0..30 {
                for x in 0..30 {
                    if square_hits_cell(cx, cy, yaw, half, x, y) {
                        expect.push((x, y));
                    }
                }
            }
            assert_eq!(got, expect, "{cx} {cy} {yaw} {half}");
        }
    }

    #[test]
    fn square_sweep_is_never_optimistic_against_brute_force_poses() {
        // Random obstacles and random arcs/lines: whenever the sampled sweep of a turning square
        // says free, the exact square at poses every 0.01 cells along the curve touches no
        // blocked cell; and both answers occur. The tables' spans agree with the sweep.
        let mut rnd = uniform(17);
        let mut g = Grid::new_free(60, 50).unwrap();
        for _ in 0..40 {
            g.set_blocked((rnd() * 60.0) as usize, (rnd() * 50.0) as usize, true).unwrap();
        }
        let m = CollisionMap::new(&g);
        let side = 2.5;
        let (mut free, mut hit) = (0, 0);
        for _ in 0..600 {
            let start = Pose2::new(8.0 + rnd() * 44.0, 8.0 + rnd() * 34.0, rnd() * 6.3);
            let len = rnd() * 12.0;
            let seg = match (rnd() * 3.0) as u32 {
                0 => Segment::line(start, len),
                1 => Segment::arc(start, len, 2.0 + rnd() * 6.0, Turn::Left),
                _ => Segment::arc(start, len, 2.0 + rnd() * 6.0, Turn::Right),
            };
            let says_free = m.sweep_free(&[seg], Shape::Square(side), 0.0);
            let spans = swept_spans(&[seg], Shape::Square(side), 0.0);
            assert_eq!(m.spans_free(&spans, 0, 0), says_free, "{seg:?}");
            let steps = (seg.length / 0.01).ceil() as usize;
            let exact_free = (0..=steps).all(|k| {
                let q = seg.pose_at(seg.length * k as f64 / steps.max(1) as f64);
                let mut ok = true;
                for y in (q.y - 3.0) as i64..=(q.y + 3.0) as i64 {
                    for x in (q.x - 3.0) as i64..=(q.x + 3.0) as i64 {
                        if g.is_blocked(x, y) && square_hits_cell(q.x, q.y, q.yaw, side / 2.0, x, y) {
                            ok = false;
                        }
                    }
                }
                ok
            });
            if says_free {
                assert!(exact_free, "sweep said free but the square hits a cell: {seg:?}");
                free += 1;
            } else {
                hit += 1;
            }
        }
        assert!(free > 100 && hit > 100, "free {free} hit {hit}");
    }

    #[test]
    fn a_square_turning_in_a_tight_gap_is_caught_where_its_inscribed_disk_is_not() {
        // A gap 3 cells wide: a square of side 2.6 passes straight through; turned by 45 degrees
        // its diagonal (3.68) does not fit, though its inscribed disk (radius 1.3) would.
        let mut g = Grid::new_free(30, 30).unwrap();
        for x in 0..30 {
            g.set_blocked(x, 10, true).unwrap();
            g.set_blocked(x, 14, true).unwrap();
        }
        let m = CollisionMap::new(&g);
        let straight = Segment::line(Pose2::new(5.0, 12.5, 0.0), 10.0);
        assert!(m.sweep_free(&[straight], Shape::Square(2.6), 0.0));
        let turned = Segment::line(Pose2::new(5.0, 12.5, 0.0), 0.0);
        let diagonal = Pose2::new(10.0, 12.5, std::f64::consts::FRAC_PI_4);
        assert!(!m.pose_free(diagonal, Shape::Square(2.6), 0.0));
        assert!(m.pose_free(diagonal, Shape::Disk(1.3), 0.0));
        assert!(m.pose_free(turned.start, Shape::Square(2.6), 0.0));
    }
}
