//! Obstacle distance: an exact Euclidean distance transform, exact up to a cap.
//!
//! For every cell `c`, `distance_sq(c)` is `min(cap², min |c - b|²)` over blocked cells `b`, with
//! distances between cell **centres** in cell units and every cell outside the map counted as
//! blocked (a vehicle may not leave the map). Blocked cells have 0; a free cell beside a blocked
//! one has 1. Values are integers (squared distances), so comparisons are exact.
//!
//! Why a cap: a planner only asks whether a footprint of bounded size fits, so beyond the largest
//! footprint of interest "at least `cap`" is enough. With the cap, a cell's value depends only on
//! blocked cells closer than `cap`, which lets a patch update recompute a window of the patch
//! grown by `cap - 1` on each side and nothing else. Below the cap the values are exact (tested
//! against brute force).
//!
//! Algorithm: the separable two-phase scheme of Meijster, Roerdink and Hesselink (2000). Phase 1
//! keeps, per cell, the vertical distance `g` to the nearest blocked cell in its column (capped at
//! `cap`, which only lowers values already `>= cap` and so leaves capped results unchanged).
//! Phase 2 takes, per row, `min over i of (x - i)² + g(i)²`; with the cap this is a short,
//! branch-free windowed minimum rather than a lower envelope of parabolas (see
//! `DistanceField::envelope_pass`). `g` is not kept: a patch redoes phase 1 over the window
//! phase 2 reads (the patch grown by `2 (cap - 1)` columns and `cap - 1` rows), from the blocked
//! cells of those columns within `cap` rows beyond, so the field holds 2 bytes per cell.
//!
//! Relation to Brushfire: dynamic Brushfire updates a distance map by wavefronts spreading from
//! changed cells, carrying nearest-obstacle references between neighbours; such propagation is not
//! exact in every configuration. Here the same locality comes from the cap instead: a patch
//! recomputes exactly the window it can affect with the same exact transform, so the incremental
//! result is identical to a full recomputation (tested after long random patch sequences).

use super::blocked_rows::{BlockedRows, FlagRows};
use crate::grid::CellRect;

/// Largest supported cap: sums `dx² + g²` below `2 * 127²` fit the `i16` lanes of the row pass.
pub const MAX_DISTANCE_CAP: u16 = 127;

/// The capped squared obstacle distance of every cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DistanceField {
    width: usize,
    height: usize,
    cap: u16,
    /// Capped squared Euclidean distance (phase 2; phase 1 is made afresh where it is needed).
    distance_sq: Vec<u16>,
}

/// Cells per block of the row pass: each block searches only as far as its largest vertical
/// distance requires.
/// 64 `i16` lanes (four AVX2 registers): enough work per step to hide the loop overhead, few
/// enough that one far-reaching cell does not slow many others.
const ROW_BLOCK: usize = 64;

impl DistanceField {
    /// The field of a `width x height` grid whose row-major blocked flags are `blocked`, exact up
    /// to `cap` cells (`1..=`[`MAX_DISTANCE_CAP`], checked by the caller).
    pub fn new(width: usize, height: usize, blocked: &[bool], cap: u16) -> Self {
        debug_assert!(blocked.len() == width * height);
        Self::from_rows(width, height, &mut FlagRows { flags: blocked, width }, cap)
    }

    /// [`DistanceField::new`] reading the blocked cells from `blocked` a row at a time.
    pub fn from_rows(width: usize, height: usize, blocked: &mut impl BlockedRows, cap: u16) -> Self {
        debug_assert!((1..=MAX_DISTANCE_CAP).contains(&cap));
        let mut f = Self { width, height, cap, distance_sq: vec![0; width * height] };
        f.recompute(blocked, CellRect { x: 0, y: 0, width, height });
        f
    }

    /// The cap in cells.
    pub fn cap(&self) -> u16 {
        self.cap
    }

    /// Capped squared distance of cell `(x, y)` (cell units²); `None` outside the map.
    #[inline]
    pub fn distance_sq(&self, x: usize, y: usize) -> Option<u32> {
        (x < self.width && y < self.height).then(|| u32::from(self.distance_sq[y * self.width + x]))
    }

    /// The row-major capped squared distances.
    pub fn values(&self) -> &[u16] {
        &self.distance_sq
    }

    /// Cells whose value can change when the cells of `changed` change: `changed` grown by
    /// `cap - 1` on each side, clipped to the map.
    pub fn affected(&self, changed: CellRect) -> CellRect {
        grow(changed, self.cap as usize - 1, self.width, self.height)
    }

