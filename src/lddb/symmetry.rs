//! The 8 symmetries of a square (rotations and reflections) acting on block patterns, cells and
//! vertices, and the canonical form of a pattern (the smallest code among its 8 images).
//!
//! Pattern bit `y * side + x` is cell `(x, y)` of the block (1 = blocked). Transform `t` maps
//! local point `(x, y)` of a square with coordinates `0..=n` to [`map_point`]`(t, n, x, y)`;
//! cells use `n = side - 1`, vertices `n = side`, which is the same geometric map of the block.

/// Number of symmetries of the square.
pub const TRANSFORMS: usize = 8;

/// Image of `(x, y)` under transform `t` (0..8) in a square with coordinates `0..=n`.
#[inline]
pub fn map_point(t: usize, n: usize, x: usize, y: usize) -> (usize, usize) {
    match t {
        0 => (x, y),
        1 => (n - y, x),
        2 => (n - x, n - y),
        3 => (y, n - x),
        4 => (n - x, y),
        5 => (x, n - y),
        6 => (y, x),
        _ => (n - y, n - x),
    }
}

/// Index permutation of transform `t` on a `size x size` lattice (row-major local indices):
/// `perm[i]` is the index of the image of point `i`.
pub fn permutation(t: usize, size: usize) -> Vec<u8> {
    (0..size * size)
        .map(|i| {
            let (x, y) = map_point(t, size - 1, i % size, i / size);
            (y * size + x) as u8
        })
        .collect()
}

/// Inverse of a permutation.
pub fn inverse(perm: &[u8]) -> Vec<u8> {
    let mut inv = vec![0u8; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        inv[p as usize] = i as u8;
    }
    inv
}

/// Image of a pattern (cell bits of a `side x side` block) under a cell permutation.
#[inline]
pub fn apply(pattern: u32, cell_perm: &[u8]) -> u32 {
    let mut out = 0u32;
    let mut bits = pattern;
    while bits != 0 {
        let i = bits.trailing_zeros() as usize;
        out |= 1 << cell_perm[i];
        bits &= bits - 1;
    }
    out
}

/// For every pattern of a `side x side` block: `(canonical index << 3) | t` where transform `t`
/// maps the pattern to its canonical form; plus the list of canonical patterns, ascending.
pub fn canonical_classes(side: usize) -> (Vec<u32>, Vec<u32>) {
    use rayon::prelude::*;
    let count = 1usize << (side * side);
    // Images by byte: the image of a pattern is the OR of the images of its low and high byte
    // (patterns have at most 16 bits), so each of the 8 images is two lookups. This runs once
    // per process for block grids (see `class_codes`), so it must stay cheap.
    let by_byte: Vec<[[u32; 256]; 2]> = (0..TRANSFORMS)
        .map(|t| {
            let perm = permutation(t, side);
            let mut tables = [[0u32; 256]; 2];
            for (k, table) in tables.iter_mut().enumerate() {
                for (v, out) in table.iter_mut().enumerate() {
                    let bits = ((v as u32) << (8 * k)) & (count as u32 - 1);
                    *out = apply(bits, &perm);
                }
            }
            tables
        })
        .collect();
    // Per pattern: the least image and the first transform giving it.
    let least: Vec<(u32, u32)> = (0..count as u32)
        .into_par_iter()
        .map(|p| {
            let (mut best, mut best_t) = (u32::MAX, 0);
            for (t, tables) in by_byte.iter().enumerate() {
                let q = tables[0][(p & 0xFF) as usize] | tables[1][(p >> 8 & 0xFF) as usize];
                if q < best {
                    best = q;
                    best_t = t as u32;
                }
            }
            (best, best_t)
        })
        .collect();
    let canon: Vec<u32> = (0..count as u32).filter(|&p| least[p as usize].0 == p).collect();
    // Class index of each canonical pattern (canon is ascending).
    let mut rank = vec![0u32; count];
    for (i, &c) in canon.iter().enumerate() {
        rank[c as usize] = i as u32;
    }
    let canon_of = least.par_iter().map(|&(best, t)| (rank[best as usize] << 3) | t).collect();
    (canon_of, canon)
}

