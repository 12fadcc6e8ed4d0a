//! Open ground for a cost search: the cells whose 5 x 5 window (the cell and the two rings
//! around it) lies inside the map, is free, adds no cost and is admitted by the caller with an
//! estimate of 0.
//!
//! Every one of the 16 moves of [`super::cost_astar`] from such a cell stays inside that window
//! (its price samples and the cells it touches lie in the bounding box of its two centres, at
//! most two cells away), and so does every two-move detour from the cell's neighbours through it:
//! from open ground every move is legal and costs its length, the empty map's case, which is
//! what lets the search order its moves canonically there (see `cost_astar`).
//!
//! Computed lazily a 16 x 16 tile at a time (a 20 x 20 read of the cells around the tile,
//! dilated with bit operations) and stamped with a generation, so a query pays only for the
//! tiles its search reaches and a new generation starts with nothing to clear. A generation
//! lasts one query, or, for the queries a caller names with one [`MapRevision`] (the same
//! cells dirty in each), as long as they follow each other.

/// Side of a tile (cells).
const SIDE: usize = 16;
/// `log2(SIDE)`.
const SHIFT: u32 = SIDE.trailing_zeros();
/// The window's reach around a cell (cells).
const REACH: i64 = 2;

use super::cost_astar::MapRevision;

/// One tile: the generation that computed it (0: never) and a bit per cell, row by row, set
/// where the cell is open ground.
#[derive(Debug, Clone, Copy, Default)]
struct Tile {
    stamp: u32,
    rows: [u16; SIDE],
}

// SAFETY: plain numbers; all-zero bytes are a tile no query computed.
unsafe impl bytemuck::Zeroable for Tile {}

/// The open ground of one generation at a time (see the module doc): 36 bytes per 256 cells of
/// the map searched last, allocated zeroed, so tiles no query reached cost no resident memory.
#[derive(Debug, Clone, Default)]
pub(crate) struct OpenGround {
    width: usize,
    height: usize,
    across: usize,
    tiles: Vec<Tile>,
    generation: u32,
    /// The revision the current generation's tiles were worked out on (`None`: one query's).
    revision: Option<MapRevision>,
}

impl OpenGround {
    /// Starts a query on a `width` x `height` map. Its tiles are those of the query before when
    /// both name the same `revision` (the caller's promise: the same cells dirty); otherwise
    /// every tile is unknown.
    pub(crate) fn begin(&mut self, width: usize, height: usize, revision: Option<MapRevision>) {
        if revision.is_some() && revision == self.revision && (self.width, self.height) == (width, height) {
            return;
        }
        self.revision = revision;
        self.generation = self.generation.wrapping_add(1);
        // A new size, or the stamps wrapping after 2^32 queries: every tile anew.
        if (self.width, self.height) != (width, height) || self.generation == 0 {
            let (across, down) = (width.div_ceil(SIDE), height.div_ceil(SIDE));
            self.tiles = Vec::new(); // the old pages go before the new ones come
            self.tiles = bytemuck::zeroed_vec(across * down);
            (self.width, self.height, self.across, self.generation) = (width, height, across, 1);
        }
    }

    /// True when cell `(x, y)` (inside the map) is open ground, `dirty(x, y)` saying which cells
    /// (inside the map) are blocked, add cost or are not admitted. `dirty` must answer the same
    /// within one generation: a tile is computed the first time one of its cells is asked about.
    #[inline]
    pub(crate) fn is_open(&mut self, x: i64, y: i64, dirty: impl Fn(i64, i64) -> bool) -> bool {
        let (ux, uy) = (x as usize, y as usize);
        let k = (uy >> SHIFT) * self.across + (ux >> SHIFT);
        if self.tiles[k].stamp != self.generation {
            self.tiles[k] = Tile { stamp: self.generation, rows: self.compute(ux >> SHIFT, uy >> SHIFT, dirty) };
        }
        (self.tiles[k].rows[uy & (SIDE - 1)] >> (ux & (SIDE - 1))) & 1 == 1
    }

