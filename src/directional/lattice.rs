//! The state lattice of Directional A*: lattice cells of `spacing` grid cells, each with a number
//! of heading bins (8 as Pinter, or 16), and the Directional-8/-24/-48 neighbourhoods (all lattice
//! cells one, two or three cells away).
//!
//! The lattice spacing is an integer number of grid cells so that a curve between two lattice
//! centres, moved to any other lattice cell, sweeps exactly the same cells shifted by an integer
//! offset: that is what lets the hit-check tables be computed once.

use crate::geometry::{normalize_angle, Point2, Pose2};
use std::f64::consts::PI;

/// How many heading bins a lattice cell has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum HeadingBins {
    /// 8 headings, 45 degrees apart (Pinter).
    Eight,
    /// 16 headings, 22.5 degrees apart.
    Sixteen,
}

impl HeadingBins {
    /// The bins of `count` headings per cell: 8 or 16, `None` for any other count.
    pub fn with_count(count: usize) -> Option<Self> {
        match count {
            8 => Some(HeadingBins::Eight),
            16 => Some(HeadingBins::Sixteen),
            _ => None,
        }
    }

    /// Number of bins.
    pub fn count(self) -> usize {
        match self {
            HeadingBins::Eight => 8,
            HeadingBins::Sixteen => 16,
        }
    }

    /// Heading of bin `b` (radians; bin 0 points along +x, counter-clockwise).
    pub fn yaw(self, b: usize) -> f64 {
        normalize_angle(2.0 * PI * b as f64 / self.count() as f64)
    }

    /// The bin nearest to `yaw`.
    pub fn nearest(self, yaw: f64) -> usize {
        let n = self.count() as f64;
        ((yaw.rem_euclid(2.0 * PI) / (2.0 * PI) * n).round() as usize) % self.count()
    }
}

/// Which lattice cells an edge may reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Neighbourhood {
    /// The 8 cells one cell away.
    Directional8,
    /// The 24 cells within two cells.
    Directional24,
    /// The 48 cells within three cells.
    Directional48,
}

impl Neighbourhood {
    /// The neighbourhood of `size` cells: 8, 24 or 48, `None` for any other size.
    pub fn with_size(size: usize) -> Option<Self> {
        match size {
            8 => Some(Neighbourhood::Directional8),
            24 => Some(Neighbourhood::Directional24),
            48 => Some(Neighbourhood::Directional48),
            _ => None,
        }
    }

    /// Largest |dx| or |dy| of an edge, in lattice cells.
    pub fn reach(self) -> i64 {
        match self {
            Neighbourhood::Directional8 => 1,
            Neighbourhood::Directional24 => 2,
            Neighbourhood::Directional48 => 3,
        }
    }

    /// The offsets `(dx, dy)` of the neighbourhood (the centre excluded).
    pub fn offsets(self) -> Vec<(i64, i64)> {
        let r = self.reach();
        (-r..=r).flat_map(|dy| (-r..=r).map(move |dx| (dx, dy))).filter(|&o| o != (0, 0)).collect()
    }

    /// Name used by the CLI (`directional-8`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Neighbourhood::Directional8 => "directional-8",
            Neighbourhood::Directional24 => "directional-24",
            Neighbourhood::Directional48 => "directional-48",
        }
    }
}

/// Geometry of the lattice over a grid of `width x height` cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lattice {
    /// Lattice cell side in grid cells (>= 1).
    pub spacing: i64,
    /// Lattice columns.
    pub cols: i64,
    /// Lattice rows.
    pub rows: i64,
}

impl Lattice {
    /// The lattice covering a `width x height` grid with cells of `spacing` grid cells.
    pub fn new(width: usize, height: usize, spacing: i64) -> Self {
        let s = spacing.max(1);
        Self { spacing: s, cols: (width as i64 + s - 1) / s, rows: (height as i64 + s - 1) / s }
    }

