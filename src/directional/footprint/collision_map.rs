//! The blocked cells of a map, tested by runs, disks, squares and swept segments, and updated
//! locally when the map changes.

use super::sampling::{ceil_index, sample_count, SamplePoints};
use super::{disk_runs, polygon_runs, sampled_radius, square_runs, Shape, Span, COARSE_STRIDE, SEARCH_MARGIN};
use crate::clearance::distance::DistanceField;
use crate::costs::CostField;
use crate::error::GridError;
use crate::geometry::Point2;
use crate::grid::Grid;
use crate::polygon::MAX_COVER_DISKS;
use crate::trajectory::Segment;
use std::sync::Arc;

/// Blocked cells, a bit per cell, so a run of cells is tested a word (64 cells) at a time, and
/// their obstacle distance, so most tests never visit a cell. Built once per map (O(cells));
/// everything outside the grid is blocked.
///
/// What does not depend on the footprint is held behind `Arc`s, so vehicle profiles that read
/// the map alike share one copy: the blocked cells ([`Obstacles`],
/// [`CollisionMap::on_obstacles`]), the obstacle distance (in the planner, the clearance
/// annotations' own: [`CollisionMap::on_distance`]) and what the costs read. An update copies
/// them first only when another holder still has them (copy-on-write).
#[derive(Debug, Clone, PartialEq)]
pub struct CollisionMap {
    width: usize,
    height: usize,
    bits: Arc<BlockedBits>,
    /// Squared distance from each cell centre to the nearest blocked (or outside) cell centre,
    /// capped (capped values are lower bounds). A disk test whose disk lies within it needs no
    /// cell, and a sweep skips every sample that lies closer along the curve than the obstacle
    /// distance's excess over the disk radius (arc length bounds the straight distance), so only
    /// samples near obstacles pay for the exact test.
    distance: Arc<DistanceField>,
    /// What passing each cell costs, when the planner prices costs ([`crate::costs`]): every
    /// stage of refinement reads it beside the blocked cells, so it travels with them (tables
    /// only: the values and distance it reads are shared).
    costs: Option<CostField>,
}

/// The blocked cells of one map as every footprint reads them: a bit per cell, each row starting
/// on a word of its own.
#[derive(Debug, Clone, PartialEq)]
struct BlockedBits {
    /// Words per row: `ceil(width / 64)`.
    row_words: usize,
    /// Bit `x % 64` of word `y * row_words + x / 64` is set when cell `(x, y)` is blocked (the
    /// bits beyond the last column are clear).
    words: Vec<u64>,
}

impl BlockedBits {
    /// The cells of a `w x h` map for which `blocked(k)` (row-major index) is true.
    fn new(w: usize, h: usize, blocked: impl Fn(usize) -> bool) -> Self {
        let row_words = w.div_ceil(64);
        let mut bits = Self { row_words, words: vec![0; h * row_words] };
        bits.update(w, crate::grid::CellRect { x: 0, y: 0, width: w, height: h }, blocked);
        bits
    }

    /// After the cells of `rect` (inside the map, `width` columns) changed: `blocked(k)` tells
    /// whether the cell of row-major index `k` is blocked now. Only the cells of `rect` are read.
    fn update(&mut self, width: usize, rect: crate::grid::CellRect, blocked: impl Fn(usize) -> bool) {
        for y in rect.y..rect.y + rect.height {
            let row = &mut self.words[y * self.row_words..(y + 1) * self.row_words];
            for x in rect.x..rect.x + rect.width {
                let bit = 1u64 << (x % 64);
                if blocked(y * width + x) {
                    row[x / 64] |= bit;
                } else {
                    row[x / 64] &= !bit;
                }
            }
        }
    }

