//! Block A* (Yap, Burch, Holte, Schaeffer, AAAI 2011, Algorithms 1 and 2): A* whose open list
//! holds blocks; expanding a block relaxes all of its boundary nodes at once from the boundary
//! nodes whose g-values improved since its last expansion (its ingress nodes), using LDDB
//! distances, and hands the improved (egress) nodes on to the neighbouring blocks.
//!
//! Nodes are cells for the octile and tile metrics (blocks are disjoint; a path leaves a block
//! by one legal move into a neighbouring block) and vertices for the any-angle metric (blocks
//! share their boundary vertices; under the conservative rule, runs along block boundary lines,
//! which neither block's table can certify, are added as unit moves checked on the map: each
//! expanding block runs along its own lines from its improved vertices, from its ingress
//! vertices on block corners, where lines of other blocks meet, and from the start).
//!
//! The heap value of a block is the least `g + h` over its ingress nodes. The search stops only
//! when the least heap value is no less than the best goal length found, so octile and tile
//! lengths are optimal; any-angle paths are the shortest through the block structure (not
//! always the true any-angle optimum).
//!
//! A block is expanded from all of its ingress nodes at once, though only the one with the least
//! `g + h` is certainly final. The others may improve later and re-expand the block: on
//! random512-40-0 that is 40% of the expansions, and 38% of those re-expansions improve nothing.
//! Measured alternatives, not kept:
//! - deferring the ingress above the popped value: 1.03-5.5x the expansions, since batching is
//!   what pays;
//! - filtering the hand-off by the receiving block's table row or by Euclidean reach: 14-16%
//!   fewer expansions and 3-16% more cycles, since the filter reads cost more than the expansions
//!   saved.

use super::BlockGrid;
use crate::lddb::{BoundaryRow, Lddb, Metric};
use crate::search::los::LosRule;
use crate::search::path::{polyline_length, remove_collinear_if, GridPath, SearchFailure};
use crate::search::poll::StopPoll;
use std::collections::BinaryHeap;

const NONE: u32 = u32::MAX;
/// An unused [`Layout::line_moves`] entry (the used ones come first).
const NO_MOVE: u8 = 0xFF;
/// `parent_block` value of a node reached by a single move, not through a block's table.
const STEP: u32 = u32::MAX - 1;
const SQRT2: f64 = std::f64::consts::SQRT_2;
/// Smallest any-angle improvement that counts. Table entries are rounded to 1/1024, so smaller
/// "improvements" are mostly rounding noise between equally long routes, and each one would
/// re-expand blocks for nothing.
const AA_EPS: f64 = 1e-3;
const MOVES8: [(i64, i64); 8] = [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)];

/// A heap entry for block `b` with heap value `f` (non-negative, so its bits order as the
/// value): one integer whose order is that of `(Reverse(f), b)`, so the max-heap pops the least
/// value first (the larger block among equal values) with one comparison per step.
#[inline(always)]
fn heap_entry(f: f64, b: u32) -> u128 {
    u128::from(!f.to_bits()) << 32 | u128::from(b)
}

/// The heap value and block of a [`heap_entry`].
#[inline(always)]
fn heap_value(entry: u128) -> (f64, u32) {
    (f64::from_bits(!((entry >> 32) as u64)), entry as u32)
}

/// `cand[j] = min(cand[j], g + row[j])` over all 16 lanes, recording in `from[j]` the row index
/// `r` when it lowers the lane (strictly, so among equal sums the first row is kept). Written as
/// selects so it compiles to packed compares and blends; padding lanes hold `+inf` and stay so.
#[inline(always)]
fn min_lanes_from(cand: &mut [f64; 16], from: &mut [u64; 16], row: &BoundaryRow, g: f64, r: u64) {
    for ((c, f), &d) in cand.iter_mut().zip(from.iter_mut()).zip(&row.0) {
        let v = g + f64::from(d);
        let lower = v < *c;
        *f = if lower { r } else { *f };
        *c = if lower { v } else { *c };
    }
}

/// Lowers `cand` lane by lane over the ingress rows `rows` (slot, g, id) of `table` and records
/// per lane the index of the first row that reached the final value (see [`min_lanes_from`]).
/// `WIDE` selects the AVX2 version; the results are bit-identical.
#[inline(always)]
fn relax_lanes<const WIDE: bool>(
    cand: &mut Lanes<f64>,
    from: &mut Lanes<u64>,
    table: &[BoundaryRow],
    rows: &[(usize, f64, u32)],
) {
    #[cfg(target_arch = "x86_64")]
    if WIDE {
        // SAFETY: `WIDE` is true only inside `BlockAStar::search_avx2`, which `find_path`
        // enters only after detecting AVX2.
        unsafe { relax_lanes_avx2(cand, from, table, rows) };
        return;
    }
    for (r, &(j, g, _)) in rows.iter().enumerate() {
        min_lanes_from(&mut cand.0, &mut from.0, &table[j], g, r as u64);
    }
}

/// [`relax_lanes`] in AVX2 registers: the 16 lanes and their row indices stay in eight `ymm`
/// registers across all rows (the compiler's own vectorisation of the portable loop spilled
/// and mixed scalar lanes). `min_pd(v, c)` is `v < c ? v : c`, the portable loop's select, so
/// the values are bit-identical; row indices travel as exact small `f64`s.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn relax_lanes_avx2(
    cand: &mut Lanes<f64>,
    from: &mut Lanes<u64>,
    table: &[BoundaryRow],
    rows: &[(usize, f64, u32)],
) {
    use std::arch::x86_64::*;
    // SAFETY (all pointer accesses below): each pointer is to an array of 16 elements and is
    // offset by 4 * k for k < 4, so every 4-lane access is in bounds.
    let cp = cand.0.as_mut_ptr();
    let mut c = [0, 1, 2, 3].map(|k| unsafe { _mm256_loadu_pd(cp.add(4 * k)) });
    let mut f = [_mm256_setzero_pd(); 4];
    for (r, &(j, g, _)) in rows.iter().enumerate() {
        let row = table[j].0.as_ptr();
        let (gv, rv) = (_mm256_set1_pd(g), _mm256_set1_pd(r as f64));
        for k in 0..4 {
            let d = _mm256_cvtps_pd(unsafe { _mm_loadu_ps(row.add(4 * k)) });
            let v = _mm256_add_pd(gv, d);
            let lower = _mm256_cmp_pd::<_CMP_LT_OQ>(v, c[k]);
            f[k] = _mm256_blendv_pd(f[k], rv, lower);
            c[k] = _mm256_min_pd(v, c[k]);
        }
    }
    let fp = from.0.as_mut_ptr().cast::<__m256i>();
    for k in 0..4 {
        // The row indices are exact small integers: truncation to 32 bits and sign extension
        // give them back as 64-bit lanes (a scalar `as u64` per lane cost ~15 instructions).
        let index = _mm256_cvtepi32_epi64(_mm256_cvttpd_epi32(f[k]));
        unsafe {
            _mm256_storeu_pd(cp.add(4 * k), c[k]);
            _mm256_storeu_si256(fp.add(k), index);
        }
    }
}

/// [`BlockAStar::f_lanes`] for the any-angle heuristic in AVX2 registers: `f = gs + sqrt(dx² +
/// dy²)` with `dx = d.0 + fx`, `dy = d.1 + fy` over all 16 lanes; returns the mask of lanes with
/// `f < bound`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn f_lanes_avx2(
    f: &mut Lanes<f64>,
    gs: &[f64; 16],
    fx: &Lanes<f64>,
    fy: &Lanes<f64>,
    d: (f64, f64),
    bound: f64,
) -> u32 {
    use std::arch::x86_64::*;
    let (dx0, dy0, bv) = (_mm256_set1_pd(d.0), _mm256_set1_pd(d.1), _mm256_set1_pd(bound));
    let mut below = 0u32;
    for k in 0..4 {
        // SAFETY: every pointer is to an array of 16 `f64` offset by 4 * k for k < 4.
        unsafe {
            let dx = _mm256_add_pd(dx0, _mm256_loadu_pd(fx.0.as_ptr().add(4 * k)));
            let dy = _mm256_add_pd(dy0, _mm256_loadu_pd(fy.0.as_ptr().add(4 * k)));
            let h = _mm256_sqrt_pd(_mm256_add_pd(_mm256_mul_pd(dx, dx), _mm256_mul_pd(dy, dy)));
            let v = _mm256_add_pd(_mm256_loadu_pd(gs.as_ptr().add(4 * k)), h);
            _mm256_storeu_pd(f.0.as_mut_ptr().add(4 * k), v);
            below |= (_mm256_movemask_pd(_mm256_cmp_pd::<_CMP_LT_OQ>(v, bv)) as u32) << (4 * k);
        }
    }
    below
}

