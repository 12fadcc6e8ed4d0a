//! The Local Distance Database (Yap, Burch, Holte, Schaeffer, AAAI 2011): for every obstacle
//! pattern of a square block of cells, the shortest in-block distance between every pair of
//! nodes for three metrics (tile and octile between cells, any-angle between vertices under both
//! [`LosRule`]s). Paths are rebuilt through their inflection points from the distances alone (see
//! [`Lddb::next_hop`]), so no next-hop table is stored.
//!
//! Only one pattern per symmetry class of the square is stored (8548 instead of 65536 for 4x4
//! cells); a lookup maps the pattern to its class and the node indices through the transform.
//! The database is computed in parallel (rayon) and cached on disk (see [`cache`]): build it
//! once per process with [`Lddb::load_or_build`] and share it (`Lddb` is `Send + Sync`).
//!
//! Local indices: cell `(x, y)` of a block is `y * side + x`; vertex `(x, y)` is
//! `y * (side + 1) + x`, with `(0, 0)` the block's low corner.

pub mod build;
pub mod cache;
pub mod symmetry;

use crate::search::los::LosRule;
use build::{AA_SCALE, UNREACHABLE_U16, UNREACHABLE_U8};
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};

pub use cache::{default_cache_dir, LddbError, LoadOutcome, LoadReport};

/// A search metric of the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Metric {
    /// 4-connected moves between cells, cost 1.
    Tile,
    /// 8-connected moves between cells (diagonal sqrt 2, no corner cutting).
    Octile,
    /// Straight segments between vertices with line of sight.
    AnyAngle,
}

/// The Local Distance Database for blocks of `side x side` cells.
#[derive(Clone, PartialEq)]
pub struct Lddb {
    pub(crate) side: usize,
    /// pattern -> (canonical index << 3) | transform.
    pub(crate) canon_of: Vec<u32>,
    /// Canonical patterns, ascending.
    pub(crate) canon: Vec<u32>,
    /// Per rule: any-angle distances, `[c][a][b]`, fixed point.
    pub(crate) aa_dist: [Vec<u16>; 2],
    /// Per rule: any-angle distances between boundary vertices only, `[c][i]` rows over boundary
    /// positions (row-major order of the boundary vertices), lane `j` as `f32` (exact: entries
    /// are multiples of 1/1024 below 64) with `+inf` for unreachable and for padding lanes.
    /// Derived from `aa_dist` when the database is built or loaded (never stored on disk): one
    /// row is one aligned cache line, so the Block A* relax loop reads an ingress vertex's
    /// distances with one memory access and runs branch-free in SIMD lanes.
    pub(crate) aa_boundary: [Vec<BoundaryRow>; 2],
    /// [`symmetry::class_map_fingerprint`] of `canon_of`: block grids whose class codes come
    /// from the same map may hand them to the search directly.
    class_map_id: u64,
    /// Per rule and class: [`usable_vertices`] of the canonical pattern, computed once
    /// (path reconstruction asks for it on every in-block hop).
    usable: [Vec<u32>; 2],
    /// Octile distances `[c][a][b]`, packed straight | diagonal << 4.
    pub(crate) oct: Vec<u8>,
    /// Tile distances `[c][a][b]`.
    pub(crate) tile: Vec<u8>,
    vperm: Vec<Vec<u8>>,
    vinv: Vec<Vec<u8>>,
    cperm: Vec<Vec<u8>>,
    cinv: Vec<Vec<u8>>,
    oct_len: [f64; 256],
    /// Euclidean distance between block vertices `a` and `b` at `[a * nodes + b]`, times
    /// [`AA_SCALE`] (the fixed-point unit of the stored distances).
    euclid_fixed: Vec<f64>,
}

impl std::fmt::Debug for Lddb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Lddb {{ side: {}, classes: {}, bytes: {} }}", self.side, self.canon.len(), self.memory_bytes())
    }
}

