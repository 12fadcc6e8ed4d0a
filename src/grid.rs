//! The binary obstacle grid (`Grid`, built from maps and in tests) and the cell conventions every
//! search shares; the planner's searches read the same cells through the vehicle mask
//! (`crate::search::los::CellMask`) and the [`BlockedAt`] trait.
//!
//! Conventions (shared by all planners in this crate):
//! - Cells are addressed `(x, y)` with `0 <= x < width`, `0 <= y < height`, stored row-major
//!   (`y * width + x`). For a ROS map, row `y` is the `OccupancyGrid` data row `y` (row 0 at the
//!   map origin); for a Moving AI map, row `y` is line `y` of the file.
//! - Continuous coordinates are in **cell units**: cell `(x, y)` covers `[x, x+1] x [y, y+1]`.
//! - Any-angle searches run on cell **corners** (vertices) `(x, y)` with `0 <= x <= width`,
//!   `0 <= y <= height`; vertex `(x, y)` is the low corner of cell `(x, y)`.
//! - Everything outside the grid is blocked.

use crate::error::GridError;

/// A rectangle of cells: `x .. x + width`, `y .. y + height`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CellRect {
    /// First column.
    pub x: usize,
    /// First row.
    pub y: usize,
    /// Number of columns.
    pub width: usize,
    /// Number of rows.
    pub height: usize,
}

impl CellRect {
    /// True when the rectangle holds no cell.
    pub fn is_empty(&self) -> bool {
        self.width == 0 || self.height == 0
    }
}

/// Read access to a grid of blocked / free cells, whatever its layout ([`Grid`], or the padded
/// [`crate::search::los::CellMask`] the any-angle searches read), for code that only asks
/// which cells are blocked (the clearance regions).
pub trait BlockedAt {
    /// Columns.
    fn width(&self) -> usize;
    /// Rows.
    fn height(&self) -> usize;
    /// True when cell `(x, y)` (inside the grid: `x < width`, `y < height`) is blocked.
    fn blocked_at(&self, x: usize, y: usize) -> bool;
}

impl BlockedAt for Grid {
    fn width(&self) -> usize {
        self.width
    }

    fn height(&self) -> usize {
        self.height
    }

    #[inline]
    fn blocked_at(&self, x: usize, y: usize) -> bool {
        self.blocked[y * self.width + x]
    }
}

/// A grid of blocked / free cells.
#[derive(Clone, PartialEq, Eq)]
pub struct Grid {
    width: usize,
    height: usize,
    blocked: Vec<bool>,
}

impl std::fmt::Debug for Grid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "Grid {}x{}", self.width, self.height)?;
        for y in 0..self.height.min(64) {
            let row: String =
                (0..self.width.min(128)).map(|x| if self.blocked[y * self.width + x] { '@' } else { '.' }).collect();
            writeln!(f, "{row}")?;
        }
        Ok(())
    }
}

impl Grid {
    /// Largest number of cells a grid may hold (2^31): far above any map a planner can use, and
    /// small enough that every cell index fits in a `u32` and every vertex index in a `u32`.
    pub const MAX_CELLS: usize = 1 << 31;

    /// A grid of `width x height` free cells.
    ///
    /// Fails with [`GridError::BadSize`] when a side is zero or the cell count exceeds
    /// [`Grid::MAX_CELLS`].
    pub fn new_free(width: usize, height: usize) -> Result<Self, GridError> {
        Self::check_size(width, height)?;
        Ok(Self { width, height, blocked: vec![false; width * height] })
    }

    /// A grid from row-major blocked flags (`blocked[y * width + x]`).
    ///
    /// Fails when the size is invalid or `blocked.len() != width * height`.
    pub fn from_blocked(width: usize, height: usize, blocked: Vec<bool>) -> Result<Self, GridError> {
        Self::check_size(width, height)?;
        if blocked.len() != width * height {
            return Err(GridError::DataLength { expected: width * height, actual: blocked.len() });
        }
        Ok(Self { width, height, blocked })
    }