    /// True when no cell `x0..=x1` (`x0 <= x1`, inside the row) of row `y` is blocked.
    #[inline]
    fn run_clear(&self, y: usize, x0: usize, x1: usize) -> bool {
        let row = &self.words[y * self.row_words..(y + 1) * self.row_words];
        let (first, last) = (x0 / 64, x1 / 64);
        let from_x0 = u64::MAX << (x0 % 64);
        let to_x1 = u64::MAX >> (63 - x1 % 64);
        if first == last {
            return row[first] & from_x0 & to_x1 == 0;
        }
        row[first] & from_x0 == 0 && row[first + 1..last].iter().all(|&w| w == 0) && row[last] & to_x1 == 0
    }
}

/// The blocked cells of a [`CollisionMap`], which do not depend on the footprint, as a shared
/// handle: see [`CollisionMap::on_obstacles`].
#[derive(Debug, Clone)]
pub struct Obstacles(Arc<BlockedBits>);

/// The obstacle distance cap (cells) of a map that makes its own ([`CollisionMap::new`]): a
/// sweep skips at most `CLEARANCE_CAP - radius` cells per sample, and a map update recomputes
/// the field within `CLEARANCE_CAP` cells of the change.
const CLEARANCE_CAP: u16 = 32;

impl CollisionMap {
    /// The blocked cells and the obstacle distance of `grid`.
    pub fn new(grid: &Grid) -> Self {
        let distance = DistanceField::new(grid.width(), grid.height(), grid.blocked_cells(), CLEARANCE_CAP);
        Self::on_distance(grid, Arc::new(distance))
    }

    /// The blocked cells of `grid`, with `distance` (the obstacle distance of `grid`'s blocked
    /// cells, any cap, such as the clearance annotations' own) held as it is given: equal to
    /// [`CollisionMap::new`] in every answer.
    pub fn on_distance(grid: &Grid, distance: Arc<DistanceField>) -> Self {
        debug_assert_eq!(distance.values().len(), grid.width() * grid.height());
        let (width, height) = (grid.width(), grid.height());
        let cells = grid.blocked_cells();
        Self { width, height, bits: Arc::new(BlockedBits::new(width, height, |k| cells[k])), distance, costs: None }
    }

    /// [`CollisionMap::on_distance`] read straight from a `width x height` map's values
    /// (row-major), `blocked` saying which are obstacles: no grid of the whole map is made.
    pub fn on_values(
        values: &[i8],
        blocked: impl Fn(i8) -> bool,
        (width, height): (usize, usize),
        distance: Arc<DistanceField>,
    ) -> Self {
        debug_assert!(values.len() == width * height && distance.values().len() == width * height);
        let bits = BlockedBits::new(width, height, |k| blocked(values[k]));
        Self { width, height, bits: Arc::new(bits), distance, costs: None }
    }

    /// The blocked cells, to share with the map of another footprint on the same blocked
    /// cells ([`CollisionMap::on_obstacles`], [`CollisionMap::follow_obstacles`]).
    pub fn obstacles(&self) -> Obstacles {
        Obstacles(self.bits.clone())
    }

    /// True when both maps hold one copy of the blocked cells.
    pub fn shares_obstacles_with(&self, other: &CollisionMap) -> bool {
        Arc::ptr_eq(&self.bits, &other.bits)
    }

    /// The map of the blocked cells `obstacles` holds (another map's, `width` x
    /// `height`) and whose obstacle distance is `distance`, without costs: it holds one copy of
    /// each with their holders. Equal to [`CollisionMap::new`] on those cells.
    pub fn on_obstacles(obstacles: Obstacles, distance: Arc<DistanceField>, width: usize, height: usize) -> Self {
        debug_assert_eq!(distance.values().len(), width * height);
        Self { width, height, bits: obstacles.0, distance, costs: None }
    }

    /// Gives up the blocked cells until [`CollisionMap::follow_obstacles`] brings them
    /// back, so the map holding the same copy can update it in place instead of copying it;
    /// nothing may be tested meanwhile.
    pub fn release_obstacles(&mut self) {
        self.bits = Arc::new(BlockedBits { row_words: 0, words: Vec::new() });
    }