impl Lddb {
    /// Block sides (cells) the database supports: 2, 3 and 4 (3x3, 4x4 and 5x5 vertices).
    pub const SIDES: [usize; 3] = [2, 3, 4];

    /// Computes the database for blocks of `side` cells (2, 3 or 4) on all rayon threads,
    /// calling `progress(done, total)` now and then with the number of pattern classes finished.
    ///
    /// Fails with [`LddbError::BadSide`] for other sides.
    pub fn build(side: usize, progress: &(dyn Fn(usize, usize) + Sync)) -> Result<Self, LddbError> {
        if !Self::SIDES.contains(&side) {
            return Err(LddbError::BadSide(side));
        }
        let (canon_of, canon) = symmetry::canonical_classes(side);
        let (nv, nc) = ((side + 1) * (side + 1), side * side);
        let k = canon.len();
        // Four table kinds per class; progress counts class-kinds.
        let total = 4 * k;
        let done = AtomicUsize::new(0);
        let tick = |n: usize| {
            let before = done.fetch_add(n, Ordering::Relaxed);
            let step = (total / 50).max(1);
            if (before + n) / step != before / step || before + n == total {
                progress(before + n, total);
            }
        };
        let mut aa_dist = [vec![0u16; k * nv * nv], vec![0u16; k * nv * nv]];
        for (r, rule) in LosRule::ALL.into_iter().enumerate() {
            aa_dist[r].par_chunks_mut(nv * nv).enumerate().for_each_init(
                || vec![0u8; nv * nv],
                |next, (c, d)| {
                    build::any_angle_table(side, canon[c], rule, d, next);
                    tick(1);
                },
            );
        }
        let mut oct = vec![0u8; k * nc * nc];
        oct.par_chunks_mut(nc * nc).enumerate().for_each(|(c, out)| {
            build::octile_table(side, canon[c], out);
            tick(1);
        });
        let mut tile = vec![0u8; k * nc * nc];
        tile.par_chunks_mut(nc * nc).enumerate().for_each(|(c, out)| {
            build::tile_table(side, canon[c], out);
            tick(1);
        });
        Ok(Self::assemble(side, canon_of, canon, aa_dist, oct, tile))
    }

    pub(crate) fn assemble(
        side: usize,
        canon_of: Vec<u32>,
        canon: Vec<u32>,
        aa_dist: [Vec<u16>; 2],
        oct: Vec<u8>,
        tile: Vec<u8>,
    ) -> Self {
        let vperm: Vec<Vec<u8>> = (0..8).map(|t| symmetry::permutation(t, side + 1)).collect();
        let cperm: Vec<Vec<u8>> = (0..8).map(|t| symmetry::permutation(t, side)).collect();
        let vinv = vperm.iter().map(|p| symmetry::inverse(p)).collect();
        let cinv = cperm.iter().map(|p| symmetry::inverse(p)).collect();
        let aa_boundary = [0, 1].map(|r| boundary_table(side, &aa_dist[r]));
        let mut oct_len = [f64::INFINITY; 256];
        for (v, l) in oct_len.iter_mut().enumerate() {
            if v as u8 != UNREACHABLE_U8 {
                *l = (v & 15) as f64 + (v >> 4) as f64 * std::f64::consts::SQRT_2;
            }
        }
        let nv = (side + 1) * (side + 1);
        let euclid_fixed = (0..nv * nv)
            .map(|i| {
                let (a, b) = (i / nv, i % nv);
                let (dx, dy) = (
                    (a % (side + 1)) as f64 - (b % (side + 1)) as f64,
                    (a / (side + 1)) as f64 - (b / (side + 1)) as f64,
                );
                dx.hypot(dy) * AA_SCALE
            })
            .collect();
        let usable =
            LosRule::ALL.map(|rule| canon.par_iter().map(|&p| usable_vertices(side, rule, p)).collect::<Vec<u32>>());
        let class_map_id = symmetry::class_map_fingerprint(&canon_of);
        Self {
            side,
            class_map_id,
            canon_of,
            canon,
            aa_dist,
            aa_boundary,
            usable,
            oct,
            tile,
            vperm,
            vinv,
            cperm,
            cinv,
            oct_len,
            euclid_fixed,
        }
    }

