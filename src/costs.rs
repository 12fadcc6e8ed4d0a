//! Traversal costs: what a cell costs to pass, and the cost of a path over them.
//!
//! A cell's **normalised cost** `c` in `[0, 1]` combines two sources by their maximum:
//! - the map's own grade: an occupancy value `v` between 1 and `occupied_threshold - 1` (a Nav2
//!   costmap's inflation gradient, a keep-out or speed zone raised on the map) counts `v / 100`,
//!   the fraction of the occupancy scale, so a Nav2 costmap cost `k` (1..=252, published as
//!   about `k / 2.52`) weighs about `k / 252` as in Smac;
//! - the clearance: with `d` the distance (cells, centre to centre, as Nav2's inflation layer
//!   measures it) to the nearest obstacle cell and `r` the footprint's inscribed radius, the cost
//!   is 1 up to `r` and `((r + p - d) / p)^2` between `r` and `r + p`, where `p` is the
//!   `preferred_clearance`: 0 beyond, rising smoothly (no step where it starts, unlike Nav2's
//!   exponential cut off at the inflation radius) to 1 at the footprint's reach.
//!
//! The maximum, not the sum: on a Nav2 costmap both sources describe the same walls, and adding
//! them would count each wall twice.
//!
//! A path's **cost** is its length weighted by `1 + cost_penalty * c` along it (Smac's
//! `cost_penalty`): `∫ (1 + cost_penalty c(s)) ds`, sampled every quarter cell at the midpoints
//! of equal steps ([`CostField::extra_along`] and [`CostField::extra_line`] return the part
//! above the length, `cost_penalty ∫ c ds`). At `cost_penalty` 0 no field is built and every
//! stage prices lengths alone.
//!
//! The field holds no per-cell data: it reads each cell's value and obstacle distance when
//! asked, through shared handles, and looks both up in small tables. The distance is an exact
//! capped Euclidean field ([`DistanceField`]): in the planner the clearance annotations' own (one
//! per traversability, shared by every profile and by the collision map), whose cap the site
//! raises to [`CostRule::distance_cap`], and the values are the site's. Under map patches the
//! field gives both up while the site edits them ([`CostField::release`]) and takes them back
//! after ([`CostField::attach`]); [`CostField::affected`] bounds the cells whose cost may have
//! changed.

use crate::clearance::distance::{DistanceField, MAX_DISTANCE_CAP};
use crate::geometry::Point2;
use crate::grid::CellRect;
use crate::map::{OccupancyMap, Traversability};
use crate::trajectory::Segment;
use std::sync::Arc;

/// Sampling step of path costs (cells): a quarter cell, as Navigation2's planner benchmark
/// samples paths.
pub const COST_STEP: f64 = 0.25;

/// How costs are made, in cell units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostRule {
    /// Weight of the normalised cost along a path (>= 0; 0: lengths alone).
    pub cost_penalty: f64,
    /// Gap (cells, >= 0) between the footprint's inscribed radius and the nearest obstacle
    /// below which the clearance cost rises; 0: the map's grades alone.
    pub preferred_clearance: f64,
    /// The footprint's inscribed radius (cells, >= 0).
    pub inscribed: f64,
    /// Which occupancy values are obstacles.
    pub traversability: Traversability,
}

impl CostRule {
    /// The distance (cells) beyond which the clearance adds no cost, limited to what the
    /// distance field resolves ([`MAX_DISTANCE_CAP`] - 1 cells: 6.3 m at 5 cm).
    pub fn reach(&self) -> f64 {
        (self.inscribed + self.preferred_clearance).min(f64::from(MAX_DISTANCE_CAP - 1))
    }

    /// The smallest cap (cells) of the obstacle distance field the costs can be read from: a
    /// cell farther than that from every obstacle has no clearance cost.
    pub fn distance_cap(&self) -> u16 {
        (self.reach().ceil() as u16 + 1).clamp(1, MAX_DISTANCE_CAP)
    }

    /// The normalised clearance cost at distance `d` (cells) from the nearest obstacle cell.
    pub fn clearance_cost(&self, d: f64) -> f64 {
        let p = self.reach() - self.inscribed;
        if d <= self.inscribed {
            1.0
        } else if p <= 0.0 || d >= self.inscribed + p {
            0.0
        } else {
            let t = (self.inscribed + p - d) / p;
            t * t
        }
    }

