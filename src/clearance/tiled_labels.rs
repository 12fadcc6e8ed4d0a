//! A `u32` per cell of a map, stored by 8 x 8 tiles: a tile whose cells all hold one value
//! keeps that value alone, any other keeps a value per cell.
//!
//! Region labels ([`super::regions`]) are the use: after labelling, a tile of open floor or of
//! wall holds one label, and only tiles along the outlines of obstacles hold 64. On building
//! maps at 5 cm that is a small share of the tiles, so the labels take a fraction of the 4 bytes
//! a cell a plain array would (measured in `bench-fleet` as part of `mask_and_regions`).
//!
//! Reads cost a tile lookup and, for a tile that keeps its cells, a second one. A write that
//! gives a one-value tile a second value expands it into cells (reusing a block freed by
//! [`TiledLabels::compact`] when there is one); [`TiledLabels::compact`] folds tiles whose cells
//! came to hold one value back into one.

/// Side of a tile (cells).
const TILE: usize = 8;
/// Cells per tile.
const TILE_CELLS: usize = TILE * TILE;
/// Marks a tile entry that is the index of its block of cells rather than its value.
const EXPANDED: u32 = 1 << 31;

/// Values per cell of a `width x height` map, by tiles (see the module documentation). Values
/// must be below 2^31.
#[derive(Debug, Clone, Default)]
pub(super) struct TiledLabels {
    width: usize,
    height: usize,
    tiles_x: usize,
    /// Per tile, row-major: its one value, or `EXPANDED | block` for a tile that keeps its cells
    /// in `cells[block * 64..][..64]` (row-major within the tile).
    tiles: Vec<u32>,
    cells: Vec<u32>,
    /// Blocks of `cells` no tile uses.
    free_blocks: Vec<u32>,
}

impl TiledLabels {
    /// Every cell of a `width x height` map holding `value`.
    pub(super) fn filled(width: usize, height: usize, value: u32) -> Self {
        debug_assert!(value < EXPANDED);
        let tiles_x = width.div_ceil(TILE);
        let tiles = vec![value; tiles_x * height.div_ceil(TILE)];
        Self { width, height, tiles_x, tiles, cells: Vec::new(), free_blocks: Vec::new() }
    }

    /// The value of cell `(x, y)` (inside the map).
    #[inline]
    pub(super) fn get(&self, x: usize, y: usize) -> u32 {
        debug_assert!(x < self.width && y < self.height);
        let t = self.tiles[(y / TILE) * self.tiles_x + x / TILE];
        if t & EXPANDED == 0 {
            t
        } else {
            self.cells[(t & !EXPANDED) as usize * TILE_CELLS + (y % TILE) * TILE + x % TILE]
        }
    }

    /// Sets cell `(x, y)` (inside the map) to `value` (below 2^31).
    #[inline]
    pub(super) fn set(&mut self, x: usize, y: usize, value: u32) {
        debug_assert!(x < self.width && y < self.height && value < EXPANDED);
        let tile = (y / TILE) * self.tiles_x + x / TILE;
        let mut t = self.tiles[tile];
        if t & EXPANDED == 0 {
            if t == value {
                return;
            }
            t = self.expand(tile);
        }
        self.cells[(t & !EXPANDED) as usize * TILE_CELLS + (y % TILE) * TILE + x % TILE] = value;
    }

    /// Gives tile `tile` (holding one value) a block of cells all holding that value; returns
    /// its new entry.
    fn expand(&mut self, tile: usize) -> u32 {
        let value = self.tiles[tile];
        let block = match self.free_blocks.pop() {
            Some(b) => {
                self.cells[b as usize * TILE_CELLS..][..TILE_CELLS].fill(value);
                b
            }
            None => {
                let b = (self.cells.len() / TILE_CELLS) as u32;
                self.cells.resize(self.cells.len() + TILE_CELLS, value);
                b
            }
        };
        self.tiles[tile] = EXPANDED | block;
        self.tiles[tile]
    }

    /// Sets the tiles of rows `y0..y0 + 8` (a tile row; fewer at the bottom edge) from `rows`,
    /// the values of those rows, row-major, `width` each: a tile whose cells hold one value keeps
    /// that value alone. The tiles of that row must hold one value each (as [`Self::filled`]
    /// leaves them).
    pub(super) fn set_tile_row(&mut self, y0: usize, rows: &[u32]) {
        debug_assert!(y0 % TILE == 0 && rows.len() == self.width * TILE.min(self.height - y0));
        let (w, n) = (self.width, rows.len() / self.width.max(1));
        for tx in 0..self.tiles_x {
            let (x0, x1) = (tx * TILE, ((tx + 1) * TILE).min(w));
            let first = rows[x0];
            let uniform = (0..n).all(|r| rows[r * w + x0..r * w + x1].iter().all(|&v| v == first));
            let tile = (y0 / TILE) * self.tiles_x + tx;
            debug_assert!(self.tiles[tile] & EXPANDED == 0);
            self.tiles[tile] = first;
            if !uniform {
                let t = self.expand(tile);
                let block = (t & !EXPANDED) as usize * TILE_CELLS;
                for r in 0..n {
                    self.cells[block + r * TILE..][..x1 - x0].copy_from_slice(&rows[r * w + x0..r * w + x1]);
                }
            }
        }
    }

    /// Folds every tile meeting the cells `x0..x1` x `y0..y1` whose cells all hold one value
    /// back into that value, freeing its block. Cells of a tile beyond the map's edge are not
    /// compared.
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
                let block = &self.cells[(t & !EXPANDED) as usize * TILE_CELLS..][..TILE_CELLS];
                let (w, h) = (TILE.min(self.width - tx * TILE), TILE.min(self.height - ty * TILE));
                let first = block[0];
                if (0..h).all(|r| block[r * TILE..r * TILE + w].iter().all(|&v| v == first)) {
                    self.tiles[tile] = first;
                    self.free_blocks.push(t & !EXPANDED);
                }
            }
        }
    }
}

impl crate::memory::HeapSize for TiledLabels {
    fn heap_bytes(&self) -> usize {
        self.tiles.heap_bytes() + self.cells.heap_bytes() + self.free_blocks.heap_bytes()
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
}