    /// Cells per block side.
    #[inline]
    pub fn side(&self) -> usize {
        self.side
    }

    /// Number of stored pattern classes.
    pub fn classes(&self) -> usize {
        self.canon.len()
    }

    /// Bytes of table memory held.
    pub fn memory_bytes(&self) -> usize {
        self.canon_of.len() * 4
            + self.canon.len() * 4
            + self.aa_dist.iter().map(|v| v.len() * 2).sum::<usize>()
            + self.aa_boundary.iter().map(|v| v.len() * std::mem::size_of::<BoundaryRow>()).sum::<usize>()
            + self.usable.iter().map(|v| v.len() * 4).sum::<usize>()
            + self.oct.len()
            + self.tile.len()
    }

    /// Nodes per block for `metric`: `(side+1)^2` vertices or `side^2` cells.
    #[inline]
    pub fn nodes(&self, metric: Metric) -> usize {
        match metric {
            Metric::AnyAngle => (self.side + 1) * (self.side + 1),
            _ => self.side * self.side,
        }
    }

    /// Class index and transform of `pattern` (bit `y * side + x` = cell `(x, y)` blocked).
    /// Patterns must be below `2^(side^2)`.
    #[inline(always)]
    pub fn class_of(&self, pattern: u32) -> (usize, usize) {
        let v = self.canon_of[pattern as usize];
        ((v >> 3) as usize, (v & 7) as usize)
    }

    /// Fingerprint of the pattern-to-class map ([`symmetry::class_map_fingerprint`]); class
    /// codes computed from a map with this fingerprint equal [`Lddb::class_code`].
    #[inline]
    pub fn class_map_id(&self) -> u64 {
        self.class_map_id
    }

    /// `(class << 3) | transform` of `pattern` (see [`Lddb::class_of`]).
    #[inline(always)]
    pub fn class_code(&self, pattern: u32) -> u32 {
        self.canon_of[pattern as usize]
    }

    /// Local-index permutation (block frame to class frame) of transform `t` for `metric`.
    #[inline(always)]
    pub fn perm(&self, metric: Metric, t: usize) -> &[u8] {
        if metric == Metric::AnyAngle {
            &self.vperm[t]
        } else {
            &self.cperm[t]
        }
    }

    /// Inverse of [`Lddb::perm`] (class frame to block frame).
    #[inline(always)]
    pub fn perm_inv(&self, metric: Metric, t: usize) -> &[u8] {
        if metric == Metric::AnyAngle {
            &self.vinv[t]
        } else {
            &self.cinv[t]
        }
    }

    /// Distance in class `c` between class-frame nodes `a` and `b`, `+inf` when unreachable.
    /// Any-angle values carry a fixed-point error of at most 1/2048.
    #[inline(always)]
    pub fn class_distance(&self, metric: Metric, rule: LosRule, c: usize, a: usize, b: usize) -> f64 {
        let n = self.nodes(metric);
        let i = (c * n + a) * n + b;
        match metric {
            Metric::AnyAngle => {
                let v = self.aa_dist[rule.index()][i];
                if v == UNREACHABLE_U16 {
                    f64::INFINITY
                } else {
                    f64::from(v) / AA_SCALE
                }
            }
            Metric::Octile => self.oct_len[self.oct[i] as usize],
            Metric::Tile => {
                let v = self.tile[i];
                if v == UNREACHABLE_U8 {
                    f64::INFINITY
                } else {
                    f64::from(v)
                }
            }
        }
    }

