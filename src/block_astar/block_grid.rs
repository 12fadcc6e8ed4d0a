//! The grid as Block A* sees it: a padded cell mask plus the obstacle pattern code of every
//! block, kept current as cells change (a map change never touches the LDDB).

use crate::error::GridError;
use crate::grid::{CellRect, Grid};
use crate::lddb::Lddb;
use crate::search::los::CellMask;
use std::sync::Arc;

/// Cells of the map with per-block pattern codes for blocks of `side x side` cells. Block
/// `(bx, by)` covers cells `bx*side .. bx*side+side` by `by*side ..`; cells beyond the map count
/// as blocked. `Send + Sync`: share one between search threads, update it between queries.
///
/// The cells are held behind an `Arc`, so a planner's grid reads the vehicle mask its clearance
/// annotations keep instead of a copy of its own ([`BlockGrid::on_mask`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockGrid {
    width: usize,
    height: usize,
    side: usize,
    blocks_x: usize,
    blocks_y: usize,
    mask: Arc<CellMask>,
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
        Self::on_mask(Arc::new(CellMask::from_grid(grid)), side)
    }

    /// Blocks for the cells of `mask`, held as given (shared with its other holders), with
    /// blocks of `side` cells. Fails as [`BlockGrid::new`].
    pub fn on_mask(mask: Arc<CellMask>, side: usize) -> Result<Self, GridError> {
        if !Lddb::SIDES.contains(&side) {
            return Err(GridError::BadSize { width: side, height: side });
        }
        let (w, h) = (mask.width(), mask.height());
        let (blocks_x, blocks_y) = (w.div_ceil(side), h.div_ceil(side));
        let codes = crate::lddb::symmetry::class_codes(side).ok_or(GridError::BadSize { width: side, height: side })?;
        let mut g = Self {
            width: w,
            height: h,
            side,
            blocks_x,
            blocks_y,
            mask,
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
        let mask = Arc::make_mut(&mut self.mask);
        for y in rect.y..rect.y + rect.height {
            for x in rect.x..rect.x + rect.width {
                mask.set(x, y, grid.is_blocked(x as i64, y as i64));
            }
        }
        self.recompute_rect(rect);
        Ok(())
    }

    fn recompute_rect(&mut self, rect: CellRect) {
        let s = self.side;
        self.recompute(rect.x / s, rect.y / s, (rect.x + rect.width).div_ceil(s), (rect.y + rect.height).div_ceil(s));
    }

    /// Gives up the cells until [`BlockGrid::follow_mask`] brings them back, so their other
    /// holder (the clearance annotations) can update them in place; nothing may be searched
    /// meanwhile.
    pub fn release_mask(&mut self) {
        self.mask = Arc::new(CellMask::all_blocked(0, 0));
    }

    /// Takes `mask` (the cells this grid was built on, as their holder has brought them up to
    /// date: same size) and updates the pattern codes of the blocks meeting each of `changed`,
    /// the rectangles inside which cells changed. Fails, taking nothing, with
    /// [`GridError::SizeMismatch`] or [`GridError::RectOutside`].
    pub fn follow_mask(&mut self, mask: Arc<CellMask>, changed: &[CellRect]) -> Result<(), GridError> {
        let (w, h) = (self.width, self.height);
        let (mw, mh) = (mask.width(), mask.height());
        if (mw, mh) != (w, h) {
            return Err(GridError::SizeMismatch { width: mw, height: mh, expected_width: w, expected_height: h });
        }
        if let Some(&rect) = changed.iter().find(|r| r.x + r.width > mw || r.y + r.height > mh) {
            return Err(GridError::RectOutside { rect, width: mw, height: mh });
        }
        self.mask = mask;
        for &rect in changed.iter().filter(|r| !r.is_empty()) {
            self.recompute_rect(rect);
        }
        Ok(())
    }

    /// Sets one cell and updates its block's pattern code.
    ///
    /// Fails with [`GridError::OutOfBounds`] (changing nothing) outside the grid.
    pub fn set_cell(&mut self, x: usize, y: usize, blocked: bool) -> Result<(), GridError> {
        if x >= self.width() || y >= self.height() {
            return Err(GridError::OutOfBounds { x: x as i64, y: y as i64 });
        }
        Arc::make_mut(&mut self.mask).set(x, y, blocked);
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
        self.width
    }

    /// Map rows.
    #[inline]
    pub fn height(&self) -> usize {
        self.height
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

impl BlockGrid {
    /// Heap bytes of the pattern and class codes, without the cells (which a planner's grid
    /// shares with the clearance annotations).
    pub fn code_heap_bytes(&self) -> usize {
        use crate::memory::HeapSize;
        self.patterns.heap_bytes() + self.classes.heap_bytes()
    }
}

impl crate::memory::HeapSize for BlockGrid {
    fn heap_bytes(&self) -> usize {
        self.mask.heap_bytes() + self.code_heap_bytes()
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

    /// A grid on a shared mask gives the cells up, then takes them back changed and updates
    /// only the blocks of the rectangles it is told: equal to a grid built on the new cells, and
    /// one copy of the cells between the two holders throughout.
    #[test]
    fn a_shared_mask_is_followed() {
        let grid = Grid::from_rows(&["@.........", "..........", "......@...", "..........", ".........."]).unwrap();
        let mut holder = Arc::new(CellMask::from_grid(&grid));
        let mut bg = BlockGrid::on_mask(holder.clone(), 4).unwrap();
        bg.release_mask();
        // The holder edits in place: nothing else holds the cells now.
        let cells = Arc::get_mut(&mut holder).expect("released");
        cells.set(1, 1, true);
        cells.set(6, 2, false);
        cells.set(9, 4, true);
        let rects = [CellRect { x: 1, y: 1, width: 1, height: 1 }, CellRect { x: 6, y: 2, width: 4, height: 3 }];
        bg.follow_mask(holder.clone(), &rects).unwrap();
        let mut changed = grid.clone();
        changed.set_blocked(1, 1, true).unwrap();
        changed.set_blocked(6, 2, false).unwrap();
        changed.set_blocked(9, 4, true).unwrap();
        assert_eq!(bg, BlockGrid::new(&changed, 4).unwrap());
        assert_eq!(Arc::strong_count(&holder), 2);
        let small = Arc::new(CellMask::all_blocked(3, 3));
        assert!(bg.follow_mask(small, &[]).is_err());
        let outside = [CellRect { x: 8, y: 0, width: 3, height: 1 }];
        assert!(bg.follow_mask(holder.clone(), &outside).is_err());
        assert_eq!(bg, BlockGrid::new(&changed, 4).unwrap(), "a refused follow changes nothing");
    }
}
