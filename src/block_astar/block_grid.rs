//! The grid as Block A* sees it: a padded cell mask plus the obstacle pattern code of every
//! block, kept current as cells change (a map change never touches the LDDB).

use crate::error::GridError;
use crate::grid::{CellRect, Grid};
use crate::lddb::Lddb;
use crate::search::los::CellMask;

/// Cells of the map with per-block pattern codes for blocks of `side x side` cells. Block
/// `(bx, by)` covers cells `bx*side .. bx*side+side` by `by*side ..`; cells beyond the map count
/// as blocked. `Send + Sync`: share one between search threads, update it between queries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockGrid {
    side: usize,
    blocks_x: usize,
    blocks_y: usize,
    mask: CellMask,
    patterns: Vec<u16>,
    /// Per block: `(class << 3) | transform` of its pattern under the canonical class map
    /// ([`crate::lddb::symmetry::class_codes`]), so the search reads it beside the pattern.
    classes: Vec<u32>,
    /// Fingerprint of that class map (compared with [`Lddb::class_map_id`] before use).
    class_map_id: u64,
}

impl BlockGrid {
    /// Blocks for `grid` with blocks of `side` cells (2, 3 or 4: [`Lddb::SIDES`]).
    ///
    /// Fails with [`GridError::BadSize`] for an unsupported side.
    pub fn new(grid: &Grid, side: usize) -> Result<Self, GridError> {
        if !Lddb::SIDES.contains(&side) {
            return Err(GridError::BadSize { width: side, height: side });
        }
        let (w, h) = (grid.width(), grid.height());
        let (blocks_x, blocks_y) = (w.div_ceil(side), h.div_ceil(side));
        let codes = crate::lddb::symmetry::class_codes(side).ok_or(GridError::BadSize { width: side, height: side })?;
        let mut g = Self {
            side,
            blocks_x,
            blocks_y,
            mask: CellMask::from_grid(grid),
            patterns: vec![0; blocks_x * blocks_y],
            classes: vec![0; blocks_x * blocks_y],
            class_map_id: crate::lddb::symmetry::class_map_fingerprint(codes),
        };
        g.recompute(0, 0, blocks_x, blocks_y);
        Ok(g)
    }

    fn recompute(&mut self, bx0: usize, by0: usize, bx1: usize, by1: usize) {
        let s = self.side;
        for by in by0..by1 {
            for bx in bx0..bx1 {
                let mut p = 0u16;
                for ly in 0..s {
                    for lx in 0..s {
                        let (x, y) = (bx * s + lx, by * s + ly);
                        if x >= self.mask.width() || y >= self.mask.height() || self.mask.blocked(x as i64, y as i64) {
                            p |= 1 << (ly * s + lx);
                        }
                    }
                }
                let code = self.class_code_of(p);
                self.patterns[by * self.blocks_x + bx] = p;
                self.classes[by * self.blocks_x + bx] = code;
            }
        }
    }

    /// Copies the cells of `rect` from `grid` (which must have this grid's size) and updates the
    /// pattern codes of the blocks they touch. Cost: proportional to the rectangle.
    ///
    /// Fails, changing nothing, when `grid` has another size or `rect` leaves the grid.
    pub fn update_rect(&mut self, grid: &Grid, rect: CellRect) -> Result<(), GridError> {
        let (w, h) = (self.width(), self.height());
        if grid.width() != w || grid.height() != h {
            let (width, height) = (grid.width(), grid.height());
            return Err(GridError::SizeMismatch { width, height, expected_width: w, expected_height: h });
        }
        if rect.x + rect.width > w || rect.y + rect.height > h {
            return Err(GridError::RectOutside { rect, width: w, height: h });
        }
        if rect.is_empty() {
            return Ok(());
        }
        for y in rect.y..rect.y + rect.height {
            for x in rect.x..rect.x + rect.width {
                self.mask.set(x, y, grid.is_blocked(x as i64, y as i64));
            }
        }
        let s = self.side;
        self.recompute(rect.x / s, rect.y / s, (rect.x + rect.width).div_ceil(s), (rect.y + rect.height).div_ceil(s));
        Ok(())
    }