    /// Raw octile entry (packed straight | diagonal << 4, 0xFF unreachable) in class `c`.
    #[inline(always)]
    pub fn octile_packed(&self, c: usize, a: usize, b: usize) -> u8 {
        let n = self.side * self.side;
        self.oct[(c * n + a) * n + b]
    }

    /// Raw tile entry (moves, 0xFF unreachable) in class `c`.
    #[inline(always)]
    pub fn tile_raw(&self, c: usize, a: usize, b: usize) -> u8 {
        let n = self.side * self.side;
        self.tile[(c * n + a) * n + b]
    }

    /// First waypoint after class-frame vertex `a` on a shortest any-angle path to `b` in class
    /// `c` (`None` when unreachable or `a == b`), derived from the distances: the nearest vertex
    /// `w` that `a` reaches in a straight line (stored distance equal to the Euclidean one) and
    /// that lies on a shortest path (`|aw| + d(w, b) = d(a, b)`), and that may be an intermediate
    /// waypoint under `rule` (or is `b`).
    ///
    /// Why equality within rounding is exact: stored entries are within 1/2048 of the truth,
    /// while a polyline between block vertices that is not straight is longer than the straight
    /// line by far more (the smallest such excess in a 5x5 vertex block is about 0.0198), and so
    /// is a path that is not shortest (checked against brute force by the module's tests).
    pub fn next_hop(&self, rule: LosRule, c: usize, a: usize, b: usize) -> Option<usize> {
        self.next_hop_among(rule, c, a, b, self.usable[rule.index()][c])
    }

    /// [`Lddb::next_hop`] with the usable vertices of class `c` given.
    fn next_hop_among(&self, rule: LosRule, c: usize, a: usize, b: usize, usable: u32) -> Option<usize> {
        let n = self.nodes(Metric::AnyAngle);
        let d = self.any_angle_class(rule, c);
        let dab = d[a * n + b];
        if a == b || dab == UNREACHABLE_U16 {
            return None;
        }
        let mut best: Option<(f64, usize)> = None;
        for w in 0..n {
            let (daw, dwb) = (d[a * n + w], d[w * n + b]);
            if w == a || daw == UNREACHABLE_U16 || dwb == UNREACHABLE_U16 || (w != b && usable >> w & 1 == 0) {
                continue;
            }
            let e = self.euclid_fixed[a * n + w];
            if (f64::from(daw) - e).abs() > STRAIGHT || e + f64::from(dwb) - f64::from(dab) > ON_PATH {
                continue;
            }
            if best.is_none_or(|(be, _)| e < be) {
                best = Some((e, w));
            }
        }
        best.map(|(_, w)| w)
    }

    /// Raw any-angle distances of class `c` (`[a * nodes + b]`, fixed point 1/1024, 0xFFFF =
    /// unreachable).
    #[inline(always)]
    pub fn any_angle_class(&self, rule: LosRule, c: usize) -> &[u16] {
        let n = self.nodes(Metric::AnyAngle);
        &self.aa_dist[rule.index()][c * n * n..(c + 1) * n * n]
    }

    /// Any-angle distances of class `c` between class-frame boundary vertices: row `i`, lane
    /// `j` over boundary positions (see [`boundary_vertices`]; `4 * side` rows, lanes from
    /// `4 * side` on are padding), `+inf` when unreachable; same values as
    /// [`Lddb::class_distance`] (fixed point, error at most 1/2048).
    #[inline(always)]
    pub fn any_angle_boundary_class(&self, rule: LosRule, c: usize) -> &[BoundaryRow] {
        let nb = 4 * self.side;
        &self.aa_boundary[rule.index()][c * nb..(c + 1) * nb]
    }

    /// Raw octile (packed) or tile entries of class `c` (`[a * nodes + b]`, 0xFF = unreachable).
    #[inline(always)]
    pub fn cell_class(&self, metric: Metric, c: usize) -> &[u8] {
        let n = self.side * self.side;
        let t = if metric == Metric::Tile { &self.tile } else { &self.oct };
        &t[c * n * n..(c + 1) * n * n]
    }

