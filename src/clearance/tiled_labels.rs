//! A `u32` per cell of a map, stored by 8 x 8 tiles: a tile whose cells all hold one value
//! keeps that value alone; a tile whose cells hold 0 and one other value keeps that value and a
//! 64-bit mask of the cells holding it; any other keeps a value per cell.
//!
//! Region labels ([`super::regions`]) are the use: after labelling, a tile of open floor or of
//! wall holds one label, a tile along the outline of an obstacle holds 0 (blocked) and the label
//! of the region beside it, and only tiles where two regions meet, or that updates left with
//! two names for one region, keep 64 labels. So the labels take a small fraction of the 4 bytes
//! a cell a plain array would (measured in `bench-fleet` as part of `mask_and_regions`).
//!
//! Reads cost a tile lookup and, for a tile that is not one value, a second one. A write that a
//! tile's form cannot hold changes the form (reusing an entry freed by [`TiledLabels::compact`]
//! when there is one); [`TiledLabels::compact`] folds tiles back into the smallest form that
//! holds their cells.

/// Side of a tile (cells).
const TILE: usize = 8;
/// Cells per tile.
const TILE_CELLS: usize = TILE * TILE;
/// Marks a tile entry that is not the tile's one value: with [`TWO_VALUED`] clear, the index of
/// its block of cells; with it set, the index of its [`TwoValued`] entry.
const EXPANDED: u32 = 1 << 31;
/// See [`EXPANDED`].
const TWO_VALUED: u32 = 1 << 30;
/// The bits of an entry's index.
const INDEX: u32 = TWO_VALUED - 1;
/// Values stored must be below this (a value is read as one only while bit 31 is clear).
pub(super) const VALUE_LIMIT: u32 = EXPANDED;

/// A tile whose cells hold 0 or `value`: bit `row * 8 + column` of `holds` set for the cells
/// holding `value`.
#[derive(Debug, Clone, Copy)]
struct TwoValued {
    value: u32,
    holds: u64,
}

/// The form a tile's cells call for.
enum Form {
    One(u32),
    Two(TwoValued),
    Cells,
}

/// Values per cell of a `width x height` map, by tiles (see the module documentation). Values
/// must be below [`VALUE_LIMIT`] (2^31).
#[derive(Debug, Clone, Default)]
pub(super) struct TiledLabels {
    width: usize,
    height: usize,
    tiles_x: usize,
    /// Per tile, row-major: its one value; `EXPANDED | TWO_VALUED | k` for a tile described by
    /// `two_valued[k]`; `EXPANDED | block` for a tile that keeps its cells in
    /// `cells[block * 64..][..64]` (row-major within the tile).
    tiles: Vec<u32>,
    two_valued: Vec<TwoValued>,
    cells: Vec<u32>,
    /// Entries of `two_valued` and blocks of `cells` no tile uses.
    free_two_valued: Vec<u32>,
    free_blocks: Vec<u32>,
}

impl TiledLabels {
    /// Every cell of a `width x height` map holding `value`.
    pub(super) fn filled(width: usize, height: usize, value: u32) -> Self {
        debug_assert!(value < VALUE_LIMIT);
        let tiles_x = width.div_ceil(TILE);
        let tiles = vec![value; tiles_x * height.div_ceil(TILE)];
        Self { width, height, tiles_x, tiles, ..Self::default() }
    }

    /// The position of cell `(x, y)` within its tile (bit or index, row-major).
    #[inline]
    fn within(x: usize, y: usize) -> usize {
        (y % TILE) * TILE + x % TILE
    }

    /// The value of cell `(x, y)` (inside the map).
    #[inline]
    pub(super) fn get(&self, x: usize, y: usize) -> u32 {
        debug_assert!(x < self.width && y < self.height);
        let t = self.tiles[(y / TILE) * self.tiles_x + x / TILE];
        if t & EXPANDED == 0 {
            t
        } else if t & TWO_VALUED != 0 {
            let two = self.two_valued[(t & INDEX) as usize];
            if two.holds >> Self::within(x, y) & 1 != 0 {
                two.value
            } else {
                0
            }
        } else {
            self.cells[(t & INDEX) as usize * TILE_CELLS + Self::within(x, y)]
        }
    }