    /// A grid from text rows, `'@'`, `'#'`, `'T'`, `'O'`, `'W'` blocked and anything else free
    /// (handy in tests: `Grid::from_rows(&["..@", "..."])`). Row 0 is the first string.
    ///
    /// Fails when the rows are empty or of unequal length.
    pub fn from_rows(rows: &[&str]) -> Result<Self, GridError> {
        let height = rows.len();
        let width = rows.first().map_or(0, |r| r.chars().count());
        Self::check_size(width, height)?;
        let mut blocked = Vec::with_capacity(width * height);
        for row in rows {
            if row.chars().count() != width {
                return Err(GridError::DataLength { expected: width * height, actual: 0 });
            }
            blocked.extend(row.chars().map(|c| matches!(c, '@' | '#' | 'T' | 'O' | 'W')));
        }
        Ok(Self { width, height, blocked })
    }

    fn check_size(width: usize, height: usize) -> Result<(), GridError> {
        if width == 0 || height == 0 || width.checked_mul(height).is_none_or(|n| n > Self::MAX_CELLS) {
            return Err(GridError::BadSize { width, height });
        }
        Ok(())
    }

    /// Number of columns.
    #[inline]
    pub fn width(&self) -> usize {
        self.width
    }

    /// Number of rows.
    #[inline]
    pub fn height(&self) -> usize {
        self.height
    }

    /// True when `(x, y)` is a cell of the grid.
    #[inline]
    pub fn contains(&self, x: i64, y: i64) -> bool {
        x >= 0 && y >= 0 && (x as usize) < self.width && (y as usize) < self.height
    }

    /// True when cell `(x, y)` is blocked; every cell outside the grid is blocked.
    #[inline]
    pub fn is_blocked(&self, x: i64, y: i64) -> bool {
        !self.contains(x, y) || self.blocked[y as usize * self.width + x as usize]
    }

    /// True when cell `(x, y)` is inside the grid and free.
    #[inline]
    pub fn is_free(&self, x: i64, y: i64) -> bool {
        !self.is_blocked(x, y)
    }

    /// Sets cell `(x, y)`; fails with [`GridError::OutOfBounds`] outside the grid (nothing changes).
    pub fn set_blocked(&mut self, x: usize, y: usize, blocked: bool) -> Result<(), GridError> {
        if x >= self.width || y >= self.height {
            return Err(GridError::OutOfBounds { x: x as i64, y: y as i64 });
        }
        self.blocked[y * self.width + x] = blocked;
        Ok(())
    }

    /// The row-major blocked flags.
    pub fn blocked_cells(&self) -> &[bool] {
        &self.blocked
    }

    /// Number of free cells.
    pub fn free_count(&self) -> usize {
        self.blocked.iter().filter(|b| !**b).count()
    }
}

impl crate::memory::HeapSize for Grid {
    fn heap_bytes(&self) -> usize {
        self.blocked.heap_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_is_blocked() {
        let g = Grid::from_rows(&["..", ".@"]).unwrap();
        assert!(g.is_free(0, 0));
        assert!(g.is_blocked(1, 1));
        assert!(g.is_blocked(-1, 0));
        assert!(g.is_blocked(2, 0));
        assert!(g.is_blocked(0, 2));
    }

    #[test]
    fn bad_sizes_are_rejected() {
        assert!(Grid::new_free(0, 3).is_err());
        assert!(Grid::new_free(usize::MAX, 2).is_err());
        assert!(Grid::from_blocked(2, 2, vec![false; 3]).is_err());
        assert!(Grid::from_rows(&["..", "."]).is_err());
    }

    #[test]
    fn set_outside_changes_nothing() {
        let mut g = Grid::new_free(3, 3).unwrap();
        let before = g.clone();
        assert!(g.set_blocked(3, 0, true).is_err());
        assert_eq!(g, before);
    }
}
