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
//! The field reads the obstacle distance from an exact capped Euclidean field
//! ([`DistanceField`]) it does not hold: in the planner that is the clearance annotations' own
//! (one per traversability, shared by every profile and by the collision map), whose cap the
//! site raises to [`CostRule::distance_cap`]. It is kept current under map patches
//! ([`CostField::update`]): once the distance is, the costs are recomputed where a distance or
//! a grade may have changed.

use crate::clearance::distance::{DistanceField, MAX_DISTANCE_CAP};
use crate::geometry::Point2;
use crate::grid::CellRect;
use crate::map::{OccupancyMap, Traversability};
use crate::trajectory::Segment;

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

/// Per-cell normalised costs of one map under a [`CostRule`], stored as bytes (`c * 255`).
#[derive(Debug, Clone, PartialEq)]
pub struct CostField {
    width: usize,
    height: usize,
    rule: CostRule,
    /// Clearance cost byte by squared distance, up to the square of the rule's
    /// [`CostRule::distance_cap`] (every farther cell reads the last entry, 0).
    by_distance: Vec<u8>,
    cost: Vec<u8>,
}

/// A normalised cost as a byte.
fn to_byte(c: f64) -> u8 {
    (c.clamp(0.0, 1.0) * 255.0).round() as u8
}

impl CostField {
    /// The field of `map` under `rule` with the obstacle distance `distance` (of `map`'s cells
    /// blocked under the rule's traversability, capped at [`CostRule::distance_cap`] or beyond):
    /// O(cells).
    pub fn new(map: &OccupancyMap, rule: CostRule, distance: &DistanceField) -> Self {
        debug_assert!(distance.cap() >= rule.distance_cap() && distance.values().len() == map.data.len());
        let (width, height) = (map.info.width, map.info.height);
        let cap = u32::from(rule.distance_cap());
        let by_distance = (0..=cap * cap).map(|d2| to_byte(rule.clearance_cost(f64::from(d2).sqrt()))).collect();
        let mut field = Self { width, height, rule, by_distance, cost: vec![0; width * height] };
        field.recompute(map, CellRect { x: 0, y: 0, width, height }, distance);
        field
    }

    /// [`CostField::new`] with an obstacle distance made for it and dropped (for a caller
    /// that holds none, such as a picture or a benchmark): O(cells).
    pub fn of_map(map: &OccupancyMap, rule: CostRule) -> Self {
        let blocked: Vec<bool> = map.data.iter().map(|&v| rule.traversability.is_blocked(v)).collect();
        let distance = DistanceField::new(map.info.width, map.info.height, &blocked, rule.distance_cap());
        Self::new(map, rule, &distance)
    }

    /// The rule the field was built with.
    pub fn rule(&self) -> &CostRule {
        &self.rule
    }

    /// Brings the field up to date after the values inside `changed` changed in `map` (same
    /// geometry as the map it was built from), `distance` being the obstacle distance already
    /// brought up to date (as [`CostField::new`] takes it): every cell whose distance (up to the
    /// rule's cap) or grade may have changed is recomputed. Returns that rectangle. The result
    /// equals a fresh build on `map`.
    pub fn update(&mut self, map: &OccupancyMap, changed: CellRect, distance: &DistanceField) -> CellRect {
        debug_assert!(distance.cap() >= self.rule.distance_cap());
        let grow = usize::from(self.rule.distance_cap()) - 1;
        let (x0, y0) = (changed.x.saturating_sub(grow), changed.y.saturating_sub(grow));
        let x1 = (changed.x + changed.width + grow).min(self.width);
        let y1 = (changed.y + changed.height + grow).min(self.height);
        let affected = CellRect { x: x0, y: y0, width: x1.saturating_sub(x0), height: y1.saturating_sub(y0) };
        self.recompute(map, affected, distance);
        affected
    }

    fn recompute(&mut self, map: &OccupancyMap, rect: CellRect, distance: &DistanceField) {
        let d2 = distance.values();
        let last = self.by_distance.len() - 1;
        for y in rect.y..rect.y + rect.height {
            for x in rect.x..rect.x + rect.width {
                let k = y * self.width + x;
                let by_grade = to_byte(self.rule.grade(map.data[k]));
                self.cost[k] = by_grade.max(self.by_distance[usize::from(d2[k]).min(last)]);
            }
        }
    }

    /// The normalised cost (`0..=1`) of cell `(x, y)`; 1 outside the map.
    #[inline]
    pub fn cost(&self, x: i64, y: i64) -> f64 {
        f64::from(self.byte(x, y)) / 255.0
    }

    /// The normalised cost at point `p` (cell units): that of the cell holding it.
    #[inline]
    pub fn cost_at(&self, p: Point2) -> f64 {
        f64::from(self.byte_at(p)) / 255.0
    }