    /// Sets one cell and updates its block's pattern code.
    ///
    /// Fails with [`GridError::OutOfBounds`] (changing nothing) outside the grid.
    pub fn set_cell(&mut self, x: usize, y: usize, blocked: bool) -> Result<(), GridError> {
        if x >= self.width() || y >= self.height() {
            return Err(GridError::OutOfBounds { x: x as i64, y: y as i64 });
        }
        self.mask.set(x, y, blocked);
        let (bx, by) = (x / self.side, y / self.side);
        let bit = 1u16 << ((y % self.side) * self.side + x % self.side);
        let p = &mut self.patterns[by * self.blocks_x + bx];
        *p = if blocked { *p | bit } else { *p & !bit };
        let p = *p;
        self.classes[by * self.blocks_x + bx] = self.class_code_of(p);
        Ok(())
    }

    fn class_code_of(&self, pattern: u16) -> u32 {
        // `new` checked the side, so the map exists.
        crate::lddb::symmetry::class_codes(self.side).map_or(0, |codes| codes[usize::from(pattern)])
    }

    /// Fingerprint of the class map behind [`BlockGrid::class_code`] (equal to
    /// [`Lddb::class_map_id`] when the database uses the same map).
    #[inline]
    pub fn class_map_id(&self) -> u64 {
        self.class_map_id
    }

    /// `(class << 3) | transform` of block `b`'s pattern under the canonical class map.
    #[inline(always)]
    pub fn class_code(&self, b: usize) -> u32 {
        self.classes[b]
    }

    /// Cells per block side.
    #[inline]
    pub fn side(&self) -> usize {
        self.side
    }

    /// Map columns.
    #[inline]
    pub fn width(&self) -> usize {
        self.mask.width()
    }

    /// Map rows.
    #[inline]
    pub fn height(&self) -> usize {
        self.mask.height()
    }

    /// Blocks per row.
    #[inline]
    pub fn blocks_x(&self) -> usize {
        self.blocks_x
    }

    /// Blocks per column.
    #[inline]
    pub fn blocks_y(&self) -> usize {
        self.blocks_y
    }

    /// The cells (for line-of-sight checks and baselines).
    #[inline]
    pub fn mask(&self) -> &CellMask {
        &self.mask
    }

    /// Pattern code of block `b = by * blocks_x + bx` (bit `ly * side + lx` = cell blocked).
    #[inline(always)]
    pub fn pattern(&self, b: usize) -> u32 {
        u32::from(self.patterns[b])
    }
}

impl crate::memory::HeapSize for BlockGrid {
    fn heap_bytes(&self) -> usize {
        self.mask.heap_bytes() + self.patterns.heap_bytes() + self.classes.heap_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_follow_cell_changes() {
        let mut grid = Grid::from_rows(&["@.....", "......", "......", ".....@", "......"]).unwrap();
        let mut bg = BlockGrid::new(&grid, 4).unwrap();
        assert_eq!((bg.blocks_x(), bg.blocks_y()), (2, 2));
        assert_eq!(bg.pattern(0), 1);
        // Block (1,0) holds cells 4..8 x 0..4; cells 6, 7 are off the map, hence blocked.
        assert_eq!(bg.pattern(1), 0b1100_1100_1100_1100 | 1 << (3 * 4 + 1));
        bg.set_cell(1, 1, true).unwrap();
        assert_eq!(bg.pattern(0), 1 | 1 << 5);
        grid.set_blocked(1, 1, true).unwrap();
        grid.set_blocked(0, 0, false).unwrap();
        grid.set_blocked(4, 4, true).unwrap();
        bg.update_rect(&grid, CellRect { x: 0, y: 0, width: 6, height: 5 }).unwrap();
        assert_eq!(bg, BlockGrid::new(&grid, 4).unwrap());
        let codes = crate::lddb::symmetry::class_codes(4).unwrap();
        for b in 0..4 {
            assert_eq!(bg.class_code(b), codes[bg.pattern(b) as usize]);
        }
        let before = bg.clone();
        assert!(bg.set_cell(6, 0, true).is_err());
        assert!(bg.update_rect(&grid, CellRect { x: 5, y: 0, width: 2, height: 1 }).is_err());
        assert_eq!(bg, before);
        assert!(BlockGrid::new(&grid, 5).is_err());
    }
}