/// Sixteen lanes aligned to a cache line, so no 2- or 4-lane vector access to them straddles
/// two lines.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(64))]
struct Lanes<T: Copy>([T; 16]);

/// Block offsets of the eight neighbouring blocks.
const NEIGHBOUR_OFFSETS: [(i64, i64); 8] = [(-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1)];

/// The boundary vertices a block shares with one neighbouring block (vertex layouts only).
#[derive(Debug, Clone, Copy, Default)]
struct Neighbour {
    /// Block offset of the neighbour.
    dx: i64,
    dy: i64,
    /// Boundary positions (this block's frame) of the shared vertices.
    edge: u32,
    /// Per shared position: the vertex's boundary position in the neighbour's frame.
    pos: [u8; 16],
    /// Per shared position: the vertex's surrounding cells that lie in the neighbour, as bits of
    /// its pattern code.
    cells: [u16; 16],
}

/// Per-block node layout for one metric and block side.
#[derive(Debug, Clone, Default)]
struct Layout {
    /// Nodes per block side (side + 1 vertices or side cells).
    n: usize,
    /// Boundary nodes as block-frame local indices.
    boundary: Vec<u8>,
    /// Local index -> position in `boundary` (0xFF for interior nodes).
    boundary_pos: Vec<u8>,
    /// Local coordinates of the boundary nodes (saves divisions in the hot loop).
    boundary_xy: Vec<(i64, i64)>,
    /// The same coordinates as `f64` lanes by boundary position (0 in padding lanes), for the
    /// vectorised heuristic.
    boundary_fx: Lanes<f64>,
    boundary_fy: Lanes<f64>,
    /// Vertex layouts only: the vertices shared with each neighbouring block.
    neighbours: [Neighbour; 8],
    /// Block-frame boundary positions of the four corners, as bits.
    corners: u32,
    /// Vertex layouts only, per boundary position: the unit moves along the block's boundary
    /// lines that stay in the block, as (dx, dy, boundary position reached); unused entries
    /// reach [`NO_MOVE`].
    line_moves: [[(i8, i8, u8); 4]; 16],
    /// Per symmetry transform: block-frame boundary position -> class-frame boundary position
    /// (symmetries of the square map the boundary onto itself).
    class_pos: [[u8; 16]; 8],
    /// The inverse of `class_pos`: class-frame boundary position -> block-frame position
    /// (0xFF for padding lanes).
    block_pos: [[u8; 16]; 8],
}

impl Layout {
    fn new(n: usize) -> Self {
        let mut boundary = vec![];
        let mut boundary_pos = vec![0xFF; n * n];
        for (l, pos) in boundary_pos.iter_mut().enumerate() {
            let (x, y) = (l % n, l / n);
            if x == 0 || y == 0 || x == n - 1 || y == n - 1 {
                *pos = boundary.len() as u8;
                boundary.push(l as u8);
            }
        }
        let boundary_xy: Vec<(i64, i64)> =
            boundary.iter().map(|&l| ((l as usize % n) as i64, (l as usize / n) as i64)).collect();
        // Shared vertices exist only when nodes are vertices (n = side + 1).
        let side = n as i64 - 1;
        let shared: Vec<Vec<(i64, i64, u8, u16)>> = boundary_xy
            .iter()
            .map(|&(lx, ly)| {
                let mut out = vec![];
                for (dx, dy) in NEIGHBOUR_OFFSETS {
                    // The vertex in the neighbour's frame must lie on its node grid.
                    let (nx, ny) = (lx - dx * side, ly - dy * side);
                    if nx < 0 || ny < 0 || nx > side || ny > side {
                        continue;
                    }
                    let mut cells = 0u16;
                    for (cx, cy) in [(-1i64, -1i64), (0, -1), (-1, 0), (0, 0)] {
                        let (ux, uy) = (nx + cx, ny + cy);
                        if (0..side).contains(&ux) && (0..side).contains(&uy) {
                            cells |= 1 << (uy * side + ux);
                        }
                    }
                    let pos = (ny * n as i64 + nx) as usize;
                    out.push((dx, dy, boundary_pos[pos], cells));
                }
                out
            })
            .collect();
        let mut class_pos = [[0u8; 16]; 8];
        for (t, row) in class_pos.iter_mut().enumerate() {
            let perm = crate::lddb::symmetry::permutation(t, n);
            for (i, &l) in boundary.iter().enumerate() {
                row[i] = boundary_pos[perm[l as usize] as usize];
            }
        }
        // Grouped by neighbouring block: the hand-off visits each neighbour once, with the
        // improved vertices it shares as one bit mask.
        let mut neighbours = [Neighbour::default(); 8];
        for (k, nb) in neighbours.iter_mut().enumerate() {
            let (dx, dy) = NEIGHBOUR_OFFSETS[k];
            *nb = Neighbour { dx, dy, ..Neighbour::default() };
            for (i, list) in shared.iter().enumerate() {
                for &(sx, sy, pos, cells) in list {
                    if (sx, sy) == (dx, dy) {
                        nb.edge |= 1 << i;
                        nb.pos[i] = pos;
                        nb.cells[i] = cells;
                    }
                }
            }
        }
        let mut block_pos = [[0xFFu8; 16]; 8];
        for (inv, fwd) in block_pos.iter_mut().zip(&class_pos) {
            for (i, &j) in fwd.iter().enumerate().take(boundary.len()) {
                inv[j as usize] = i as u8;
            }
        }
        let (mut boundary_fx, mut boundary_fy) = (Lanes([0.0; 16]), Lanes([0.0; 16]));
        for (i, &(lx, ly)) in boundary_xy.iter().enumerate() {
            (boundary_fx.0[i], boundary_fy.0[i]) = (lx as f64, ly as f64);
        }
        let mut line_moves = [[(0i8, 0i8, NO_MOVE); 4]; 16];
        for (moves, &(lx, ly)) in line_moves.iter_mut().zip(&boundary_xy) {
            let mut k = 0;
            for (dx, dy) in [(1i64, 0i64), (-1, 0), (0, 1), (0, -1)] {
                let on_line = if dx != 0 { ly == 0 || ly == side } else { lx == 0 || lx == side };
                let (nx, ny) = (lx + dx, ly + dy);
                if on_line && (0..=side).contains(&nx) && (0..=side).contains(&ny) {
                    moves[k] = (dx as i8, dy as i8, boundary_pos[(ny * n as i64 + nx) as usize]);
                    k += 1;
                }
            }
        }
        let corners = [(0, 0), (n - 1, 0), (0, n - 1), (n - 1, n - 1)]
            .iter()
            .fold(0, |m, &(x, y)| m | 1 << boundary_pos[y * n + x]);
        Self {
            n,
            boundary,
            boundary_pos,
            boundary_xy,
            boundary_fx,
            boundary_fy,
            neighbours,
            corners,
            line_moves,
            class_pos,
            block_pos,
        }
    }
}

/// Search state of one block, kept together so an expansion touches two or three cache lines:
/// the g-values of its boundary nodes, its heap value and its ingress (dirty) bits, both indexed
/// by slot (see [`BlockAStar::slot_of`]). A vertex shared by several blocks has one slot in each;
/// every write goes to all of them (the hand-off), so the slots always agree.
///
/// Why copies, not one g-value per vertex: an expansion reads all 16 of its block's g-values,
/// and here they are two contiguous lines. A node-indexed g array, with the hand-off writing only
/// dirty bits and keys, gathers them from five rows of the vertex grid instead. That measured
/// +13% cycles, +17% instructions and +42% L1 misses on random512-40-0 (minimum of 6
/// alternating `perf stat` runs). Storing g as `f32` changed nothing measurable.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
struct BlockState {
    stamp: u32,
    dirty: u32,
    key: f64,
    g: [f64; 16],
}

impl BlockState {
    /// This state, reset first when its stamp is not `generation`.
    #[inline(always)]
    fn touched(&mut self, generation: u32) -> &mut Self {
        if self.stamp != generation {
            *self = BlockState { stamp: generation, ..BlockState::default() };
        }
        self
    }
}

// SAFETY: every field is a plain number, for which all-zero bytes are a valid value; a state of
// stamp 0 is untouched (no live generation is 0), so `touched` resets it before any use.
unsafe impl bytemuck::Zeroable for BlockState {}