    /// Sets cell `(x, y)` (inside the map) to `value` (below [`VALUE_LIMIT`]).
    pub(super) fn set(&mut self, x: usize, y: usize, value: u32) {
        debug_assert!(x < self.width && y < self.height && value < VALUE_LIMIT);
        let tile = (y / TILE) * self.tiles_x + x / TILE;
        let (t, bit) = (self.tiles[tile], Self::within(x, y));
        if t & EXPANDED == 0 {
            if t == value {
                return;
            }
            // One value becomes two when one of them is 0, else cells.
            if t == 0 || value == 0 {
                let (v, others) = if t == 0 { (value, 0) } else { (t, u64::MAX) };
                let holds = if value == 0 { others & !(1 << bit) } else { 1 << bit };
                self.make_two_valued(tile, TwoValued { value: v, holds });
            } else {
                let block = self.make_cells(tile, &[t; TILE_CELLS]);
                self.cells[block + bit] = value;
            }
        } else if t & TWO_VALUED != 0 {
            let k = (t & INDEX) as usize;
            let two = &mut self.two_valued[k];
            if value == two.value {
                two.holds |= 1 << bit;
            } else if value == 0 {
                two.holds &= !(1 << bit);
            } else {
                let two = *two;
                let cells: [u32; TILE_CELLS] =
                    std::array::from_fn(|i| if two.holds >> i & 1 != 0 { two.value } else { 0 });
                self.free_two_valued.push(k as u32);
                let block = self.make_cells(tile, &cells);
                self.cells[block + bit] = value;
            }
        } else {
            self.cells[(t & INDEX) as usize * TILE_CELLS + bit] = value;
        }
    }

    /// Describes tile `tile` by `two` (reusing a free entry when there is one).
    fn make_two_valued(&mut self, tile: usize, two: TwoValued) {
        let k = match self.free_two_valued.pop() {
            Some(k) => {
                self.two_valued[k as usize] = two;
                k
            }
            None => {
                self.two_valued.push(two);
                (self.two_valued.len() - 1) as u32
            }
        };
        self.tiles[tile] = EXPANDED | TWO_VALUED | k;
    }

    /// Gives tile `tile` a block of cells holding `cells` (reusing a free block when there is
    /// one); returns the index of its first cell in `self.cells`.
    fn make_cells(&mut self, tile: usize, cells: &[u32; TILE_CELLS]) -> usize {
        let block = match self.free_blocks.pop() {
            Some(b) => b,
            None => {
                self.cells.resize(self.cells.len() + TILE_CELLS, 0);
                (self.cells.len() / TILE_CELLS - 1) as u32
            }
        };
        let first = block as usize * TILE_CELLS;
        self.cells[first..first + TILE_CELLS].copy_from_slice(cells);
        self.tiles[tile] = EXPANDED | block;
        first
    }

    /// The smallest form holding `cells` (row-major within the tile; only the first `w` columns
    /// of the first `h` rows are the map's, the rest is ignored).
    fn form_of(cells: &[u32; TILE_CELLS], w: usize, h: usize) -> Form {
        let (mut value, mut holds) = (0u32, 0u64);
        let mut zeros = false;
        for r in 0..h {
            for c in 0..w {
                let v = cells[r * TILE + c];
                if v == 0 {
                    zeros = true;
                } else if value == 0 || v == value {
                    value = v;
                    holds |= 1 << (r * TILE + c);
                } else {
                    return Form::Cells;
                }
            }
        }
        match (value, zeros) {
            (0, _) => Form::One(0),
            (v, false) => Form::One(v),
            (v, true) => Form::Two(TwoValued { value: v, holds }),
        }
    }

