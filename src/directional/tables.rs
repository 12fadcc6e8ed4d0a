//! Lookup tables of Directional A*, computed once per (turning radius, footprint, lattice
//! resolution, heading bins) and reused by every search.
//!
//! - [`EdgeTable`]: for every (start heading, end heading, lattice offset) the shortest curve
//!   between the two lattice poses, its length and turning, and the grid cells the footprint sweeps
//!   along it (as row runs relative to the start cell). Entries are filled lazily on first use
//!   (thread-safe), so a table sized for Smoothing-48 costs only what the searches touch.
//!   With reversing the table also holds the edges driven backwards: from heading `h0` to `h1`,
//!   the shortest curve of the vehicle turned round, driven backwards
//!   ([`super::motion::Motion::in_gear`]), computed from the same poses the chain builds it from,
//!   so the cells checked are the cells of the curve built (the flipped bins' own yaws can differ
//!   from a turned-round heading by a rounding, enough to flip a tie between two Dubins words).
//! - [`HeuristicTable`]: the curve length to a goal from every lattice offset in a window, by
//!   heading and goal heading (and for a free goal heading), Euclidean beyond the window: Dubins
//!   lengths forwards, Reeds-Shepp lengths with reversing (never above the cost of a curve, which
//!   prices reversing and cusps at least at their length).

use super::footprint::{swept_spans, Shape, Span, SEARCH_MARGIN};
use super::lattice::{HeadingBins, Lattice};
use super::motion::{flipped, single_gear_curve, Gear, MotionModel};
use crate::curves::pose_to_point;
use crate::geometry::{Point2, Pose2};
use crate::trajectory::Segment;
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

thread_local! {
    /// How long this thread has spent in lookups that found their entry empty: computing it,
    /// or waiting for another thread computing the same one ([`filling_time_on_this_thread`]).
    static FILLING: Cell<Duration> = const { Cell::new(Duration::ZERO) };
}

#[cfg(test)]
thread_local! {
    /// Test seam: how much longer each entry this thread computes takes
    /// ([`slow_filling_on_this_thread`]).
    static SLOWER: Cell<Duration> = const { Cell::new(Duration::ZERO) };
}

/// Test seam: from now on each entry this thread computes takes at least `extra` longer, so a
/// test can make filling outlast a budget on any computer.
#[cfg(test)]
pub(crate) fn slow_filling_on_this_thread(extra: Duration) {
    SLOWER.with(|s| s.set(extra));
}

/// How long this thread has spent, since it started, in lookups that found their entry empty
/// ([`EdgeTable::edge_in`], also through [`EdgeTable::fill_all`]: computing the entry, or
/// waiting while another thread computes it); a filler ahead of the searches
/// ([`EdgeTable::fill_pair`]) is not counted. A plan's budget leaves the time its own thread
/// spends so out ([`crate::planner::Budget`]): filling the tables is the one-off price of new
/// parameters, not planning, and after a change of footprint it takes seconds on a 2-core
/// computer.
pub fn filling_time_on_this_thread() -> Duration {
    FILLING.with(Cell::get)
}

/// One tabulated lattice edge.
#[derive(Debug, Clone)]
pub struct Edge {
    /// Curve length (cells).
    pub length: f64,
    /// Total absolute turning (radians).
    pub turning: f64,
    /// Swept cells, relative to the start lattice cell's low corner.
    pub spans: Box<[Span]>,
    /// The cells the centre line passes, relative to the same corner, each with the length of
    /// the curve in it (sampled as [`crate::costs::CostField::extra_along`] samples): what the
    /// edge's traversal cost is summed over.
    pub centre: Box<[CentreCell]>,
}

/// A cell an edge's centre line passes (offset from the start lattice cell's low corner) and the
/// length of the curve in it (cells).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CentreCell {
    /// Column offset.
    pub dx: i32,
    /// Row offset.
    pub dy: i32,
    /// Length in the cell (cells).
    pub length: f32,
}

