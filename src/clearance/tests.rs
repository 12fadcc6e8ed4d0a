//! Tests of the whole clearance map against full recomputation and brute-force references.

use super::annotated_astar::annotated_astar;
use super::*;
use crate::geometry::Pose2;
use crate::map::{MapInfo, OccupancyMap};
use proptest::prelude::*;
use std::collections::VecDeque;

fn info(w: usize, h: usize) -> MapInfo {
    MapInfo { width: w, height: h, resolution: 0.05, origin: Pose2::default(), frame_id: "map".into() }
}

/// Occupancy values from random bytes: about `density`% occupied, some unknown, some cost.
fn values(bytes: &[u8], density: u8) -> Vec<i8> {
    bytes
        .iter()
        .map(|&b| match b % 100 {
            v if v < density => 100,
            v if v < density + 5 => -1,
            v if v < density + 10 => 30,
            _ => 0,
        })
        .collect()
}

fn vehicles() -> Vec<Vehicle> {
    let mut v = Vec::new();
    for cap in [Capability::FREE, Capability::FREE_OR_UNKNOWN] {
        for f in [Footprint::circle(0.0), Footprint::circle(1.5), Footprint::square(1), Footprint::square(3)] {
            v.push(Vehicle { capability: cap, footprint: f.unwrap() });
        }
    }
    v
}

fn config() -> ClearanceConfig {
    ClearanceConfig {
        classifier: Classifier { occupied_threshold: 65, cost_bands: vec![20] },
        distance_cap: 5,
        clearance_cap: 4,
    }
}

/// Asserts that `a` (updated) and `b` (fresh) hold equal annotations, masks and partitions.
fn assert_same(a: &ClearanceMap, b: &ClearanceMap) -> Result<(), TestCaseError> {
    prop_assert_eq!(a.data(), b.data());
    for cap in [Capability::FREE, Capability::FREE_OR_UNKNOWN] {
        prop_assert_eq!(a.layer(cap), b.layer(cap));
    }
    let (w, h) = (a.info().width, a.info().height);
    for v in vehicles() {
        prop_assert_eq!(a.vehicle_mask(&v).unwrap(), b.vehicle_mask(&v).unwrap());
        let mut ab = std::collections::HashMap::new();
        let mut ba = std::collections::HashMap::new();
        for y in 0..h {
            for x in 0..w {
                let (p, q) = (a.region_of(&v, x, y).unwrap(), b.region_of(&v, x, y).unwrap());
                prop_assert_eq!(p.is_some(), q.is_some());
                if let (Some(p), Some(q)) = (p, q) {
                    prop_assert_eq!(*ab.entry(p).or_insert(q), q, "regions differ at ({}, {}) for {:?}", x, y, v);
                    prop_assert_eq!(*ba.entry(q).or_insert(p), p, "regions differ at ({}, {}) for {:?}", x, y, v);
                }
            }
        }
    }
    Ok(())
}