    /// Puts tile `tile` (which must hold one value now) in the smallest form holding `cells`
    /// (see [`Self::form_of`]).
    fn store(&mut self, tile: usize, cells: &[u32; TILE_CELLS], w: usize, h: usize) {
        debug_assert!(self.tiles[tile] & EXPANDED == 0);
        match Self::form_of(cells, w, h) {
            Form::One(v) => self.tiles[tile] = v,
            Form::Two(two) => self.make_two_valued(tile, two),
            Form::Cells => {
                self.make_cells(tile, cells);
            }
        }
    }

    /// Sets the tiles of rows `y0..y0 + 8` (a tile row; fewer at the bottom edge) from `rows`,
    /// the values of those rows, row-major, `width` each, each tile in the smallest form that
    /// holds its cells. The tiles of that row must hold one value each (as [`Self::filled`]
    /// leaves them).
    pub(super) fn set_tile_row(&mut self, y0: usize, rows: &[u32]) {
        debug_assert!(y0 % TILE == 0 && rows.len() == self.width * TILE.min(self.height - y0));
        let (w, n) = (self.width, rows.len() / self.width.max(1));
        for tx in 0..self.tiles_x {
            let (x0, x1) = (tx * TILE, ((tx + 1) * TILE).min(w));
            let mut cells = [0u32; TILE_CELLS];
            for r in 0..n {
                cells[r * TILE..r * TILE + x1 - x0].copy_from_slice(&rows[r * w + x0..r * w + x1]);
            }
            self.store((y0 / TILE) * self.tiles_x + tx, &cells, x1 - x0, n);
        }
    }

    /// Puts every tile meeting the cells `x0..x1` x `y0..y1` back in the smallest form that
    /// holds its cells, freeing what it no longer uses.
    pub(super) fn compact(&mut self, x0: usize, y0: usize, x1: usize, y1: usize) {
        if x0 >= x1 || y0 >= y1 {
            return;
        }
        for ty in y0 / TILE..=(y1 - 1) / TILE {
            for tx in x0 / TILE..=(x1 - 1) / TILE {
                let tile = ty * self.tiles_x + tx;
                let t = self.tiles[tile];
                if t & EXPANDED == 0 {
                    continue;
                }
                let (w, h) = (TILE.min(self.width - tx * TILE), TILE.min(self.height - ty * TILE));
                let k = t & INDEX;
                let cells: [u32; TILE_CELLS] = if t & TWO_VALUED != 0 {
                    let two = self.two_valued[k as usize];
                    std::array::from_fn(|i| if two.holds >> i & 1 != 0 { two.value } else { 0 })
                } else {
                    self.cells[k as usize * TILE_CELLS..][..TILE_CELLS].try_into().expect("a block is a tile")
                };
                let smaller = match Self::form_of(&cells, w, h) {
                    Form::One(_) => true,
                    Form::Two(_) => t & TWO_VALUED == 0,
                    Form::Cells => false,
                };
                if smaller {
                    if t & TWO_VALUED != 0 {
                        self.free_two_valued.push(k);
                    } else {
                        self.free_blocks.push(k);
                    }
                    self.tiles[tile] = 0;
                    self.store(tile, &cells, w, h);
                }
            }
        }
    }
}