/// The cells the centre line of `segments` passes, with the length in each: the midpoints of
/// equal steps of at most [`crate::costs::COST_STEP`] per segment, merged by cell.
fn centre_cells(segments: &[crate::trajectory::Segment]) -> Vec<CentreCell> {
    let mut out: Vec<CentreCell> = Vec::new();
    for s in segments.iter().filter(|s| s.length > 0.0) {
        let n = (s.length / crate::costs::COST_STEP).ceil().max(1.0);
        let ds = s.length / n;
        let points = s.points_along();
        for k in 0..n as usize {
            let p = points.at((k as f64 + 0.5) * ds);
            let (dx, dy) = (p.x.floor() as i32, p.y.floor() as i32);
            match out.iter_mut().find(|c| c.dx == dx && c.dy == dy) {
                Some(c) => c.length += ds as f32,
                None => out.push(CentreCell { dx, dy, length: ds as f32 }),
            }
        }
    }
    out
}

/// The parameters a table depends on; a change of any of them needs new tables.
#[derive(Debug, Clone, PartialEq)]
pub struct TableKey {
    /// Minimum turning radius (cells).
    pub turning_radius: f64,
    /// Footprint (cells).
    pub footprint: Shape,
    /// Lattice spacing (cells).
    pub spacing: i64,
    /// Heading bins.
    pub bins: HeadingBins,
}

/// Lazily filled hit-check table of lattice edges with offsets up to `max_offset` lattice cells,
/// forwards, and with reversing backwards too.
///
/// Memory: `bins² x (2 max_offset + 1)²` entries per gear, allocated at once (8 bins and the
/// planner's reach of 3: 3 136 entries of `size_of::<OnceLock<Edge>>()`, 56 bytes), each filled
/// at most once with its swept row runs (12 bytes a run) and its centre line's cells (12 bytes
/// a cell); [`EdgeTable::bytes`] tells what it
/// holds, and it never holds more than when every entry is filled ([`EdgeTable::fill_all`]).
#[derive(Debug)]
pub struct EdgeTable {
    key: TableKey,
    max_offset: i64,
    entries: Vec<OnceLock<Edge>>,
    /// The edges driven backwards (empty without reversing).
    reverse: Vec<OnceLock<Edge>>,
    /// The offsets a filler ahead of the searches was handed out for, a bit each
    /// ([`EdgeTable::claim_filling`]; the table reaches at most 3 lattice cells: 49 offsets).
    claimed: AtomicU64,
}

impl EdgeTable {
    /// An empty table for edges up to `max_offset` (clamped to 1..=3) lattice cells away, in
    /// the gears of `model`.
    pub fn new(key: TableKey, max_offset: i64, model: MotionModel) -> Self {
        let n = key.bins.count();
        // At most 3 (Directional-48's reach): the claimed offsets are a bit each in a u64.
        let max_offset = max_offset.clamp(1, 3);
        let side = (2 * max_offset + 1) as usize;
        let size = |gear| if model.gears().contains(&gear) { n * n * side * side } else { 0 };
        Self {
            key,
            max_offset,
            entries: (0..size(Gear::Forward)).map(|_| OnceLock::new()).collect(),
            reverse: (0..size(Gear::Reverse)).map(|_| OnceLock::new()).collect(),
            claimed: AtomicU64::new(0),
        }
    }

    /// What the table was built for.
    pub fn key(&self) -> &TableKey {
        &self.key
    }

    /// Largest |dx|, |dy| covered.
    pub fn max_offset(&self) -> i64 {
        self.max_offset
    }

    /// The edge from heading bin `h0` to bin `h1` across lattice offset `(dx, dy)`, or `None`
    /// when the offset lies beyond the table (or is `(0, 0)` with equal headings).
    #[inline]
    pub fn edge(&self, h0: usize, h1: usize, dx: i64, dy: i64) -> Option<&Edge> {
        self.edge_in(Gear::Forward, h0, h1, dx, dy)
    }

