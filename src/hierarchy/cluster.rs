//! One cluster of the graph: the pieces (4-connected components) of the free mask cells inside a
//! square of [`SIDE`] cells, and the links from them to the pieces of the clusters east and north.

use crate::search::los::CellMask;

/// Side of a cluster (cells). 32 keeps the graph near 0.05 bytes per cell while a long plan
/// crosses a few hundred clusters.
pub const SIDE: usize = 32;
/// `log2(SIDE)`: cell to cluster coordinate is a shift.
pub(super) const SHIFT: u32 = SIDE.trailing_zeros();

/// No piece: the cell is blocked.
const NONE: u16 = u16::MAX;

/// A piece of a cluster: the centroid of its cells (cell units, the cells' centres averaged) and
/// the mean of the caller's per-cell weight over them (the cost weight above 1 per cell unit).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Piece {
    pub x: f32,
    pub y: f32,
    pub extra: f32,
}

/// A link across a cluster's east (`north == false`: to the cluster at `cx + 1`) or north side
/// (`cy + 1`): piece `from` of this cluster has a cell 4-adjacent to a cell of piece `to` there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Link {
    pub north: bool,
    pub from: u16,
    pub to: u16,
}

/// A cluster's pieces (numbered in the order their first cell comes row by row, so a cluster
/// labelled twice gets the same numbers) and its links east and north, sorted.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Cluster {
    pub pieces: Box<[Piece]>,
    pub links: Box<[Link]>,
}

impl Cluster {
    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.pieces) + std::mem::size_of_val(&*self.links)
    }
}

/// The piece of every cell of one cluster (row-major over its `width x height` cells; clusters
/// on the map's east and north edges are cut).
pub(super) struct Labels {
    x0: usize,
    y0: usize,
    width: usize,
    height: usize,
    count: u16,
    of: [u16; SIDE * SIDE],
}

impl Labels {
    /// Labels cluster `(cx, cy)` of `mask`: the 4-connected pieces of its free cells, numbered in
    /// row-major order of their first cells ([`crate::labelling`]).
    pub fn of(mask: &CellMask, cx: usize, cy: usize) -> Self {
        let (x0, y0) = (cx * SIDE, cy * SIDE);
        let width = SIDE.min(mask.width() - x0);
        let height = SIDE.min(mask.height() - y0);
        let (cells, stride) = mask.padded_cells();
        let row = |ly: usize| &cells[(y0 + ly + 1) * stride + x0 + 1..][..width];
        // Most clusters are all free or all blocked: one scan, no labelling.
        if (0..height).all(|ly| row(ly).iter().all(|&b| b == 0)) {
            return Labels { x0, y0, width, height, count: 1, of: [0; SIDE * SIDE] };
        }
        let mut l = Labels { x0, y0, width, height, count: 0, of: [NONE; SIDE * SIDE] };
        if (0..height).all(|ly| row(ly).iter().all(|&b| b != 0)) {
            return l;
        }
        let free = |lx: usize, ly: usize| cells[(y0 + ly + 1) * stride + x0 + lx + 1] == 0;
        let mut local = [0u32; SIDE * SIDE];
        let pieces = crate::labelling::label_components(width, height, free, &mut local);
        // At most SIDE * SIDE / 2 pieces (a checkerboard), so a piece number fits below NONE.
        l.count = pieces.len() as u16;
        for (ly, row) in local.chunks_exact(width).take(height).enumerate() {
            for (lx, &n) in row.iter().enumerate() {
                l.of[ly * SIDE + lx] = if n == 0 { NONE } else { (n - 1) as u16 };
            }
        }
        l
    }

    /// Pieces in the cluster.
    pub fn count(&self) -> usize {
        usize::from(self.count)
    }

    /// The piece of map cell `(x, y)`, which must lie in this cluster; `None` when blocked.
    pub fn piece_of(&self, x: usize, y: usize) -> Option<u16> {
        let label = self.of[(y - self.y0) * SIDE + (x - self.x0)];
        (label != NONE).then_some(label)
    }

    /// The pieces with their centroids and mean weights, `extra(k)` the weight of the cell of
    /// row-major map index `k` (`map_width` cells a row).
    pub fn pieces(&self, map_width: usize, extra: &impl Fn(usize) -> f64) -> Box<[Piece]> {
        let n = usize::from(self.count);
        let mut sums = vec![(0.0f64, 0.0f64, 0.0f64, 0u32); n];
        for ly in 0..self.height {
            for lx in 0..self.width {
                let label = self.of[ly * SIDE + lx];
                if label == NONE {
                    continue;
                }
                let (x, y) = (self.x0 + lx, self.y0 + ly);
                let s = &mut sums[usize::from(label)];
                s.0 += x as f64 + 0.5;
                s.1 += y as f64 + 0.5;
                s.2 += extra(y * map_width + x);
                s.3 += 1;
            }
        }
        sums.iter()
            .map(|&(sx, sy, se, k)| {
                let k = f64::from(k);
                Piece { x: (sx / k) as f32, y: (sy / k) as f32, extra: (se / k) as f32 }
            })
            .collect()
    }

    /// The pieces along the cluster's four sides (`NONE` where blocked or past a cut edge).
    pub fn sides(&self) -> Sides {
        let mut sides = Sides { east: [NONE; SIDE], west: [NONE; SIDE], north: [NONE; SIDE], south: [NONE; SIDE] };
        for k in 0..self.height {
            sides.west[k] = self.of[k * SIDE];
            sides.east[k] = self.of[k * SIDE + self.width - 1];
        }
        for k in 0..self.width {
            sides.south[k] = self.of[k];
            sides.north[k] = self.of[(self.height - 1) * SIDE + k];
        }
        sides
    }
}

/// The pieces along a cluster's sides: what its neighbours' links are made from.
#[derive(Debug, Clone)]
pub(super) struct Sides {
    east: [u16; SIDE],
    west: [u16; SIDE],
    north: [u16; SIDE],
    south: [u16; SIDE],
}

/// Cluster `(cx, cy)` of `mask` made from scratch: its pieces, weighted by `extra`, and its
/// links to the clusters east and north (labelled here too: nothing of theirs is stored).
pub(super) fn build(mask: &CellMask, (cx, cy): (usize, usize), extra: &impl Fn(usize) -> f64) -> Cluster {
    let here = Labels::of(mask, cx, cy);
    if here.count == 0 {
        return Cluster::default();
    }
    let east = ((cx + 1) * SIDE < mask.width()).then(|| Labels::of(mask, cx + 1, cy).sides());
    let north = ((cy + 1) * SIDE < mask.height()).then(|| Labels::of(mask, cx, cy + 1).sides());
    Cluster { pieces: here.pieces(mask.width(), extra), links: links(&here.sides(), east.as_ref(), north.as_ref()) }
}

/// The links of the cluster whose sides are `here` to its `east` and `north` neighbours
/// (`None` past the map's edge), sorted.
pub(super) fn links(here: &Sides, east: Option<&Sides>, north: Option<&Sides>) -> Box<[Link]> {
    let mut links = Vec::new();
    let mut across = |mine: &[u16; SIDE], theirs: &[u16; SIDE], north: bool| {
        for (&from, &to) in mine.iter().zip(theirs) {
            if from != NONE && to != NONE {
                links.push(Link { north, from, to });
            }
        }
    };
    if let Some(east) = east {
        across(&here.east, &east.west, false);
    }
    if let Some(north) = north {
        across(&here.north, &north.south, true);
    }
    links.sort_unstable();
    links.dedup();
    links.into_boxed_slice()
}