    /// The normalised grade of occupancy value `v`: 1 for an obstacle, `v / 100` for a value
    /// between 1 and the threshold, 0 for free and (allowed) unknown cells.
    pub fn grade(&self, v: i8) -> f64 {
        if self.traversability.is_blocked(v) {
            1.0
        } else if v > 0 {
            f64::from(v) / 100.0
        } else {
            0.0
        }
    }
}

/// The normalised costs of one map under a [`CostRule`], read on demand from the map's values
/// and its obstacle distance: a cell's cost is the larger of its grade and its clearance cost,
/// each looked up in a small table as a byte (`c * 255`). It holds no per-cell data of its own:
/// the values and the distance are shared handles (in the planner, the site's own copies), so a
/// profile's costs cost a few kilobytes of tables whatever the map's size.
#[derive(Debug, Clone)]
pub struct CostField {
    width: usize,
    height: usize,
    rule: CostRule,
    tables: Arc<CostTables>,
    /// The occupancy values the grades are read from.
    values: Arc<OccupancyMap>,
    /// The obstacle distance of `values`' blocked cells, capped at the rule's
    /// [`CostRule::distance_cap`] or beyond.
    distance: Arc<DistanceField>,
}

/// What a [`CostField`] looks its bytes up in.
#[derive(Debug, PartialEq)]
struct CostTables {
    /// Grade byte by occupancy value (as `u8`).
    by_grade: [u8; 256],
    /// Clearance cost byte by squared distance, up to the square of the rule's
    /// [`CostRule::distance_cap`] (every farther cell reads the last entry, 0).
    by_distance: Vec<u8>,
}

impl CostTables {
    fn of(rule: &CostRule) -> Self {
        let cap = u32::from(rule.distance_cap());
        let by_distance: Vec<u8> =
            (0..=cap * cap).map(|d2| to_byte(rule.clearance_cost(f64::from(d2).sqrt()))).collect();
        let by_grade = std::array::from_fn(|v| to_byte(rule.grade(v as u8 as i8)));
        debug_assert_eq!(by_distance.last(), Some(&0), "a distance beyond the table costs what its last entry does");
        Self { by_grade, by_distance }
    }
}

/// A normalised cost as a byte.
fn to_byte(c: f64) -> u8 {
    (c.clamp(0.0, 1.0) * 255.0).round() as u8
}

impl PartialEq for CostField {
    /// The same rule and the same cost in every cell (O(cells)), however the inputs are held.
    fn eq(&self, other: &Self) -> bool {
        self.rule == other.rule
            && (self.width, self.height) == (other.width, other.height)
            && (0..self.width * self.height).all(|k| self.byte_of(k) == other.byte_of(k))
    }
}

impl CostField {
    /// The costs of `values` under `rule`, `distance` being the obstacle distance of `values`'
    /// cells blocked under the rule's traversability, capped at [`CostRule::distance_cap`] or
    /// beyond: O(1) beside the tables (both are held, not copied).
    pub fn new(values: Arc<OccupancyMap>, rule: CostRule, distance: Arc<DistanceField>) -> Self {
        debug_assert!(distance.cap() >= rule.distance_cap() && distance.values().len() == values.data.len());
        let (width, height) = (values.info.width, values.info.height);
        Self { width, height, rule, tables: Arc::new(CostTables::of(&rule)), values, distance }
    }

    /// [`CostField::new`] on a copy of `map` with an obstacle distance made for it (for a
    /// caller that holds neither, such as a picture or a benchmark): O(cells).
    pub fn of_map(map: &OccupancyMap, rule: CostRule) -> Self {
        let blocked: Vec<bool> = map.data.iter().map(|&v| rule.traversability.is_blocked(v)).collect();
        let distance = DistanceField::new(map.info.width, map.info.height, &blocked, rule.distance_cap());
        Self::new(Arc::new(map.clone()), rule, Arc::new(distance))
    }

    /// The rule the field was built with.
    pub fn rule(&self) -> &CostRule {
        &self.rule
    }

    /// Gives up the values and the distance until [`CostField::attach`] brings them back, so
    /// their other holder (the planner's site) can update them in place; no cost may be read
    /// meanwhile.
    pub fn release(&mut self) {
        let empty = crate::map::MapInfo { width: 0, height: 0, ..self.values.info.clone() };
        self.values = Arc::new(OccupancyMap { info: empty, data: Vec::new() });
        self.distance = Arc::new(DistanceField::new(0, 0, &[], 1));
    }

