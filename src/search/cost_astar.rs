//! The cheapest path over a cost field: A* on cell centres with 16 moves (the 8 neighbours and
//! the 8 knight's moves), each priced by its length weighted along it, then cost-aware string
//! pulling, which drops a waypoint only where the straight line is unobstructed **and no
//! dearer** than the two segments it replaces.
//!
//! The price of the segment between two points is `len + extra(a, b)`, where the caller's
//! `extra` is the weighted part, `∫ penalty c ds` (see `crate::costs`); a move's `extra` is
//! computed once per direction from `cell_extra` (the weight per cell unit of a cell) at the same
//! quarter-cell midpoints the caller's line integral samples. The heuristic is the 16-connected
//! distance on an empty map: admissible and consistent because every weight is at least 1.
//!
//! Most of a search's nodes lie on open ground (`super::open_ground`: a cell whose 5 x 5
//! window is free, costs nothing and is admitted), where every move costs its length. There the
//! search orders the moves canonically (`CANONICAL_NEXT`): a path that arrived by a straight or
//! diagonal step goes on only by the same step, one that arrived by a knight's move by the same
//! move or the two steps beside it, and a straight or diagonal run goes on cell after cell
//! without the open list. Every other pair of moves through such a cell has an alternative
//! inside its window that is cheaper or as cheap in canonical order, so the prices found are
//! those of the search over all 16 moves (tested against a plain Dijkstra; the argument is at
//! `CANONICAL_NEXT`); the start and every cell within two cells of an obstacle, a cost, the
//! map's edge, a cell not admitted or one with a positive estimate take all 16 moves, each
//! checked and priced.
//!
//! [`CostAStar::find_path`] returns the cheapest 16-connected path (exact under the sampled
//! prices); [`CostAStar::find_path_kept`] the same, keeping what it worked out about the open
//! ground for the next query on the same [`MapRevision`]; [`CostAStar::find_path_within`] the
//! cheapest within the cells a caller admits: exact when the caller's estimates of the cost to
//! the goal are 0; other estimates (the planner's corridors, `crate::hierarchy`, whose estimates
//! are not bounds) make the heuristic inconsistent, and as a closed node is never reopened the
//! path found may then be dearer than the cheapest inside the cells. String pulling never raises
//! a path's price.

use super::los::{CellMask, LosRule};
use super::open_ground::OpenGround;
use super::path::SearchFailure;
use super::poll::StopPoll;
use super::scratch::{NodeScratch, NO_PARENT};
use crate::geometry::Point2;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The 16 moves: the 8 neighbours and the 8 knight's moves.
const MOVES: [(i64, i64); 16] = [
    (1, 0),
    (-1, 0),
    (0, 1),
    (0, -1),
    (1, 1),
    (1, -1),
    (-1, 1),
    (-1, -1),
    (1, 2),
    (2, 1),
    (-1, 2),
    (-2, 1),
    (1, -2),
    (2, -1),
    (-1, -2),
    (-2, -1),
];

/// Sampling step of the prices (cells), the caller's line integral's.
const STEP: f64 = crate::costs::COST_STEP;

/// Most steps a straight or diagonal run over open ground takes without the open list: the
/// cell it reaches at that step is queued (a bound on how far past the search's front it looks).
const RAY_CELLS: usize = 16;

/// Open-list entries a [`CostAStar`] keeps between queries (384 KiB).
pub const OPEN_LIST_KEPT: usize = 1 << 14;

/// A path found by [`CostAStar`]: cell centres from start to goal, and its price.
#[derive(Debug, Clone, PartialEq)]
pub struct CostPath {
    /// Cells whose centres the path joins, start and goal included.
    pub cells: Vec<(u32, u32)>,
    /// `length + extra` along the cells (cell units).
    pub cost: f64,
    /// Nodes expanded (taken off the open list and their moves tried; the cells a straight run
    /// over open ground passes are not counted).
    pub expansions: usize,
    /// Of `expansions`, those at open-ground cells, where only the canonical moves were tried.
    pub canonical: usize,
}

/// One move: its offset, length, the cells its samples fall in (relative) with the length of
/// the move inside each, and the cells its open segment touches besides its own.
#[derive(Debug, Clone)]
struct Move {
    d: (i64, i64),
    len: f64,
    /// `(cell offset, length sampled in it)`, one entry per cell.
    weights: Vec<((i64, i64), f64)>,
    /// Cells (offsets) the open segment between the centres touches, the target included: a
    /// move is legal under the conservative rule when all are free.
    touched: Vec<(i64, i64)>,
}

/// A [`Move`] laid out for one map width: flat index offsets into the node arrays (`target`,
/// `weights`) and into the mask's padded cells (`touched`), in fixed arrays, so the inner loop
/// does no coordinate arithmetic and follows no pointer.
#[derive(Debug, Clone, Copy, Default)]
struct FlatMove {
    dx: i64,
    dy: i64,
    len: f64,
    target: isize,
    touched: [isize; 3],
    touched_len: usize,
    weights: [(isize, f64); MAX_WEIGHTS],
    weights_len: usize,
}

/// Most cells a move's samples fall in (a knight's move: 4).
const MAX_WEIGHTS: usize = 6;

impl FlatMove {
    fn new(m: &Move, width: usize, mask_stride: usize) -> Self {
        let node = |(x, y): (i64, i64)| (y * width as i64 + x) as isize;
        let padded = |(x, y): (i64, i64)| (y * mask_stride as i64 + x) as isize;
        let mut f = FlatMove {
            dx: m.d.0,
            dy: m.d.1,
            len: m.len,
            target: node(m.d),
            touched_len: m.touched.len(),
            weights_len: m.weights.len(),
            ..FlatMove::default()
        };
        for (k, &t) in m.touched.iter().enumerate() {
            f.touched[k] = padded(t);
        }
        for (k, &(c, l)) in m.weights.iter().enumerate() {
            f.weights[k] = (node(c), l);
        }
        f
    }
}