    /// Brings the field up to date after the blocked flags changed inside `changed` only; returns
    /// the rectangle of cells that were recomputed (see [`DistanceField::affected`]).
    pub fn update(&mut self, blocked: &[bool], changed: CellRect) -> CellRect {
        let width = self.width;
        self.update_rows(&mut FlagRows { flags: blocked, width }, changed)
    }

    /// [`DistanceField::update`] reading the blocked cells from `blocked` a row at a time (only
    /// rows and columns near `changed` are asked).
    pub fn update_rows(&mut self, blocked: &mut impl BlockedRows, changed: CellRect) -> CellRect {
        let affected = self.affected(changed);
        self.recompute(blocked, affected);
        affected
    }

    /// Recomputes the cells of `rect`: phase 1 over the columns phase 2 reads (`rect` widened by
    /// `cap - 1`), from the blocked cells of its rows and up to `cap` rows beyond, then phase 2.
    fn recompute(&mut self, blocked: &mut impl BlockedRows, rect: CellRect) {
        let margin = self.cap as usize - 1;
        let cols = (rect.x.saturating_sub(margin), (rect.x + rect.width + margin).min(self.width));
        let rows = (rect.y, rect.y + rect.height);
        let vertical = vertical_window(blocked, self.height, self.cap, cols, rows);
        let window = Window { g: &vertical, x0: cols.0, width: cols.1 - cols.0 };
        self.envelope_pass(&window, rect);
    }

    /// Phase 2 for the cells of `rect`: per cell, `min(g(x)², min over 0 < dx < cap of dx² +
    /// min(g(x-dx)², g(x+dx)²))`, capped. Columns `-1` and `width` are virtual blocked sites.
    ///
    /// Why not a lower envelope: with a cap the search is short and branch-free. A cell's own
    /// column already gives `g(x)²`, so only `dx < g(x)` can improve it; each block of cells
    /// searches `dx` up to its largest `g` less one (at most `cap - 1`), in `i16` lanes that the
    /// compiler vectorises. Exact: every site that can bring a value below the cap is examined.
    fn envelope_pass(&mut self, window: &Window<'_>, rect: CellRect) {
        let (cap, width) = (self.cap, self.width);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            unsafe { row_pass_avx2(window, &mut self.distance_sq, width, cap, rect) };
            return;
        }
        row_pass(window, &mut self.distance_sq, width, cap, rect);
    }
}

/// Phase 1 over a window: the vertical distances of columns `cols.0..cols.1` in rows
/// `rows.0..rows.1` (rows of the window), row-major.
struct Window<'a> {
    g: &'a [u8],
    /// The first column.
    x0: usize,
    /// Columns per row.
    width: usize,
}

/// Phase 1 for columns `cols.0..cols.1` and rows `rows.0..rows.1` of a map `height` rows high:
/// per cell the vertical distance to the nearest blocked cell in its column (the rows beyond the
/// map counting as blocked), capped at `cap`, read from `blocked` over those rows and up to
/// `cap` rows beyond each side. Exact: a blocked cell farther than that is beyond the cap.
/// Row-major, `cols.1 - cols.0` per row, the rows `rows.0..rows.1` only.
fn vertical_window(
    blocked: &mut impl BlockedRows,
    height: usize,
    cap: u16,
    cols: (usize, usize),
    rows: (usize, usize),
) -> Vec<u8> {
    let cap8 = cap.min(255) as u8;
    let ((x0, x1), (y0, y1)) = (cols, rows);
    let w = x1 - x0;
    // The rows read: `cap` beyond the window on each side, within the map.
    let (s0, s1) = (y0.saturating_sub(cap as usize), (y1 + cap as usize).min(height));
    let mut g = vec![0u8; (s1 - s0) * w];
    // `free_mask` is 0xff for a free cell and 0 for a blocked one (branch-free select).
    let free_mask = |bb: bool| (bb as u8).wrapping_sub(1);
    // Forward (downwards in index terms): distance to the nearest blocked cell above. Whole row
    // slices so the loops vectorise. Above the first row read nothing is known: as far as the
    // cap, which is exact from `cap` rows further on.
    for y in s0..s1 {
        let r = (y - s0) * w;
        let b = blocked.row(y, x0, x1);
        let (head, tail) = g.split_at_mut(r);
        let cur = &mut tail[..w];
        if y == 0 {
            for (c, &bb) in cur.iter_mut().zip(b) {
                *c = free_mask(bb) & 1;
            }
        } else if y == s0 {
            for (c, &bb) in cur.iter_mut().zip(b) {
                *c = free_mask(bb) & cap8;
            }
        } else {
            let above = &head[r - w..r];
            for ((c, &a), &bb) in cur.iter_mut().zip(above).zip(b) {
                *c = free_mask(bb) & a.saturating_add(1).min(cap8);
            }
        }
    }
    // Backward: the nearest blocked cell below may be closer (below the last row read, nothing
    // is known; below the map's last row, the border is).
    for y in (s0..s1).rev() {
        let r = (y - s0) * w;
        let (head, tail) = g.split_at_mut(r + w);
        let cur = &mut head[r..r + w];
        if y + 1 == height {
            for c in cur.iter_mut() {
                *c = (*c).min(1);
            }
        } else if y + 1 < s1 {
            // Values are at most `cap`, so `cap` needs no second application here.
            for (c, &b) in cur.iter_mut().zip(&tail[..w]) {
                *c = (*c).min(b.saturating_add(1));
            }
        }
    }
    g.drain(..(y0 - s0) * w);
    g.truncate((y1 - y0) * w);
    g
}

