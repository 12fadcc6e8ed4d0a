//! Where the annotation passes read the blocked cells from: a row segment at a time.
//!
//! The distance field and the true clearance sweep a map row by row over a rectangle, each row
//! segment as a slice of flags (so their loops vectorise). [`BlockedRows`] hands them those
//! slices: straight from row-major flags ([`FlagRows`]), or made on demand from the cell classes
//! and a capability ([`ClassRows`]), so the annotations need not keep a flag per cell beside the
//! classes they are derived from.

use super::classes::Capability;

/// Row segments of a map's blocked flags.
pub trait BlockedRows {
    /// The flags of cells `x0..x1` of row `y` (inside the map), `true` for blocked.
    fn row(&mut self, y: usize, x0: usize, x1: usize) -> &[bool];
}

/// Row-major flags of a map `width` cells wide.
pub struct FlagRows<'a> {
    /// The flags, `true` for blocked.
    pub flags: &'a [bool],
    /// Cells per row.
    pub width: usize,
}

impl BlockedRows for FlagRows<'_> {
    #[inline]
    fn row(&mut self, y: usize, x0: usize, x1: usize) -> &[bool] {
        &self.flags[y * self.width + x0..y * self.width + x1]
    }
}

/// The cells a capability may not enter, read from row-major cell classes (as
/// [`super::classes::CellClass`] indices) a row segment at a time.
pub struct ClassRows<'a> {
    classes: &'a [u8],
    width: usize,
    /// The class indices the capability allows (at most 32, as its bit set holds).
    allowed: Vec<u8>,
    buf: Vec<bool>,
}

impl<'a> ClassRows<'a> {
    /// The rows of `classes` (a map `width` cells wide) for `capability`.
    pub fn new(classes: &'a [u8], width: usize, capability: Capability) -> Self {
        let allowed = (0..32u8).filter(|&c| capability.allows_index(c)).collect();
        Self { classes, width, allowed, buf: Vec::with_capacity(width) }
    }
}

impl BlockedRows for ClassRows<'_> {
    #[inline]
    fn row(&mut self, y: usize, x0: usize, x1: usize) -> &[bool] {
        let cells = &self.classes[y * self.width + x0..y * self.width + x1];
        // One pass a class the capability allows, each a byte compare the compiler vectorises
        // with the baseline instruction set; testing the capability's bit per cell needs a shift
        // by a per-cell amount, which it does not, and that took a fifth of a patch's time.
        self.buf.clear();
        self.buf.resize(cells.len(), true);
        for &k in &self.allowed {
            for (b, &c) in self.buf.iter_mut().zip(cells) {
                *b &= c != k;
            }
        }
        &self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clearance::distance::DistanceField;
    use crate::clearance::true_clearance::TrueClearance;
    use crate::grid::CellRect;

    /// Fields read from the classes a row at a time equal fields read from the flags, built and
    /// after local updates, for both capabilities (unknown cells blocked, and allowed).
    #[test]
    fn class_rows_give_the_fields_their_flags_give() {
        let (w, h) = (53, 37);
        let mut state = 12345u64;
        let mut next = move |n: u64| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        // Classes 0 (unknown), 1 (occupied), 2 (free), mostly free.
        let mut classes: Vec<u8> = (0..w * h).map(|_| [2, 2, 2, 2, 2, 1, 0][next(7) as usize]).collect();
        for capability in [Capability::FREE, Capability::FREE_OR_UNKNOWN] {
            let flags = |c: &[u8]| c.iter().map(|&k| !capability.allows_index(k)).collect::<Vec<bool>>();
            let mut d = DistanceField::from_rows(w, h, &mut ClassRows::new(&classes, w, capability), 12);
            let mut t = TrueClearance::from_rows(w, h, &mut ClassRows::new(&classes, w, capability), 20);
            assert_eq!(d, DistanceField::new(w, h, &flags(&classes), 12));
            assert_eq!(t, TrueClearance::new(w, h, &flags(&classes), 20));
            for _ in 0..20 {
                let (pw, ph) = (1 + next(6) as usize, 1 + next(6) as usize);
                let (x, y) = (next((w - pw + 1) as u64) as usize, next((h - ph + 1) as u64) as usize);
                for yy in y..y + ph {
                    for xx in x..x + pw {
                        classes[yy * w + xx] = [2, 1, 0][next(3) as usize];
                    }
                }
                let rect = CellRect { x, y, width: pw, height: ph };
                d.update_rows(&mut ClassRows::new(&classes, w, capability), rect);
                t.update_rows(&mut ClassRows::new(&classes, w, capability), rect);
                assert_eq!(d, DistanceField::new(w, h, &flags(&classes), 12));
                assert_eq!(t, TrueClearance::new(w, h, &flags(&classes), 20));
            }
        }
    }
}
