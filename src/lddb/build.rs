//! Computing the tables of one block pattern: all-pairs shortest in-block distances for the tile,
//! octile and any-angle metrics. Cells outside the block count as blocked, so every stored path is
//! valid on any map whose block has this pattern.

use crate::grid::Grid;
use crate::search::los::{CellMask, LosRule};

/// Unreachable marker of the 8-bit tables.
pub const UNREACHABLE_U8: u8 = 0xFF;
/// Unreachable marker of the 16-bit any-angle distances.
pub const UNREACHABLE_U16: u16 = 0xFFFF;
/// Fixed-point scale of the any-angle distances: stored value = round(distance * 1024). In-block
/// distances never exceed 8 * side * sqrt 2 < 64 (a path of unit and diagonal moves between any
/// two connected vertices exists), so 16 bits suffice, with an error of at most 1/2048 per entry.
pub const AA_SCALE: f64 = 1024.0;
/// "No next hop" marker of the next-hop tables.
pub const NO_HOP: u8 = 0xFF;

/// The block as a padded cell mask (outside blocked).
pub fn block_mask(side: usize, pattern: u32) -> CellMask {
    let mut m = CellMask::all_blocked(side, side);
    for y in 0..side {
        for x in 0..side {
            m.set(x, y, pattern >> (y * side + x) & 1 == 1);
        }
    }
    m
}

/// The block as a [`Grid`] (for references that work on grids).
pub fn block_grid(side: usize, pattern: u32) -> Grid {
    let blocked = (0..side * side).map(|i| pattern >> i & 1 == 1).collect();
    // side is 2..=4, so the size is always valid.
    Grid::from_blocked(side, side, blocked).unwrap_or_else(|_| unreachable!("block sizes are valid"))
}

/// Tile (4-connected) distances between all pairs of cells, row-major `[from * nc + to]`.
pub fn tile_table(side: usize, pattern: u32, out: &mut [u8]) {
    cell_table(side, pattern, false, out)
}

/// Octile distances between all pairs of cells, packed `straight | diagonal << 4` (the length
/// is `straight + diagonal * sqrt 2`), row-major `[from * nc + to]`.
pub fn octile_table(side: usize, pattern: u32, out: &mut [u8]) {
    cell_table(side, pattern, true, out)
}

fn cell_table(side: usize, pattern: u32, diagonal: bool, out: &mut [u8]) {
    let nc = side * side;
    let free = |x: i64, y: i64| {
        x >= 0 && y >= 0 && x < side as i64 && y < side as i64 && pattern >> (y as usize * side + x as usize) & 1 == 0
    };
    out.fill(UNREACHABLE_U8);
    let moves: &[(i64, i64)] = if diagonal {
        &[(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)]
    } else {
        &[(1, 0), (-1, 0), (0, 1), (0, -1)]
    };
    for s in 0..nc {
        let (sx, sy) = ((s % side) as i64, (s / side) as i64);
        if !free(sx, sy) {
            continue;
        }
        // Dijkstra on at most 16 nodes: a linear scan for the minimum is fastest.
        let mut best = [(f64::INFINITY, 0u8, 0u8); 16];
        let mut done = [false; 16];
        best[s] = (0.0, 0, 0);
        loop {
            let mut u = usize::MAX;
            for i in 0..nc {
                if !done[i] && best[i].0.is_finite() && (u == usize::MAX || best[i].0 < best[u].0) {
                    u = i;
                }
            }
            if u == usize::MAX {
                break;
            }
            done[u] = true;
            let (ux, uy) = ((u % side) as i64, (u / side) as i64);
            for &(dx, dy) in moves {
                let (nx, ny) = (ux + dx, uy + dy);
                if !free(nx, ny) {
                    continue;
                }
                let diag = dx != 0 && dy != 0;
                if diag && (!free(nx, uy) || !free(ux, ny)) {
                    continue;
                }
                let v = ny as usize * side + nx as usize;
                let (d, a, b) = best[u];
                let cand = if diag { (d + std::f64::consts::SQRT_2, a, b + 1) } else { (d + 1.0, a + 1, b) };
                if cand.0 < best[v].0 - 1e-9 {
                    best[v] = cand;
                }
            }
        }
        for t in 0..nc {
            if done[t] {
                out[s * nc + t] = if diagonal { best[t].1 | best[t].2 << 4 } else { best[t].1 };
            }
        }
    }
}

/// Any-angle distances (fixed point, see [`AA_SCALE`]) and next hops between all pairs of the
/// `(side+1)^2` vertices under `rule`: `dist[a * nv + b]`, and `next[a * nv + b]` is the first
/// waypoint after `a` on a shortest path to `b` (`b` itself when `a` sees `b`; [`NO_HOP`] when
/// unreachable or `a == b`). Intermediate waypoints must be usable vertices under `rule` in the
/// block's own view.
pub fn any_angle_table(side: usize, pattern: u32, rule: LosRule, dist_out: &mut [u16], next_out: &mut [u8]) {
    let n = side + 1;
    let nv = n * n;
    let mask = block_mask(side, pattern);
    let pt = |i: usize| ((i % n) as i64, (i / n) as i64);
    let mut d = vec![f64::INFINITY; nv * nv];
    let mut next = vec![NO_HOP; nv * nv];
    for a in 0..nv {
        d[a * nv + a] = 0.0;
        for b in a + 1..nv {
            let (pa, pb) = (pt(a), pt(b));
            if mask.los_vertices(rule, pa, pb) {
                let l = ((pa.0 - pb.0) as f64).hypot((pa.1 - pb.1) as f64);
                d[a * nv + b] = l;
                d[b * nv + a] = l;
                next[a * nv + b] = b as u8;
                next[b * nv + a] = a as u8;
            }
        }
    }
    // Floyd-Warshall with next hops; only usable vertices may be intermediate.
    for k in 0..nv {
        let (kx, ky) = pt(k);
        if !mask.vertex_passable(rule, kx, ky) {
            continue;
        }
        for i in 0..nv {
            let dik = d[i * nv + k];
            if !dik.is_finite() || i == k {
                continue;
            }
            for j in 0..nv {
                let c = dik + d[k * nv + j];
                if c < d[i * nv + j] - 1e-12 {
                    d[i * nv + j] = c;
                    next[i * nv + j] = next[i * nv + k];
                }
            }
        }
    }
    for i in 0..nv * nv {
        dist_out[i] = if d[i].is_finite() { (d[i] * AA_SCALE).round().min(65534.0) as u16 } else { UNREACHABLE_U16 };
        next_out[i] = next[i];
    }
}