    /// The cost at point `p` (cell units) as stored, `0..=255` for `0..=1` (255 outside the
    /// map): the line integrals sum these as integers and scale once.
    #[inline]
    fn byte_at(&self, p: Point2) -> u8 {
        self.byte(crate::geometry::floor_i64(p.x), crate::geometry::floor_i64(p.y))
    }

    /// The stored cost of cell `(x, y)`, `u8::MAX` (cost 1) outside the map.
    #[inline]
    fn byte(&self, x: i64, y: i64) -> u8 {
        if x < 0 || y < 0 || x >= self.width as i64 || y >= self.height as i64 {
            return u8::MAX;
        }
        self.cost[y as usize * self.width + x as usize]
    }

    /// `cost_penalty * c` of the cell at index `y * width + x` (the weight above 1 per cell
    /// unit) as a closure for a search's inner loop: a table lookup per call. An index outside
    /// the map is the caller's error (it panics).
    pub fn extra_per_cell(&self) -> impl Fn(usize) -> f64 + '_ {
        let table: [f64; 256] = std::array::from_fn(|b| self.rule.cost_penalty * b as f64 / 255.0);
        move |i| table[usize::from(self.cost[i])]
    }

    /// `cost_penalty`.
    pub fn penalty(&self) -> f64 {
        self.rule.cost_penalty
    }

    /// The cost of a path above its length, `cost_penalty ∫ c ds` (cells), along `segments`
    /// (turns on the spot cost nothing: they have no length).
    pub fn extra_along(&self, segments: &[Segment]) -> f64 {
        let mut sum = 0.0;
        for s in segments {
            let points = s.points_along();
            sum += sample_mid(s.length, |t| self.byte_at(points.at(t)));
        }
        self.rule.cost_penalty * sum / 255.0
    }

    /// The cost above their length of `cells` (each a cell offset and the length in it) placed
    /// at `(x, y)`: a tabulated curve's [`CostField::extra_along`].
    pub fn extra_cells(&self, cells: &[crate::directional::CentreCell], x: i64, y: i64) -> f64 {
        let sum: f64 =
            cells.iter().map(|c| f64::from(c.length) * self.cost(x + i64::from(c.dx), y + i64::from(c.dy))).sum();
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
        let mut sum = 0u64;
        for k in 0..n as usize {
            let t = (k as f64 + 0.5) / n;
            sum += u64::from(self.byte_at(Point2::new(a.x + t * dx, a.y + t * dy)));
        }
        self.rule.cost_penalty * sum as f64 / 255.0 * (len / n)
    }

    /// Bytes held (costs and table).
    pub fn bytes(&self) -> usize {
        self.cost.len() + self.by_distance.len()
    }
}

/// `∫ f ds` over `0..len`, by the midpoints of `ceil(len / COST_STEP)` equal steps, for `f`
/// an integer-valued function (the stored costs): summed exactly, scaled once.
#[inline]
fn sample_mid(len: f64, mut f: impl FnMut(f64) -> u8) -> f64 {
    if len <= 0.0 {
        return 0.0;
    }
    let n = (len / COST_STEP).ceil().max(1.0);
    let ds = len / n;
    let mut sum = 0u64;
    for k in 0..n as usize {
        sum += u64::from(f((k as f64 + 0.5) * ds));
    }
    sum as f64 * ds
}

impl crate::memory::HeapSize for CostField {
    fn heap_bytes(&self) -> usize {
        self.by_distance.heap_bytes() + self.cost.heap_bytes()
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
    fn updates_equal_a_fresh_build() {
        let mut m = map(&[
            "........................",
            "........................",
            "........@@..............",
            "........................",
            "..................g.....",
            "........................",
            "........................",
        ]);
        // The distance held apart, at a larger cap than the rule needs (as the planner's
        // annotations hold it).
        let blocked = |m: &OccupancyMap| m.data.iter().map(|&v| v >= 65).collect::<Vec<bool>>();
        let (w, h) = (m.info.width, m.info.height);
        let mut distance = DistanceField::new(w, h, &blocked(&m), 20);
        let mut f = CostField::new(&m, rule(1.0), &distance);
        for (x, y, v) in [(3usize, 3usize, 100i8), (8, 2, 0), (18, 4, 30), (20, 6, 100), (12, 1, 40)] {
            m.data[y * w + x] = v;
            let rect = CellRect { x, y, width: 1, height: 1 };
            distance.update(&blocked(&m), rect);
            f.update(&m, rect, &distance);
            assert_eq!(f, CostField::of_map(&m, rule(1.0)), "after ({x}, {y}) = {v}");
        }
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