    /// Gives up the obstacle distance and what the costs read until
    /// [`CollisionMap::set_distance`] brings them back, so their other holder (the clearance
    /// annotations) can update them in place; nothing may be tested or priced meanwhile.
    pub fn release_distance(&mut self) {
        self.distance = Arc::new(DistanceField::new(0, 0, &[], 1));
        if let Some(costs) = &mut self.costs {
            costs.release();
        }
    }

    /// Takes `distance`: the obstacle distance of this map's blocked cells as they are now (the
    /// holder of the copy it was built with having brought it up to date), and `values`, the
    /// occupancy values as they are now, which the costs (if any) read with it.
    pub fn set_distance(&mut self, distance: Arc<DistanceField>, values: Arc<crate::map::OccupancyMap>) {
        debug_assert_eq!(distance.values().len(), self.width * self.height);
        if let Some(costs) = &mut self.costs {
            costs.attach(values, distance.clone());
        }
        self.distance = distance;
    }

    /// Takes `obstacles` (another map's, already brought up to date after its cells changed).
    /// The result equals a fresh build.
    pub fn follow_obstacles(&mut self, obstacles: Obstacles) {
        self.bits = obstacles.0;
    }

    /// Distance (cells) from the centre of cell `(x, y)` to the nearest blocked cell's centre
    /// (cells outside the map count as blocked); `None` outside the map or at 32 cells or beyond
    /// (the reach every field here has, whatever its cap, so the figures read from it do not
    /// depend on what else the field serves).
    pub fn centre_distance(&self, x: i64, y: i64) -> Option<f64> {
        if x < 0 || y < 0 || x >= self.width as i64 || y >= self.height as i64 {
            return None;
        }
        let d2 = self.distance.values()[y as usize * self.width + x as usize];
        let cap = u32::from(CLEARANCE_CAP.min(self.distance.cap()));
        (u32::from(d2) < cap * cap).then(|| f64::from(d2).sqrt())
    }

    /// The traversal costs every stage prices paths by; `None`: lengths alone.
    #[inline]
    pub fn costs(&self) -> Option<&CostField> {
        self.costs.as_ref()
    }

    /// Sets (or, with `None`, removes) the traversal costs.
    pub fn set_costs(&mut self, costs: Option<CostField>) {
        self.costs = costs;
    }