impl crate::memory::HeapSize for TiledLabels {
    fn heap_bytes(&self) -> usize {
        self.tiles.heap_bytes()
            + self.two_valued.heap_bytes()
            + self.cells.heap_bytes()
            + self.free_two_valued.heap_bytes()
            + self.free_blocks.heap_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random writes, compactions and tile-row fills answer as a plain array, on maps whose
    /// sides are not multiples of the tile.
    #[test]
    fn answers_as_a_plain_array() {
        let mut seed = 7u64;
        let mut rnd = |n: usize| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((seed >> 33) as usize) % n
        };
        for (w, h) in [(1, 1), (8, 8), (13, 21), (40, 17)] {
            let rows: Vec<u32> = (0..w * h).map(|k| if (k / w) % 9 < 4 { 3 } else { (k % 5) as u32 }).collect();
            let mut tiled = TiledLabels::filled(w, h, 0);
            for y0 in (0..h).step_by(TILE) {
                tiled.set_tile_row(y0, &rows[y0 * w..(y0 + TILE).min(h) * w]);
            }
            let mut plain = rows.clone();
            for round in 0..2000 {
                let (x, y) = (rnd(w), rnd(h));
                let v = rnd(4) as u32;
                tiled.set(x, y, v);
                plain[y * w + x] = v;
                if round % 97 == 0 {
                    let (x0, y0) = (rnd(w), rnd(h));
                    tiled.compact(x0, y0, (x0 + 1 + rnd(w)).min(w), (y0 + 1 + rnd(h)).min(h));
                }
                if round % 500 == 0 {
                    tiled.compact(0, 0, w, h);
                }
                let (qx, qy) = (rnd(w), rnd(h));
                assert_eq!(tiled.get(qx, qy), plain[qy * w + qx], "{w}x{h} at ({qx}, {qy})");
            }
            for y in 0..h {
                for x in 0..w {
                    assert_eq!(tiled.get(x, y), plain[y * w + x], "{w}x{h} at ({x}, {y})");
                }
            }
        }
    }

    /// One value everywhere takes a tile entry per 64 cells; compacting after writes returns
    /// blocks for reuse.
    #[test]
    fn a_uniform_map_keeps_no_cells() {
        use crate::memory::HeapSize;
        let mut t = TiledLabels::filled(800, 800, 5);
        assert_eq!(t.cells.len(), 0);
        assert!(t.heap_bytes() <= 800 * 800 / 64 * 4);
        t.set(10, 10, 6);
        assert_eq!(t.cells.len(), TILE_CELLS);
        t.set(10, 10, 5);
        t.compact(0, 0, 800, 800);
        assert_eq!(t.free_blocks.len(), 1);
        t.set(500, 500, 1);
        assert_eq!((t.cells.len(), t.free_blocks.len()), (TILE_CELLS, 0), "the freed block is reused");
        assert_eq!((t.get(500, 500), t.get(501, 500), t.get(10, 10)), (1, 5, 5));
    }

    /// A tile of 0 and one label keeps a mask, not cells, until a third value arrives; folding
    /// returns it to the smallest form.
    #[test]
    fn outline_tiles_keep_a_mask() {
        let mut t = TiledLabels::filled(20, 20, 0);
        t.set(3, 3, 7);
        t.set(4, 3, 7);
        assert_eq!((t.two_valued.len(), t.cells.len()), (1, 0));
        assert_eq!((t.get(3, 3), t.get(4, 3), t.get(5, 3)), (7, 7, 0));
        t.set(4, 3, 0);
        assert_eq!((t.get(4, 3), t.cells.len()), (0, 0));
        t.set(5, 3, 9);
        assert_eq!((t.get(3, 3), t.get(5, 3), t.cells.len(), t.free_two_valued.len()), (7, 9, TILE_CELLS, 1));
        t.set(5, 3, 0);
        t.compact(0, 0, 20, 20);
        assert_eq!((t.free_blocks.len(), t.free_two_valued.len()), (1, 0), "back to a mask, reusing the entry");
        assert_eq!((t.get(3, 3), t.get(5, 3)), (7, 0));
        // A wall tile filled by a label becomes that label alone.
        let mut u = TiledLabels::filled(16, 16, 2);
        u.set(9, 9, 0);
        assert_eq!(u.two_valued.len(), 1);
        u.set(9, 9, 2);
        u.compact(8, 8, 16, 16);
        assert_eq!((u.free_two_valued.len(), u.get(9, 9)), (1, 2));
    }
}