    /// Takes `values` and `distance` (as [`CostField::new`] takes them; the same geometry) as
    /// they are now, after the values inside some rectangle changed: the costs read them from
    /// then on. [`CostField::affected`] bounds the cells whose cost may have changed.
    pub fn attach(&mut self, values: Arc<OccupancyMap>, distance: Arc<DistanceField>) {
        debug_assert!(distance.cap() >= self.rule.distance_cap());
        debug_assert_eq!((values.info.width, values.info.height), (self.width, self.height));
        debug_assert_eq!(distance.values().len(), values.data.len());
        (self.values, self.distance) = (values, distance);
    }

    /// True when the field reads its grades from `values` itself (the same copy, not an equal
    /// one).
    pub fn reads(&self, values: &OccupancyMap) -> bool {
        std::ptr::eq(&*self.values, values)
    }

    /// The cells whose cost may change when the values inside `changed` change: those whose
    /// grade is read there, and those whose distance (up to the rule's cap) may change.
    pub fn affected(&self, changed: CellRect) -> CellRect {
        let grow = usize::from(self.rule.distance_cap()) - 1;
        let (x0, y0) = (changed.x.saturating_sub(grow), changed.y.saturating_sub(grow));
        let x1 = (changed.x + changed.width + grow).min(self.width);
        let y1 = (changed.y + changed.height + grow).min(self.height);
        CellRect { x: x0, y: y0, width: x1.saturating_sub(x0), height: y1.saturating_sub(y0) }
    }

    /// The inputs as borrowed slices, for the inner loops below (no handle followed per cell).
    #[inline]
    fn cells(&self) -> Cells<'_> {
        let t = &*self.tables;
        Cells {
            width: self.width,
            height: self.height,
            values: &self.values.data,
            d2: self.distance.values(),
            by_grade: &t.by_grade,
            by_distance: &t.by_distance,
        }
    }

    /// The cost byte of the cell at row-major index `k` (inside the map).
    fn byte_of(&self, k: usize) -> u8 {
        self.cells().byte_of(k)
    }

    /// The normalised cost (`0..=1`) of cell `(x, y)`; 1 outside the map.
    #[inline]
    pub fn cost(&self, x: i64, y: i64) -> f64 {
        f64::from(self.cells().byte(x, y)) / 255.0
    }

    /// The normalised cost at point `p` (cell units): that of the cell holding it (1 off the
    /// map, and for a NaN coordinate).
    #[inline]
    pub fn cost_at(&self, p: Point2) -> f64 {
        f64::from(self.cells().byte_at(p)) / 255.0
    }

    /// `cost_penalty * c` of the cell at index `y * width + x` (the weight above 1 per cell
    /// unit) as a closure for a search's inner loop: table lookups per call. An index outside
    /// the map is the caller's error (it panics).
    pub fn extra_per_cell(&self) -> impl Fn(usize) -> f64 + '_ {
        let table: [f64; 256] = std::array::from_fn(|b| self.rule.cost_penalty * b as f64 / 255.0);
        let cells = self.cells();
        move |i| table[usize::from(cells.byte_of(i))]
    }

    /// `cost_penalty`.
    pub fn penalty(&self) -> f64 {
        self.rule.cost_penalty
    }

    /// The cost of a path above its length, `cost_penalty ∫ c ds` (cells), along `segments`
    /// (turns on the spot cost nothing: they have no length).
    pub fn extra_along(&self, segments: &[Segment]) -> f64 {
        let mut sum = 0.0;
        let cells = self.cells();
        for s in segments {
            sum += sample_segment(s, |p| cells.byte_at(p));
        }
        self.rule.cost_penalty * sum / 255.0
    }

    /// The cost above their length of `cells` (each a cell offset and the length in it) placed
    /// at `(x, y)`: a tabulated curve's [`CostField::extra_along`].
    pub fn extra_cells(&self, cells: &[crate::directional::CentreCell], x: i64, y: i64) -> f64 {
        let field = self.cells();
        let cost = |c: &crate::directional::CentreCell| {
            f64::from(field.byte(x + i64::from(c.dx), y + i64::from(c.dy))) / 255.0
        };
        let sum: f64 = cells.iter().map(|c| f64::from(c.length) * cost(c)).sum();
        self.rule.cost_penalty * sum
    }

    /// The cost above its length of the straight line from `a` to `b` (cells).
    pub fn extra_line(&self, a: Point2, b: Point2) -> f64 {
        let (dx, dy) = (b.x - a.x, b.y - a.y);
        let len = (dx * dx + dy * dy).sqrt();
        if len <= 0.0 {
            return 0.0;
        }
        let n = (len / COST_STEP).ceil().max(1.0);
        let (mut sum, cells) = (0u64, self.cells());
        for k in 0..n as usize {
            let t = (k as f64 + 0.5) / n;
            sum += u64::from(cells.byte_at(Point2::new(a.x + t * dx, a.y + t * dy)));
        }
        self.rule.cost_penalty * sum as f64 / 255.0 * (len / n)
    }

    /// Bytes of the tables (the values and distance it reads are their holders').
    pub fn bytes(&self) -> usize {
        std::mem::size_of::<CostTables>() + self.tables.by_distance.len()
    }
}