    /// The cost of `segments` above their length (cells; 0 without costs): what every stage adds
    /// to a curve's price.
    #[inline]
    pub fn extra_cost(&self, segments: &[Segment]) -> f64 {
        self.costs.as_ref().map_or(0.0, |c| c.extra_along(segments))
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
                let centre = f64::from(self.distance.values()[y * self.width + x]).sqrt();
                // The 1e-6 absorbs rounding.
                return centre - off - std::f64::consts::FRAC_1_SQRT_2 - 1e-6;
            }
        }
        -1.0
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
        self.bits.run_clear(y as usize, x0 as usize, x1 as usize)
    }

    /// True when every span, shifted by `(dx, dy)`, is free.
    #[inline]
    pub fn spans_free(&self, spans: &[Span], dx: i64, dy: i64) -> bool {
        spans.iter().all(|s| self.run_free(s.y as i64 + dy, s.x0 as i64 + dx, s.x1 as i64 + dx))
    }

    /// True when the disk of radius `rho` around `p` touches no blocked cell.
    pub fn disk_free(&self, p: Point2, rho: f64) -> bool {
        // Most disks lie well inside the free space: the obstacle distance of `p`'s cell proves
        // them free without visiting their cells (the bound is a lower one, so the answer is
        // the exact test's).
        if self.clearance_at(p) > rho {
            return true;
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
    /// grid this map was built from): the blocked cells of `rect` and the obstacle
    /// distance around it. The result equals a fresh build on `grid`. The costs, if any, read
    /// values this map is not given, so they are dropped (set them again from the new values; the
    /// planner's maps are brought up to date by their site instead: `update_blocked`,
    /// `set_distance`). Fails, changing nothing, with [`GridError::SizeMismatch`] or
    /// [`GridError::RectOutside`].
    pub fn update_rect(&mut self, grid: &Grid, rect: crate::grid::CellRect) -> Result<(), GridError> {
        if grid.width() != self.width || grid.height() != self.height {
            let (width, height) = (grid.width(), grid.height());
            return Err(GridError::SizeMismatch {
                width,
                height,
                expected_width: self.width,
                expected_height: self.height,
            });
        }
        let cells = grid.blocked_cells();
        self.update_blocked(rect, |k| cells[k])?;
        // Dropped before the distance is edited, so it is edited in place, not copied.
        self.costs = None;
        if !rect.is_empty() {
            Arc::make_mut(&mut self.distance).update(cells, rect);
        }
        Ok(())
    }

    /// [`CollisionMap::update_rect`] for a map whose obstacle distance another holder (the
    /// clearance annotations) brings up to date: the blocked cells of `rect` only,
    /// read from `blocked(k)` (whether the cell of row-major index `k` is blocked now; only
    /// those cells are asked, so no grid of the whole map is needed), the distance to be taken
    /// with [`CollisionMap::set_distance`]. Fails, changing nothing, with
    /// [`GridError::RectOutside`].
    pub fn update_blocked(
        &mut self,
        rect: crate::grid::CellRect,
        blocked: impl Fn(usize) -> bool,
    ) -> Result<(), GridError> {
        let (w, h) = (self.width, self.height);
        if rect.x + rect.width > w || rect.y + rect.height > h {
            return Err(GridError::RectOutside { rect, width: w, height: h });
        }
        if !rect.is_empty() {
            Arc::make_mut(&mut self.bits).update(w, rect, blocked);
        }
        Ok(())
    }

    /// True when the square of half side `half` centred at `p` with heading `yaw` touches no
    /// blocked cell; false for a position or heading that is not finite.
    pub fn square_free(&self, p: Point2, yaw: f64, half: f64) -> bool {
        if !(p.x.is_finite() && p.y.is_finite() && yaw.is_finite()) {
            return false;
        }
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
    pub fn stands_free(&self, pose: crate::geometry::Pose2, shape: &Shape) -> bool {
        match shape {
            Shape::Disk(r) => self.disk_free(pose.point(), sampled_radius(*r) + SEARCH_MARGIN),
            Shape::Square(_) => self.square_free(pose.point(), pose.yaw, shape.sampled_half_side(0.0) + SEARCH_MARGIN),
            Shape::Polygon(p) => self.polygon_free(p, pose, shape.sampled_growth(0.0) + SEARCH_MARGIN),
        }
    }

    /// True when the footprint stands free (as [`CollisionMap::stands_free`]) at `p` in some
    /// heading: where a goal whose heading is free may be reached. The disk in any heading; a
    /// square or polygon when its circumscribed disk is free (free in every heading), else when
    /// it stands free in one of 64 headings. A point that is not finite stands nowhere.
    pub fn stands_free_in_some_heading(&self, p: Point2, shape: &Shape) -> bool {
        if !(p.x.is_finite() && p.y.is_finite()) {
            return false;
        }
        let at = |yaw: f64| crate::geometry::Pose2::new(p.x, p.y, yaw);
        match shape {
            Shape::Disk(_) => self.stands_free(at(0.0), shape),
            _ => {
                self.stands_free(at(0.0), &Shape::Disk(shape.circumradius()))
                    || (0..64).any(|k| self.stands_free(at(std::f64::consts::TAU * k as f64 / 64.0), shape))
            }
        }
    }

    /// True when `polygon` (cells, vehicle frame) standing at `pose`, grown by `grow` (see
    /// [`polygon_runs`]), touches no blocked cell; false for a pose that is not finite.
    pub fn polygon_free(&self, polygon: &crate::polygon::Polygon, pose: crate::geometry::Pose2, grow: f64) -> bool {
        if !pose.is_finite() {
            return false;
        }
        let mut ok = true;
        polygon_runs(polygon, pose, grow, |y, x0, x1| {
            ok = ok && self.run_free(y, x0, x1);
            ok
        });
        ok
    }

    /// How far (cells) the blocked cells and the outside of the map reach into the footprint
    /// `shape` standing at `pose` (at rest, no sampling allowance): the largest distance from a
    /// blocked point inside the footprint to the footprint's outline (for a disk, its radius less
    /// the distance to the nearest blocked point; for the turning square, half its side less that
    /// point's distance from the centre in the square's own max-norm). 0 when the footprint only
    /// touches obstacles or is free; for the disk and the square at most the inradius (the centre
    /// is blocked); for a polygon (see [`Shape::depth_of_cell`]) at most the radius of the
    /// largest disk inside it.
    pub fn overlap_depth(&self, pose: crate::geometry::Pose2, shape: &Shape) -> f64 {
        let reach = shape.circumradius();
        let (x0, x1) = ((pose.x - reach).floor() as i64 - 1, (pose.x + reach).ceil() as i64);
        let (y0, y1) = ((pose.y - reach).floor() as i64 - 1, (pose.y + reach).ceil() as i64);
        let mut depth: f64 = 0.0;
        for y in y0..=y1 {
            for x in x0..=x1 {
                if !self.run_free(y, x, x) {
                    depth = depth.max(shape.depth_of_cell(pose, (x, y)));
                }
            }
        }
        depth
    }

    /// True when the footprint `shape` standing at `pose` (at rest: no sampling allowance),
    /// grown by `margin`, touches no blocked cell.
    pub fn pose_free(&self, pose: crate::geometry::Pose2, shape: impl Into<Shape>, margin: f64) -> bool {
        match shape.into() {
            Shape::Disk(r) => self.disk_free(pose.point(), r + margin),
            Shape::Square(a) => self.square_free(pose.point(), pose.yaw, a / 2.0 + margin),
            Shape::Polygon(p) => self.polygon_free(&p, pose, margin),
        }
    }

    /// True when the footprint `shape` (cells; a plain radius means a disk) swept along
    /// `segments` touches no blocked cell, with the sampling rule of this module plus `margin`.
    ///
    /// Same answer as testing every sample of `sample_segment` with [`CollisionMap::disk_free`]
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
            if !self.segment_coarse_free(seg, &shape, margin, proof) {
                return false;
            }
        }
        let none = Proven::default();
        segments
            .iter()
            .enumerate()
            .all(|(k, seg)| self.segment_free(seg, &shape, margin, proofs.get(k).unwrap_or(&none)))
    }

    /// False when one of every [`COARSE_STRIDE`]-th sample of `seg` (the samples of
    /// [`CollisionMap::segment_free`]) fails its footprint test; true says nothing more, but
    /// `proof` then holds the samples this look proved free.
    ///
    /// Coarse samples that the clearance bound of an earlier coarse sample already proves free
    /// are skipped, as the sequential pass skips them: on a free curve through open space the
    /// first look then costs a few samples instead of one in every `COARSE_STRIDE`.
    fn segment_coarse_free(&self, seg: &Segment, shape: &Shape, margin: f64, proof: &mut Proven) -> bool {
        if seg.rotation != 0.0 {
            return self.turn_free(seg, shape, margin);
        }
        let test = SampleTest::new(shape, seg.curvature, margin);
        let n = sample_count(seg);
        let step = seg.length / n as f64;
        let at = SamplePoints::new(seg, n);
        let first = COARSE_STRIDE / 2;
        let mut i = first;
        while i < n {
            let p = at.point(i);
            if let Some(reach) = test.proven_reach(self, p, &at, i, step, n) {
                // The samples within `reach` of this one (on either side) are free, as in
                // `segment_free`: the next one to look at is the first coarse sample beyond them.
                proof.add(i.saturating_sub(reach - 1), i + (reach - 1));
                let next = i + reach;
                i = first + (next.saturating_sub(first)).div_ceil(COARSE_STRIDE) * COARSE_STRIDE;
                continue;
            }
            if !self.sample_free(shape, p, at.yaw(i), &test) {
                return false;
            }
            proof.add(i, i);
            i += COARSE_STRIDE;
        }
        true
    }

    /// A turn on the spot (`seg.rotation`): the footprint turning about its reference point stays
    /// within its circumscribed disk, tested grown like any sample (for a disk, just the disk).
    fn turn_free(&self, seg: &Segment, shape: &Shape, margin: f64) -> bool {
        self.disk_free(seg.start.point(), shape.sampled_circumradius(0.0) + margin)
    }

    /// The footprint test of one sweep sample at `p` heading `yaw`, grown as `test` says.
    #[inline(always)]
    fn sample_free(&self, shape: &Shape, p: Point2, yaw: f64, test: &SampleTest) -> bool {
        match shape {
            Shape::Disk(_) => self.disk_free(p, test.rho),
            Shape::Square(_) => self.square_free(p, yaw, test.half),
            Shape::Polygon(polygon) => {
                self.polygon_free(polygon, crate::geometry::Pose2::new(p.x, p.y, yaw), test.grow)
            }
        }
    }

    /// True when no sample of `seg` fails its footprint test, testing only samples outside
    /// `proven` (samples already proved free).
    /// The first place along `segments` where the footprint `shape` plus `margin` touches a
    /// blocked cell, by the sampling rule of [`CollisionMap::sweep_free`] (which answers false
    /// exactly when this finds one): the sample's centre, or the centre of a turn on the spot.
    /// Every sample is tested, so call it to say where once a sweep failed.
    pub fn first_blocked(&self, segments: &[Segment], shape: impl Into<Shape>, margin: f64) -> Option<Point2> {
        let shape = shape.into();
        segments.iter().find_map(|seg| {
            if seg.rotation != 0.0 {
                return (!self.turn_free(seg, &shape, margin)).then_some(seg.start.point());
            }
            let test = SampleTest::new(&shape, seg.curvature, margin);
            let n = sample_count(seg);
            let at = SamplePoints::new(seg, n);
            (0..=n)
                .map(|i| (at.point(i), at.yaw(i)))
                .find(|&(p, yaw)| !self.sample_free(&shape, p, yaw, &test))
                .map(|(p, _)| p)
        })
    }

    fn segment_free(&self, seg: &Segment, shape: &Shape, margin: f64, proven: &Proven) -> bool {
        if seg.rotation != 0.0 {
            return self.turn_free(seg, shape, margin);
        }
        let test = SampleTest::new(shape, seg.curvature, margin);
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
            if let Some(reach) = test.proven_reach(self, p, &at, i, step, n) {
                i += reach;
                continue;
            }
            if !self.sample_free(shape, p, at.yaw(i), &test) {
                return false;
            }
            i += 1;
        }
        true
    }
}