/// [`row_pass`] compiled for AVX2 (twice the lanes of the baseline SSE2).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn row_pass_avx2(window: &Window<'_>, distance_sq: &mut [u16], width: usize, cap: u16, rect: CellRect) {
    row_pass(window, distance_sq, width, cap, rect)
}

/// Phase 2 over the rows of `rect` (see `DistanceField::envelope_pass`), phase 1 read from
/// `window` (rows `rect`'s, columns at least `rect`'s widened by `cap - 1` within the map).
#[inline(always)]
fn row_pass(window: &Window<'_>, distance_sq: &mut [u16], w: usize, cap: u16, rect: CellRect) {
    let margin = cap as usize - 1;
    let cap_sq = (cap * cap) as i16;
    let n = rect.width;
    // padded[j] = g² of column rect.x - margin + j; columns -1 and w are blocked (0), farther ones
    // never matter below the cap (cap²). ROW_BLOCK spare entries at the end let every block read
    // whole arrays.
    let mut padded = vec![cap_sq; n + 2 * margin + ROW_BLOCK];
    let col0 = rect.x as i64 - margin as i64;
    let map_lo = rect.x.saturating_sub(margin);
    let map_hi = (rect.x + n + margin).min(w);
    for y in rect.y..rect.y + rect.height {
        let row = y * w;
        let wr = (y - rect.y) * window.width;
        // `g[c - x0]` is column c's vertical distance.
        let (g, x0) = (&window.g[wr..wr + window.width], window.x0);
        debug_assert!(x0 <= map_lo && map_hi <= x0 + window.width);
        for c in map_lo..map_hi {
            let v = i16::from(g[c - x0]);
            padded[(c as i64 - col0) as usize] = v * v;
        }
        for border in [-1, w as i64] {
            if (col0..col0 + padded.len() as i64).contains(&border) {
                padded[(border - col0) as usize] = 0;
            }
        }
        let block = |at: usize| -> [i16; ROW_BLOCK] { padded[at..at + ROW_BLOCK].try_into().expect("block in range") };
        for start in (0..n).step_by(ROW_BLOCK) {
            let len = ROW_BLOCK.min(n - start);
            let centre = margin + start;
            let reach = g[rect.x + start - x0..rect.x + start + len - x0].iter().max().map_or(0, |&m| m as usize);
            let reach = reach.saturating_sub(1).min(margin);
            let mut best = block(centre);
            for dx in 1..=reach {
                let dx_sq = (dx * dx) as i16;
                let (left, right) = (block(centre - dx), block(centre + dx));
                for i in 0..ROW_BLOCK {
                    best[i] = best[i].min(left[i].min(right[i]) + dx_sq);
                }
            }
            let out = &mut distance_sq[row + rect.x + start..row + rect.x + start + len];
            for (o, &b) in out.iter_mut().zip(best.iter()) {
                *o = b.min(cap_sq) as u16;
            }
        }
    }
}

/// `r` grown by `margin` cells on every side, clipped to a `width x height` map.
pub(crate) fn grow(r: CellRect, margin: usize, width: usize, height: usize) -> CellRect {
    let x0 = r.x.saturating_sub(margin);
    let y0 = r.y.saturating_sub(margin);
    let x1 = (r.x + r.width).saturating_add(margin).min(width);
    let y1 = (r.y + r.height).saturating_add(margin).min(height);
    CellRect { x: x0, y: y0, width: x1.saturating_sub(x0), height: y1.saturating_sub(y0) }
}