/// The cells (offsets) the open segment from a cell's centre to the centre of the cell `d` away
/// touches, besides the first: a straight step the target; a diagonal step the target and the
/// two cells at the corner it passes through; a knight's move the target and the two cells on
/// either side of the cell edge it crosses at that edge's midpoint.
fn touched_cells(d: (i64, i64)) -> Vec<(i64, i64)> {
    let (sx, sy) = (d.0.signum(), d.1.signum());
    match (d.0.abs(), d.1.abs()) {
        (1, 0) | (0, 1) => vec![d],
        (1, 1) => vec![(sx, 0), (0, sy), d],
        (1, 2) => vec![(0, sy), (sx, sy), d],
        (2, 1) => vec![(sx, 0), (sx, sy), d],
        _ => unreachable!("the 16 moves only"),
    }
}

/// An open-list entry: `f`, `g` (as ordered bits: both are finite and non-negative), the node
/// (its map index) and its record's slot ([`TiledSlots`]). The heap pops the smallest `f` and,
/// among equal `f`, the largest `g`: with a heuristic exact on open ground, the nodes on the way
/// to the goal tie, and the deepest first goes straight there instead of widening the front.
/// The slot rides in what would be padding (24 bytes either way).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct OpenEntry(Reverse<u64>, u64, u32, u32);

impl OpenEntry {
    #[inline(always)]
    fn new(f: f64, g: f64, node: usize, slot: usize) -> Self {
        OpenEntry(Reverse(f.max(0.0).to_bits()), g.max(0.0).to_bits(), node as u32, slot as u32)
    }
}

/// Side of the square tiles the node records are laid out in (cells).
const TILE_SIDE: usize = 16;
/// `log2(TILE_SIDE)`.
const TILE_SHIFT: u32 = TILE_SIDE.trailing_zeros();

/// Where a cell's node record lives: the map cut into [`TILE_SIDE`]-square tiles of 256
/// records (4 KiB: one page, as [`NodeScratch`] places them), tile after tile, row-major inside
/// each. A search that follows a long diagonal corridor writes the records of a band a few tiles
/// wide; laid out row by row as the map is, the same band wrote one or two pages of every row it
/// crossed (a 16-byte record per cell: a 10000-cell row is 40 pages), and the records are
/// resident until handed back after the plan. On the 10^8-cell map of
/// `scripts/site_scale_node.py` that was the node's peak.
///
/// A map whose tiles would be mostly empty (rounding its sides up to whole tiles more than
/// doubles its cells: under about 32 cells across or down) keeps the rows' layout, as does one
/// whose tiled slots would not fit the open list's `u32`.
#[derive(Debug, Clone, Copy)]
struct TiledSlots {
    /// Tiles per row of tiles; 0 for the rows' layout.
    across: usize,
    width: usize,
    count: usize,
}

impl TiledSlots {
    fn new(width: usize, height: usize) -> Self {
        let cells = width * height;
        let across = width.div_ceil(TILE_SIDE);
        let tiled = across * height.div_ceil(TILE_SIDE) * TILE_SIDE * TILE_SIDE;
        if tiled <= 2 * cells && tiled <= 1 << 32 {
            Self { across, width, count: tiled }
        } else {
            Self { across: 0, width, count: cells }
        }
    }

    /// Records the layout needs (slots are below it).
    fn count(self) -> usize {
        self.count
    }

    /// The slot of cell `(x, y)` (inside the map).
    #[inline(always)]
    fn of(self, x: usize, y: usize) -> usize {
        if self.across == 0 {
            return y * self.width + x;
        }
        let mask = TILE_SIDE - 1;
        let tile = (y >> TILE_SHIFT) * self.across + (x >> TILE_SHIFT);
        (tile << (2 * TILE_SHIFT)) | ((y & mask) << TILE_SHIFT) | (x & mask)
    }
}

/// Names one state of what a cost search reads (the mask and the weights per cell), so that
/// queries on it can share work ([`CostAStar::find_path_kept`]). Each [`MapRevision::fresh`] is
/// new (process-wide); its holder takes a fresh one whenever what it names changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MapRevision(u64);