impl Default for BlockState {
    fn default() -> Self {
        Self { stamp: 0, dirty: 0, key: f64::INFINITY, g: [f64::INFINITY; 16] }
    }
}

/// Block A* with reusable scratch memory. Keep one per thread; any number of them may share
/// one [`Lddb`] and one [`BlockGrid`].
#[derive(Debug, Default, Clone)]
pub struct BlockAStar {
    generation: u32,
    /// Per node: (parent node, block whose table leads from the parent, or [`STEP`]). Written
    /// whenever a node's g-value improves and read only along the final path, so it needs no
    /// generation stamp.
    parent: Vec<(u32, u32)>,
    blocks: Vec<BlockState>,
    /// Queued blocks as [`heap_entry`]s.
    heap: BinaryHeap<u128>,
    layout: Layout,
    layout_key: (usize, bool),
    /// Scratch list of the conservative rule's boundary runs (see `boundary_runs`) as (boundary
    /// position in the expanding block's frame, g), empty between expansions: the expansion puts
    /// its ingress corners (or the start) in first, since runs along this block's lines from them
    /// were left to it, then `pass_on_vertices` adds the improved vertices and `boundary_runs`
    /// drains it.
    boundary_work: Vec<(usize, f64)>,
    /// Scratch lists of `reconstruct`: the hops of the path, and one hop's in-block vertices
    /// (kept between queries instead of grown afresh for every path).
    hops: Vec<(u32, u32, u32)>,
    hop_vertices: Vec<usize>,
}

/// The arguments of one [`BlockAStar::find_path`] call, handed whole to its instruction-set
/// variants.
struct Call<'a> {
    lddb: &'a Lddb,
    grid: &'a BlockGrid,
    start: (u32, u32),
    goal: (u32, u32),
    metric: Metric,
    rule: LosRule,
}

/// Everything fixed during one query.
struct Query<'a> {
    lddb: &'a Lddb,
    grid: &'a BlockGrid,
    metric: Metric,
    rule: LosRule,
    side: usize,
    /// Node-grid stride: width + 1 for vertices, width for cells.
    stride: usize,
    /// Largest node coordinates.
    max_x: usize,
    max_y: usize,
    goal: (i64, i64),
    goal_id: u32,
    /// Node-id offset of each boundary position from the block's low corner node.
    offsets: [u32; 16],
    /// The grid's class codes come from the database's class map (always, unless a database
    /// file was written with another map), so they can replace the lookup.
    grid_classes: bool,
}

impl Query<'_> {
    #[inline(always)]
    fn h(&self, x: i64, y: i64) -> f64 {
        let (dx, dy) = ((x - self.goal.0).abs() as f64, (y - self.goal.1).abs() as f64);
        match self.metric {
            Metric::AnyAngle => (dx * dx + dy * dy).sqrt(),
            Metric::Octile => dx.max(dy) + (SQRT2 - 1.0) * dx.min(dy),
            Metric::Tile => dx + dy,
        }
    }

    /// Class and transform of block `b`'s pattern.
    #[inline(always)]
    fn class_of(&self, b: usize) -> (usize, usize) {
        let code = if self.grid_classes { self.grid.class_code(b) } else { self.lddb.class_code(self.grid.pattern(b)) };
        ((code >> 3) as usize, (code & 7) as usize)
    }

    #[inline(always)]
    fn xy(&self, id: u32) -> (i64, i64) {
        ((id as usize % self.stride) as i64, (id as usize / self.stride) as i64)
    }

    /// Blocks whose node set contains node `(x, y)` (up to 4 for vertices, 1 for cells).
    #[inline(always)]
    fn blocks_of(&self, x: i64, y: i64, out: &mut [u32; 4]) -> usize {
        let (s, bw, bh) = (self.side as i64, self.grid.blocks_x() as i64, self.grid.blocks_y() as i64);
        let (bx, by) = (x / s, y / s);
        if self.metric != Metric::AnyAngle {
            out[0] = (by * bw + bx) as u32;
            return 1;
        }
        let xs: &[i64] = if x % s == 0 && bx > 0 { &[bx - 1, bx] } else { &[bx] };
        let ys: &[i64] = if y % s == 0 && by > 0 { &[by - 1, by] } else { &[by] };
        let mut k = 0;
        for &cy in ys {
            for &cx in xs {
                if cx < bw && cy < bh {
                    out[k] = (cy * bw + cx) as u32;
                    k += 1;
                }
            }
        }
        k
    }

    /// Distance between block-frame local nodes `a` and `b` of a block with class `c`, where
    /// `perm` maps block frame to class frame.
    #[inline(always)]
    fn dist(&self, c: usize, ca: usize, cb: usize) -> f64 {
        self.lddb.class_distance(self.metric, self.rule, c, ca, cb)
    }
}

impl BlockAStar {
    /// An empty searcher (memory is sized on the first query and reused afterwards).
    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes of scratch memory held (the capacities of its arrays), sized to the map of the latest
    /// query (a query on a map of another size reallocates it), so never more than the largest
    /// map needs: per block one block state (`size_of::<BlockState>()`, 144 bytes for 4x4-cell
    /// blocks, 9 bytes per cell), per node one parent entry (8 bytes), and the open list and path
    /// lists of the largest search on that map (16 bytes per queued block, a few per block).
    pub fn scratch_bytes(&self) -> usize {
        use std::mem::size_of;
        self.parent.capacity() * size_of::<(u32, u32)>()
            + self.blocks.capacity() * size_of::<BlockState>()
            + self.heap.capacity() * size_of::<u128>()
            + self.boundary_work.capacity() * size_of::<(usize, f64)>()
            + self.hops.capacity() * size_of::<(u32, u32, u32)>()
            + self.hop_vertices.capacity() * size_of::<usize>()
    }

    /// Hands the scratch's pages back to the operating system (see
    /// `crate::memory::release_zeroed`): nothing of it stays resident until the next query
    /// touches it again, and every query still sees untouched records (a zeroed record is).
    pub fn release_scratch_pages(&mut self) {
        // SAFETY: both are the global allocator's heap memory (Vecs) and Zeroable.
        unsafe {
            crate::memory::release_zeroed(&mut self.parent);
            crate::memory::release_zeroed(&mut self.blocks);
        }
    }