/// The grown footprint tested at each sample of one segment (curvature and margin included).
struct SampleTest {
    /// Radius of a disk about the sample holding the grown footprint: the disk's own test, and
    /// the clearance bound that skips samples.
    rho: f64,
    /// The grown square's half side.
    half: f64,
    /// The polygon's growth ([`polygon_runs`]).
    grow: f64,
    /// The centre (vehicle frame, cells) of a disk holding the grown footprint, and its radius:
    /// the clearance bound that skips samples. The reference point and `rho` for the disk and the
    /// square; for a polygon the middle of its bounding box, so a long vehicle on its rear axle
    /// is bounded by a disk about its middle, not by one about its rear axle twice as wide.
    centre: (f64, f64),
    bound: f64,
    /// How far that centre moves per unit of the reference point's arc length, at most:
    /// `1 + |curvature| |centre|`.
    speed: f64,
    /// For a polygon, its [`crate::polygon::Polygon::disk_cover`] grown like the bounding disk
    /// (centre, radius): where the one disk touches an obstacle (a long vehicle beside a wall),
    /// these smaller ones often do not. Empty for the disk and the square.
    cover: [((f64, f64), f64); MAX_COVER_DISKS],
    cover_len: usize,
    /// How far a cover disk's centre moves per unit of arc length, at most.
    cover_speed: f64,
}