fn fresh(data: Vec<i8>, w: usize, h: usize) -> ClearanceMap {
    let mut m = ClearanceMap::new(&OccupancyMap { info: info(w, h), data }, config(), &[]).unwrap();
    for v in vehicles() {
        m.track_vehicle(v).unwrap();
    }
    m
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn patches_equal_full_recomputation(w in 1usize..28, h in 1usize..28, bytes in proptest::collection::vec(any::<u8>(), 784), density in 0u8..50,
                                        patches in proptest::collection::vec((0usize..28, 0usize..28, 1usize..7, 1usize..7, proptest::collection::vec(any::<u8>(), 36), 0u8..80), 1..40)) {
        let mut m = fresh(values(&bytes[..w * h], density), w, h);
        for (px, py, pw, ph, pbytes, d) in patches {
            let (x, y) = (px % w, py % h);
            let (pw, ph) = (pw.min(w - x), ph.min(h - y));
            let patch = values(&pbytes[..pw * ph], d);
            let before: Vec<crate::search::los::CellMask> = vehicles().iter().map(|v| m.vehicle_mask(v).unwrap().clone()).collect();
            let changed = m.apply_patch(PatchRect { x: x as i64, y: y as i64, width: pw as i64, height: ph as i64 }, &patch).unwrap();
            let reference = fresh(m.data().to_vec(), w, h);
            assert_same(&m, &reference)?;
            // Every cell whose mask flipped lies in the rectangle reported for its vehicle.
            for (v, old) in vehicles().iter().zip(&before) {
                let new = m.vehicle_mask(v).unwrap();
                let rect = changed.masks.iter().find(|c| c.vehicle == *v).map(|c| c.rect);
                for yy in 0..h {
                    for xx in 0..w {
                        if old.is_blocked(xx as i64, yy as i64) != new.is_blocked(xx as i64, yy as i64) {
                            let r = rect.expect("a flipped mask is reported");
                            prop_assert!((r.x..r.x + r.width).contains(&xx) && (r.y..r.y + r.height).contains(&yy));
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn replacement_maps_equal_full_recomputation(w in 1usize..150, h in 1usize..150, density in 0u8..40, seeds in proptest::collection::vec(any::<u64>(), 1..5)) {
        let mut data = vec![0i8; w * h];
        let mut m = fresh(data.clone(), w, h);
        for seed in seeds {
            // Change a few scattered cells, so some tiles change and others do not.
            let mut s = seed | 1;
            for _ in 0..(seed % 20) {
                s ^= s << 13; s ^= s >> 7; s ^= s << 17;
                let i = (s % (w * h) as u64) as usize;
                data[i] = if (s >> 32) % 100 < u64::from(density) { 100 } else { 0 };
            }
            m.replace_map(&OccupancyMap { info: info(w, h), data: data.clone() }).unwrap();
            assert_same(&m, &fresh(data.clone(), w, h))?;
        }
    }

    #[test]
    fn annotated_astar_is_complete(w in 1usize..14, h in 1usize..14, bytes in proptest::collection::vec(any::<u8>(), 196), density in 0u8..40,
                                   ends in proptest::collection::vec((0usize..14, 0usize..14, 0usize..14, 0usize..14), 6)) {
        let data: Vec<i8> = bytes[..w * h].iter().map(|&b| if b % 100 < density { 100 } else { 0 }).collect();
        let footprints = [Footprint::circle(0.0), Footprint::circle(1.0), Footprint::circle(1.5), Footprint::square(1), Footprint::square(2), Footprint::square(3)];
        let mut m = ClearanceMap::new(&OccupancyMap { info: info(w, h), data: data.clone() }, config(), &[]).unwrap();
        for f in &footprints {
            m.track_vehicle(Vehicle { capability: Capability::FREE, footprint: f.clone().unwrap() }).unwrap();
        }
        let layer = m.layer(Capability::FREE).unwrap();
        let free = |x: i64, y: i64| x >= 0 && y >= 0 && (x as usize) < w && (y as usize) < h && data[y as usize * w + x as usize] == 0;
        for f in footprints {
            let f = f.unwrap();
            // Brute force: a placement is valid when every cell the footprint covers is free.
            let valid = |x: usize, y: usize| match f {
                Footprint::Square { side } => (0..side as i64).all(|dy| (0..side as i64).all(|dx| free(x as i64 + dx, y as i64 + dy))),
                Footprint::Circle { radius } => {
                    let r = radius.ceil() as i64 + 1;
                    (-r..=r).all(|dy| (-r..=r).all(|dx| (dx * dx + dy * dy) as f64 > radius * radius || free(x as i64 + dx, y as i64 + dy)))
                }
            };
            for &(ax, ay, bx, by) in &ends {
                let (a, b) = ((ax % w, ay % h), (bx % w, by % h));
                let brute = bfs(w, h, &valid, a, b);
                let found = annotated_astar(layer, f, a, b, || false);
                prop_assert_eq!(found.is_some(), brute, "{:?} from {:?} to {:?}", f, a, b);
                if let Some(p) = found {
                    prop_assert!(p.cells.iter().all(|&(x, y)| valid(x, y)));
                }
                let v = Vehicle { capability: Capability::FREE, footprint: f };
                prop_assert_eq!(m.same_region(&v, a, b).unwrap(), brute, "regions vs search for {:?}", f);
            }
        }
    }

    #[test]
    fn subsumed_cells_hold_the_vehicle_and_cover_the_request(w in 1usize..16, h in 1usize..16, bytes in proptest::collection::vec(any::<u8>(), 256), density in 0u8..30, x in 0usize..16, y in 0usize..16) {
        let m = fresh(values(&bytes[..w * h], density), w, h);
        let (x, y) = (x % w, y % h);
        for v in vehicles() {
            let mask = m.vehicle_mask(&v).unwrap();
            let got = m.subsuming_cell(&v, x, y).unwrap();
            // Brute force over every cell of the map.
            let mut best: Option<i64> = None;
            for cy in 0..h {
                for cx in 0..w {
                    let (dx, dy) = (x as i64 - cx as i64, y as i64 - cy as i64);
                    let covers = match v.footprint {
                        Footprint::Square { side } => (0..side as i64).contains(&dx) && (0..side as i64).contains(&dy),
                        Footprint::Circle { radius } => (dx * dx + dy * dy) as f64 <= radius * radius,
                    };
                    if covers && mask.is_free(cx as i64, cy as i64) {
                        best = Some(best.map_or(dx * dx + dy * dy, |b| b.min(dx * dx + dy * dy)));
                    }
                }
            }
            match got {
                None => prop_assert!(best.is_none()),
                Some(s) => {
                    prop_assert!(mask.is_free(s.cell.0 as i64, s.cell.1 as i64));
                    prop_assert_eq!((s.cell.0 as i64 + s.offset.0, s.cell.1 as i64 + s.offset.1), (x as i64, y as i64));
                    prop_assert_eq!(Some(s.offset.0 * s.offset.0 + s.offset.1 * s.offset.1), best);
                    if mask.is_free(x as i64, y as i64) {
                        prop_assert_eq!(s.offset, (0, 0));
                    }
                }
            }
        }
    }
}

fn bfs(w: usize, h: usize, valid: &dyn Fn(usize, usize) -> bool, a: (usize, usize), b: (usize, usize)) -> bool {
    if !valid(a.0, a.1) || !valid(b.0, b.1) {
        return false;
    }
    let ok = |x: i64, y: i64| x >= 0 && y >= 0 && (x as usize) < w && (y as usize) < h && valid(x as usize, y as usize);
    let mut seen = vec![false; w * h];
    seen[a.1 * w + a.0] = true;
    let mut q = VecDeque::from([a]);
    while let Some((x, y)) = q.pop_front() {
        if (x, y) == b {
            return true;
        }
        for (dx, dy) in [(1i64, 0i64), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)] {
            let (nx, ny) = (x as i64 + dx, y as i64 + dy);
            if !ok(nx, ny) || !ok(nx, y as i64) || !ok(x as i64, ny) {
                continue;
            }
            let j = ny as usize * w + nx as usize;
            if !seen[j] {
                seen[j] = true;
                q.push_back((nx as usize, ny as usize));
            }
        }
    }
    false
}

#[test]
fn bad_input_is_rejected_and_changes_nothing() {
    let (w, h) = (12, 9);
    let mut m = fresh(values(&(0..108u8).map(|i| i.wrapping_mul(37)).collect::<Vec<_>>(), 20), w, h);
    let before = m.clone();
    let bad = [
        (PatchRect { x: 10, y: 0, width: 3, height: 1 }, 3),
        (PatchRect { x: -1, y: 0, width: 2, height: 2 }, 4),
        (PatchRect { x: 0, y: 8, width: 1, height: 2 }, 2),
        (PatchRect { x: 0, y: 0, width: -2, height: -2 }, 4),
        (PatchRect { x: 0, y: 0, width: 0, height: 3 }, 0),
        (PatchRect { x: 0, y: 0, width: 2, height: 2 }, 3),
        (PatchRect { x: 0, y: 0, width: 2, height: 2 }, 5),
        (PatchRect { x: i64::MAX, y: 0, width: i64::MAX, height: 1 }, 1),
    ];
    for (rect, len) in bad {
        let err = m.apply_patch(rect, &vec![100; len]).unwrap_err();
        assert!(matches!(err, ClearanceError::BadPatch(_)), "{rect:?}: {err}");
        assert!(!err.to_string().is_empty());
    }
    let wrong_len = OccupancyMap { info: info(w, h), data: vec![0; w * h - 1] };
    assert!(matches!(m.replace_map(&wrong_len), Err(ClearanceError::BadMap(_))));
    assert!(matches!(Footprint::circle(-1.0), Err(ClearanceError::BadFootprint(_))));
    assert!(matches!(Footprint::circle(f64::NAN), Err(ClearanceError::BadFootprint(_))));
    assert!(matches!(Footprint::square(-3), Err(ClearanceError::BadFootprint(_))));
    assert!(matches!(Footprint::square(0), Err(ClearanceError::BadFootprint(_))));
    assert!(Footprint::circle_metres(-0.2, 0.05).is_err());
    let too_big = Vehicle { capability: Capability::FREE, footprint: Footprint::circle(5.0).unwrap() };
    assert!(matches!(m.track_vehicle(too_big), Err(ClearanceError::BadFootprint(_))));
    let untracked = Vehicle { capability: Capability::FREE, footprint: Footprint::square(2).unwrap() };
    assert_eq!(m.vehicle_mask(&untracked).unwrap_err(), ClearanceError::NotTracked);
    assert!(matches!(m.subsuming_cell(&vehicles()[0], w, 0), Err(ClearanceError::OutOfMap { .. })));
    let bad_config = ClearanceConfig { distance_cap: 0, ..ClearanceConfig::default() };
    assert!(ClearanceMap::new(&OccupancyMap { info: info(w, h), data: vec![0; w * h] }, bad_config, &[]).is_err());
    assert_same(&m, &before).unwrap();
}

#[test]
fn subsumed_goal_in_a_narrow_corner() {
    // A 2x2 vehicle cannot anchor at (3, 2) (the wall at x=4 is in the way) but the square
    // anchored at (2, 1) covers it.
    let g = crate::grid::Grid::from_rows(&["....@", "....@", "....@", "@@@@@"]).unwrap();
    let mut m = ClearanceMap::from_grid(&g, ClearanceConfig::default()).unwrap();
    let v = Vehicle { capability: Capability::FREE, footprint: Footprint::square(2).unwrap() };
    m.track_vehicle(v).unwrap();
    assert!(m.vehicle_mask(&v).unwrap().is_blocked(3, 2));
    let s = m.subsuming_cell(&v, 3, 2).unwrap().unwrap();
    assert_eq!(s, Subsumed { cell: (2, 1), offset: (1, 1) });
    assert_eq!(m.subsuming_cell(&v, 4, 0).unwrap(), None);
    assert_eq!(m.subsuming_cell(&v, 1, 1).unwrap(), Some(Subsumed { cell: (1, 1), offset: (0, 0) }));
}

#[test]
fn display_values_and_png() {
    let g = crate::grid::Grid::from_rows(&["......", "..@...", "......"]).unwrap();
    let m = ClearanceMap::from_grid(&g, ClearanceConfig::default()).unwrap();
    let o = display::to_occupancy(&m, Capability::FREE, display::Annotation::Clearance).unwrap();
    assert_eq!(o.data[6 + 2], 100);
    // Clearance 1 of 32 -> nearly black; the brighter the farther.
    let c = |x: usize, y: usize| o.data[y * 6 + x];
    assert_eq!(c(5, 2), (99.0f64 * (1.0 - 1.0 / 32.0)).round() as i8);
    assert!(c(0, 0) > 0 && c(0, 0) <= c(5, 2));
    let path = std::env::temp_dir().join(format!("clearance_test_{}.png", std::process::id()));
    display::write_heat_map_png(&path, &m, Capability::FREE, display::Annotation::Distance).unwrap();
    let decoder = png::Decoder::new(std::fs::File::open(&path).unwrap());
    let reader = decoder.read_info().unwrap();
    assert_eq!((reader.info().width, reader.info().height), (6, 3));
    std::fs::remove_file(&path).unwrap();
    assert!(display::write_heat_map_png(
        Path::new("/nonexistent/dir/x.png"),
        &m,
        Capability::FREE,
        display::Annotation::Distance
    )
    .is_err());
    assert!(display::to_occupancy(&m, Capability::FREE_OR_UNKNOWN, display::Annotation::Distance).is_err());
}

use std::path::Path;

#[test]
fn replacement_with_new_geometry_rebuilds() {
    let mut m = fresh(vec![0; 20 * 10], 20, 10);
    let data: Vec<i8> = (0..15 * 12).map(|i| if i % 7 == 0 { 100 } else { 0 }).collect();
    let changed = m.replace_map(&OccupancyMap { info: info(15, 12), data: data.clone() }).unwrap();
    assert!(changed.rebuilt);
    assert_eq!(changed.masks.len(), vehicles().len());
    assert_same(&m, &fresh(data.clone(), 15, 12)).unwrap();
    // The same map again changes nothing.
    let again = m.replace_map(&OccupancyMap { info: info(15, 12), data }).unwrap();
    assert_eq!(again, ChangedRegion::default());
    assert_eq!(m.cell_of_world(crate::geometry::Point2::new(0.26, 0.11)), Some((5, 2)));
    assert_eq!(m.cell_of_world(crate::geometry::Point2::new(-0.01, 0.11)), None);
}

#[test]
fn changed_region_covers_every_flipped_mask_cell() {
    let (w, h) = (40, 30);
    let mut m = fresh(vec![0; w * h], w, h);
    let v = vehicles()[1];
    let before = m.vehicle_mask(&v).unwrap().clone();
    let changed = m.apply_patch(PatchRect { x: 20, y: 10, width: 2, height: 3 }, &[100; 6]).unwrap();
    let after = m.vehicle_mask(&v).unwrap();
    let rect = changed.masks.iter().find(|c| c.vehicle == v).unwrap().rect;
    for y in 0..h {
        for x in 0..w {
            let flipped = before.is_blocked(x as i64, y as i64) != after.is_blocked(x as i64, y as i64);
            let inside = (rect.x..rect.x + rect.width).contains(&x) && (rect.y..rect.y + rect.height).contains(&y);
            assert!(!flipped || inside, "({x}, {y}) flipped outside {rect:?}");
        }
    }
    assert_eq!(changed.cells, Some(crate::grid::CellRect { x: 20, y: 10, width: 2, height: 3 }));
}

#[test]
fn real_map_patches_and_regions_agree_with_references() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ros_maps/depot.yaml");
    let map = crate::map_io::load_map_file(&path, "map", crate::map::DEFAULT_MAX_MAP_CELLS).unwrap();
    let (w, h) = (map.info.width, map.info.height);
    let car = Vehicle {
        capability: Capability::FREE,
        footprint: Footprint::circle_metres(0.3, map.info.resolution).unwrap(),
    };
    let mut m = ClearanceMap::new(&map, ClearanceConfig::default(), &[Capability::FREE]).unwrap();
    m.track_vehicle(car).unwrap();
    let mut s = 12345u64;
    let mut next = |n: usize| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s % n as u64) as usize
    };
    for step in 0..40 {
        let (x, y) = (next(w - 10), next(h - 10));
        let data: Vec<i8> = (0..100).map(|_| if next(100) < 30 { 100 } else { 0 }).collect();
        m.apply_patch(PatchRect { x: x as i64, y: y as i64, width: 10, height: 10 }, &data).unwrap();
        if step % 10 == 9 {
            let mut reference = ClearanceMap::new(
                &OccupancyMap { info: map.info.clone(), data: m.data().to_vec() },
                ClearanceConfig::default(),
                &[Capability::FREE],
            )
            .unwrap();
            reference.track_vehicle(car).unwrap();
            assert_eq!(m.layer(Capability::FREE), reference.layer(Capability::FREE));
            assert_eq!(m.vehicle_mask(&car).unwrap(), reference.vehicle_mask(&car).unwrap());
        }
    }
    let layer = m.layer(Capability::FREE).unwrap();
    let mut checked = 0;
    while checked < 12 {
        let (a, b) = ((next(w), next(h)), (next(w), next(h)));
        if !layer.fits_circle(a.0, a.1, 0.3 / map.info.resolution)
            || !layer.fits_circle(b.0, b.1, 0.3 / map.info.resolution)
        {
            continue;
        }
        checked += 1;
        let found = annotated_astar(layer, car.footprint, a, b, || false).is_some();
        assert_eq!(m.same_region(&car, a, b).unwrap(), found, "{a:?} -> {b:?}");
    }
}

#[test]
fn clearance_map_can_be_shared_between_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<ClearanceMap>();
}
