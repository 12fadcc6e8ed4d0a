//! True clearance (Harabor and Botea, "Hierarchical Path Planning for Multi-Size Agents in
//! Heterogeneous Environments", CIG 2008).
//!
//! Definition: the true clearance of cell `(x, y)` is the largest `k <= cap` such that every cell
//! of the square `x .. x+k` by `y .. y+k` (expanding toward +x and +y in grid index terms; "down
//! and right" when row 0 is drawn at the top) is inside the map and traversable. A blocked cell
//! has clearance 0. A square footprint of side `k` anchored at its low corner cell fits at `(x, y)`
//! exactly when the clearance there is at least `k`.
//!
//! Computed by the recurrence `c(x, y) = min(cap, 1 + min(c(x+1, y), c(x, y+1), c(x+1, y+1)))`
//! for traversable cells (0 outside the map), sweeping from the high corner. A cell's value
//! depends only on the `cap x cap` square it anchors, so after a patch only the patch grown by
//! `cap - 1` toward -x and -y is recomputed.

use super::blocked_rows::{BlockedRows, FlagRows};
use crate::grid::CellRect;

/// Largest supported cap (values fit in a `u8`).
pub const MAX_CLEARANCE_CAP: u16 = 255;

/// The capped true clearance of every cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrueClearance {
    width: usize,
    height: usize,
    cap: u8,
    values: Vec<u8>,
}

impl TrueClearance {
    /// The clearance of a `width x height` grid with row-major blocked flags `blocked`, capped at
    /// `cap` (`1..=`[`MAX_CLEARANCE_CAP`], checked by the caller).
    pub fn new(width: usize, height: usize, blocked: &[bool], cap: u16) -> Self {
        debug_assert!(blocked.len() == width * height);
        Self::from_rows(width, height, &mut FlagRows { flags: blocked, width }, cap)
    }

    /// [`TrueClearance::new`] reading the blocked cells from `blocked` a row at a time.
    pub fn from_rows(width: usize, height: usize, blocked: &mut impl BlockedRows, cap: u16) -> Self {
        debug_assert!((1..=MAX_CLEARANCE_CAP).contains(&cap));
        let mut c = Self { width, height, cap: cap as u8, values: vec![0; width * height] };
        c.sweep(blocked, CellRect { x: 0, y: 0, width, height });
        c
    }

    /// The cap in cells.
    pub fn cap(&self) -> u16 {
        u16::from(self.cap)
    }

    /// Capped clearance of cell `(x, y)` (cells); `None` outside the map.
    #[inline]
    pub fn clearance(&self, x: usize, y: usize) -> Option<u8> {
        (x < self.width && y < self.height).then(|| self.values[y * self.width + x])
    }

    /// The row-major capped clearances.
    pub fn values(&self) -> &[u8] {
        &self.values
    }

    /// Cells whose value can change when the cells of `changed` change: `changed` grown by
    /// `cap - 1` toward -x and -y, clipped to the map.
    pub fn affected(&self, changed: CellRect) -> CellRect {
        let m = self.cap as usize - 1;
        let x0 = changed.x.saturating_sub(m);
        let y0 = changed.y.saturating_sub(m);
        CellRect { x: x0, y: y0, width: changed.x + changed.width - x0, height: changed.y + changed.height - y0 }
    }

    /// Brings the values up to date after the blocked flags changed inside `changed` only;
    /// returns the recomputed rectangle (see [`TrueClearance::affected`]).
    pub fn update(&mut self, blocked: &[bool], changed: CellRect) -> CellRect {
        let width = self.width;
        self.update_rows(&mut FlagRows { flags: blocked, width }, changed)
    }

    /// [`TrueClearance::update`] reading the blocked cells from `blocked` a row at a time (only
    /// the recomputed rectangle's rows and columns are asked).
    pub fn update_rows(&mut self, blocked: &mut impl BlockedRows, changed: CellRect) -> CellRect {
        let a = self.affected(changed);
        self.sweep(blocked, a);
        a
    }