    /// The open-ground bits of tile `(tx, ty)`: a 20 x 20 read of the dirty cells (outside the
    /// map counts as dirty), each row dilated across by two cells either way with shifts, then
    /// down by two rows either way with ORs.
    fn compute(&self, tx: usize, ty: usize, dirty: impl Fn(i64, i64) -> bool) -> [u16; SIDE] {
        const ROWS: usize = SIDE + 2 * REACH as usize;
        let (x0, y0) = ((tx * SIDE) as i64 - REACH, (ty * SIDE) as i64 - REACH);
        let (w, h) = (self.width as i64, self.height as i64);
        let mut spread = [0u32; ROWS];
        for (r, row) in spread.iter_mut().enumerate() {
            let y = y0 + r as i64;
            let mut bits = 0u32;
            for c in 0..ROWS {
                let x = x0 + c as i64;
                if x < 0 || y < 0 || x >= w || y >= h || dirty(x, y) {
                    bits |= 1 << c;
                }
            }
            // Bit j of the result covers columns j..=j + 4 of the read: cell x0 + j + 2's window.
            *row = bits | bits >> 1 | bits >> 2 | bits >> 3 | bits >> 4;
        }
        std::array::from_fn(|r| {
            let near = spread[r] | spread[r + 1] | spread[r + 2] | spread[r + 3] | spread[r + 4];
            !(near as u16)
        })
    }

    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        self.tiles.capacity() * std::mem::size_of::<Tile>()
    }

    /// Hands the tiles' pages back to the operating system (see `crate::memory::release_zeroed`):
    /// a zeroed tile reads as never computed.
    pub(crate) fn release_pages(&mut self) {
        // SAFETY: the global allocator's heap memory (a Vec), and Tile is Zeroable.
        unsafe { crate::memory::release_zeroed(&mut self.tiles) };
        // A tile across a released page's edge keeps its stamp with some rows zeroed: the next
        // query must not take it as current, so none is kept.
        self.revision = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against the definition, cell by cell: random dirty cells on maps whose sides are and are
    /// not multiples of a tile.
    #[test]
    fn open_ground_is_the_clean_5x5_window() {
        let mut seed = 11u64;
        let mut next = move |n: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        let mut ground = OpenGround::default();
        for (w, h, per_mille) in [(16, 16, 0), (37, 23, 20), (50, 41, 5), (5, 70, 30), (64, 32, 60)] {
            let dirty: Vec<bool> = (0..w * h).map(|_| next(1000) < per_mille).collect();
            let is_dirty = |x: i64, y: i64| dirty[(y * w as i64 + x) as usize];
            ground.begin(w, h, None);
            for y in 0..h as i64 {
                for x in 0..w as i64 {
                    let want = (y - 2..=y + 2).all(|v| {
                        (x - 2..=x + 2).all(|u| u >= 0 && v >= 0 && u < w as i64 && v < h as i64 && !is_dirty(u, v))
                    });
                    assert_eq!(ground.is_open(x, y, is_dirty), want, "{w}x{h}: ({x}, {y})");
                }
            }
            // A new query recomputes: everything dirty now.
            ground.begin(w, h, None);
            assert!(!ground.is_open(w as i64 / 2, h as i64 / 2, |_, _| true));
            ground.release_pages();
            ground.begin(w, h, None);
            assert_eq!(ground.is_open(2, 2, |_, _| false), w >= 5 && h >= 5);
            // Queries on one revision keep the tiles worked out (`dirty` is then the caller's
            // promise, here broken on purpose to see the tile kept); another revision, a query
            // of its own or the release of the pages starts anew.
            let (kept, other) = (MapRevision::fresh(), MapRevision::fresh());
            let open = w >= 5 && h >= 5;
            ground.begin(w, h, Some(kept));
            assert_eq!(ground.is_open(2, 2, |_, _| false), open);
            ground.begin(w, h, Some(kept));
            assert_eq!(ground.is_open(2, 2, |_, _| true), open, "kept");
            ground.begin(w, h, Some(other));
            assert!(!ground.is_open(2, 2, |_, _| true));
            ground.begin(w, h, Some(other));
            assert!(!ground.is_open(2, 2, |_, _| false), "kept");
            ground.begin(w, h, None);
            assert_eq!(ground.is_open(2, 2, |_, _| false), open);
            ground.begin(w, h, Some(other));
            assert!(!ground.is_open(2, 2, |_, _| true), "after a query of its own");
            // After the pages went back nothing is kept (a tile across a page's edge may have
            // lost some rows but not its stamp).
            ground.release_pages();
            ground.begin(w, h, Some(other));
            assert_eq!(ground.is_open(2, 2, |_, _| false), open, "after the pages went");
        }
    }
}