    /// The edge driven in `gear` from the vehicle facing bin `h0` to it facing bin `h1`, across
    /// lattice offset `(dx, dy)`; `None` beyond the table or in a gear it was not built for. An
    /// entry not filled yet is filled now, and the time it took is counted in
    /// [`filling_time_on_this_thread`].
    #[inline]
    pub fn edge_in(&self, gear: Gear, h0: usize, h1: usize, dx: i64, dy: i64) -> Option<&Edge> {
        let slot = self.slot(gear, h0, h1, dx, dy)?;
        Some(match slot.get() {
            Some(edge) => edge,
            None => self.fill(slot, gear, h0, h1, dx, dy),
        })
    }

    /// Whether the entry driven in `gear` from bin `h0` to bin `h1` across `(dx, dy)` is filled
    /// (true beyond the table or in a gear it was not built for: nothing to fill there).
    #[inline]
    pub fn is_filled(&self, gear: Gear, h0: usize, h1: usize, dx: i64, dy: i64) -> bool {
        self.slot(gear, h0, h1, dx, dy).is_none_or(|slot| slot.get().is_some())
    }

    /// Fills `slot` (or waits for another thread filling it) and counts the time on this
    /// thread's filling clock.
    #[cold]
    fn fill<'a>(&self, slot: &'a OnceLock<Edge>, gear: Gear, h0: usize, h1: usize, dx: i64, dy: i64) -> &'a Edge {
        let t = Instant::now();
        let edge = slot.get_or_init(|| {
            #[cfg(test)]
            std::thread::sleep(SLOWER.with(Cell::get));
            self.compute(gear, h0, h1, dx, dy)
        });
        FILLING.with(|f| f.set(f.get() + t.elapsed()));
        edge
    }

    /// The entry of an edge, filled or not; `None` beyond the table or in a gear it was not
    /// built for.
    #[inline]
    fn slot(&self, gear: Gear, h0: usize, h1: usize, dx: i64, dy: i64) -> Option<&OnceLock<Edge>> {
        let m = self.max_offset;
        if dx.abs() > m || dy.abs() > m {
            return None;
        }
        let n = self.key.bins.count();
        let side = (2 * m + 1) as usize;
        let idx = ((h0 * n + h1) * side + (dy + m) as usize) * side + (dx + m) as usize;
        let entries = match gear {
            Gear::Forward => &self.entries,
            Gear::Reverse => &self.reverse,
        };
        entries.get(idx)
    }

    fn compute(&self, gear: Gear, h0: usize, h1: usize, dx: i64, dy: i64) -> Edge {
        let k = &self.key;
        let l = Lattice { spacing: k.spacing, cols: 0, rows: 0 };
        let (a, b) = (l.pose(0, 0, k.bins, h0), l.pose(dx, dy, k.bins, h1));
        // Some Dubins word always exists for a positive radius and finite poses.
        let (curve, segments) = single_gear_curve(a, b, k.turning_radius, gear).expect("valid radius");
        Edge {
            length: curve.length(),
            turning: curve.turning(),
            spans: swept_spans(&segments, &k.footprint, SEARCH_MARGIN).into_boxed_slice(),
            centre: centre_cells(&segments).into_boxed_slice(),
        }
    }

    /// Bytes held: the entry arrays and the row runs of the entries filled so far.
    pub fn bytes(&self) -> usize {
        let all = || self.entries.iter().chain(&self.reverse);
        let runs: usize = all().filter_map(OnceLock::get).map(|e| e.spans.len()).sum();
        let centre: usize = all().filter_map(OnceLock::get).map(|e| e.centre.len()).sum();
        let capacity = self.entries.capacity() + self.reverse.capacity();
        capacity * std::mem::size_of::<OnceLock<Edge>>()
            + runs * std::mem::size_of::<Span>()
            + centre * std::mem::size_of::<CentreCell>()
    }

    /// Computes every entry now (benchmarks do this so that no search pays for filling).
    pub fn fill_all(&self) {
        let n = self.key.bins.count();
        let m = self.max_offset;
        for h0 in 0..n {
            for h1 in 0..n {
                for dy in -m..=m {
                    for dx in -m..=m {
                        let _ = self.edge_in(Gear::Forward, h0, h1, dx, dy);
                        let _ = self.edge_in(Gear::Reverse, h0, h1, dx, dy);
                    }
                }
            }
        }
    }

    /// Computes the entries driven in `gear` from heading bin `h0` to heading bin `h1` across
    /// each of `offsets` that are not filled yet (those beyond the table are skipped; nothing in
    /// a gear the table was not built for); returns how many it filled. For a filler ahead of
    /// the searches ([`super::TableWarmer`]), perhaps at a low priority: each entry is computed
    /// outside the entry's lock, so a search needing it meanwhile computes it itself instead of
    /// waiting, and whichever is first is kept. That changes no result: an entry is the same
    /// whoever computes it.
    pub fn fill_pair(&self, gear: Gear, h0: usize, h1: usize, offsets: &[(i64, i64)]) -> usize {
        let mut filled = 0;
        for &(dx, dy) in offsets {
            let Some(slot) = self.slot(gear, h0, h1, dx, dy) else { continue };
            if slot.get().is_none() && slot.set(self.compute(gear, h0, h1, dx, dy)).is_ok() {
                filled += 1;
            }
        }
        filled
    }

    /// Claims the filling ahead of the searches of the entries across `offsets` (those within
    /// the table): returns the offsets no caller claimed before, so each is filled by one filler
    /// however often the table is offered, and a table kept under a wider neighbourhood gets a
    /// filler for the new offsets only.
    pub fn claim_filling(&self, offsets: &[(i64, i64)]) -> Vec<(i64, i64)> {
        let m = self.max_offset;
        let side = 2 * m + 1;
        let bit = |&(dx, dy): &(i64, i64)| 1u64 << ((dy + m) * side + dx + m);
        let within: Vec<(i64, i64)> = offsets.iter().copied().filter(|o| o.0.abs() <= m && o.1.abs() <= m).collect();
        let wanted = within.iter().fold(0u64, |acc, o| acc | bit(o));
        let before = self.claimed.fetch_or(wanted, Ordering::Relaxed);
        within.into_iter().filter(|o| before & bit(o) == 0).collect()
    }

    /// How many entries are filled, in both gears.
    pub fn filled(&self) -> usize {
        self.entries.iter().chain(&self.reverse).filter(|e| e.get().is_some()).count()
    }

    /// The curve of an edge driven in `gear`, placed with its start at lattice cell `(i, j)`
    /// ([`single_gear_curve`], as the chain builds it).
    #[allow(clippy::too_many_arguments)]
    pub fn segments_at(&self, gear: Gear, i: i64, j: i64, h0: usize, h1: usize, dx: i64, dy: i64) -> Vec<Segment> {
        let k = &self.key;
        let l = Lattice { spacing: k.spacing, cols: 0, rows: 0 };
        let (a, b) = (l.pose(i, j, k.bins, h0), l.pose(i + dx, j + dy, k.bins, h1));
        single_gear_curve(a, b, k.turning_radius, gear).map(|(_, segments)| segments).unwrap_or_default()
    }
}