    /// The recurrence over `rect` from its high corner, reading the (unchanged) stored values just
    /// beyond it.
    fn sweep(&mut self, blocked: &mut impl BlockedRows, rect: CellRect) {
        let (w, h, cap) = (self.width, self.height, self.cap);
        let (x0, x1) = (rect.x, rect.x + rect.width);
        for y in (rect.y..rect.y + rect.height).rev() {
            let row = y * w;
            let (head, tail) = self.values.split_at_mut(row + w);
            let cur = &mut head[row..row + w];
            // The flags of columns x0..x1: `b[x - x0]` is column x's.
            let b = blocked.row(y, x0, x1);
            // First the bound from the row below (vectorises): 1 + min(below, below-right).
            // `free_mask` is 0xff for a free cell and 0 for a blocked one (branch-free select).
            let free_mask = |bb: bool| (bb as u8).wrapping_sub(1);
            if y + 1 < h {
                let below = &tail[..w];
                // The last column's below-right neighbour is outside the map (0).
                let inner = if x1 == w { x1 - 1 } else { x1 };
                let (c, bl, dg, bb) =
                    (&mut cur[x0..inner], &below[x0..inner], &below[x0 + 1..inner + 1], &b[..inner - x0]);
                for (((c, &bl), &dg), &bb) in c.iter_mut().zip(bl).zip(dg).zip(bb) {
                    *c = free_mask(bb) & bl.min(dg).saturating_add(1).min(cap);
                }
                if inner < x1 {
                    cur[inner] = free_mask(b[inner - x0]) & 1;
                }
            } else {
                for (c, &bb) in cur[x0..x1].iter_mut().zip(b) {
                    *c = free_mask(bb) & 1;
                }
            }
            // Then the serial bound from the right neighbour: 1 + right.
            let mut right = if x1 < w { cur[x1] } else { 0 };
            for c in cur[x0..x1].iter_mut().rev() {
                right = (*c).min(right + 1);
                *c = right;
            }
        }
    }
}

/// Brute-force reference: the clearance of every cell straight from the definition (grow the
/// square while all its cells are inside and free). For tests on small maps.
pub fn brute_force_clearance(width: usize, height: usize, blocked: &[bool], cap: u16) -> Vec<u8> {
    let free = |x: usize, y: usize| x < width && y < height && !blocked[y * width + x];
    let mut out = vec![0u8; width * height];
    for y in 0..height {
        for x in 0..width {
            let mut k = 0usize;
            while k < cap as usize && (0..=k).all(|dy| (0..=k).all(|dx| free(x + dx, y + dy))) {
                k += 1;
            }
            out[y * width + x] = k as u8;
        }
    }
    out
}

impl crate::memory::HeapSize for TrueClearance {
    fn heap_bytes(&self) -> usize {
        self.values.heap_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Grid;
    use proptest::prelude::*;

    fn check(rows: &[&str], cap: u16) -> TrueClearance {
        let g = Grid::from_rows(rows).unwrap();
        let c = TrueClearance::new(g.width(), g.height(), g.blocked_cells(), cap);
        assert_eq!(c.values(), &brute_force_clearance(g.width(), g.height(), g.blocked_cells(), cap)[..]);
        c
    }

    #[test]
    fn hand_made_maps_match_the_definition() {
        let c = check(&["....", "....", "....", "...."], 10);
        assert_eq!(c.clearance(0, 0), Some(4));
        assert_eq!(c.clearance(1, 2), Some(2));
        assert_eq!(c.clearance(3, 3), Some(1));
        let c = check(&["....", "....", "....", "...."], 3);
        assert_eq!(c.clearance(0, 0), Some(3));
        let c = check(&["......", "..@...", "......", "......", "....@.", "......"], 8);
        assert_eq!(c.clearance(0, 0), Some(2));
        assert_eq!(c.clearance(2, 1), Some(0));
        assert_eq!(c.clearance(0, 2), Some(4));
        assert_eq!(c.clearance(1, 2), Some(3));
        assert_eq!(c.clearance(3, 0), Some(3));
        check(&["@.@.@", ".....", "@....", "...@.", "....."], 5);
        check(&[".", "@", "."], 2);
    }

    proptest! {
        #[test]
        fn full_equals_brute_force(w in 1usize..20, h in 1usize..20, cells in proptest::collection::vec(0u8..100, 400), density in 0u8..50, cap in 1u16..12) {
            let blocked: Vec<bool> = cells[..w * h].iter().map(|&v| v < density).collect();
            let c = TrueClearance::new(w, h, &blocked, cap);
            prop_assert_eq!(c.values(), &brute_force_clearance(w, h, &blocked, cap)[..]);
        }

        #[test]
        fn updates_equal_full_recomputation(w in 1usize..30, h in 1usize..30, cap in 1u16..9,
                                            patches in proptest::collection::vec((0usize..30, 0usize..30, 1usize..8, 1usize..8, 0u8..100), 1..25)) {
            let mut blocked = vec![false; w * h];
            let mut c = TrueClearance::new(w, h, &blocked, cap);
            for (i, (px, py, pw, ph, d)) in patches.into_iter().enumerate() {
                let r = CellRect { x: px % w, y: py % h, width: pw.min(w - px % w), height: ph.min(h - py % h) };
                for yy in r.y..r.y + r.height {
                    for xx in r.x..r.x + r.width {
                        blocked[yy * w + xx] = ((xx * 7 + yy * 13 + i * 31) % 100) < d as usize;
                    }
                }
                c.update(&blocked, r);
                prop_assert_eq!(&c, &TrueClearance::new(w, h, &blocked, cap));
            }
        }
    }
}