    /// Lookup table from a packed octile entry to its length (`+inf` for 0xFF).
    #[inline(always)]
    pub fn octile_lengths(&self) -> &[f64; 256] {
        &self.oct_len
    }

    /// Shortest in-block distance between block-frame nodes `a` and `b` of a block with
    /// `pattern`, for `metric` (rule matters for any-angle only); `+inf` when unreachable.
    pub fn distance(&self, metric: Metric, rule: LosRule, pattern: u32, a: usize, b: usize) -> f64 {
        let (c, t) = self.class_of(pattern);
        let p = self.perm(metric, t);
        self.class_distance(metric, rule, c, p[a] as usize, p[b] as usize)
    }

    /// The in-block any-angle path from block-frame vertex `a` to `b` of a block with `pattern`
    /// under `rule`, as block-frame vertex indices from `a` to `b` (only `a` when `a == b`);
    /// `None` when unreachable. Consecutive vertices see each other; vertices in the middle of a
    /// straight leg may be left out.
    pub fn any_angle_path(&self, rule: LosRule, pattern: u32, a: usize, b: usize) -> Option<Vec<usize>> {
        let mut out = vec![a];
        self.any_angle_path_into(rule, pattern, a, b, &mut out, |_, _| false).then_some(out)
    }

    /// [`Lddb::any_angle_path`] without its first vertex `a`, appended to `out` (nothing is
    /// appended when `a == b`). Returns false, leaving `out` with whatever was appended, when
    /// `b` is unreachable from `a`. Allocates nothing: Block A* reconstructs every hop with it.
    ///
    /// `sees(u, b)` (block-frame vertex indices) is asked only when the stored distance from `u`
    /// to `b` equals their Euclidean distance, i.e. the shortest path runs straight to `b`, maybe
    /// through lattice vertices on the way; when it answers true, `b` follows `u` at once instead
    /// of every one of those vertices. A straight run of sight-checked pieces need not pass the
    /// rule as one segment, so only a caller that checks the whole segment (on the map, say) may
    /// answer true; `|_, _| false` gives every vertex.
    pub fn any_angle_path_into(
        &self,
        rule: LosRule,
        pattern: u32,
        a: usize,
        b: usize,
        out: &mut Vec<usize>,
        sees: impl Fn(usize, usize) -> bool,
    ) -> bool {
        let (c, t) = self.class_of(pattern);
        let (p, inv) = (self.perm(Metric::AnyAngle, t), self.perm_inv(Metric::AnyAngle, t));
        let (ca, cb) = (p[a] as usize, p[b] as usize);
        let n = self.nodes(Metric::AnyAngle);
        let d = self.any_angle_class(rule, c);
        let usable = self.usable[rule.index()][c];
        let mut cur = ca;
        for _ in 0..n {
            if cur == cb {
                return true;
            }
            // A straight last leg is the only shortest path (a bend is longer by far more than
            // the rounding of the entries), so when the caller sees along it, `b` follows at
            // once; the general step below walks it through every lattice vertex on the way.
            let dcb = d[cur * n + cb];
            let straight =
                dcb != UNREACHABLE_U16 && (f64::from(dcb) - self.euclid_fixed[cur * n + cb]).abs() <= STRAIGHT;
            cur = if straight && sees(inv[cur] as usize, b) {
                cb
            } else {
                match self.next_hop_among(rule, c, cur, cb, usable) {
                    Some(w) => w,
                    None => return false,
                }
            };
            out.push(inv[cur] as usize);
        }
        cur == cb
    }
}

/// Tolerances of [`Lddb::next_hop`] in fixed-point units (each stored entry is off by at most 1/2
/// unit): an entry within `STRAIGHT` of the Euclidean distance is a straight segment, and a vertex
/// within `ON_PATH` of the triangle equality lies on a shortest path.
const STRAIGHT: f64 = 0.75;
const ON_PATH: f64 = 1.25;