/// Curve length to a goal from lattice offsets within a window, Euclidean beyond it.
///
/// Memory: `(bins + 1) x bins x (2 window + 1)²` `f32` values, computed once in [`HeuristicTable::new`]
/// and never grown.
#[derive(Debug)]
pub struct HeuristicTable {
    bins: HeadingBins,
    spacing: i64,
    window: i64,
    /// `[goal_bin][heading][dy][dx]` for a goal with a given heading.
    posed: Vec<f32>,
    /// `[heading][dy][dx]` for a free goal heading.
    free: Vec<f32>,
}

impl HeuristicTable {
    /// Builds the table for `turning_radius` (cells) over offsets within `window` lattice cells,
    /// with the curves of `model`.
    pub fn new(turning_radius: f64, spacing: i64, bins: HeadingBins, window: i64, model: MotionModel) -> Self {
        let point_length = |from: Pose2, to: Point2| {
            let fwd = pose_to_point(from, to, turning_radius).map_or(f64::INFINITY, |c| c.length());
            match model {
                MotionModel::Forward => fwd,
                MotionModel::ReedsShepp => {
                    fwd.min(pose_to_point(flipped(from), to, turning_radius).map_or(f64::INFINITY, |c| c.length()))
                }
            }
        };
        let n = bins.count();
        let side = (2 * window + 1) as usize;
        let l = Lattice { spacing, cols: 0, rows: 0 };
        let mut posed = vec![0f32; n * n * side * side];
        let mut free = vec![0f32; n * side * side];
        for dy in -window..=window {
            for dx in -window..=window {
                let cell = (dy + window) as usize * side + (dx + window) as usize;
                for h in 0..n {
                    // Offset of the state from the goal cell: the state sits at (dx, dy).
                    let from = l.pose(dx, dy, bins, h);
                    let mut best_free = f64::INFINITY;
                    for g in 0..n {
                        let to = l.pose(0, 0, bins, g);
                        let len = model.shortest_length(from, to, turning_radius).unwrap_or(f64::INFINITY);
                        posed[(g * n + h) * side * side + cell] = len as f32;
                        best_free = best_free.min(len);
                    }
                    best_free = best_free.min(point_length(from, l.centre(0, 0)));
                    free[h * side * side + cell] = best_free as f32;
                }
            }
        }
        Self { bins, spacing, window, posed, free }
    }