    fn begin(&mut self, nodes: usize, blocks: usize) {
        // Zeroed allocations: the operating system maps a page only when a query first writes to
        // it, so the resident scratch grows with the area the queries reached, not with the map.
        // A parent entry is read only along a found path, where it was written.
        if self.parent.len() != nodes {
            self.parent = bytemuck::zeroed_vec(nodes);
        }
        if self.blocks.len() != blocks {
            self.blocks = bytemuck::zeroed_vec(blocks);
        }
        // Fresh blocks carry stamp 0, which never equals a live generation; the generation is
        // never reset here, since other blocks may still hold stamps of earlier queries.
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.blocks = bytemuck::zeroed_vec(blocks);
            self.generation = 1;
        }
        self.heap.clear();
    }

    /// The state of block `b`, reset first when this query has not touched it yet.
    #[inline(always)]
    fn block(&mut self, b: usize) -> &mut BlockState {
        self.blocks[b].touched(self.generation)
    }

    /// The slot of block `b`'s state that holds its boundary position `pos`. Any-angle states are
    /// kept in the frame of the block's pattern class (slot = the position's class-frame
    /// boundary position), so an expansion compares and updates its slots lane by lane against
    /// the class's table rows with no permutation; cell metrics keep block-frame positions.
    #[inline(always)]
    fn slot_of(&self, q: &Query<'_>, b: usize, pos: usize) -> usize {
        if q.metric == Metric::AnyAngle {
            self.layout.class_pos[q.class_of(b).1][pos & 15] as usize
        } else {
            pos
        }
    }

    /// g-value in slot `slot` of block `b` (`+inf` when not reached).
    #[inline(always)]
    fn slot_g(&self, b: usize, slot: usize) -> f64 {
        let s = &self.blocks[b];
        if s.stamp == self.generation {
            s.g[slot & 15]
        } else {
            f64::INFINITY
        }
    }

    /// Marks slot `slot` of block `b` as an improved ingress node with f-value `f` and
    /// (re)queues the block when its heap value drops.
    #[inline(always)]
    fn mark_dirty(&mut self, b: u32, slot: usize, f: f64) {
        self.mark_dirty_bits(b, 1 << slot, f)
    }

    /// [`Self::mark_dirty`] for several slots with least f-value `f`.
    #[inline(always)]
    fn mark_dirty_bits(&mut self, b: u32, bits: u32, f: f64) {
        let s = self.block(b as usize);
        s.dirty |= bits;
        if f < s.key {
            s.key = f;
            self.heap.push(heap_entry(f, b));
        }
    }

    /// Stores g-value `g` of node `(x, y)` in the slots of every block whose boundary holds it.
    #[inline]
    fn store_everywhere(&mut self, q: &Query<'_>, x: i64, y: i64, g: f64) {
        let mut blocks = [0u32; 4];
        let k = q.blocks_of(x, y, &mut blocks);
        for &ob in &blocks[..k] {
            let pos = self.boundary_pos_in(q, ob as usize, x, y);
            if pos != 0xFF {
                let slot = self.slot_of(q, ob as usize, pos);
                self.block(ob as usize).g[slot & 15] = g;
            }
        }
    }

    /// Shortest path from `start` to `goal` through the block structure of `grid`, for `metric`
    /// (octile and tile: cells, optimal lengths; any-angle: vertices, segments valid under
    /// `rule`, which only matters for any-angle). `should_stop()` is polled every 64 open-list
    /// entries taken, stale ones included.
    ///
    /// Fails with [`SearchFailure::BlockSideMismatch`] when `lddb` and `grid` use different
    /// block sides, [`SearchFailure::OutOfBounds`] / [`SearchFailure::BlockedEndpoint`] for bad
    /// endpoints (a blocked cell, or a vertex with no free cell around it),
    /// [`SearchFailure::NoPath`] or [`SearchFailure::Stopped`].
    #[allow(clippy::too_many_arguments)]
    pub fn find_path(
        &mut self,
        lddb: &Lddb,
        grid: &BlockGrid,
        start: (u32, u32),
        goal: (u32, u32),
        metric: Metric,
        rule: LosRule,
        should_stop: impl FnMut() -> bool,
    ) -> Result<GridPath, SearchFailure> {
        let call = Call { lddb, grid, start, goal, metric, rule };
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("bmi1")
            && std::arch::is_x86_feature_detected!("popcnt")
        {
            // SAFETY: the CPU has every feature `search_avx2` is compiled for (checked just
            // above); the function itself is ordinary safe code.
            return unsafe { self.search_avx2(call, should_stop) };
        }
        self.search::<false>(call, should_stop)
    }

    /// [`Self::search`] compiled for AVX2 (the lane loops run four `f64` lanes per instruction
    /// and the bit loops use `tzcnt`), with identical results (the same IEEE operations in the
    /// same order).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,bmi1,popcnt")]
    unsafe fn search_avx2(
        &mut self,
        call: Call<'_>,
        should_stop: impl FnMut() -> bool,
    ) -> Result<GridPath, SearchFailure> {
        self.search::<true>(call, should_stop)
    }

    /// The body of [`Self::find_path`]; inlined into each instruction-set variant, and so are
    /// the expansion functions it calls. `WIDE`: running in the AVX2 variant, so the lane loops
    /// may use AVX2 intrinsics.
    #[inline(always)]
    fn search<const WIDE: bool>(
        &mut self,
        call: Call<'_>,
        should_stop: impl FnMut() -> bool,
    ) -> Result<GridPath, SearchFailure> {
        let Call { lddb, grid, start, goal, metric, rule } = call;
        if lddb.side() != grid.side() {
            return Err(SearchFailure::BlockSideMismatch);
        }
        let side = grid.side();
        let aa = metric == Metric::AnyAngle;
        let (w, h) = (grid.width(), grid.height());
        let (max_x, max_y) = if aa { (w, h) } else { (w - 1, h - 1) };
        let mask = grid.mask();
        for p in [start, goal] {
            if p.0 as usize > max_x || p.1 as usize > max_y {
                return Err(SearchFailure::OutOfBounds);
            }
            let (x, y) = (i64::from(p.0), i64::from(p.1));
            let usable = if aa { mask.vertex_passable(LosRule::MovingAi, x, y) } else { !mask.blocked(x, y) };
            if !usable {
                return Err(SearchFailure::BlockedEndpoint);
            }
        }
        if start == goal {
            return Ok(GridPath { points: vec![start], length: 0.0, expansions: 0 });
        }
        let stride = max_x + 1;
        if self.layout_key != (side, aa) {
            self.layout = Layout::new(if aa { side + 1 } else { side });
            self.layout_key = (side, aa);
        }
        let q = Query {
            lddb,
            grid,
            metric,
            rule,
            side,
            stride,
            max_x,
            max_y,
            goal: (i64::from(goal.0), i64::from(goal.1)),
            goal_id: goal.1 * stride as u32 + goal.0,
            grid_classes: grid.class_map_id() == lddb.class_map_id(),
            offsets: std::array::from_fn(|i| {
                self.layout.boundary_xy.get(i).map_or(0, |&(lx, ly)| (ly as usize * stride + lx as usize) as u32)
            }),
        };
        self.begin(stride * (max_y + 1), grid.blocks_x() * grid.blocks_y());
        let start_id = start.1 * stride as u32 + start.0;
        self.store_everywhere(&q, i64::from(start.0), i64::from(start.1), 0.0);

        // Best goal length found so far and the hop that reaches the goal.
        let mut best = (f64::INFINITY, NONE, NONE);
        let mut blocks = [0u32; 4];
        let nb = q.blocks_of(i64::from(start.0), i64::from(start.1), &mut blocks);
        for &b in &blocks[..nb] {
            // Start-block initialisation: Y = {start}.
            self.expand::<WIDE>(&q, b as usize, Some(start_id), &mut best);
        }
        let mut expansions = 0usize;
        let mut poll = StopPoll::new(64, should_stop);
        while let Some(&entry) = self.heap.peek() {
            let (key, b) = heap_value(entry);
            if key >= best.0 {
                break;
            }
            // Polled after the check that ends the search, so a path in hand is answered.
            if poll.stop() {
                return Err(SearchFailure::Stopped);
            }
            self.heap.pop();
            let bi = b as usize;
            let state = &self.blocks[bi];
            if state.key.to_bits() != key.to_bits() || state.dirty == 0 {
                continue;
            }
            expansions += 1;
            self.expand::<WIDE>(&q, bi, None, &mut best);
        }
        if !best.0.is_finite() {
            return Err(SearchFailure::NoPath);
        }
        let mut path = self.reconstruct(&q, start_id, best.1, best.2);
        path.expansions = expansions;
        Ok(path)
    }

    /// Algorithm 2: relaxes every boundary node of block `b` from its ingress nodes (the dirty
    /// boundary nodes, or the single `source` node for start-block initialisation), updates the
    /// goal length when `b` holds the goal, and passes improved nodes on to neighbouring blocks.
    // Inlined into both instruction-set variants of `find_path` (see `search`).
    #[inline(always)]
    fn expand<const WIDE: bool>(&mut self, q: &Query<'_>, b: usize, source: Option<u32>, best: &mut (f64, u32, u32)) {
        if q.metric == Metric::AnyAngle && source.is_none() {
            self.expand_any_angle::<WIDE>(q, b, best);
            return;
        }
        let (c, t) = q.class_of(b);
        let aa = q.metric == Metric::AnyAngle;
        // Any-angle slots are class-frame positions: this generic path works in the block frame.
        let slots: [u8; 16] = if aa { self.layout.class_pos[t] } else { std::array::from_fn(|i| i as u8) };
        let state = self.block(b);
        // Start-block initialisation leaves whatever other blocks' expansions queued here.
        let ingress = if source.is_none() { std::mem::take(&mut state.dirty) } else { 0 };
        if source.is_none() {
            state.key = f64::INFINITY;
        }
        // g-values of the boundary nodes, by boundary position.
        let mut gs: [f64; 16] = std::array::from_fn(|i| state.g[slots[i] as usize & 15]);
        let (bx, by) = (b % q.grid.blocks_x(), b / q.grid.blocks_x());
        let (ox, oy) = ((bx * q.side) as i64, (by * q.side) as i64);
        let perm = q.lddb.perm(q.metric, t);
        let n = self.layout.n;
        let nbd = self.layout.boundary.len();
        // The goal's class-frame index when this block holds the goal.
        let (gx, gy) = (q.goal.0 - ox, q.goal.1 - oy);
        let goal_here = gx >= 0 && gy >= 0 && (gx as usize) < n && (gy as usize) < n;
        let (ids, _) = self.boundary_ids(q, b);
        // Class-frame indices of the boundary nodes.
        let mut cls = [0usize; 16];
        for i in 0..nbd {
            if ids[i] != NONE {
                cls[i] = perm[self.layout.boundary[i] as usize] as usize;
            }
        }
        // Ingress list: (row offset of its class-frame index in the table, g, id).
        let nn = n * n;
        let mut ys: [(usize, f64, u32); 16] = [(0, 0.0, NONE); 16];
        let mut ny = 0;
        if let Some(s) = source {
            let (sx, sy) = q.xy(s);
            let l = ((sy - oy) as usize) * n + (sx - ox) as usize;
            ys[0] = (perm[l] as usize * nn, 0.0, s);
            ny = 1;
        } else {
            let mut m = ingress;
            while m != 0 {
                let i = m.trailing_zeros() as usize;
                m &= m - 1;
                if ids[i] != NONE {
                    ys[ny] = (cls[i] * nn, gs[i], ids[i]);
                    ny += 1;
                }
            }
        }
        // Goal in this block: the best ingress-to-goal length.
        if goal_here {
            let cg = perm[gy as usize * n + gx as usize] as usize;
            for &(row, g, id) in &ys[..ny] {
                let l = g + q.dist(c, row / nn, cg);
                if l < best.0 {
                    *best = (l, id, b as u32);
                }
            }
        }
        // Relax all boundary nodes from the ingress nodes, with a table lookup specialised per
        // metric.
        let improved = match q.metric {
            Metric::AnyAngle => {
                let table = q.lddb.any_angle_class(q.rule, c);
                self.relax(q, b, nbd, &ids, &cls, &mut gs, &ys[..ny], best, AA_EPS, |a, z| {
                    let v = table[a + z];
                    if v == u16::MAX {
                        f64::INFINITY
                    } else {
                        f64::from(v) * (1.0 / 1024.0)
                    }
                })
            }
            Metric::Octile => {
                let (table, lens) = (q.lddb.cell_class(Metric::Octile, c), q.lddb.octile_lengths());
                self.relax(q, b, nbd, &ids, &cls, &mut gs, &ys[..ny], best, 0.0, |a, z| lens[table[a + z] as usize])
            }
            Metric::Tile => {
                let table = q.lddb.cell_class(Metric::Tile, c);
                self.relax(q, b, nbd, &ids, &cls, &mut gs, &ys[..ny], best, 0.0, |a, z| {
                    let v = table[a + z];
                    if v == u8::MAX {
                        f64::INFINITY
                    } else {
                        f64::from(v)
                    }
                })
            }
        };
        let state = &mut self.blocks[b];
        let mut m = improved;
        while m != 0 {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            state.g[slots[i] as usize & 15] = gs[i];
        }
        if aa {
            // The start may leave along this block's boundary lines too (only the start block's
            // initialisation gets here: other any-angle expansions are `expand_any_angle`'s).
            if let (Some(s), LosRule::Conservative) = (source, q.rule) {
                if let Some(pos) = ids.iter().position(|&id| id == s) {
                    self.boundary_work.push((pos, 0.0));
                }
            }
            self.pass_on_vertices::<WIDE>(q, b, improved, &gs, best);
        } else {
            // Cross moves start from every improved node and from the ingress nodes themselves,
            // which arrived by a move from another block and have not left through this one.
            let mut sources = improved | if source.is_none() { ingress } else { 0 };
            if let Some(s) = source {
                let (sx, sy) = q.xy(s);
                let l = ((sy - oy) as usize) * n + (sx - ox) as usize;
                let pos = self.layout.boundary_pos[l];
                if pos != 0xFF {
                    sources |= 1 << pos;
                }
            }
            self.cross_moves(q, b, sources, &ids, best);
        }
    }

    /// Node ids of block `b`'s boundary nodes by boundary position ([`NONE`] beyond the map:
    /// only blocks of the last row or column reach past it), and the id of its low corner node.
    #[inline(always)]
    fn boundary_ids(&self, q: &Query<'_>, b: usize) -> ([u32; 16], u32) {
        let n = self.layout.n;
        let (bx, by) = (b % q.grid.blocks_x(), b / q.grid.blocks_x());
        let (ox, oy) = (bx * q.side, by * q.side);
        let base = (oy * q.stride + ox) as u32;
        let mut ids = [NONE; 16];
        let inside = ox + n - 1 <= q.max_x && oy + n - 1 <= q.max_y;
        for ((id, &off), &(lx, ly)) in ids.iter_mut().zip(&q.offsets).zip(&self.layout.boundary_xy) {
            if inside || (ox + lx as usize <= q.max_x && oy + ly as usize <= q.max_y) {
                *id = base + off;
            }
        }
        (ids, base)
    }

    /// Algorithm 2 for an any-angle block entered from its neighbours (every expansion but the
    /// start block's): the same result as the generic [`Self::expand`] (same candidates, same
    /// first-best ingress, same `eps`), computed on the block's slots, which are in the frame of
    /// its pattern class. There each ingress vertex's distances to all boundary vertices are one
    /// contiguous `f32` table row, so the relaxation is a branch-free min over SIMD lanes, its
    /// thresholds come straight from the slots, the same lane loop records which ingress row gave
    /// each lane its value, and only improved lanes are visited afterwards.
    // Inlined into both instruction-set variants of `find_path` (see `search`).
    #[inline(always)]
    fn expand_any_angle<const WIDE: bool>(&mut self, q: &Query<'_>, b: usize, best: &mut (f64, u32, u32)) {
        let (c, t) = q.class_of(b);
        let table = q.lddb.any_angle_boundary_class(q.rule, c);
        let (class_pos, block_pos) = (&self.layout.class_pos[t], &self.layout.block_pos[t]);
        let n = self.layout.n;
        let (bx, by) = (b % q.grid.blocks_x(), b / q.grid.blocks_x());
        let (ox, oy) = (bx * q.side, by * q.side);
        let base = (oy * q.stride + ox) as u32;
        let state = self.blocks[b].touched(self.generation);
        let mut ingress = std::mem::take(&mut state.dirty);
        state.key = f64::INFINITY;
        // Read in place, lane by lane: a copy of the slots to the stack was reloaded with
        // misaligned 16-byte loads that straddled the copy's stores and stalled forwarding.
        let g = &self.blocks[b].g;
        // Only strict improvements beyond `eps` count. Lanes of vertices beyond the map (blocks
        // of the last row or column) get `-inf` thresholds, which nothing is below, and are
        // nobody's ingress; padding lanes hold `+inf` slots and rows, so they never improve.
        let mut threshold = Lanes([0f64; 16]);
        for (th, &gj) in threshold.0.iter_mut().zip(g) {
            *th = gj - AA_EPS;
        }
        if ox + n - 1 > q.max_x || oy + n - 1 > q.max_y {
            let (ids, _) = self.boundary_ids(q, b);
            for (j, th) in threshold.0.iter_mut().enumerate() {
                let i = block_pos[j] as usize;
                if i >= 16 || ids[i] == NONE {
                    *th = f64::NEG_INFINITY;
                    ingress &= !(1 << j);
                }
            }
        }
        let mut cand = threshold;
        // Per lane: the index in `rows` of the first ingress that reached `cand` (kept by the
        // same branch-free min as the values, so no search afterwards).
        let mut from_row = Lanes([0u64; 16]);
        // Ingress vertices in block-frame order (the order that picks the first-best ingress):
        // (slot, g, id).
        let mut rows = [(0usize, 0f64, NONE); 16];
        let mut nr = 0;
        let mut by_block = 0u32;
        let mut m = ingress;
        while m != 0 {
            let j = m.trailing_zeros() as usize;
            m &= m - 1;
            by_block |= 1 << block_pos[j];
        }
        if q.rule == LosRule::Conservative {
            let origin = (ox as i64, oy as i64);
            Self::runs_from_corners(&mut self.boundary_work, &self.layout, q, by_block, origin, g, class_pos);
        }
        while by_block != 0 {
            let i = by_block.trailing_zeros() as usize;
            by_block &= by_block - 1;
            let j = class_pos[i] as usize;
            rows[nr] = (j, g[j], base + q.offsets[i]);
            nr += 1;
        }
        relax_lanes::<WIDE>(&mut cand, &mut from_row, table, &rows[..nr]);
        // Goal in this block: the best ingress-to-goal length.
        let (gx, gy) = (q.goal.0 - ox as i64, q.goal.1 - oy as i64);
        if gx >= 0 && gy >= 0 && (gx as usize) < n && (gy as usize) < n {
            let cg = q.lddb.perm(q.metric, t)[gy as usize * n + gx as usize] as usize;
            for &(j, gj, id) in &rows[..nr] {
                let l = gj + q.dist(c, self.layout.boundary[j] as usize, cg);
                if l < best.0 {
                    *best = (l, id, b as u32);
                }
            }
        }
        let mut better = 0u32;
        for (j, (cj, tj)) in cand.0.iter().zip(&threshold.0).enumerate() {
            better |= u32::from(cj < tj) << j;
        }
        // Improved vertices by block-frame position, for the hand-off.
        let mut improved = 0u32;
        let mut gs = [f64::INFINITY; 16];
        let mut m = better;
        while m != 0 {
            let j = m.trailing_zeros() as usize;
            m &= m - 1;
            let i = block_pos[j] as usize & 15;
            let v = cand.0[j];
            let from = rows[from_row.0[j] as usize & 15].2;
            let id = base + q.offsets[i];
            self.parent[id as usize] = (from, b as u32);
            gs[i] = v;
            improved |= 1 << i;
            if id == q.goal_id && v < best.0 {
                *best = (v, from, b as u32);
            }
        }
        let state = &mut self.blocks[b];
        let mut m = better;
        while m != 0 {
            let j = m.trailing_zeros() as usize;
            m &= m - 1;
            state.g[j] = cand.0[j];
        }
        self.pass_on_vertices::<WIDE>(q, b, improved, &gs, best);
    }

    /// Relaxes every boundary node from the ingress list `ys` (table row offset, g, id) with
    /// `dist(row, b)` on class-frame indices; an improvement must exceed `eps`. Returns the mask
    /// of improved boundary positions.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn relax(
        &mut self,
        q: &Query<'_>,
        b: usize,
        nbd: usize,
        ids: &[u32; 16],
        cls: &[usize; 16],
        gs: &mut [f64; 16],
        ys: &[(usize, f64, u32)],
        best: &mut (f64, u32, u32),
        eps: f64,
        dist: impl Fn(usize, usize) -> f64,
    ) -> u32 {
        // Ingress-major order: the 16 targets are independent lanes, so the inner loop has no
        // dependency chain through a running minimum.
        let mut cand = [f64::INFINITY; 16];
        let mut from = [NONE; 16];
        for i in 0..nbd {
            cand[i] = gs[i] - eps;
        }
        for &(row, g, id) in ys {
            for i in 0..nbd {
                let v = g + dist(row, cls[i]);
                if v < cand[i] {
                    cand[i] = v;
                    from[i] = id;
                }
            }
        }
        let mut improved = 0u32;
        for i in 0..nbd {
            if from[i] == NONE || ids[i] == NONE {
                continue;
            }
            self.parent[ids[i] as usize] = (from[i], b as u32);
            gs[i] = cand[i];
            improved |= 1 << i;
            if ids[i] == q.goal_id && cand[i] < best.0 {
                *best = (cand[i], from[i], b as u32);
            }
        }
        improved
    }

    /// Any-angle: improved boundary vertices become ingress vertices of the other blocks that
    /// share them; under the conservative rule, runs along this block's boundary lines are
    /// relaxed as unit moves checked on the map.
    // Inlined into both instruction-set variants of `find_path` (see `search`).
    #[inline(always)]
    fn pass_on_vertices<const WIDE: bool>(
        &mut self,
        q: &Query<'_>,
        b: usize,
        improved: u32,
        gs: &[f64; 16],
        best: &mut (f64, u32, u32),
    ) {
        let mask = q.grid.mask();
        let conservative = q.rule == LosRule::Conservative;
        // Reused between expansions (a fresh vector here cost an allocation per expansion); it
        // may already hold the expansion's ingress vertices (see `boundary_work`).
        let mut work = std::mem::take(&mut self.boundary_work);
        let (bw, bh) = (q.grid.blocks_x() as i64, q.grid.blocks_y() as i64);
        let (bx, by) = ((b % q.grid.blocks_x()) as i64, (b / q.grid.blocks_x()) as i64);
        let (ox, oy) = (bx * q.side as i64, by * q.side as i64);
        // f-values of the improved vertices, and which of them may lead to a shorter goal path
        // (h is admissible; others are handed over but become nobody's ingress).
        let mut f = Lanes([f64::INFINITY; 16]);
        let mut markable = self.f_lanes::<WIDE>(q, improved, (ox, oy), gs, best.0, &mut f);
        if conservative {
            let mut m = improved;
            while m != 0 {
                let i = m.trailing_zeros() as usize;
                m &= m - 1;
                let (lx, ly) = self.layout.boundary_xy[i];
                // A pinch vertex is never an intermediate waypoint under this rule: its g-value
                // is handed over, but it becomes nobody's ingress.
                if mask.is_pinch(ox + lx, oy + ly) {
                    markable &= !(1 << i);
                    continue;
                }
                work.push((i, gs[i]));
            }
        }
        let f = &f.0;
        let generation = self.generation;
        for nb in &self.layout.neighbours {
            let mut shared = improved & nb.edge;
            if shared == 0 {
                continue;
            }
            let (nbx, nby) = (bx + nb.dx, by + nb.dy);
            if nbx < 0 || nby < 0 || nbx >= bw || nby >= bh {
                continue;
            }
            let ob = (nby * bw + nbx) as usize;
            let pattern = q.grid.pattern(ob);
            let slots = &self.layout.class_pos[q.class_of(ob).1];
            let state = self.blocks[ob].touched(generation);
            let (mut bits, mut least) = (0u32, f64::INFINITY);
            while shared != 0 {
                let i = shared.trailing_zeros() as usize;
                shared &= shared - 1;
                let slot = slots[nb.pos[i] as usize & 15] as usize & 15;
                // The hand-off: every block holding the vertex learns its new g-value.
                state.g[slot] = gs[i];
                // Blocks with no free cell at the vertex get no ingress there: no in-block path
                // of theirs starts at it, so marking would waste an expansion. Their pattern code
                // tells (cells beyond the map count as blocked there, as on the map).
                let cells = u32::from(nb.cells[i]);
                if markable >> i & 1 != 0 && pattern & cells != cells {
                    bits |= 1 << slot;
                    least = least.min(f[i]);
                }
            }
            // One heap push per neighbouring block and expansion.
            if bits != 0 {
                let s = &mut self.blocks[ob];
                s.dirty |= bits;
                if least < s.key {
                    s.key = least;
                    self.heap.push(heap_entry(least, ob as u32));
                }
            }
        }
        if conservative {
            self.boundary_runs(q, b, &mut work, best);
        }
        self.boundary_work = work;
    }

    /// f-values `gs + h` of the improved boundary vertices `improved` of the block with low
    /// corner `origin` into `f` (by boundary position), and the mask of those below `bound`
    /// (they may lead to a shorter goal path; h is admissible). `WIDE`: all 16 lanes at once
    /// with AVX2 (the same IEEE operations on exact integer coordinates, so the same bits as
    /// [`Query::h`]).
    #[inline(always)]
    fn f_lanes<const WIDE: bool>(
        &self,
        q: &Query<'_>,
        improved: u32,
        origin: (i64, i64),
        gs: &[f64; 16],
        bound: f64,
        f: &mut Lanes<f64>,
    ) -> u32 {
        // Only vertex layouts hand vertices on: the heuristic here is always the Euclidean one.
        debug_assert_eq!(q.metric, Metric::AnyAngle);
        #[cfg(target_arch = "x86_64")]
        if WIDE {
            let d = ((origin.0 - q.goal.0) as f64, (origin.1 - q.goal.1) as f64);
            // SAFETY: `WIDE` is true only inside `BlockAStar::search_avx2`, which `find_path`
            // enters only after detecting AVX2.
            let below = unsafe { f_lanes_avx2(f, gs, &self.layout.boundary_fx, &self.layout.boundary_fy, d, bound) };
            return below & improved;
        }
        let mut below = 0u32;
        let mut m = improved;
        while m != 0 {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            let (lx, ly) = self.layout.boundary_xy[i];
            f.0[i] = gs[i] + q.h(origin.0 + lx, origin.1 + ly);
            below |= u32::from(f.0[i] < bound) << i;
        }
        below
    }

    /// Conservative rule: queues runs along the expanding block's boundary lines from those of its
    /// ingress vertices `ingress` (block-frame boundary positions; `g` holds the block's slots,
    /// `class_pos` maps positions to slots) that lie on block corners. The block that improved a
    /// vertex ran only along its own lines. Through a vertex inside an edge runs one line, the
    /// edge its two blocks share, so that run is done; through a corner run two lines, four half
    /// lines, two of them along the edges of other blocks, which must run from it themselves.
    /// Pinch vertices are no intermediate waypoints, so no run starts at them.
    fn runs_from_corners(
        work: &mut Vec<(usize, f64)>,
        layout: &Layout,
        q: &Query<'_>,
        ingress: u32,
        origin: (i64, i64),
        g: &[f64; 16],
        class_pos: &[u8; 16],
    ) {
        let mask = q.grid.mask();
        let mut m = ingress & layout.corners;
        while m != 0 {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            let (lx, ly) = layout.boundary_xy[i];
            if !mask.is_pinch(origin.0 + lx, origin.1 + ly) {
                work.push((i, g[class_pos[i] as usize & 15]));
            }
        }
    }

    /// Conservative rule: relaxes runs along block `b`'s boundary lines (which neither block's
    /// table can certify) as unit moves checked on the map, from the vertices in `work`
    /// (block-frame boundary position, g), which it consumes. Works in the block's frame: a
    /// vertex's other blocks come from the layout's neighbour table, as in the hand-off, so the
    /// loop needs no division.
    fn boundary_runs(&mut self, q: &Query<'_>, b: usize, work: &mut Vec<(usize, f64)>, best: &mut (f64, u32, u32)) {
        let mask = q.grid.mask();
        let (bw, bh) = (q.grid.blocks_x() as i64, q.grid.blocks_y() as i64);
        let (bx, by) = ((b % q.grid.blocks_x()) as i64, (b / q.grid.blocks_x()) as i64);
        let s = q.side as i64;
        let (ox, oy) = (bx * s, by * s);
        let base = (oy as usize * q.stride + ox as usize) as u32;
        let slots = self.layout.class_pos[q.class_of(b).1];
        while let Some((pos, g)) = work.pop() {
            if g > self.block(b).g[slots[pos & 15] as usize & 15] {
                continue;
            }
            let (lx, ly) = self.layout.boundary_xy[pos];
            let (x, y) = (ox + lx, oy + ly);
            let id = base + q.offsets[pos & 15];
            let ng = g + 1.0;
            let moves = self.layout.line_moves[pos & 15];
            for (dx, dy, npos) in moves {
                if npos == NO_MOVE {
                    break;
                }
                let npos = npos as usize & 15;
                let slot = slots[npos] as usize & 15;
                // The cheap test first: most runs improve nothing.
                if ng >= self.block(b).g[slot] {
                    continue;
                }
                let (nx, ny) = (x + i64::from(dx), y + i64::from(dy));
                if nx as usize > q.max_x
                    || ny as usize > q.max_y
                    || !mask.unit_move_ok(q.rule, x, y, i64::from(dx), i64::from(dy))
                {
                    continue;
                }
                let nid = base + q.offsets[npos];
                self.parent[nid as usize] = (id, STEP);
                if nid == q.goal_id && ng < best.0 {
                    *best = (ng, id, STEP);
                }
                // Every block holding the vertex learns its g-value and takes it as ingress.
                let f = ng + q.h(nx, ny);
                self.block(b).g[slot] = ng;
                self.mark_dirty(b as u32, slot, f);
                for k in 0..self.layout.neighbours.len() {
                    let nb = self.layout.neighbours[k];
                    let (nbx, nby) = (bx + nb.dx, by + nb.dy);
                    if nb.edge >> npos & 1 == 0 || nbx < 0 || nby < 0 || nbx >= bw || nby >= bh {
                        continue;
                    }
                    let ob = (nby * bw + nbx) as usize;
                    let oslot = self.layout.class_pos[q.class_of(ob).1][nb.pos[npos] as usize & 15] as usize & 15;
                    self.block(ob).g[oslot] = ng;
                    self.mark_dirty(ob as u32, oslot, f);
                }
                if !mask.is_pinch(nx, ny) {
                    work.push((npos, ng));
                }
            }
        }
    }

    #[inline(always)]
    fn boundary_pos_in(&self, q: &Query<'_>, b: usize, x: i64, y: i64) -> usize {
        let (bx, by) = (b % q.grid.blocks_x(), b / q.grid.blocks_x());
        let (lx, ly) = ((x - (bx * q.side) as i64) as usize, (y - (by * q.side) as i64) as usize);
        self.layout.boundary_pos[ly * self.layout.n + lx] as usize
    }

    /// Octile / tile: one legal move from each source boundary cell into neighbouring blocks.
    /// Works in block-local coordinates: the hot loop needs no division.
    // Inlined into both instruction-set variants of `find_path` (see `search`).
    #[inline(always)]
    fn cross_moves(&mut self, q: &Query<'_>, b: usize, sources: u32, ids: &[u32; 16], best: &mut (f64, u32, u32)) {
        let mask = q.grid.mask();
        let s = q.side as i64;
        let bw = q.grid.blocks_x();
        let (bx, by) = ((b % bw) as i64, (b / bw) as i64);
        let (ox, oy) = (bx * s, by * s);
        // -1, 0 or +1: the block step of a local coordinate that may have left the block.
        let step = |l: i64| i64::from(l >= s) - i64::from(l < 0);
        let moves: &[(i64, i64)] = if q.metric == Metric::Octile { &MOVES8 } else { &MOVES8[..4] };
        let mut m = sources;
        while m != 0 {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            if ids[i] == NONE {
                continue;
            }
            let (lx, ly) = self.layout.boundary_xy[i];
            let (x, y) = (ox + lx, oy + ly);
            let g = self.slot_g(b, i);
            for &(dx, dy) in moves {
                let (nlx, nly) = (lx + dx, ly + dy);
                let (ex, ey) = (step(nlx), step(nly));
                let (nx, ny) = (x + dx, y + dy);
                if (ex == 0 && ey == 0) || mask.blocked(nx, ny) {
                    continue;
                }
                let diagonal = dx != 0 && dy != 0;
                if diagonal && (mask.blocked(nx, y) || mask.blocked(x, ny)) {
                    continue;
                }
                let nid = (ny as usize * q.stride + nx as usize) as u32;
                let ng = g + if diagonal { SQRT2 } else { 1.0 };
                // A free cell is on the map, so its block is too.
                let nbi = (by + ey) as usize * bw + (bx + ex) as usize;
                let pos = self.layout.boundary_pos[((nly - ey * s) * s + (nlx - ex * s)) as usize] as usize;
                if ng < self.slot_g(nbi, pos) {
                    self.block(nbi).g[pos & 15] = ng;
                    self.parent[nid as usize] = (ids[i], STEP);
                    if nid == q.goal_id && ng < best.0 {
                        *best = (ng, ids[i], STEP);
                    }
                    self.mark_dirty(nbi as u32, pos, ng + q.h(nx, ny));
                }
            }
        }
    }

    /// Follows the hops back from the goal and expands each in-block hop into its stored
    /// inflection points (any-angle) or moves (octile, tile).
    fn reconstruct(&mut self, q: &Query<'_>, start_id: u32, last_from: u32, last_via: u32) -> GridPath {
        // Hops (from, to, via) from the goal back to the start.
        let mut hops = std::mem::take(&mut self.hops);
        hops.clear();
        hops.push((last_from, q.goal_id, last_via));
        let mut cur = last_from;
        while cur != start_id {
            let i = cur as usize;
            let (from, via) = self.parent[i];
            hops.push((from, cur, via));
            cur = from;
        }
        hops.reverse();
        // Each hop adds at most a block's worth of vertices, usually one or two.
        let mut pts: Vec<(u32, u32)> = Vec::with_capacity(2 * hops.len() + 1);
        pts.push(self.point(q, start_id));
        let mut scratch = std::mem::take(&mut self.hop_vertices);
        for &(from, to, via) in &hops {
            if via == STEP {
                pts.push(self.point(q, to));
            } else {
                self.expand_hop(q, from, to, via as usize, &mut pts, &mut scratch);
            }
        }
        (self.hops, self.hop_vertices) = (hops, scratch);
        let length = if q.metric == Metric::AnyAngle {
            let mask = q.grid.mask();
            remove_collinear_if(&mut pts, |a, c| {
                q.rule == LosRule::MovingAi
                    || mask.los_vertices(q.rule, (i64::from(a.0), i64::from(a.1)), (i64::from(c.0), i64::from(c.1)))
            });
            polyline_length(&pts)
        } else {
            pts.dedup();
            pts.windows(2).map(|w| if w[0].0 != w[1].0 && w[0].1 != w[1].1 { SQRT2 } else { 1.0 }).sum()
        };
        GridPath { points: pts, length, expansions: 0 }
    }

    fn point(&self, q: &Query<'_>, id: u32) -> (u32, u32) {
        (id % q.stride as u32, id / q.stride as u32)
    }

    /// Appends the in-block path from `from` to `to` through block `b` (excluding `from`);
    /// `scratch` is working memory.
    #[allow(clippy::too_many_arguments)]
    fn expand_hop(
        &self,
        q: &Query<'_>,
        from: u32,
        to: u32,
        b: usize,
        pts: &mut Vec<(u32, u32)>,
        scratch: &mut Vec<usize>,
    ) {
        let n = self.layout.n;
        let (bx, by) = (b % q.grid.blocks_x(), b / q.grid.blocks_x());
        let (ox, oy) = ((bx * q.side) as u32, (by * q.side) as u32);
        let local = |id: u32| {
            let (x, y) = self.point(q, id);
            ((y - oy) as usize) * n + (x - ox) as usize
        };
        let global = |l: usize| (ox + (l % n) as u32, oy + (l / n) as u32);
        let (la, lb) = (local(from), local(to));
        let pattern = q.grid.pattern(b);
        if q.metric == Metric::AnyAngle {
            scratch.clear();
            // A straight leg that the rule allows as one segment on the map needs none of the
            // lattice vertices on it.
            let mask = q.grid.mask();
            let vertex = |l: usize| {
                let (x, y) = global(l);
                (i64::from(x), i64::from(y))
            };
            let sees = |u: usize, v: usize| mask.los_vertices(q.rule, vertex(u), vertex(v));
            if q.lddb.any_angle_path_into(q.rule, pattern, la, lb, scratch, sees) {
                pts.extend(scratch.iter().map(|&l| global(l)));
            } else {
                pts.push(global(lb));
            }
            return;
        }
        // Cells: walk downhill on the exact table entries.
        let (c, t) = q.lddb.class_of(pattern);
        let perm = q.lddb.perm(q.metric, t);
        let side = n as i64;
        let free = |x: i64, y: i64| x >= 0 && y >= 0 && x < side && y < side && pattern >> (y * side + x) & 1 == 0;
        let raw = |a: usize| {
            let (ca, cb) = (perm[a] as usize, perm[lb] as usize);
            if q.metric == Metric::Octile {
                q.lddb.octile_packed(c, ca, cb)
            } else {
                q.lddb.tile_raw(c, ca, cb)
            }
        };
        let moves: &[(i64, i64)] = if q.metric == Metric::Octile { &MOVES8 } else { &MOVES8[..4] };
        let mut cur = la;
        for _ in 0..n * n {
            if cur == lb {
                break;
            }
            let here = raw(cur);
            let (x, y) = ((cur % n) as i64, (cur / n) as i64);
            let mut next = None;
            for &(dx, dy) in moves {
                let (nx, ny) = (x + dx, y + dy);
                let diagonal = dx != 0 && dy != 0;
                if !free(nx, ny) || (diagonal && (!free(nx, y) || !free(x, ny))) {
                    continue;
                }
                let nl = (ny * side + nx) as usize;
                let there = raw(nl);
                if there == 0xFF {
                    continue;
                }
                // Packed octile entries: straight in the low nibble, diagonal in the high one.
                let step = if diagonal { 0x10 } else { 0x01 };
                if u16::from(there) + step == u16::from(here) {
                    next = Some(nl);
                    break;
                }
            }
            match next {
                Some(nl) => {
                    pts.push(global(nl));
                    cur = nl;
                }
                None => break,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Grid;

    /// The instruction-set variant `find_path` picks on this CPU gives bit-identical results to
    /// the portable body (points, length bits, expansions, failures) for every metric and rule.
    /// On a CPU without AVX2 both calls run the portable body.
    #[test]
    fn dispatched_variant_matches_portable_body() {
        let lddb = Lddb::build(4, &|_, _| {}).expect("LDDB");
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let (mut dispatched, mut portable) = (BlockAStar::new(), BlockAStar::new());
        let mut compared = 0;
        for round in 0..12 {
            let (w, h) = (37 + round * 3, 29 + round * 2);
            let density = 10 + 4 * round as u64;
            let grid = Grid::from_blocked(w, h, (0..w * h).map(|_| next(100) < density).collect()).expect("grid");
            let blocks = BlockGrid::new(&grid, 4).expect("blocks");
            for _ in 0..20 {
                let a = (next(w as u64 + 1) as u32, next(h as u64 + 1) as u32);
                let b = (next(w as u64 + 1) as u32, next(h as u64 + 1) as u32);
                for (metric, rule) in [
                    (Metric::AnyAngle, LosRule::MovingAi),
                    (Metric::AnyAngle, LosRule::Conservative),
                    (Metric::Octile, LosRule::MovingAi),
                    (Metric::Tile, LosRule::MovingAi),
                ] {
                    let x = dispatched.find_path(&lddb, &blocks, a, b, metric, rule, || false);
                    let call = Call { lddb: &lddb, grid: &blocks, start: a, goal: b, metric, rule };
                    let y = portable.search::<false>(call, || false);
                    match (&x, &y) {
                        (Ok(p), Ok(r)) => {
                            assert_eq!(p.points, r.points, "{metric:?} {rule:?} {a:?}->{b:?}");
                            assert_eq!(p.length.to_bits(), r.length.to_bits());
                            assert_eq!(p.expansions, r.expansions);
                            compared += 1;
                        }
                        _ => assert_eq!(format!("{x:?}"), format!("{y:?}")),
                    }
                }
            }
        }
        assert!(compared > 300, "only {compared} solved queries compared");
    }

    /// The scratch memory stays at the map's size: repeated queries add nothing, a smaller map
    /// holds less, and the large map again holds what it held.
    #[test]
    fn scratch_memory_stays_at_the_maps_size() {
        let lddb = Lddb::build(4, &|_, _| {}).expect("LDDB");
        let grid_of = |w: usize, h: usize| {
            let blocked = (0..w * h).map(|i| (i % w) % 7 == 3 && (i / w) % 5 != 0).collect();
            BlockGrid::new(&Grid::from_blocked(w, h, blocked).expect("grid"), 4).expect("blocks")
        };
        let (large, small) = (grid_of(200, 150), grid_of(40, 30));
        let mut search = BlockAStar::new();
        assert_eq!(search.scratch_bytes(), 0);
        let solve = |search: &mut BlockAStar, grid: &BlockGrid, b: (u32, u32)| {
            search.find_path(&lddb, grid, (0, 0), b, Metric::AnyAngle, LosRule::Conservative, || false).expect("path");
        };
        solve(&mut search, &large, (196, 145));
        let held = search.scratch_bytes();
        assert_eq!(std::mem::size_of::<BlockState>(), 144, "the documented block state size");
        assert!(held >= 50 * 38 * 144, "{held} bytes for 50 x 38 blocks");
        for _ in 0..20 {
            solve(&mut search, &large, (196, 145));
            assert_eq!(search.scratch_bytes(), held);
            solve(&mut search, &small, (35, 25));
            assert!(search.scratch_bytes() < held);
        }
    }

    /// A searcher whose scratch pages were handed back answers every query as a fresh one does
    /// (its records read as untouched), whatever the queries before.
    #[test]
    fn released_scratch_answers_like_a_fresh_searcher() {
        let lddb = Lddb::build(4, &|_, _| {}).expect("LDDB");
        let (w, h) = (300, 200);
        let blocked = (0..w * h).map(|i| (i % w) % 9 == 4 && (i / w) % 7 != 0).collect();
        let grid = BlockGrid::new(&Grid::from_blocked(w, h, blocked).expect("grid"), 4).expect("blocks");
        let ends = [((0, 0), (296, 195)), ((150, 3), (2, 190)), ((296, 0), (10, 100))];
        let solve = |search: &mut BlockAStar, (a, b): ((u32, u32), (u32, u32))| {
            let p = search.find_path(&lddb, &grid, a, b, Metric::AnyAngle, LosRule::Conservative, || false);
            p.expect("path")
        };
        let mut reused = BlockAStar::new();
        for round in 0..3 {
            for &e in &ends {
                let got = solve(&mut reused, e);
                reused.release_scratch_pages();
                assert_eq!(got, solve(&mut BlockAStar::new(), e), "round {round}, {e:?}");
            }
        }
    }
}