/// A [`CostField`]'s inputs and tables, borrowed.
#[derive(Clone, Copy)]
struct Cells<'a> {
    width: usize,
    height: usize,
    values: &'a [i8],
    d2: &'a [u16],
    by_grade: &'a [u8; 256],
    by_distance: &'a [u8],
}

impl Cells<'_> {
    /// The cost byte of the cell at row-major index `k` (inside the map): its grade's or its
    /// clearance cost's, the larger (a distance beyond the table costs 0, as its last entry).
    #[inline]
    fn byte_of(&self, k: usize) -> u8 {
        let (v, d2) = (self.values[k], self.d2[k]);
        let by_distance = self.by_distance.get(usize::from(d2)).copied().unwrap_or(0);
        self.by_grade[usize::from(v as u8)].max(by_distance)
    }

    /// The cost byte of cell `(x, y)`, `u8::MAX` (cost 1) outside the map.
    #[inline]
    fn byte(&self, x: i64, y: i64) -> u8 {
        if x < 0 || y < 0 || x >= self.width as i64 || y >= self.height as i64 {
            return u8::MAX;
        }
        self.byte_of(y as usize * self.width + x as usize)
    }

    /// The cost byte at point `p` (cell units), `0..=255` for `0..=1`: the byte of the cell
    /// holding it, `u8::MAX` outside the map (and for a NaN coordinate). The line integrals sum
    /// these as integers and scale once.
    ///
    /// The integrals' inner loop, a few nanoseconds a sample: the cell is found by truncation,
    /// which is the floor wherever it matters (a negative coordinate is outside the map either
    /// way), with no libm call, and every sample is looked up afresh (cheaper than keeping the
    /// last cell's byte: the test on it mispredicts about once a cell, and it chains the samples).
    #[inline]
    fn byte_at(&self, p: Point2) -> u8 {
        // Saturating casts: huge coordinates land outside, NaN is caught by the comparisons.
        let (x, y) = (p.x as i64, p.y as i64);
        if p.x >= 0.0 && p.y >= 0.0 && (x as u64) < self.width as u64 && (y as u64) < self.height as u64 {
            self.byte_of(y as usize * self.width + x as usize)
        } else {
            u8::MAX
        }
    }
}

/// `∫ f ds` along segment `s`, by the midpoints of `ceil(length / COST_STEP)` equal steps
/// ([`crate::trajectory::PointsAlong::each_midpoint`]), for `f` an integer-valued function (the
/// cost bytes): summed exactly, scaled once.
fn sample_segment(s: &Segment, mut f: impl FnMut(Point2) -> u8) -> f64 {
    if s.length <= 0.0 {
        return 0.0;
    }
    let n = (s.length / COST_STEP).ceil().max(1.0) as usize;
    let mut sum = 0u64;
    s.points_along().each_midpoint(n, |p| sum += u64::from(f(p)));
    sum as f64 * (s.length / n as f64)
}