    /// Estimated cost from the lattice pose `(i, j, h)` to `goal` (heading ignored when
    /// `goal_free`). Within the window it is the tabulated curve length less one lattice cell (the
    /// goal is not on the lattice), never below the straight-line distance.
    pub fn estimate(&self, i: i64, j: i64, h: usize, goal: Pose2, goal_free: bool) -> f64 {
        let l = Lattice { spacing: self.spacing, cols: 0, rows: 0 };
        let euclid = l.centre(i, j).distance(goal.point());
        let (gi, gj) = l.cell_of(Point2::new(goal.x, goal.y));
        let (dx, dy) = (i - gi, j - gj);
        if dx.abs() > self.window || dy.abs() > self.window {
            return euclid;
        }
        let side = (2 * self.window + 1) as usize;
        let cell = (dy + self.window) as usize * side + (dx + self.window) as usize;
        let n = self.bins.count();
        let tab = if goal_free {
            self.free[h * side * side + cell]
        } else {
            let g = self.bins.nearest(goal.yaw);
            self.posed[(g * n + h) * side * side + cell]
        } as f64;
        (tab - self.spacing as f64 * std::f64::consts::SQRT_2).max(euclid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curves::dubins_shortest;
    use crate::directional::footprint::CollisionMap;
    use crate::grid::Grid;

    /// A tabulated edge's traversal cost placed anywhere equals the cost integral of its curve
    /// placed there, on a random cost field, in both gears.
    #[test]
    fn an_edges_centre_cells_price_its_curve() {
        use crate::costs::{CostField, CostRule};
        use crate::geometry::Pose2;
        use crate::map::{MapInfo, OccupancyMap, Traversability};
        let (w, h) = (80usize, 80usize);
        let mut seed = 5u64;
        let data: Vec<i8> = (0..w * h)
            .map(|_| {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((seed >> 33) % 64) as i8
            })
            .collect();
        let info =
            MapInfo { width: w, height: h, resolution: 0.05, origin: Pose2::new(0.0, 0.0, 0.0), frame_id: "m".into() };
        let map = OccupancyMap { info, data };
        let rule = CostRule {
            cost_penalty: 3.0,
            preferred_clearance: 0.0,
            inscribed: 0.0,
            traversability: Traversability { occupied_threshold: 65, allow_unknown: false },
        };
        let field = CostField::of_map(&map, rule);
        let key = TableKey { turning_radius: 6.0, footprint: Shape::Disk(2.0), spacing: 3, bins: HeadingBins::Eight };
        let table = EdgeTable::new(key.clone(), 3, MotionModel::ReedsShepp);
        let l = Lattice { spacing: 3, cols: 0, rows: 0 };
        let mut compared = 0;
        for gear in [Gear::Forward, Gear::Reverse] {
            for (h0, h1, dx, dy) in [(0, 0, 2, 0), (0, 1, 2, 1), (3, 5, -2, 1), (7, 6, 1, -3), (2, 2, 0, 3)] {
                let Some(e) = table.edge_in(gear, h0, h1, dx, dy) else { continue };
                let (a, b) = (l.pose(0, 0, key.bins, h0), l.pose(dx, dy, key.bins, h1));
                let (_, segments) = single_gear_curve(a, b, key.turning_radius, gear).unwrap();
                let (bx, by) = (30i64, 36i64);
                let moved: Vec<_> = segments
                    .iter()
                    .map(|s| crate::trajectory::Segment {
                        start: Pose2::new(s.start.x + bx as f64, s.start.y + by as f64, s.start.yaw),
                        ..*s
                    })
                    .collect();
                let (tabulated, direct) = (field.extra_cells(&e.centre, bx, by), field.extra_along(&moved));
                assert!(
                    (tabulated - direct).abs() < 1e-4 * direct.max(1.0),
                    "{gear:?} {h0} {h1} {dx} {dy}: {tabulated} vs {direct}"
                );
                compared += 1;
            }
        }
        assert!(compared >= 8);
    }

    /// The edge table never holds more than its full size, however often every entry is asked for.
    #[test]
    fn the_edge_table_stays_at_its_full_size() {
        let key = TableKey { turning_radius: 10.0, footprint: Shape::Disk(4.0), spacing: 2, bins: HeadingBins::Eight };
        let table = EdgeTable::new(key, 3, MotionModel::Forward);
        let empty = table.bytes();
        assert_eq!(std::mem::size_of::<OnceLock<Edge>>(), 56, "the documented entry size");
        assert_eq!(std::mem::size_of::<CentreCell>(), 12, "the documented centre cell size");
        assert_eq!(empty, 8 * 8 * 7 * 7 * 56);
        let _ = table.edge(1, 2, 3, -1);
        assert!(table.bytes() > empty);
        table.fill_all();
        let full = table.bytes();
        for _ in 0..3 {
            table.fill_all();
            assert_eq!(table.bytes(), full);
        }
    }

    #[test]
    fn tabulated_spans_equal_the_swept_cells_of_the_placed_curve() {
        let key = TableKey { turning_radius: 6.0, footprint: Shape::Disk(1.5), spacing: 3, bins: HeadingBins::Eight };
        let t = EdgeTable::new(key, 3, MotionModel::Forward);
        for (h0, h1, dx, dy) in [(0, 1, 2, 1), (0, 2, 2, 2), (3, 3, -1, 1), (0, 4, 1, 0), (5, 0, -3, 2)] {
            let e = t.edge(h0, h1, dx, dy).unwrap();
            let placed = t.segments_at(Gear::Forward, 7, 4, h0, h1, dx, dy);
            let direct = swept_spans(&placed, 1.5, SEARCH_MARGIN);
            let shifted: Vec<Span> =
                e.spans.iter().map(|s| Span { y: s.y + 4 * 3, x0: s.x0 + 7 * 3, x1: s.x1 + 7 * 3 }).collect();
            assert_eq!(shifted, direct, "edge {h0} {h1} {dx} {dy}");
            assert!((e.length - crate::curves::segments_length(&placed)).abs() < 1e-9);
        }
        assert!(t.edge(0, 0, 4, 0).is_none());
        // A table lookup and a direct check agree on a map.
        let mut g = Grid::new_free(60, 60).unwrap();
        g.set_blocked(30, 20, true).unwrap();
        let m = CollisionMap::new(&g);
        for i in 5..12 {
            for (h0, h1, dx, dy) in [(0, 1, 2, 1), (2, 2, 0, 2), (0, 0, 3, 0)] {
                let e = t.edge(h0, h1, dx, dy).unwrap();
                let by_table = m.spans_free(&e.spans, i * 3, 6 * 3);
                let direct = m.sweep_free(&t.segments_at(Gear::Forward, i, 6, h0, h1, dx, dy), 1.5, SEARCH_MARGIN);
                assert_eq!(by_table, direct);
            }
        }
    }

    #[test]
    fn heuristic_is_exact_on_lattice_goals_up_to_one_cell_and_euclidean_far_away() {
        let h = HeuristicTable::new(5.0, 2, HeadingBins::Eight, 6, MotionModel::Forward);
        let l = Lattice { spacing: 2, cols: 100, rows: 100 };
        let goal = l.pose(20, 20, HeadingBins::Eight, 2);
        let from = l.pose(23, 18, HeadingBins::Eight, 5);
        let exact = dubins_shortest(from, goal, 5.0).unwrap().length();
        let est = h.estimate(23, 18, 5, goal, false);
        assert!(est <= exact + 1e-4 && est >= exact - 2.0 * 2f64.sqrt() - 1e-4);
        let far = h.estimate(90, 20, 0, goal, false);
        assert!((far - l.centre(90, 20).distance(goal.point())).abs() < 1e-9);
    }

    /// A reverse lattice edge is checked by its table entry; the chain builds it from the lattice
    /// poses with `Motion::in_gear`. Both sweep the same cells, for every edge of both bin counts,
    /// placed anywhere (with 16 bins, the forward edge of the flipped bins differs for some).
    #[test]
    fn reverse_edges_as_built_sweep_the_tabulated_cells() {
        use crate::directional::motion::Motion;
        for bins in [HeadingBins::Eight, HeadingBins::Sixteen] {
            let key = TableKey { turning_radius: 6.0, footprint: Shape::Disk(1.5), spacing: 3, bins };
            let t = EdgeTable::new(key, 3, MotionModel::ReedsShepp);
            let motion = Motion {
                model: MotionModel::ReedsShepp,
                radius: 6.0,
                turn_penalty: 0.0,
                reverse_penalty: 1.0,
                change_penalty: 0.0,
            };
            let n = bins.count();
            let l = Lattice { spacing: 3, cols: 0, rows: 0 };
            let (i, j) = (7, 4);
            for h0 in 0..n {
                for h1 in 0..n {
                    for (dx, dy) in crate::directional::Neighbourhood::Directional48.offsets() {
                        let e = t.edge_in(Gear::Reverse, h0, h1, dx, dy).unwrap();
                        let built = motion
                            .in_gear(l.pose(i, j, bins, h0), l.pose(i + dx, j + dy, bins, h1), Gear::Reverse)
                            .unwrap();
                        let direct = swept_spans(&built, Shape::Disk(1.5), SEARCH_MARGIN);
                        let shifted: Vec<Span> = e
                            .spans
                            .iter()
                            .map(|s| Span {
                                y: s.y + (j * 3) as i32,
                                x0: s.x0 + (i * 3) as i32,
                                x1: s.x1 + (i * 3) as i32,
                            })
                            .collect();
                        assert_eq!(shifted, direct, "{bins:?} {h0} {h1} {dx} {dy}");
                    }
                }
            }
        }
    }
}
