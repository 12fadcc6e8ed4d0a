//! Tests of the database against independent brute force: the visibility-graph reference for
//! any-angle entries, the crate's octile A* for octile entries, a BFS for tile entries.

use super::build::block_grid;
use super::*;
use crate::search::los::CellMask;
use crate::search::visibility::visibility_shortest_path;
use std::sync::OnceLock;

fn db4() -> &'static Lddb {
    static DB: OnceLock<Lddb> = OnceLock::new();
    DB.get_or_init(|| Lddb::build(4, &|_, _| {}).expect("side 4 builds"))
}

fn rng(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

fn bfs(side: usize, pattern: u32, a: usize, b: usize) -> f64 {
    let free = |i: usize| pattern >> i & 1 == 0;
    if !free(a) || !free(b) {
        return f64::INFINITY;
    }
    let mut dist = vec![usize::MAX; side * side];
    dist[a] = 0;
    let mut queue = std::collections::VecDeque::from([a]);
    while let Some(u) = queue.pop_front() {
        let (x, y) = (u % side, u / side);
        let mut nbrs = vec![];
        if x > 0 {
            nbrs.push(u - 1);
        }
        if x + 1 < side {
            nbrs.push(u + 1);
        }
        if y > 0 {
            nbrs.push(u - side);
        }
        if y + 1 < side {
            nbrs.push(u + side);
        }
        for v in nbrs {
            if free(v) && dist[v] == usize::MAX {
                dist[v] = dist[u] + 1;
                queue.push_back(v);
            }
        }
    }
    if dist[b] == usize::MAX {
        f64::INFINITY
    } else {
        dist[b] as f64
    }
}

#[test]
fn entries_match_brute_force_on_random_patterns() {
    let db = db4();
    let mut r = rng(0x9E37_79B9_7F4A_7C15);
    let (side, n) = (4usize, 5usize);
    for _ in 0..60 {
        // Mostly sparse patterns (the interesting ones for paths) and some dense ones.
        let pattern = (r() & r() & 0xFFFF) as u32 | if r() % 4 == 0 { (r() & 0xFFFF) as u32 } else { 0 };
        let grid = block_grid(side, pattern);
        let mask = CellMask::from_grid(&grid);
        for a in 0..side * side {
            for b in 0..side * side {
                let want =
                    crate::search::octile::octile_astar(&grid, (a % side, a / side), (b % side, b / side), || false)
                        .map_or(f64::INFINITY, |p| p.length);
                let got = db.distance(Metric::Octile, LosRule::MovingAi, pattern, a, b);
                assert!(got == want || (got - want).abs() < 1e-9, "octile {pattern:#x} {a}->{b}: {got} vs {want}");
                assert_eq!(db.distance(Metric::Tile, LosRule::MovingAi, pattern, a, b), bfs(side, pattern, a, b));
            }
        }
        for rule in LosRule::ALL {
            for a in 0..n * n {
                for b in 0..n * n {
                    let (va, vb) = (((a % n) as u32, (a / n) as u32), ((b % n) as u32, (b / n) as u32));
                    let want = visibility_shortest_path(&mask, rule, va, vb).map_or(f64::INFINITY, |p| p.length);
                    let got = db.distance(Metric::AnyAngle, rule, pattern, a, b);
                    if want.is_finite() {
                        assert!(
                            (got - want).abs() <= 0.5 / 1024.0 + 1e-9,
                            "{rule:?} {pattern:#x} {a}->{b}: {got} vs {want}"
                        );
                        // The stored path is valid and as long as the entry.
                        let path = db.any_angle_path(rule, pattern, a, b).expect("reachable pair has a path");
                        let pts: Vec<(i64, i64)> = path.iter().map(|&i| ((i % n) as i64, (i / n) as i64)).collect();
                        let mut len = 0.0;
                        for w in pts.windows(2) {
                            assert!(mask.los_vertices(rule, w[0], w[1]));
                            len += ((w[0].0 - w[1].0) as f64).hypot((w[0].1 - w[1].1) as f64);
                        }
                        assert!((len - want).abs() < 1e-9, "{rule:?} {pattern:#x} {a}->{b} path {len} vs {want}");
                    } else {
                        assert!(got.is_infinite() || a == b, "{rule:?} {pattern:#x} {a}->{b}: {got} vs unreachable");
                    }
                }
            }
        }
    }
}

#[test]
fn symmetry_reduced_lookups_equal_full_tables() {
    let db = db4();
    let mut r = rng(12345);
    let (nv, nc) = (25usize, 16usize);
    for _ in 0..300 {
        let pattern = (r() & 0xFFFF) as u32;
        // Tables of the pattern itself, computed without any symmetry.
        let mut oct = vec![0u8; nc * nc];
        build::octile_table(4, pattern, &mut oct);
        let mut tile = vec![0u8; nc * nc];
        build::tile_table(4, pattern, &mut tile);
        for a in 0..nc {
            for b in 0..nc {
                let o = db.octile_lengths()[oct[a * nc + b] as usize];
                assert_eq!(db.distance(Metric::Octile, LosRule::MovingAi, pattern, a, b), o);
                let t = if tile[a * nc + b] == 0xFF { f64::INFINITY } else { f64::from(tile[a * nc + b]) };
                assert_eq!(db.distance(Metric::Tile, LosRule::MovingAi, pattern, a, b), t);
            }
        }
        for rule in LosRule::ALL {
            let mut d = vec![0u16; nv * nv];
            let mut nx = vec![0u8; nv * nv];
            build::any_angle_table(4, pattern, rule, &mut d, &mut nx);
            for a in 0..nv {
                for b in 0..nv {
                    let full = if d[a * nv + b] == 0xFFFF { f64::INFINITY } else { f64::from(d[a * nv + b]) / 1024.0 };
                    assert_eq!(db.distance(Metric::AnyAngle, rule, pattern, a, b), full, "{pattern:#x} {a} {b}");
                }
            }
        }
    }
}

#[test]
fn smaller_blocks_build_and_match() {
    for side in [2usize, 3] {
        let db = Lddb::build(side, &|_, _| {}).unwrap();
        assert_eq!(db.side(), side);
        for pattern in 0..(1u32 << (side * side)) {
            for a in 0..side * side {
                for b in 0..side * side {
                    assert_eq!(db.distance(Metric::Tile, LosRule::MovingAi, pattern, a, b), bfs(side, pattern, a, b));
                }
            }
        }
    }
    assert!(matches!(Lddb::build(5, &|_, _| {}), Err(LddbError::BadSide(5))));
}

#[test]
fn cache_round_trip_and_corruption_is_rebuilt() {
    let dir = std::env::temp_dir().join(format!("blockstar-lddb-test-{}", std::process::id()));
    let path = dir.join("lddb.bin");
    let _ = std::fs::remove_dir_all(&dir);
    let db = db4();
    // Missing: built and saved.
    let (built, report) = Lddb::load_or_build(Some(&path), 4, &|_, _| {}).unwrap();
    assert!(matches!(&report, LoadReport::Built { reason, saved: Ok(()), .. } if reason == "missing"), "{report:?}");
    assert!(built == *db);
    // Present: loaded, identical.
    let (loaded, report) = Lddb::load_or_build(Some(&path), 4, &|_, _| {}).unwrap();
    assert!(matches!(report, LoadReport::Loaded { .. }));
    assert!(loaded == *db);
    // One flipped byte in the payload: detected, rebuilt, rewritten.
    let mut bytes = std::fs::read(&path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x10;
    std::fs::write(&path, &bytes).unwrap();
    assert!(matches!(Lddb::load(&path, 4), Err(LddbError::Corrupt { .. })));
    let (rebuilt, report) = Lddb::load_or_build(Some(&path), 4, &|_, _| {}).unwrap();
    assert!(matches!(&report, LoadReport::Built { reason, .. } if reason.contains("checksum")), "{report:?}");
    assert!(rebuilt == *db);
    assert!(Lddb::load(&path, 4).is_ok());
    // Truncated, wrong side, garbage.
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 7]).unwrap();
    assert!(matches!(Lddb::load(&path, 4), Err(LddbError::Corrupt { .. })));
    std::fs::write(&path, &bytes).unwrap();
    assert!(matches!(Lddb::load(&path, 3), Err(LddbError::Corrupt { .. })));
    std::fs::write(&path, b"hello").unwrap();
    assert!(matches!(Lddb::load(&path, 4), Err(LddbError::Corrupt { .. })));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn memory_stays_within_budget() {
    // The budget is 64 MiB for the whole database.
    assert!(db4().memory_bytes() <= 64 << 20, "{}", db4().memory_bytes());
}

#[test]
fn boundary_tables_equal_full_table_entries() {
    for side in Lddb::SIDES {
        let built;
        let db = if side == 4 {
            db4()
        } else {
            built = Lddb::build(side, &|_, _| {}).unwrap();
            &built
        };
        let bv = boundary_vertices(side);
        assert_eq!(bv.len(), 4 * side);
        for rule in LosRule::ALL {
            for c in (0..db.classes()).step_by(7) {
                let t = db.any_angle_boundary_class(rule, c);
                assert_eq!(t.len(), bv.len());
                assert!(t.iter().all(|r| r.0[bv.len()..].iter().all(|v| *v == f32::INFINITY)), "padding lanes");
                for (i, &a) in bv.iter().enumerate() {
                    for (j, &b) in bv.iter().enumerate() {
                        let want = db.class_distance(Metric::AnyAngle, rule, c, a as usize, b as usize);
                        assert_eq!(f64::from(t[i].0[j]), want, "side {side} class {c} {a}->{b}");
                    }
                }
            }
        }
    }
}

#[test]
fn every_damaged_cache_is_detected_rebuilt_and_reported() {
    // Side 3 keeps the rebuilds cheap; the file layout and checks are the same for every side.
    let side = 3;
    let dir = std::env::temp_dir().join(format!("blockstar-lddb-damage-{}", std::process::id()));
    let path = dir.join(cache::cache_file_name(side));
    let _ = std::fs::remove_dir_all(&dir);
    let (fresh, report) = Lddb::load_or_build(Some(&path), side, &|_, _| {}).unwrap();
    assert_eq!(report.outcome(), LoadOutcome::BuiltFresh, "{report:?}");
    assert!(report.summary().contains("built"), "{}", report.summary());
    let good = std::fs::read(&path).unwrap();
    let (_, report) = Lddb::load_or_build(Some(&path), side, &|_, _| {}).unwrap();
    assert_eq!(report.outcome(), LoadOutcome::Loaded);

    let flip = |at: usize| {
        let mut b = good.clone();
        b[at] ^= 0x5A;
        b
    };
    let mut wrong_version = good.clone();
    wrong_version[8..12].copy_from_slice(&(cache::FORMAT_VERSION + 1).to_le_bytes());
    let mut appended = good.clone();
    appended.extend_from_slice(&[0; 3]);
    let damaged: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("header only, cut", good[..20].to_vec()),
        ("header only", good[..40].to_vec()),
        ("cut in the payload", good[..good.len() / 2].to_vec()),
        ("one byte short", good[..good.len() - 1].to_vec()),
        ("bytes appended", appended),
        ("magic flipped", flip(0)),
        ("version flipped", flip(9)),
        ("side flipped", flip(12)),
        ("class count flipped", flip(16)),
        ("length flipped", flip(24)),
        ("checksum flipped", flip(33)),
        ("first payload byte flipped", flip(40)),
        ("middle byte flipped", flip(good.len() / 2)),
        ("last byte flipped", flip(good.len() - 1)),
        ("newer format version", wrong_version),
    ];
    for (what, bytes) in damaged {
        std::fs::write(&path, &bytes).unwrap();
        assert!(matches!(Lddb::load(&path, side), Err(LddbError::Corrupt { .. })), "{what}: not detected");
        let (db, report) = Lddb::load_or_build(Some(&path), side, &|_, _| {}).unwrap();
        assert_eq!(report.outcome(), LoadOutcome::Rebuilt, "{what}: {report:?}");
        assert!(report.summary().contains("rebuilt") && report.summary().contains("cache written"), "{what}");
        assert!(db == fresh, "{what}: rebuilt tables differ");
        // The file is valid again: byte for byte the good one, and it loads.
        assert!(std::fs::read(&path).unwrap() == good, "{what}: cache not rewritten");
        let (_, report) = Lddb::load_or_build(Some(&path), side, &|_, _| {}).unwrap();
        assert_eq!(report.outcome(), LoadOutcome::Loaded, "{what}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn straight_lines_are_shorter_than_any_bend_by_far_more_than_the_rounding() {
    // Deriving next hops from rounded distances relies on this gap (see `Lddb::next_hop`).
    let n = 5i64;
    let pts: Vec<(i64, i64)> = (0..n * n).map(|i| (i % n, i / n)).collect();
    let d = |p: (i64, i64), q: (i64, i64)| ((p.0 - q.0) as f64).hypot((p.1 - q.1) as f64);
    let mut least = f64::INFINITY;
    for &a in &pts {
        for &u in &pts {
            for &w in &pts {
                let collinear = (u.0 - a.0) * (w.1 - a.1) == (u.1 - a.1) * (w.0 - a.0);
                if !collinear {
                    least = least.min(d(a, u) + d(u, w) - d(a, w));
                }
            }
        }
    }
    assert!(least > 0.019, "smallest bend excess {least}");
}

#[test]
fn derived_paths_of_every_class_are_valid_and_as_long_as_the_entries() {
    let db = db4();
    let (side, n) = (4usize, 5usize);
    for (c, &pattern) in db.canon.iter().enumerate() {
        let mask = CellMask::from_grid(&block_grid(side, pattern));
        for rule in LosRule::ALL {
            // Every boundary source, a spread of targets (all pairs of every class is slow).
            for a in boundary_vertices(side) {
                for b in (usize::from(a) % 3..n * n).step_by(3) {
                    let want = db.class_distance(Metric::AnyAngle, rule, c, a as usize, b);
                    let Some(path) = db.any_angle_path(rule, pattern, a as usize, b) else {
                        assert!(want.is_infinite(), "{rule:?} class {c} {a}->{b}: no path for {want}");
                        continue;
                    };
                    let pts: Vec<(i64, i64)> = path.iter().map(|&i| ((i % n) as i64, (i / n) as i64)).collect();
                    let mut len = 0.0;
                    for w in pts.windows(2) {
                        assert!(mask.los_vertices(rule, w[0], w[1]), "{rule:?} class {c} {a}->{b}: {pts:?}");
                        len += ((w[0].0 - w[1].0) as f64).hypot((w[0].1 - w[1].1) as f64);
                    }
                    assert!((len - want).abs() <= 0.5 / 1024.0 + 1e-9, "{rule:?} class {c} {a}->{b}: {len} vs {want}");
                }
            }
        }
    }
}