impl crate::memory::HeapSize for CostField {
    /// The tables: the values and distance it reads are counted by their holder.
    fn heap_bytes(&self) -> usize {
        self.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::map::MapInfo;

    fn map(rows: &[&str]) -> OccupancyMap {
        let (w, h) = (rows[0].len(), rows.len());
        let mut data = vec![0i8; w * h];
        for (y, row) in rows.iter().enumerate() {
            for (x, ch) in row.bytes().enumerate() {
                data[y * w + x] = match ch {
                    b'@' => 100,
                    b'g' => 50,
                    _ => 0,
                };
            }
        }
        let origin = crate::geometry::Pose2::new(0.0, 0.0, 0.0);
        OccupancyMap { info: MapInfo { width: w, height: h, resolution: 0.05, origin, frame_id: "map".into() }, data }
    }

    fn rule(penalty: f64) -> CostRule {
        CostRule {
            cost_penalty: penalty,
            preferred_clearance: 4.0,
            inscribed: 2.0,
            traversability: Traversability { occupied_threshold: 65, allow_unknown: false },
        }
    }

    #[test]
    fn clearance_cost_falls_smoothly_from_the_footprint_to_the_preferred_gap() {
        let r = rule(1.0);
        assert_eq!(r.clearance_cost(1.0), 1.0);
        assert_eq!(r.clearance_cost(2.0), 1.0);
        assert!((r.clearance_cost(4.0) - 0.25).abs() < 1e-12);
        assert_eq!(r.clearance_cost(6.0), 0.0);
        assert_eq!(r.clearance_cost(60.0), 0.0);
        let no_clearance = CostRule { preferred_clearance: 0.0, ..r };
        assert_eq!(no_clearance.clearance_cost(2.5), 0.0);
    }

    #[test]
    fn a_cell_costs_the_larger_of_its_grade_and_its_clearance_cost() {
        let m =
            map(&["................", "................", "......g.........", "................", "@@@@@@@@@@@@@@@@"]);
        let f = CostField::of_map(&m, rule(2.0));
        // Row 3 is one cell from the wall: within the inscribed radius.
        assert_eq!(f.cost(3, 3), 1.0);
        // Row 0 is four cells away: ((2 + 4 - 4) / 4)^2 = 0.25, but the map's top border is an
        // obstacle too (one cell away), so the border wins.
        assert_eq!(f.cost(8, 0), 1.0);
        let expect = to_byte(rule(2.0).clearance_cost(2.0).max(0.5)) as f64 / 255.0;
        assert_eq!(f.cost(6, 2), expect);
        assert_eq!(f.cost(-1, 0), 1.0);
    }

    #[test]
    fn costs_follow_their_inputs_and_equal_a_fresh_build() {
        let mut m = map(&[
            "........................",
            "........................",
            "........@@..............",
            "........................",
            "..................g.....",
            "........................",
            "........................",
        ]);
        // The inputs held apart, the distance at a larger cap than the rule needs (as the
        // planner's annotations hold it), each edited in place after the field released them.
        let blocked = |m: &OccupancyMap| m.data.iter().map(|&v| v >= 65).collect::<Vec<bool>>();
        let (w, h) = (m.info.width, m.info.height);
        let mut distance = Arc::new(DistanceField::new(w, h, &blocked(&m), 20));
        let mut values = Arc::new(m.clone());
        let mut f = CostField::new(values.clone(), rule(1.0), distance.clone());
        for (x, y, v) in [(3usize, 3usize, 100i8), (8, 2, 0), (18, 4, 30), (20, 6, 100), (12, 1, 40)] {
            let before = CostField::of_map(&m, rule(1.0));
            f.release();
            m.data[y * w + x] = v;
            Arc::get_mut(&mut values).expect("released").data[y * w + x] = v;
            let rect = CellRect { x, y, width: 1, height: 1 };
            Arc::get_mut(&mut distance).expect("released").update(&blocked(&m), rect);
            f.attach(values.clone(), distance.clone());
            assert_eq!(f, CostField::of_map(&m, rule(1.0)), "after ({x}, {y}) = {v}");
            // Every cell whose cost changed lies in what the field says may have changed.
            let affected = f.affected(rect);
            for (cy, cx) in (0..h).flat_map(|cy| (0..w).map(move |cx| (cy, cx))) {
                let inside = (affected.x..affected.x + affected.width).contains(&cx)
                    && (affected.y..affected.y + affected.height).contains(&cy);
                let (a, b) = (before.cost(cx as i64, cy as i64), f.cost(cx as i64, cy as i64));
                assert!(inside || a == b, "({cx}, {cy}) changed outside {affected:?}");
            }
        }
    }

    #[test]
    fn arcs_are_sampled_at_the_exact_points() {
        // Long arcs both ways, forwards and backwards, beyond several re-anchorings: every sample
        // within 1e-12 cells of the exact point at its arc length (a line's exactly that point).
        for (curvature, length, reverse) in
            [(0.1, 600.0, false), (-0.02, 2500.0, true), (1.0, 40.0, false), (0.0, 90.0, true), (0.0, 333.3, false)]
        {
            let seg = Segment {
                start: crate::geometry::Pose2::new(3.25, -7.5, 0.7),
                length,
                curvature,
                reverse,
                rotation: 0.0,
            };
            let mut got = vec![];
            let integral = sample_segment(&seg, |p| {
                got.push(p);
                1
            });
            let n = got.len();
            assert_eq!(n, (length / COST_STEP).ceil() as usize);
            assert!((integral - length).abs() < 1e-9 * length, "{integral} vs {length}");
            let (exact, ds) = (seg.points_along(), length / n as f64);
            for (i, p) in got.iter().enumerate() {
                let q = exact.at((i as f64 + 0.5) * ds);
                assert!(p.distance(q) < 1e-12, "curvature {curvature}, sample {i}: {p:?} vs {q:?}");
                // On a line, `at`'s point exactly.
                assert!(curvature != 0.0 || (p.x, p.y) == (q.x, q.y), "sample {i}: {p:?} vs {q:?}");
            }
        }
    }

    /// The integrals' cell look-up (truncation) against the definition (the floor of each
    /// sample, as `PointsAlong::each_midpoint` gives them): equal sums, bit for bit, on random
    /// lines and arcs either way, many of them leaving the map.
    #[test]
    fn integrals_read_the_cell_under_each_sample() {
        let mut m =
            map(&["..@.......@....", "....g..........", ".......gg..@...", "...............", "@.....g........"]);
        m.data[3] = 30;
        let f = CostField::of_map(&m, rule(1.5));
        let cells = f.cells();
        let floor_byte = |p: Point2| cells.byte(crate::geometry::floor_i64(p.x), crate::geometry::floor_i64(p.y));
        let mut seed = 5u64;
        let mut next = move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        for i in 0..4000 {
            let start = crate::geometry::Pose2::new(next() * 21.0 - 3.0, next() * 11.0 - 3.0, next() * 6.3 - 3.15);
            let curvature = [0.0, 0.4, -0.25, 2.0][i % 4];
            let seg = Segment { start, length: next() * 14.0, curvature, reverse: i % 3 == 0, rotation: 0.0 };
            let want = f.rule.cost_penalty * sample_segment(&seg, floor_byte) / 255.0;
            assert_eq!(f.extra_along(&[seg]), want, "{seg:?}");
        }
        // A NaN point reads as outside the map, at the largest cost.
        assert_eq!(cells.byte_at(Point2::new(f64::NAN, 1.0)), u8::MAX);
        assert_eq!(cells.byte_at(Point2::new(-0.5, 1.0)), u8::MAX);
        assert_eq!(cells.byte_at(Point2::new(14.99, 4.99)), cells.byte(14, 4));
    }

    #[test]
    fn line_costs_integrate_the_cells_they_cross() {
        let mut m = map(&["..........", "..........", ".........."]);
        m.data.iter_mut().for_each(|v| *v = 0);
        // No clearance cost (the small map's border is near every cell): the grade alone.
        let r = CostRule { preferred_clearance: 0.0, inscribed: 0.0, ..rule(2.0) };
        let mut m2 = m.clone();
        m2.data[10 + 4] = 50; // row 1, cell 4
        let f = CostField::of_map(&m2, r);
        // A line through the middle row from x = 0.5 to 9.5 crosses cell 4 for one cell: 2 * 0.5 * 1
        // (the grade as its byte holds it).
        let got = f.extra_line(Point2::new(0.5, 1.5), Point2::new(9.5, 1.5));
        let want = 2.0 * f64::from(to_byte(0.5)) / 255.0;
        assert!((got - want).abs() < 1e-9, "{got}");
        let seg = [Segment::line(crate::geometry::Pose2::new(0.5, 1.5, 0.0), 9.0)];
        assert!((f.extra_along(&seg) - got).abs() < 1e-9);
        // The row above holds nothing.
        assert_eq!(f.extra_line(Point2::new(0.5, 2.5), Point2::new(9.5, 2.5)), 0.0);
    }
}