    /// Centre of lattice cell `(i, j)` in grid cell units.
    pub fn centre(&self, i: i64, j: i64) -> Point2 {
        let h = self.spacing as f64 / 2.0;
        Point2::new((i * self.spacing) as f64 + h, (j * self.spacing) as f64 + h)
    }

    /// The pose at the centre of `(i, j)` with heading bin `b`.
    pub fn pose(&self, i: i64, j: i64, bins: HeadingBins, b: usize) -> Pose2 {
        let c = self.centre(i, j);
        Pose2::new(c.x, c.y, bins.yaw(b))
    }

    /// The lattice cell containing point `p` (may lie outside the lattice).
    pub fn cell_of(&self, p: Point2) -> (i64, i64) {
        ((p.x / self.spacing as f64).floor() as i64, (p.y / self.spacing as f64).floor() as i64)
    }

    /// True when `(i, j)` is a lattice cell.
    pub fn contains(&self, i: i64, j: i64) -> bool {
        i >= 0 && j >= 0 && i < self.cols && j < self.rows
    }
}

/// A rectangle of lattice cells `i0..i1` x `j0..j1` (half-open).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LatticeRect {
    /// First column.
    pub i0: i64,
    /// First row.
    pub j0: i64,
    /// One past the last column.
    pub i1: i64,
    /// One past the last row.
    pub j1: i64,
}

impl LatticeRect {
    /// The whole lattice.
    pub fn all(l: &Lattice) -> Self {
        Self { i0: 0, j0: 0, i1: l.cols, j1: l.rows }
    }

    /// The smallest rectangle holding `cells`, grown by `margin` and clipped to `l`.
    pub fn around(cells: impl IntoIterator<Item = (i64, i64)>, margin: i64, l: &Lattice) -> Self {
        let (mut i0, mut j0, mut i1, mut j1) = (i64::MAX, i64::MAX, i64::MIN, i64::MIN);
        for (i, j) in cells {
            i0 = i0.min(i);
            j0 = j0.min(j);
            i1 = i1.max(i);
            j1 = j1.max(j);
        }
        if i0 > i1 {
            return Self { i0: 0, j0: 0, i1: 0, j1: 0 };
        }
        Self {
            i0: (i0 - margin).max(0),
            j0: (j0 - margin).max(0),
            i1: (i1 + margin + 1).min(l.cols),
            j1: (j1 + margin + 1).min(l.rows),
        }
    }

    /// True when `(i, j)` lies inside.
    #[inline]
    pub fn contains(&self, i: i64, j: i64) -> bool {
        i >= self.i0 && j >= self.j0 && i < self.i1 && j < self.j1
    }

    /// Columns.
    pub fn width(&self) -> i64 {
        (self.i1 - self.i0).max(0)
    }

    /// Rows.
    pub fn height(&self) -> i64 {
        (self.j1 - self.j0).max(0)
    }

    /// True when this rectangle covers all of `l`.
    pub fn covers(&self, l: &Lattice) -> bool {
        self.i0 <= 0 && self.j0 <= 0 && self.i1 >= l.cols && self.j1 >= l.rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_and_neighbourhoods() {
        assert_eq!(Neighbourhood::Directional8.offsets().len(), 8);
        assert_eq!(Neighbourhood::Directional24.offsets().len(), 24);
        assert_eq!(Neighbourhood::Directional48.offsets().len(), 48);
        let b = HeadingBins::Sixteen;
        for k in 0..16 {
            assert_eq!(b.nearest(b.yaw(k)), k);
            assert_eq!(b.nearest(b.yaw(k) + 0.1), k);
        }
        assert_eq!(HeadingBins::Eight.nearest(-0.1), 0);
        let l = Lattice::new(10, 7, 3);
        assert_eq!((l.cols, l.rows), (4, 3));
        assert_eq!(l.cell_of(l.centre(2, 1)), (2, 1));
    }
}