/// Brute-force reference: capped squared distance of every cell by scanning all blocked cells
/// (and the map border). Quadratic; for tests on small maps.
pub fn brute_force_distance_sq(width: usize, height: usize, blocked: &[bool], cap: u16) -> Vec<u16> {
    let cap_sq = i64::from(cap) * i64::from(cap);
    let mut out = vec![0u16; width * height];
    for y in 0..height as i64 {
        for x in 0..width as i64 {
            // The nearest outside cell is straight across the nearest border.
            let border = (x + 1).min(y + 1).min(width as i64 - x).min(height as i64 - y);
            let mut best = (border * border).min(cap_sq);
            for by in 0..height as i64 {
                for bx in 0..width as i64 {
                    if blocked[(by * width as i64 + bx) as usize] {
                        best = best.min((bx - x) * (bx - x) + (by - y) * (by - y));
                    }
                }
            }
            out[(y * width as i64 + x) as usize] = best as u16;
        }
    }
    out
}

impl crate::memory::HeapSize for DistanceField {
    fn heap_bytes(&self) -> usize {
        self.distance_sq.heap_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn random_blocked(w: usize, h: usize, seed: u64, density: u64) -> Vec<bool> {
        let mut s = seed | 1;
        (0..w * h)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                s % 100 < density
            })
            .collect()
    }

    #[test]
    fn hand_made_values() {
        // 5x3, one blocked cell in the middle; the border counts as blocked.
        let g = crate::grid::Grid::from_rows(&[".....", "..@..", "....."]).unwrap();
        let f = DistanceField::new(5, 3, g.blocked_cells(), 10);
        assert_eq!(f.distance_sq(2, 1), Some(0));
        assert_eq!(f.distance_sq(1, 1), Some(1));
        assert_eq!(f.distance_sq(0, 0), Some(1));
        assert_eq!(f.distance_sq(5, 0), None);
    }

    #[test]
    fn baseline_row_pass_equals_the_dispatched_one() {
        // The AVX2 and baseline builds run the same code; check the baseline explicitly too.
        for (w, h, cap) in [(70, 40, 7u16), (33, 65, 30), (5, 5, 127)] {
            let blocked = random_blocked(w, h, 99 + w as u64, 15);
            let f = DistanceField::new(w, h, &blocked, cap);
            let mut baseline = vec![0u16; w * h];
            let vertical = vertical_window(&mut FlagRows { flags: &blocked, width: w }, h, cap, (0, w), (0, h));
            let window = Window { g: &vertical, x0: 0, width: w };
            row_pass(&window, &mut baseline, w, cap, CellRect { x: 0, y: 0, width: w, height: h });
            assert_eq!(&baseline[..], f.values());
            assert_eq!(f.values(), &brute_force_distance_sq(w, h, &blocked, cap)[..]);
        }
    }

    #[test]
    fn largest_cap_is_exact() {
        // Sums near 2 * 127² must not overflow the i16 lanes; long open rows reach the cap.
        for (w, h) in [(300, 3), (3, 300), (60, 60)] {
            let blocked: Vec<bool> = (0..w * h).map(|i| i % 997 == 500).collect();
            let f = DistanceField::new(w, h, &blocked, MAX_DISTANCE_CAP);
            assert_eq!(f.values(), &brute_force_distance_sq(w, h, &blocked, MAX_DISTANCE_CAP)[..]);
        }
    }

    proptest! {
        #[test]
        fn full_transform_equals_brute_force(w in 1usize..24, h in 1usize..24, seed: u64, density in 0u64..40, cap in 1u16..12) {
            let blocked = random_blocked(w, h, seed, density);
            let f = DistanceField::new(w, h, &blocked, cap);
            prop_assert_eq!(f.values(), &brute_force_distance_sq(w, h, &blocked, cap)[..]);
        }

        #[test]
        fn updates_equal_full_recomputation(w in 1usize..30, h in 1usize..30, seed: u64, cap in 1u16..9,
                                            patches in proptest::collection::vec((0usize..30, 0usize..30, 1usize..8, 1usize..8, any::<u64>(), 0u64..70), 1..25)) {
            let mut blocked = random_blocked(w, h, seed, 20);
            let mut f = DistanceField::new(w, h, &blocked, cap);
            for (px, py, pw, ph, s, d) in patches {
                let r = CellRect { x: px % w, y: py % h, width: pw.min(w - px % w), height: ph.min(h - py % h) };
                let fresh = random_blocked(r.width, r.height, s, d);
                for yy in 0..r.height {
                    for xx in 0..r.width {
                        blocked[(r.y + yy) * w + r.x + xx] = fresh[yy * r.width + xx];
                    }
                }
                f.update(&blocked, r);
                prop_assert_eq!(&f, &DistanceField::new(w, h, &blocked, cap));
                prop_assert_eq!(f.values(), &brute_force_distance_sq(w, h, &blocked, cap)[..]);
            }
        }
    }
}