/// Bit set of the class-frame vertices of `pattern` that may be intermediate waypoints under
/// `rule` in the block's own view (cells outside the block blocked): a free cell around
/// them, and no pinch under the conservative rule.
fn usable_vertices(side: usize, rule: LosRule, pattern: u32) -> u32 {
    // The pattern with a ring of blocked cells around it, as bits `(y + 1) * (side + 2) + x + 1`:
    // the four cells around vertex `(x, y)` are then padded cells `(x, y)`, `(x + 1, y)`,
    // `(x, y + 1)`, `(x + 1, y + 1)`, so each vertex costs a few bit tests (this runs for every
    // class whenever the database is loaded).
    let w = side + 2;
    let mut padded = u64::MAX;
    for y in 0..side {
        for x in 0..side {
            if pattern >> (y * side + x) & 1 == 0 {
                padded &= !(1u64 << ((y + 1) * w + x + 1));
            }
        }
    }
    let mut out = 0u32;
    for y in 0..=side {
        for x in 0..=side {
            let at = |dx: usize, dy: usize| padded >> ((y + dy) * w + x + dx) & 1 == 1;
            let (tl, tr, bl, br) = (at(0, 0), at(1, 0), at(0, 1), at(1, 1));
            let any_free = !(tl && tr && bl && br);
            let pinch = (tl && br && !tr && !bl) || (tr && bl && !tl && !br);
            if any_free && (rule == LosRule::MovingAi || !pinch) {
                out |= 1 << (y * (side + 1) + x);
            }
        }
    }
    out
}

/// The boundary vertices of a block of `side` cells as local vertex indices, in row-major order
/// (position `i` of a boundary-indexed table is vertex `boundary_vertices(side)[i]`).
pub fn boundary_vertices(side: usize) -> Vec<u8> {
    let n = side + 1;
    (0..n * n).filter(|&l| l % n == 0 || l / n == 0 || l % n == side || l / n == side).map(|l| l as u8).collect()
}

/// One row of a boundary-to-boundary table: the distances from one boundary vertex to every
/// boundary vertex (lane = boundary position; `+inf` when unreachable and in unused lanes).
/// Aligned to a cache line (64 bytes, exactly its size), so reading a row is one memory access.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C, align(64))]
pub struct BoundaryRow(pub [f32; 16]);

/// The boundary-to-boundary part of a full any-angle table (`[c][a][b]` over all vertices), as
/// rows of `f32` with `+inf` for unreachable.
fn boundary_table(side: usize, dist: &[u16]) -> Vec<BoundaryRow> {
    let nv = (side + 1) * (side + 1);
    let bv = boundary_vertices(side);
    let nb = bv.len();
    let mut out = vec![BoundaryRow([f32::INFINITY; 16]); dist.len() / (nv * nv) * nb];
    // Source offset of each output entry within a class, computed once: the per-class loop is a
    // plain gather and convert (it runs on every load, so it must stay cheap). Padding lanes
    // keep their `+inf`.
    let src: Vec<usize> = bv.iter().flat_map(|&a| bv.iter().map(move |&b| a as usize * nv + b as usize)).collect();
    out.par_chunks_mut(nb * 64).zip(dist.par_chunks(nv * nv * 64)).for_each(|(o, d)| {
        for (o, d) in o.chunks_exact_mut(nb).zip(d.chunks_exact(nv * nv)) {
            for (row, src) in o.iter_mut().zip(src.chunks_exact(nb)) {
                for (lane, &k) in row.0.iter_mut().zip(src) {
                    let v = d[k];
                    *lane = if v == UNREACHABLE_U16 { f32::INFINITY } else { f32::from(v) * (1.0 / AA_SCALE as f32) };
                }
            }
        }
    });
    out
}

#[cfg(test)]
mod tests;