impl MapRevision {
    /// A revision no other has (a process-wide counter; 2^64 of them).
    pub fn fresh() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Self(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

/// Cost-weighted A*; keep one per thread and reuse it, its memory is recycled across queries.
#[derive(Debug, Clone)]
pub struct CostAStar {
    scratch: NodeScratch,
    open: BinaryHeap<OpenEntry>,
    moves: Vec<Move>,
    /// `moves` laid out for the width they were last used with.
    flat: Vec<FlatMove>,
    flat_width: usize,
    /// Which cells of the current query are open ground.
    ground: OpenGround,
}

impl Default for CostAStar {
    fn default() -> Self {
        Self::new()
    }
}

impl CostAStar {
    /// Bytes of scratch held (sized by the latest map searched): node records, open list and
    /// the moves laid out for the last width.
    pub fn scratch_bytes(&self) -> usize {
        self.scratch.bytes()
            + self.open.capacity() * std::mem::size_of::<OpenEntry>()
            + self.flat.capacity() * std::mem::size_of::<FlatMove>()
            + self.ground.bytes()
    }

    /// Hands the node records' pages back to the operating system (see
    /// `crate::memory::release_zeroed`); the next query sees them untouched.
    pub fn release_scratch_pages(&mut self) {
        self.scratch.release_pages();
        self.ground.release_pages();
    }

    /// An empty searcher (memory is sized on the first query).
    pub fn new() -> Self {
        let moves: Vec<Move> = MOVES
            .iter()
            .map(|&(dx, dy)| {
                let len = (dx as f64).hypot(dy as f64);
                let n = (len / STEP).ceil().max(1.0);
                let ds = len / n;
                let mut weights: Vec<((i64, i64), f64)> = Vec::new();
                for k in 0..n as usize {
                    let t = (k as f64 + 0.5) * ds / len;
                    let cell = ((0.5 + t * dx as f64).floor() as i64, (0.5 + t * dy as f64).floor() as i64);
                    match weights.iter_mut().find(|(c, _)| *c == cell) {
                        Some((_, w)) => *w += ds,
                        None => weights.push((cell, ds)),
                    }
                }
                Move { d: (dx, dy), len, weights, touched: touched_cells((dx, dy)) }
            })
            .collect();
        debug_assert!(moves.iter().all(|m: &Move| m.weights.len() <= MAX_WEIGHTS && m.touched.len() <= 3));
        Self {
            scratch: NodeScratch::default(),
            open: BinaryHeap::new(),
            moves,
            flat: Vec::new(),
            flat_width: usize::MAX,
            ground: OpenGround::default(),
        }
    }

    /// The cheapest 16-connected path between the centres of cells `start` and `goal` of `mask`
    /// (every move with line of sight under the conservative rule: its open segment touches no
    /// blocked cell), each move priced `length + ∫ cell_extra`, where `cell_extra(i) >= 0` is
    /// the weight above 1 per cell unit of the cell at index `i = y * width + x` (called for
    /// cells inside the map only).
    ///
    /// Fails with [`SearchFailure::OutOfBounds`] / [`SearchFailure::BlockedEndpoint`] for bad
    /// endpoints, [`SearchFailure::NoPath`], or [`SearchFailure::Stopped`] when `should_stop()`
    /// (polled every 1024 open-list entries taken, stale ones included) returns true.
    ///
    /// Between queries the searcher holds its per-node arrays (16 bytes per cell of the largest
    /// map searched, laid out in 16 x 16 tiles so a long corridor's search writes few pages), its
    /// open-ground tiles (36 bytes per 256 cells of the map searched last; both allocated zeroed,
    /// resident only where searches reached) and room for [`OPEN_LIST_KEPT`] open-list entries.
    pub fn find_path(
        &mut self,
        mask: &CellMask,
        start: (u32, u32),
        goal: (u32, u32),
        cell_extra: impl Fn(usize) -> f64,
        should_stop: impl FnMut() -> bool,
    ) -> Result<CostPath, SearchFailure> {
        self.find_path_within(mask, start, goal, cell_extra, |_, _| Some(0.0), should_stop)
    }

    /// [`CostAStar::find_path`] on the state of the mask and weights the caller names
    /// `revision`: the open ground it works out (`super::open_ground`: which cells every move
    /// leaves clean) is kept, and the next query on the same revision starts with it, if no other
    /// query came between. Passing one revision with another mask or other weights is the
    /// caller's error: that query may then take moves that touch blocked or costed cells.
    pub fn find_path_kept(
        &mut self,
        revision: MapRevision,
        mask: &CellMask,
        start: (u32, u32),
        goal: (u32, u32),
        cell_extra: impl Fn(usize) -> f64,
        should_stop: impl FnMut() -> bool,
    ) -> Result<CostPath, SearchFailure> {
        self.query(Some(revision), mask, start, goal, cell_extra, |_, _| Some(0.0), should_stop)
    }

    /// [`CostAStar::find_path`] with its nodes limited to the cells `guide(x, y)` admits (`Some`;
    /// the start and the goal must be among them; a diagonal or knight's move between two of them
    /// may still touch others on the way, legality being the mask's): the cheapest such path, or
    /// [`SearchFailure::NoPath`] when none joins the two. `guide` also estimates the cost
    /// to the goal (`Some(e)`): the heuristic is the larger of `e` and the distance. A positive
    /// estimate makes the search greedier there (above the true cost) or the heuristic
    /// inconsistent (closed nodes are not reopened), either of which may cost the path more than
    /// the cheapest inside the cells; an estimate of 0 leaves the search exact.
    pub fn find_path_within(
        &mut self,
        mask: &CellMask,
        start: (u32, u32),
        goal: (u32, u32),
        cell_extra: impl Fn(usize) -> f64,
        guide: impl Fn(i64, i64) -> Option<f64>,
        should_stop: impl FnMut() -> bool,
    ) -> Result<CostPath, SearchFailure> {
        self.query(None, mask, start, goal, cell_extra, guide, should_stop)
    }

    /// One query, its open ground kept from the query before when both name one `revision`
    /// (only the open ground depends on it, so the search itself does not see it).
    #[allow(clippy::too_many_arguments)]
    fn query(
        &mut self,
        revision: Option<MapRevision>,
        mask: &CellMask,
        start: (u32, u32),
        goal: (u32, u32),
        cell_extra: impl Fn(usize) -> f64,
        guide: impl Fn(i64, i64) -> Option<f64>,
        should_stop: impl FnMut() -> bool,
    ) -> Result<CostPath, SearchFailure> {
        // The open list holds exactly `OPEN_LIST_KEPT` entries' room between queries, whatever
        // the queries so far reached: the searcher's memory does not creep up with the plans.
        if self.open.capacity() < OPEN_LIST_KEPT {
            self.open.reserve_exact(OPEN_LIST_KEPT);
        }
        self.ground.begin(mask.width(), mask.height(), revision);
        let found = self.search(mask, start, goal, cell_extra, guide, should_stop);
        self.open.clear();
        self.open.shrink_to(OPEN_LIST_KEPT);
        found
    }

    fn search(
        &mut self,
        mask: &CellMask,
        start: (u32, u32),
        goal: (u32, u32),
        cell_extra: impl Fn(usize) -> f64,
        guide: impl Fn(i64, i64) -> Option<f64>,
        should_stop: impl FnMut() -> bool,
    ) -> Result<CostPath, SearchFailure> {
        let (w, h) = (mask.width(), mask.height());
        for p in [start, goal] {
            if p.0 as usize >= w || p.1 as usize >= h {
                return Err(SearchFailure::OutOfBounds);
            }
            if mask.blocked(i64::from(p.0), i64::from(p.1)) {
                return Err(SearchFailure::BlockedEndpoint);
            }
        }
        let (padded, stride) = mask.padded_cells();
        if self.flat_width != w || self.flat.is_empty() {
            self.flat = self.moves.iter().map(|m| FlatMove::new(m, w, stride)).collect();
            self.flat_width = w;
        }
        let (gx, gy) = (i64::from(goal.0), i64::from(goal.1));
        let hfn = |x: i64, y: i64, estimate: f64| sixteen_connected_distance(x - gx, y - gy).max(estimate);
        // Nodes are named by their map index (moves, the mask, the costs and parents use it);
        // their records are kept at their tiled slot.
        let slots = TiledSlots::new(w, h);
        let s = &mut self.scratch;
        s.begin(slots.count());
        let si = start.1 as usize * w + start.0 as usize;
        let gi = goal.1 as usize * w + goal.0 as usize;
        let start_slot = slots.of(start.0 as usize, start.1 as usize);
        s.set(start_slot, 0.0, NO_PARENT);
        let open = &mut self.open;
        open.clear();
        let ground = &mut self.ground;
        // Blocked, costed (a NaN weight counts as costed), not admitted or with a positive
        // estimate (cells inside the map): what open ground must not hold. A caller's estimate
        // makes the heuristic inconsistent there, and the search no longer exact; pruning moves
        // there made the guides of the cluster graph's corridors dearer (site scale,
        // 100by100_15 tiled 3 x 3: Nav2 mean cost 3.8 against 2.4).
        let dirty = |x: i64, y: i64| {
            padded[(y + 1) as usize * stride + (x + 1) as usize] != 0
                || cell_extra(y as usize * w + x as usize).partial_cmp(&0.0) != Some(std::cmp::Ordering::Equal)
                || !matches!(guide(x, y), Some(e) if e <= 0.0)
        };
        let (sx, sy) = (i64::from(start.0), i64::from(start.1));
        open.push(OpenEntry::new(hfn(sx, sy, guide(sx, sy).unwrap_or(0.0)), 0.0, si, start_slot));
        let (mut expansions, mut canonical) = (0usize, 0usize);
        let mut poll = StopPoll::new(1024, should_stop);
        while let Some(OpenEntry(_, _, i, slot)) = open.pop() {
            let (i, slot) = (i as usize, slot as usize);
            // A goal taken off the list is answered even when the poll says stop.
            if poll.stop() && i != gi {
                return Err(SearchFailure::Stopped);
            }
            if s.is_closed(slot) {
                continue;
            }
            s.close(slot);
            if i == gi {
                let mut cells = vec![];
                let mut j = i as u32;
                while j != NO_PARENT {
                    let cell = (j % w as u32, j / w as u32);
                    cells.push(cell);
                    j = s.parent(slots.of(cell.0 as usize, cell.1 as usize));
                }
                cells.reverse();
                return Ok(CostPath { cells, cost: s.g(slot), expansions, canonical });
            }
            expansions += 1;
            let (x, y) = ((i % w) as i64, (i / w) as i64);
            let gu = s.g(slot);
            // On open ground a path goes on canonically: only the moves that may follow the
            // one it arrived by, every one legal and priced by its length (`OpenGround`).
            let parent = s.parent(slot);
            let arrival = if parent == NO_PARENT {
                None
            } else {
                let p = parent as usize;
                move_index(x - (p % w) as i64, y - (p / w) as i64)
            };
            // A dirty cell is not open ground, known without working out its tile: in a
            // corridor, whose cells carry positive estimates, no tile is worked out at all.
            if let Some(k) = arrival.filter(|_| !dirty(x, y) && ground.is_open(x, y, dirty)) {
                canonical += 1;
                for &n in &CANONICAL_NEXT[k].0[..CANONICAL_NEXT[k].1] {
                    let m = &self.flat[n];
                    // A straight or diagonal step into open ground can only be followed by the
                    // same step again: the ray goes on without the open list (each cell's
                    // record set as its expansion would), and only the cell where it stops
                    // (not open ground, the goal, a cheaper record, or `RAY_CELLS` on) is queued.
                    let ray = m.dx.abs() + m.dy.abs() <= 2;
                    let (mut cx, mut cy, mut ci, mut cg) = (x, y, i, gu);
                    for step in 1.. {
                        let (nx, ny) = (cx + m.dx, cy + m.dy);
                        let j_slot = slots.of(nx as usize, ny as usize);
                        let ng = cg + m.len;
                        if s.is_closed(j_slot) || ng >= s.g(j_slot) {
                            break;
                        }
                        let Some(estimate) = guide(nx, ny) else { break };
                        s.set(j_slot, ng, ci as u32);
                        let j = (ci as isize + m.target) as usize;
                        if ray && j != gi && step < RAY_CELLS && ground.is_open(nx, ny, dirty) {
                            (cx, cy, ci, cg) = (nx, ny, j, ng);
                            continue;
                        }
                        open.push(OpenEntry::new(ng + hfn(nx, ny, estimate), ng, j, j_slot));
                        break;
                    }
                }
                continue;
            }
            let padded_i = ((y + 1) as usize * stride + (x + 1) as usize) as isize;
            for m in &self.flat {
                // The mask's blocked border covers the cells just outside the map, and a move's
                // touched cells are listed nearest first, so no index leaves the padded mask.
                if m.touched[..m.touched_len].iter().any(|&o| padded[(padded_i + o) as usize] != 0) {
                    continue;
                }
                let (nx, ny) = (x + m.dx, y + m.dy);
                // Inside the map: the target is among the touched cells, and the padding is blocked.
                let j_slot = slots.of(nx as usize, ny as usize);
                if s.is_closed(j_slot) {
                    continue;
                }
                // The move's cost integral (>= 0) is read only when the move can still win
                // without it.
                let unpriced = gu + m.len;
                if unpriced >= s.g(j_slot) {
                    continue;
                }
                let Some(estimate) = guide(nx, ny) else { continue };
                let extra: f64 =
                    m.weights[..m.weights_len].iter().map(|&(o, l)| l * cell_extra((i as isize + o) as usize)).sum();
                let ng = unpriced + extra;
                if ng < s.g(j_slot) {
                    s.set(j_slot, ng, i as u32);
                    let j = (i as isize + m.target) as usize;
                    open.push(OpenEntry::new(ng + hfn(nx, ny, estimate), ng, j, j_slot));
                }
            }
        }
        Err(SearchFailure::NoPath)
    }
}

/// The moves a path may take after arriving at an open-ground cell by move `k` (an index into
/// [`MOVES`]), and how many: after a straight or diagonal step only the same step, after a
/// knight's move the same move or one of the two steps beside it (the straight and the diagonal
/// whose directions flank it). This is the canonical ordering of the 16 moves (Rivera, Hernández,
/// Hormazábal & Baier, *The 2^k Neighborhoods for Grid Path Planning*, JAIR 2020): on an empty
/// map every cell has a cheapest path of knight's moves first, then steps of one kind.
///
/// Why pruning the other pairs at an open-ground cell `n` loses no price: the cell before, `p`,
/// and the one after, `q`, lie within two cells of `n`, and a cheapest empty-map path from `p` to
/// `q` in canonical form only moves towards `q`, so it stays in the box spanned by `p` and `q`,
/// inside `n`'s 5 x 5 window, where every move is legal and costs its length (a move's touched
/// cells and price samples lie in the box of its two centres). Since 1, sqrt 2 and sqrt 5 are
/// independent over the rationals, the only pairs that tie with such a path are a step followed
/// by a knight's move it flanks, whose swap (the knight's move first) ends in a step; every other
/// pruned pair is strictly dearer. Ties therefore do not depend on which of two equal arrivals a
/// cell kept: if `u`, an optimal predecessor of `w`, does not try the move to `w`, that move is a
/// knight's move after a step `s`, and `u - s + knight` is an optimal predecessor of `w` too, whose
/// next move, the step `s`, is canonical after any arrival. The search matches a plain Dijkstra
/// over every move (`the_canonical_search_is_exact_against_dijkstra`). The argument needs a
/// consistent heuristic: cells where a caller's estimate is positive are never open ground.
const CANONICAL_NEXT: [([usize; 3], usize); 16] = {
    let mut next = [([0usize; 3], 0usize); 16];
    let mut k = 0;
    while k < 16 {
        let (dx, dy) = MOVES[k];
        next[k] = if dx.abs() + dy.abs() == 3 {
            // The straight step along the knight's long axis and the diagonal one.
            let (sx, sy) = (dx.signum(), dy.signum());
            let straight = if dx.abs() == 2 { (sx, 0) } else { (0, sy) };
            let (straight, diagonal) = (MOVE_AT[window_index(straight)], MOVE_AT[window_index((sx, sy))]);
            ([k, straight as usize, diagonal as usize], 3)
        } else {
            ([k, 0, 0], 1)
        };
        k += 1;
    }
    next
};

/// The index in [`MOVES`] of each offset within two cells, row-major from `(-2, -2)`
/// (`u8::MAX` where the offset is not a move).
const MOVE_AT: [u8; 25] = {
    let mut t = [u8::MAX; 25];
    let mut k = 0;
    while k < 16 {
        t[window_index(MOVES[k])] = k as u8;
        k += 1;
    }
    t
};

/// Where offset `d` (each coordinate within two cells) sits in a 5 x 5 window, row-major from
/// `(-2, -2)`.
const fn window_index(d: (i64, i64)) -> usize {
    ((d.1 + 2) * 5 + d.0 + 2) as usize
}

/// The index in [`MOVES`] of the move `(dx, dy)`, if it is one.
#[inline(always)]
fn move_index(dx: i64, dy: i64) -> Option<usize> {
    if dx.abs() > 2 || dy.abs() > 2 {
        return None;
    }
    let k = MOVE_AT[window_index((dx, dy))];
    (k != u8::MAX).then_some(k as usize)
}

/// The length of the shortest 16-connected path over `(dx, dy)` cells with no obstacle and no
/// cost: the heuristic, as the octile distance is for 8 moves. Per octant (`|dx| >= |dy|`, say)
/// the cheapest mix takes as many knight's moves as fit, `min(|dy|, |dx| - |dy|)`, then straight
/// or diagonal steps (a knight's move, `sqrt 5`, is shorter than a straight and a diagonal step,
/// `1 + sqrt 2`). Admissible and consistent: it is the exact distance of the same moves on an
/// empty map, and obstacles and costs only lengthen paths. Tighter than the Euclidean distance,
/// which the 16 moves overshoot by up to 2.7%: in open space, where that slack let the search
/// expand an ellipse around the straight line, the bound is exact.
#[inline]
fn sixteen_connected_distance(dx: i64, dy: i64) -> f64 {
    let (a, b) = (dx.unsigned_abs(), dy.unsigned_abs());
    let (long, short) = if a >= b { (a, b) } else { (b, a) };
    let knights = short.min(long - short);
    // With `knights` knight's moves, the rest is `long - short - knights` straight steps and
    // `short - knights` diagonal ones (one of the two is 0).
    let straight = long - short - knights;
    let diagonal = short - knights;
    knights as f64 * KNIGHT_LEN + diagonal as f64 * DIAGONAL_LEN + straight as f64
}

/// A knight's move's length, as the moves compute it.
const KNIGHT_LEN: f64 = 2.23606797749979;
/// A diagonal step's length.
const DIAGONAL_LEN: f64 = std::f64::consts::SQRT_2;

/// Cost-aware string pulling of a polyline of cell centres (`cells`), the classic linear pass:
/// a waypoint is dropped where the last kept waypoint sees the next one under `rule` and the
/// straight line to it costs no more than the way through the waypoint (prices by `extra`, the
/// weighted part of a segment's cost). `cost_free(x, y)` says that cell `(x, y)` adds no cost
/// (`extra` of a segment touching only such cells is 0): the cells inside straight runs of one
/// of the 16 moves over such ground are passed over first (`merge_free_runs`), which leaves
/// the polyline and its price as they are. Never raises the polyline's price; every segment of
/// the result has line of sight when every segment of the input had.
pub fn pull_strings(
    mask: &CellMask,
    rule: LosRule,
    cells: &[(u32, u32)],
    extra: impl Fn(Point2, Point2) -> f64,
    cost_free: impl Fn(i64, i64) -> bool,
) -> Vec<(u32, u32)> {
    let cells = merge_free_runs(cells, cost_free);
    if cells.len() < 3 {
        return cells;
    }
    let centre = |c: (u32, u32)| Point2::new(f64::from(c.0) + 0.5, f64::from(c.1) + 0.5);
    let doubled = |c: (u32, u32)| (2 * i64::from(c.0) + 1, 2 * i64::from(c.1) + 1);
    let price = |a: (u32, u32), b: (u32, u32)| {
        let (p, q) = (centre(a), centre(b));
        p.distance(q) + extra(p, q)
    };
    let mut out = vec![cells[0]];
    // The price from the anchor to `here`, carried from the step before (either the straight
    // line just taken or the segment just kept), so each step prices one long line, not two.
    let mut to_here = price(cells[0], cells[1]);
    for i in 1..cells.len() - 1 {
        let anchor = *out.last().unwrap_or(&cells[0]);
        let (here, next) = (cells[i], cells[i + 1]);
        let onwards = price(here, next);
        let through = to_here + onwards;
        let straight = if mask.los_doubled(rule, doubled(anchor), doubled(next)) {
            Some(price(anchor, next)).filter(|&p| p <= through + 1e-9)
        } else {
            None
        };
        match straight {
            Some(p) => to_here = p,
            None => {
                out.push(here);
                to_here = onwards;
            }
        }
    }
    out.push(cells[cells.len() - 1]);
    out
}

/// `cells` without the cells inside straight runs of one move over cost-free ground: a cell
/// goes when the move into it and the move out of it are the same one of the 16 moves and every
/// cell either move touches (its start and the cells of [`touched_cells`]) is `cost_free`. The
/// merged segment is the same line, touching the same cells, so it has line of sight exactly
/// when the moves had, and costs their length and nothing more, as they did. A path of the
/// search runs in long such runs on open ground (its tie-break keeps a direction), so string
/// pulling then weighs a few cells instead of hundreds.
fn merge_free_runs(cells: &[(u32, u32)], cost_free: impl Fn(i64, i64) -> bool) -> Vec<(u32, u32)> {
    let step = |a: (u32, u32), b: (u32, u32)| (i64::from(b.0) - i64::from(a.0), i64::from(b.1) - i64::from(a.1));
    let free_move = |a: (u32, u32), d: (i64, i64)| {
        let (x, y) = (i64::from(a.0), i64::from(a.1));
        MOVES.contains(&d) && cost_free(x, y) && touched_cells(d).iter().all(|&(ox, oy)| cost_free(x + ox, y + oy))
    };
    let mut out: Vec<(u32, u32)> = Vec::with_capacity(cells.len());
    for (i, &c) in cells.iter().enumerate() {
        let interior = i > 0 && i + 1 < cells.len() && {
            let (d_in, d_out) = (step(cells[i - 1], c), step(c, cells[i + 1]));
            d_in == d_out && free_move(cells[i - 1], d_in) && free_move(c, d_out)
        };
        if !interior {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Grid;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    #[test]
    fn without_costs_the_path_is_a_shortest_16_connected_one() {
        let g = Grid::from_rows(&["........", "..@@@...", "........", "........"]).unwrap();
        let m = CellMask::from_grid(&g);
        let p = CostAStar::new().find_path(&m, (0, 2), (7, 0), |_| 0.0, || false).unwrap();
        // Around the wall's right end: (0,2) -> (5,0)... at least the straight distance.
        assert!(p.cost >= ((7.0f64).hypot(2.0)) - 1e-9);
        assert_eq!(p.cells.first(), Some(&(0, 2)));
        assert_eq!(p.cells.last(), Some(&(7, 0)));
        assert_eq!(
            CostAStar::new().find_path(&m, (2, 1), (0, 0), |_| 0.0, || false),
            Err(SearchFailure::BlockedEndpoint)
        );
    }

    #[test]
    fn the_heuristic_is_the_empty_maps_16_connected_distance() {
        // A plain Dijkstra over the 16 moves on an empty 41 x 41 grid, from its centre.
        let n = 41i64;
        let moves = CostAStar::new().moves;
        let mut dist = vec![f64::INFINITY; (n * n) as usize];
        let c = (n / 2, n / 2);
        dist[(c.1 * n + c.0) as usize] = 0.0;
        let mut done = vec![false; dist.len()];
        for _ in 0..dist.len() {
            let i = (0..dist.len()).filter(|&i| !done[i]).min_by(|&a, &b| dist[a].total_cmp(&dist[b])).unwrap();
            done[i] = true;
            let (x, y) = (i as i64 % n, i as i64 / n);
            for m in &moves {
                let (tx, ty) = (x + m.d.0, y + m.d.1);
                if (0..n).contains(&tx) && (0..n).contains(&ty) {
                    let j = (ty * n + tx) as usize;
                    dist[j] = dist[j].min(dist[i] + m.len);
                }
            }
        }
        for y in 0..n {
            for x in 0..n {
                let (dx, dy) = (x - c.0, y - c.1);
                let d = dist[(y * n + x) as usize];
                let h = sixteen_connected_distance(dx, dy);
                assert!((h - d).abs() < 1e-9, "({dx}, {dy}): {h} vs {d}");
                // Never below the straight distance, at most 2.7% above it.
                let e = (dx as f64).hypot(dy as f64);
                assert!(h >= e - 1e-9 && h <= 1.0275 * e + 1e-9, "({dx}, {dy}): {h} vs {e}");
            }
        }
        assert_eq!(KNIGHT_LEN, 2.0f64.hypot(1.0));
        assert_eq!(DIAGONAL_LEN, 1.0f64.hypot(1.0));
    }

    #[test]
    fn the_touched_cells_are_the_conservative_line_of_sight() {
        // Every 5x5 pattern around a move's first cell with one blocked cell: the move is legal
        // exactly when the conservative line of sight says so.
        for &d in &MOVES {
            for bx in 0..5 {
                for by in 0..5 {
                    let mut rows = vec![vec!['.'; 5]; 5];
                    rows[by][bx] = '@';
                    let rows: Vec<String> = rows.into_iter().map(|r| r.into_iter().collect()).collect();
                    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
                    let m = CellMask::from_grid(&Grid::from_rows(&rows).unwrap());
                    let (x, y) = (2i64, 2i64);
                    let los = m.los_doubled(
                        LosRule::Conservative,
                        (2 * x + 1, 2 * y + 1),
                        (2 * (x + d.0) + 1, 2 * (y + d.1) + 1),
                    );
                    let free = !m.blocked(x, y) && touched_cells(d).iter().all(|&(ox, oy)| !m.blocked(x + ox, y + oy));
                    assert_eq!(free, los, "move {d:?}, blocked ({bx}, {by})");
                }
            }
        }
    }

    #[test]
    fn free_runs_merge_and_costed_or_bent_ones_stay() {
        // A straight run east, a knight's run, then a run whose middle cell costs.
        let cells: Vec<(u32, u32)> =
            vec![(0, 0), (1, 0), (2, 0), (3, 0), (5, 1), (7, 2), (9, 3), (10, 3), (11, 3), (12, 3)];
        let costed = |x: i64, y: i64| (x, y) == (11, 3);
        let merged = merge_free_runs(&cells, |x, y| !costed(x, y));
        // (1,0), (2,0) inside the east run; (5,1) and (7,2) inside the knight's run; (10,3)'s
        // move out touches (11,3), which costs, and (11,3) itself costs: both stay.
        assert_eq!(merged, vec![(0, 0), (3, 0), (9, 3), (10, 3), (11, 3), (12, 3)]);
        // A knight's move touches the cells beside the edge it crosses: a cost there keeps it.
        let merged = merge_free_runs(&cells, |x, y| (x, y) != (6, 2));
        assert!(merged.contains(&(5, 1)) && merged.contains(&(7, 2)), "{merged:?}");
        // Not one of the 16 moves (a caller's own polyline): kept as given.
        assert_eq!(merge_free_runs(&[(0, 0), (3, 0), (6, 0)], |_, _| true), vec![(0, 0), (3, 0), (6, 0)]);
    }

    #[test]
    fn a_dear_band_is_crossed_only_where_it_pays() {
        // A free 30x9 room whose middle row costs 100 extra per cell unit except in column 25:
        // the way round through it (about 47) beats crossing (more than 100).
        let g = Grid::new_free(30, 9).unwrap();
        let m = CellMask::from_grid(&g);
        let extra = |i: usize| if i / 30 == 4 && i % 30 != 25 { 100.0 } else { 0.0 };
        let p = CostAStar::new().find_path(&m, (2, 0), (2, 8), extra, || false).unwrap();
        assert!(p.cells.contains(&(25, 4)), "{:?}", p.cells);
        let free = CostAStar::new().find_path(&m, (2, 0), (2, 8), |_| 0.0, || false).unwrap();
        assert!((free.cost - 8.0).abs() < 1e-9);
    }

    /// The price of move `m` from cell `(x, y)`, `None` when it touches a blocked cell: the
    /// search's own legality and prices, for the oracle and the re-pricing below.
    fn move_price(m: &Move, mask: &CellMask, extra: &dyn Fn(usize) -> f64, x: i64, y: i64) -> Option<f64> {
        let w = mask.width() as i64;
        if m.touched.iter().any(|&(ox, oy)| mask.is_blocked(x + ox, y + oy)) {
            return None;
        }
        Some(m.len + m.weights.iter().map(|&((ox, oy), l)| l * extra(((y + oy) * w + x + ox) as usize)).sum::<f64>())
    }

    /// Plain Dijkstra over the same 16 moves, legality and prices as the search's, all moves
    /// from every cell, among the cells `admitted`: the cheapest price from `s` to `t`.
    fn dijkstra(
        mask: &CellMask,
        extra: &dyn Fn(usize) -> f64,
        admitted: &dyn Fn(i64, i64) -> bool,
        s: (i64, i64),
        t: (i64, i64),
    ) -> f64 {
        let (w, h) = (mask.width() as i64, mask.height() as i64);
        let moves = CostAStar::new().moves;
        let mut dist = vec![f64::INFINITY; (w * h) as usize];
        let mut heap = BinaryHeap::new();
        dist[(s.1 * w + s.0) as usize] = 0.0;
        heap.push(Reverse((0u64, s)));
        while let Some(Reverse((d, (x, y)))) = heap.pop() {
            let d = f64::from_bits(d);
            if d > dist[(y * w + x) as usize] {
                continue;
            }
            if (x, y) == t {
                return d;
            }
            for m in &moves {
                let (nx, ny) = (x + m.d.0, y + m.d.1);
                let Some(price) = move_price(m, mask, extra, x, y).filter(|_| admitted(nx, ny)) else { continue };
                let nd = d + price;
                if nd < dist[(ny * w + nx) as usize] {
                    dist[(ny * w + nx) as usize] = nd;
                    heap.push(Reverse((nd.to_bits(), (nx, ny))));
                }
            }
        }
        f64::INFINITY
    }

    /// The price of a path of cells, recomputed from its moves (each one of the 16, legal).
    fn price_of(mask: &CellMask, extra: &dyn Fn(usize) -> f64, cells: &[(u32, u32)]) -> f64 {
        let moves = CostAStar::new().moves;
        cells
            .windows(2)
            .map(|c| {
                let (x, y) = (i64::from(c[0].0), i64::from(c[0].1));
                let d = (i64::from(c[1].0) - x, i64::from(c[1].1) - y);
                let m = moves.iter().find(|m| m.d == d).unwrap_or_else(|| panic!("{d:?} is not a move"));
                move_price(m, mask, extra, x, y).unwrap_or_else(|| panic!("illegal {d:?} at ({x}, {y})"))
            })
            .sum()
    }

    /// On maps of open ground with scattered obstacles and cost blobs (where the canonical
    /// ordering prunes, and equal-price paths abound), the search's price equals a plain
    /// Dijkstra's over every move, and the path it returns has that price; also inside a set of
    /// admitted cells. `BLOCKSTAR_ORACLE_ROUNDS=4000` is the stress run.
    #[test]
    fn the_canonical_search_is_exact_against_dijkstra() {
        let mut seed = 5u64;
        let mut next = move |n: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        let mut search = CostAStar::new();
        let (mut expansions, mut canonical) = (0, 0);
        // `BLOCKSTAR_ORACLE_ROUNDS=N` runs N rounds (60 by default; the stress runs, 4000).
        let rounds: usize = std::env::var("BLOCKSTAR_ORACLE_ROUNDS").ok().and_then(|n| n.parse().ok()).unwrap_or(60);
        for round in 0..rounds {
            // Every fourth round a larger map, with longer runs over open ground.
            let side = if round % 4 == 3 { 120 } else { 40 };
            let (w, h) = (20 + next(side) as usize, 20 + next(side) as usize);
            let mut blocked = vec![false; w * h];
            let mut cost = vec![0.0f64; w * h];
            // A few rectangles of obstacles and of costs, some single cells.
            for _ in 0..next(6) {
                let (x0, y0, rw, rh) =
                    (next(w as u64) as usize, next(h as u64) as usize, 1 + next(8) as usize, 1 + next(8) as usize);
                let c = [0.0, 0.0, 0.3, 2.0, 7.5][next(5) as usize];
                for y in y0..(y0 + rh).min(h) {
                    for x in x0..(x0 + rw).min(w) {
                        if c == 0.0 {
                            blocked[y * w + x] = true;
                        } else {
                            cost[y * w + x] = c;
                        }
                    }
                }
            }
            for _ in 0..next(8) {
                cost[next((w * h) as u64) as usize] = [0.1, 1.0, 20.0][next(3) as usize];
            }
            let m = CellMask::from_grid(&Grid::from_blocked(w, h, blocked).unwrap());
            let extra = |i: usize| cost[i];
            // Every other round, only the cells of a few bands are admitted.
            let bands = [(next(w as u64) as i64, 3 + next(10) as i64), (next(w as u64) as i64, 3 + next(10) as i64)];
            let limited = round % 2 == 1;
            let admitted = |x: i64, y: i64| !limited || y % 7 < 5 || bands.iter().any(|&(b, bw)| x >= b && x < b + bw);
            for _ in 0..8 {
                let mut pick = || loop {
                    let (x, y) = (next(w as u64) as i64, next(h as u64) as i64);
                    if !m.is_blocked(x, y) && admitted(x, y) {
                        return (x, y);
                    }
                };
                let (a, b) = (pick(), pick());
                let want = dijkstra(&m, &extra, &admitted, a, b);
                let cell = |p: (i64, i64)| (p.0 as u32, p.1 as u32);
                let got = search.find_path_within(
                    &m,
                    cell(a),
                    cell(b),
                    extra,
                    |x, y| admitted(x, y).then_some(0.0),
                    || false,
                );
                match got {
                    Ok(p) => {
                        (expansions, canonical) = (expansions + p.expansions, canonical + p.canonical);
                        assert!(
                            (p.cost - want).abs() <= 1e-9 * want.max(1.0),
                            "round {round} {a:?}->{b:?}: {} vs {want}",
                            p.cost
                        );
                        let again = price_of(&m, &extra, &p.cells);
                        assert!(
                            (again - p.cost).abs() <= 1e-9 * want.max(1.0),
                            "round {round}: path prices {again}, said {}",
                            p.cost
                        );
                        assert!(p.cells.iter().all(|&(x, y)| admitted(i64::from(x), i64::from(y))));
                    }
                    Err(e) => assert!(want.is_infinite(), "round {round} {a:?}->{b:?}: {e:?}, Dijkstra {want}"),
                }
            }
        }
        // The ordering was at work: a share of the expansions were canonical ones (17% with the
        // default rounds; half the rounds admit only bands of cells, where little is open).
        assert!(canonical * 10 > expansions, "{canonical} of {expansions} expansions canonical");
    }

    /// Every cell has a slot of its own, below the count the scratch is sized for; tiled, a
    /// tile's 256 slots are contiguous; a map that tiles would mostly waste keeps the rows'
    /// layout, its slots its cells' indices.
    #[test]
    fn tiled_slots_are_one_per_cell_and_a_tile_is_one_run() {
        for (w, h, tiled) in
            [(16, 16, true), (37, 23, true), (100, 33, true), (1, 1, false), (17, 5, false), (1, 1000, false)]
        {
            let slots = TiledSlots::new(w, h);
            assert_eq!(slots.across != 0, tiled, "{w}x{h}");
            let count = slots.count();
            assert!(count <= 2 * w * h, "{w}x{h}: {count} slots");
            let mut seen = vec![false; count];
            for y in 0..h {
                for x in 0..w {
                    let k = slots.of(x, y);
                    assert!(k < count && !seen[k], "{w}x{h}: ({x}, {y}) -> {k}");
                    seen[k] = true;
                    if tiled {
                        let corner = slots.of(x & !(TILE_SIDE - 1), y & !(TILE_SIDE - 1));
                        assert!(k - corner < TILE_SIDE * TILE_SIDE, "{w}x{h}: ({x}, {y})");
                    } else {
                        assert_eq!(k, y * w + x);
                    }
                }
            }
        }
    }

    /// A search along a long diagonal writes the records of the tiles it passes, not a page
    /// of every row it crosses: on a free 4096 x 4096 map, corner to corner, it writes the
    /// records of three tiles per tile on the diagonal (its own, and the two beside it that the
    /// moves around each tile corner reach), a tile 4 KiB on a 4 KiB boundary, so within one page
    /// of 4 KiB or more: 3 MiB resident with 4 KiB pages (3141632 bytes measured), bound here at
    /// four tiles, 4 MiB, where records laid out row by row left at least a page per row, 16
    /// MiB (17162240 bytes measured). Not asked where
    /// transparent huge pages back every allocation ("always"): a 2 MiB page then holds many
    /// tiles' rows.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_long_diagonal_search_leaves_few_pages_resident() {
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
        if thp.contains("[always]") {
            eprintln!("skipped: transparent huge pages back every allocation here");
            return;
        }
        let page = crate::memory::page_size().unwrap_or(4096).max(4096);
        let n = 4096usize;
        let m = CellMask::from_grid(&Grid::new_free(n, n).unwrap());
        let mut search = CostAStar::new();
        let p = search.find_path(&m, (0, 0), (n as u32 - 1, n as u32 - 1), |_| 0.0, || false).unwrap();
        assert!((p.cost - (n as f64 - 1.0) * DIAGONAL_LEN).abs() < 1e-6);
        let resident = search.scratch.resident_record_bytes().expect("mincore on Linux");
        let bound = 4 * (n / TILE_SIDE) * page;
        assert!(resident <= bound, "{resident} bytes of records resident, bound {bound}");
        // And the rows' layout would have left at least a page per row (a row is 64 KiB).
        assert!(n * page.min(16 * n) > bound);
    }

    /// A searcher whose node records' pages were handed back answers as a fresh one does.
    #[test]
    fn released_scratch_answers_like_a_fresh_searcher() {
        let (w, h) = (240, 160);
        let blocked = (0..w * h).map(|i| (i % w) % 11 == 5 && (i / w) % 9 != 0).collect();
        let m = CellMask::from_grid(&Grid::from_blocked(w, h, blocked).unwrap());
        let extra = |i: usize| if (i / w) % 13 < 4 { 0.5 } else { 0.0 };
        let mut reused = CostAStar::new();
        for (a, b) in [((0, 0), (237, 155)), ((120, 1), (3, 150)), ((236, 0), (8, 80))] {
            let got = reused.find_path(&m, a, b, extra, || false).unwrap();
            reused.release_scratch_pages();
            let fresh = CostAStar::new().find_path(&m, a, b, extra, || false).unwrap();
            assert_eq!((got.cells, got.cost), (fresh.cells, fresh.cost), "{a:?} -> {b:?}");
        }
    }
}
