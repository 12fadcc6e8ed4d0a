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
//! Algorithm: the two-phase transform of Meijster, Roerdink and Hesselink (2000). Phase 1 keeps,
//! per cell, the vertical distance `g` to the nearest blocked cell in its column (capped at `cap`,
//! which only lowers values that are already `>= cap` and so leaves capped results unchanged).
//! Phase 2 takes, per row, the lower envelope of the parabolas `(x - i)² + g(i)²`. `g` is kept
//! between updates so a patch only redoes phase 1 in the patch's columns.

use crate::grid::CellRect;

/// Largest supported cap (squared distances then fit in a `u16`).
pub const MAX_DISTANCE_CAP: u16 = 255;

/// The capped squared obstacle distance of every cell, kept with its vertical-distance pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DistanceField {
    width: usize,
    height: usize,
    cap: u16,
    /// Phase 1: vertical distance to the nearest blocked cell in the column, capped at `cap`.
    vertical: Vec<u8>,
    /// Phase 2: capped squared Euclidean distance.
    distance_sq: Vec<u16>,
}

/// Reusable buffers for the lower-envelope pass (one row at a time).
#[derive(Default)]
struct Envelope {
    /// Parabola apex values `g²` of the row's sites (index 0 is the site at the row's left end).
    apex: Vec<i64>,
    sites: Vec<i64>,
    starts: Vec<i64>,
}

impl Envelope {
    /// Lower envelope over sites `0..apex.len()`; calls `emit(index, value)` for every index in
    /// `out_lo..out_hi` (in decreasing order).
    fn run(&mut self, out_lo: usize, out_hi: usize, mut emit: impl FnMut(usize, i64)) {
        let n = self.apex.len();
        let apex = &self.apex;
        let f = |x: i64, i: i64| (x - i) * (x - i) + apex[i as usize];
        // Where site u starts to beat site i (i < u): floor division keeps it exact for negatives.
        let sep = |i: i64, u: i64| (u * u - i * i + apex[u as usize] - apex[i as usize]).div_euclid(2 * (u - i));
        self.sites.clear();
        self.starts.clear();
        self.sites.push(0);
        self.starts.push(0);
        for u in 1..n as i64 {
            while let (Some(&s), Some(&t)) = (self.sites.last(), self.starts.last()) {
                if f(t, s) > f(t, u) {
                    self.sites.pop();
                    self.starts.pop();
                } else {
                    break;
                }
            }
            match self.sites.last() {
                None => {
                    self.sites.push(u);
                    self.starts.push(0);
                }
                Some(&s) => {
                    let w = 1 + sep(s, u);
                    if w < n as i64 {
                        self.sites.push(u);
                        self.starts.push(w);
                    }
                }
            }
        }
        let mut q = self.sites.len() - 1;
        for x in (out_lo..out_hi).rev() {
            while self.starts[q] > x as i64 {
                q -= 1;
            }
            emit(x, f(x as i64, self.sites[q]));
        }
    }
}

impl DistanceField {
    /// The field of a `width x height` grid whose row-major blocked flags are `blocked`, exact up
    /// to `cap` cells (`1..=`[`MAX_DISTANCE_CAP`], checked by the caller).
    pub fn new(width: usize, height: usize, blocked: &[bool], cap: u16) -> Self {
        debug_assert!(blocked.len() == width * height && (1..=MAX_DISTANCE_CAP).contains(&cap));
        let mut f = Self {
            width,
            height,
            cap,
            vertical: vec![0; width * height],
            distance_sq: vec![0; width * height],
        };
        let all = CellRect { x: 0, y: 0, width, height };
        f.vertical_pass(blocked, all);
        f.envelope_pass(all);
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
        let cap = self.cap as usize;
        // Vertical distances change only in the patch's columns, within cap - 1 rows of it.
        let columns = CellRect { x: changed.x, width: changed.width, ..grow(changed, cap - 1, self.width, self.height) };
        self.vertical_pass(blocked, columns);
        let affected = self.affected(changed);
        self.envelope_pass(affected);
        affected
    }

    /// Phase 1 over `rect`, seeded by the stored values just above and below it (which the caller
    /// guarantees are unchanged): a forward and a backward sweep per column.
    fn vertical_pass(&mut self, blocked: &[bool], rect: CellRect) {
        let (w, cap) = (self.width, self.cap.min(255) as u8);
        let (x0, x1) = (rect.x, rect.x + rect.width);
        let (y0, y1) = (rect.y, rect.y + rect.height);
        // Forward (downwards in index terms): distance to the nearest blocked cell above.
        for y in y0..y1 {
            let row = y * w;
            for x in x0..x1 {
                let above = if y == 0 { 0 } else { self.vertical[row - w + x] };
                self.vertical[row + x] = if blocked[row + x] { 0 } else { above.saturating_add(1).min(cap) };
            }
        }
        // Backward: the nearest blocked cell below may be closer.
        for y in (y0..y1).rev() {
            let row = y * w;
            for x in x0..x1 {
                let below = if y + 1 == self.height { 0 } else { self.vertical[row + w + x] };
                let v = &mut self.vertical[row + x];
                *v = (*v).min(below.saturating_add(1).min(cap));
            }
        }
    }

    /// Phase 2 for the cells of `rect`, using sites up to `cap - 1` columns beyond it (farther
    /// sites cannot bring a value below the cap). Columns `-1` and `width` are virtual blocked
    /// sites.
    fn envelope_pass(&mut self, rect: CellRect) {
        let cap = self.cap as i64;
        let cap_sq = cap * cap;
        let w = self.width as i64;
        // Site columns lo..hi (may include the virtual columns -1 and w).
        let lo = (rect.x as i64 - (cap - 1)).max(-1);
        let hi = ((rect.x + rect.width) as i64 + (cap - 1)).min(w + 1);
        let out_lo = (rect.x as i64 - lo) as usize;
        let out_hi = out_lo + rect.width;
        let mut env = Envelope::default();
        for y in rect.y..rect.y + rect.height {
            let row = y * self.width;
            env.apex.clear();
            env.apex.extend((lo..hi).map(|c| {
                if c < 0 || c >= w {
                    0
                } else {
                    let g = self.vertical[row + c as usize] as i64;
                    g * g
                }
            }));
            let out = &mut self.distance_sq[row..row + self.width];
            env.run(out_lo, out_hi, |i, v| {
                out[(lo + i as i64) as usize] = v.min(cap_sq) as u16;
            });
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
            }
        }
    }
}