impl SampleTest {
    #[inline]
    fn new(shape: &Shape, curvature: f64, margin: f64) -> Self {
        let rho = shape.sampled_circumradius(curvature) + margin;
        let grow = shape.sampled_growth(curvature) + margin;
        let mut test = Self {
            rho,
            half: shape.sampled_half_side(curvature) + margin,
            grow,
            centre: (0.0, 0.0),
            bound: rho,
            speed: 1.0,
            cover: [((0.0, 0.0), 0.0); MAX_COVER_DISKS],
            cover_len: 0,
            cover_speed: 1.0,
        };
        if let Shape::Polygon(p) = shape {
            // A point of the polygon grown by `grow` lies within the growth's reach of the
            // polygon, so within that much more of a disk holding the polygon.
            let reach = super::POLYGON_GROWTH_REACH * grow;
            let (c, r) = p.bounding_disk();
            (test.centre, test.bound, test.speed) = (c, r + reach, 1.0 + curvature.abs() * c.0.hypot(c.1));
            // The cover only helps where its disks are smaller than the one (a long polygon's
            // are; a round one's may not be).
            let cover = p.disk_cover().disks();
            let tighter = cover.iter().all(|&(_, rk)| rk < r);
            for (k, &(c, r)) in cover.iter().enumerate().filter(|_| tighter) {
                test.cover[k] = (c, r + reach);
                test.cover_speed = test.cover_speed.max(1.0 + curvature.abs() * c.0.hypot(c.1));
                test.cover_len = k + 1;
            }
        }
        test
    }

