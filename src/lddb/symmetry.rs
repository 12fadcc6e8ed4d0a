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
    let perms: Vec<Vec<u8>> = (0..TRANSFORMS).map(|t| permutation(t, side)).collect();
    let count = 1usize << (side * side);
    let mut canon_of = vec![u32::MAX; count];
    let mut canon = Vec::new();
    for p in 0..count as u32 {
        let (mut best, mut best_t) = (u32::MAX, 0);
        for (t, perm) in perms.iter().enumerate() {
            let q = apply(p, perm);
            if q < best {
                best = q;
                best_t = t;
            }
        }
        if best == p {
            canon.push(p);
        }
        canon_of[p as usize] = best_t as u32;
    }
    // Second pass: canonical index of each pattern's canonical form (canon is ascending).
    for p in 0..count as u32 {
        let t = canon_of[p as usize] as usize;
        let c = apply(p, &perms[t]);
        let idx = canon.binary_search(&c).unwrap_or(0) as u32;
        canon_of[p as usize] = (idx << 3) | t as u32;
    }
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