/// [`canonical_classes`]`(side).0` (pattern -> `(class << 3) | transform`), computed once per
/// process and side (2, 3 or 4; `None` for other sides). Block grids keep each block's class
/// code from it, so a search reads it beside the pattern instead of looking it up.
pub fn class_codes(side: usize) -> Option<&'static [u32]> {
    static CODES: [std::sync::OnceLock<Vec<u32>>; 3] = [const { std::sync::OnceLock::new() }; 3];
    let slot = CODES.get(side.checked_sub(2)?)?;
    Some(slot.get_or_init(|| canonical_classes(side).0))
}

/// A 64-bit fingerprint (FNV-1a) of a pattern-to-class map: two maps with equal fingerprints are
/// taken to be the same map (a block grid's class codes are used with a database only then).
pub fn class_map_fingerprint(codes: &[u32]) -> u64 {
    codes
        .iter()
        .fold(0xcbf2_9ce4_8422_2325u64 ^ codes.len() as u64, |h, &v| (h ^ u64::from(v)).wrapping_mul(0x100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_classes_match_the_definition() {
        for side in 2..=4 {
            let (canon_of, canon) = canonical_classes(side);
            let perms: Vec<Vec<u8>> = (0..TRANSFORMS).map(|t| permutation(t, side)).collect();
            for p in (0..1u32 << (side * side)).step_by(if side == 4 { 7 } else { 1 }) {
                let images: Vec<u32> = perms.iter().map(|perm| apply(p, perm)).collect();
                let least = *images.iter().min().unwrap();
                let t = images.iter().position(|&q| q == least).unwrap();
                let c = canon.binary_search(&least).unwrap();
                assert_eq!(canon_of[p as usize], (c as u32) << 3 | t as u32, "side {side} pattern {p}");
            }
            assert!(canon.windows(2).all(|w| w[0] < w[1]));
        }
    }

    #[test]
    fn class_codes_are_the_canonical_map() {
        for side in 2..=4 {
            let codes = class_codes(side).unwrap();
            assert_eq!(codes, &canonical_classes(side).0[..]);
            assert_eq!(class_map_fingerprint(codes), class_map_fingerprint(&canonical_classes(side).0));
        }
        assert!(class_codes(5).is_none() && class_codes(1).is_none());
        let mut other = class_codes(3).unwrap().to_vec();
        other[7] ^= 1;
        assert_ne!(class_map_fingerprint(&other), class_map_fingerprint(class_codes(3).unwrap()));
    }

    #[test]
    fn class_counts_match_burnside() {
        // Burnside: (2^16 + 2*2^4 + 2^8 + 2*2^8 + 2*2^10) / 8 = 8548 for 4x4 cells.
        assert_eq!(canonical_classes(4).1.len(), 8548);
        assert_eq!(canonical_classes(3).1.len(), 102);
        assert_eq!(canonical_classes(2).1.len(), 6);
    }

    #[test]
    fn cell_and_vertex_maps_are_the_same_geometry() {
        for t in 0..TRANSFORMS {
            for y in 0..4 {
                for x in 0..4 {
                    // The cell's four corners map to the corners of the image cell.
                    let (cx, cy) = map_point(t, 3, x, y);
                    let corners: Vec<(usize, usize)> = [(x, y), (x + 1, y), (x, y + 1), (x + 1, y + 1)]
                        .iter()
                        .map(|&(a, b)| map_point(t, 4, a, b))
                        .collect();
                    let (minx, miny) =
                        (corners.iter().map(|c| c.0).min().unwrap(), corners.iter().map(|c| c.1).min().unwrap());
                    assert_eq!((minx, miny), (cx, cy));
                }
            }
            let p = permutation(t, 5);
            assert_eq!(inverse(&inverse(&p)), p);
        }
    }
}