    /// How many samples from sample `i` (at `p`) of `at` (`n` steps of `step`) on, in either
    /// direction, the obstacle distance proves free: at least 1 (sample `i` itself), `n + 1` for
    /// a segment of no length; `None` when it does not prove sample `i` free. A disk holding the
    /// grown footprint at sample `j` lies within `|j - i| step speed` of its place at sample `i`
    /// (arc length bounds the straight distance), so it stays clear while that is less than its
    /// clearance there: first the one bounding disk, then, for a polygon, all of its cover.
    #[inline(always)]
    fn proven_reach(
        &self,
        map: &CollisionMap,
        p: Point2,
        at: &SamplePoints,
        i: usize,
        step: f64,
        n: usize,
    ) -> Option<usize> {
        let reach = |slack: f64, speed: f64| if step > 0.0 { ceil_index(slack / (step * speed)).max(1) } else { n + 1 };
        if self.centre == (0.0, 0.0) && self.cover_len == 0 {
            let slack = map.clearance_at(p) - self.bound;
            return (slack > 0.0).then(|| reach(slack, self.speed));
        }
        let (s, c) = at.yaw(i).sin_cos();
        let place = |(x, y): (f64, f64)| Point2::new(p.x + c * x - s * y, p.y + s * x + c * y);
        let slack = map.clearance_at(place(self.centre)) - self.bound;
        if slack > 0.0 {
            return Some(reach(slack, self.speed));
        }
        if self.cover_len == 0 {
            return None;
        }
        let mut least = f64::INFINITY;
        for &(centre, bound) in &self.cover[..self.cover_len] {
            least = least.min(map.clearance_at(place(centre)) - bound);
            if least <= 0.0 {
                return None;
            }
        }
        Some(reach(least, self.cover_speed))
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

impl CollisionMap {
    /// Heap bytes of the blocked cells, which profiles reading the map alike share (see
    /// [`Obstacles`]).
    pub fn obstacle_heap_bytes(&self) -> usize {
        self.bits.words.heap_bytes()
    }

    /// Heap bytes of the obstacle distance (in the planner the clearance annotations', counted
    /// there).
    pub fn distance_heap_bytes(&self) -> usize {
        self.distance.heap_bytes()
    }
}

use crate::memory::HeapSize;

impl HeapSize for CollisionMap {
    fn heap_bytes(&self) -> usize {
        self.obstacle_heap_bytes() + self.distance_heap_bytes() + self.costs().map_or(0, HeapSize::heap_bytes)
    }
}
