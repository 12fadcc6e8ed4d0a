//! The graph against brute force: connectivity by flood fill on the mask, repairs against graphs
//! built from scratch.

use super::*;
use crate::grid::CellRect;
use crate::search::los::CellMask;
use proptest::prelude::*;
use std::collections::VecDeque;

/// Cells 4-connected to `from` on `mask` through the cells `within` admits (flood fill).
fn reachable(mask: &CellMask, from: (usize, usize), within: impl Fn(usize, usize) -> bool) -> Vec<bool> {
    let (w, h) = (mask.width(), mask.height());
    let mut seen = vec![false; w * h];
    let mut queue = VecDeque::from([from]);
    seen[from.1 * w + from.0] = true;
    while let Some((x, y)) = queue.pop_front() {
        let around = [(x.wrapping_sub(1), y), (x + 1, y), (x, y.wrapping_sub(1)), (x, y + 1)];
        for (nx, ny) in around {
            if nx < w && ny < h && !seen[ny * w + nx] && mask.is_free(nx as i64, ny as i64) && within(nx, ny) {
                seen[ny * w + nx] = true;
                queue.push_back((nx, ny));
            }
        }
    }
    seen
}

/// A random mask: rectangles of obstacles on open ground (`fill` of them per 1000 cells).
fn random_mask(w: usize, h: usize, seed: u64, fill: usize) -> CellMask {
    let mut rng = Rng(seed);
    let mut m = CellMask::from_fn(w, h, |_| false);
    for _ in 0..(w * h * fill / 1000).max(1) {
        let (x, y) = (rng.below(w), rng.below(h));
        let (rw, rh) = (1 + rng.below(12), 1 + rng.below(3));
        let (rw, rh) = if rng.below(2) == 0 { (rw, rh) } else { (rh, rw) };
        for yy in y..(y + rh).min(h) {
            for xx in x..(x + rw).min(w) {
                m.set(xx, yy, true);
            }
        }
    }
    m
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn free_cells(mask: &CellMask) -> Vec<(usize, usize)> {
    let mut v = Vec::new();
    for y in 0..mask.height() {
        for x in 0..mask.width() {
            if mask.is_free(x as i64, y as i64) {
                v.push((x, y));
            }
        }
    }
    v
}

fn weights(seed: u64) -> impl Fn(usize) -> f64 + Sync {
    move |k| ((k as u64).wrapping_mul(seed | 1) % 7) as f64 * 0.25
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// A corridor exists exactly when the cells are 4-connected on the mask, and it always holds
    /// a 4-connected path between them.
    #[test]
    fn corridors_are_exact_about_connectivity(
        w in 1usize..140, h in 1usize..140, seed in any::<u64>(), fill in 5usize..60,
    ) {
        let mask = random_mask(w, h, seed, fill);
        let graph = ClusterGraph::build(&mask, weights(seed));
        let free = free_cells(&mask);
        prop_assume!(free.len() > 2);
        let mut rng = Rng(seed ^ 0x55);
        for _ in 0..12 {
            let (a, b) = (free[rng.below(free.len())], free[rng.below(free.len())]);
            let connected = reachable(&mask, a, |_, _| true)[b.1 * w + b.0];
            match graph.corridor(&mask, a, b, || false) {
                Ok(found) => {
                    prop_assert!(connected, "a corridor between {a:?} and {b:?}, not connected");
                    let c = &found.corridor;
                    prop_assert!(c.contains(a.0 as i64, a.1 as i64) && c.contains(b.0 as i64, b.1 as i64));
                    let inside = reachable(&mask, a, |x, y| c.contains(x as i64, y as i64));
                    prop_assert!(inside[b.1 * w + b.0], "no path inside the corridor from {a:?} to {b:?}");
                }
                Err(e) => prop_assert!(!connected && e == CorridorFailure::NoPath, "{e:?} for connected {a:?} {b:?}"),
            }
        }
    }

    /// After random patches (cells blocked and freed with the weights around them changed, or
    /// only weights changed), the repaired graph equals one built from scratch on the final mask.
    #[test]
    fn repairs_equal_rebuilds(
        w in 1usize..130, h in 1usize..130, seed in any::<u64>(), patches in 1usize..12,
    ) {
        let mut mask = random_mask(w, h, seed, 30);
        let mut rng = Rng(seed ^ 0xaa);
        let mut weight: Vec<f64> = (0..w * h).map(|_| rng.below(5) as f64 * 0.5).collect();
        let mut graph = ClusterGraph::build(&mask, |k| weight[k]);
        for _ in 0..patches {
            let (pw, ph) = (1 + rng.below(12.min(w)), 1 + rng.below(12.min(h)));
            let (x, y) = (rng.below(w - pw + 1), rng.below(h - ph + 1));
            let rect = CellRect { x, y, width: pw, height: ph };
            // The weights change in a ring around the cells (as costs do around a new obstacle),
            // or alone.
            let ring = rng.below(6);
            let (gx, gy) = (x.saturating_sub(ring), y.saturating_sub(ring));
            let grown = CellRect { x: gx, y: gy, width: (x + pw + ring).min(w) - gx, height: (y + ph + ring).min(h) - gy };
            for yy in grown.y..grown.y + grown.height {
                for xx in grown.x..grown.x + grown.width {
                    weight[yy * w + xx] = rng.below(5) as f64 * 0.5;
                }
            }
            if rng.below(3) == 0 {
                graph.repair(&mask, &[], &[grown], |k| weight[k]);
            } else {
                let blocked = rng.below(3) == 0;
                for yy in y..y + ph {
                    for xx in x..x + pw {
                        mask.set(xx, yy, blocked);
                    }
                }
                graph.repair(&mask, &[rect], &[grown], |k| weight[k]);
            }
            prop_assert_eq!(&graph, &ClusterGraph::build(&mask, |k| weight[k]));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// The guide's search inside a corridor (`find_path_within`, with the corridor's estimates)
    /// finds a path exactly when the whole-map search does, never a cheaper one, and with no
    /// estimate (0 everywhere) it is the whole-map search.
    #[test]
    fn the_fine_search_inside_a_corridor_agrees_with_the_whole_map(
        w in 20usize..120, h in 20usize..120, seed in any::<u64>(), fill in 5usize..50,
    ) {
        let mask = random_mask(w, h, seed, fill);
        let weight = |k: usize| ((k * 7) % 5) as f64 * 0.3;
        let graph = ClusterGraph::build(&mask, weight);
        let free = free_cells(&mask);
        prop_assume!(free.len() > 2);
        let mut rng = Rng(seed ^ 0x77);
        let mut search = crate::search::cost_astar::CostAStar::new();
        let cell = |c: (usize, usize)| (c.0 as u32, c.1 as u32);
        for _ in 0..6 {
            let (a, b) = (free[rng.below(free.len())], free[rng.below(free.len())]);
            let whole = search.find_path(&mask, cell(a), cell(b), weight, || false);
            let unguided = search.find_path_within(&mask, cell(a), cell(b), weight, |_, _| Some(0.0), || false);
            prop_assert_eq!(&whole, &unguided);
            match graph.corridor(&mask, a, b, || false) {
                Ok(found) => {
                    let c = &found.corridor;
                    let inside = search.find_path_within(&mask, cell(a), cell(b), weight, |x, y| c.estimate(x, y), || false);
                    let (inside, whole) = (inside.expect("a path inside the corridor"), whole.expect("a path"));
                    prop_assert!(inside.cost >= whole.cost - 1e-9, "{} < {}", inside.cost, whole.cost);
                    for &(x, y) in &inside.cells {
                        prop_assert!(c.contains(i64::from(x), i64::from(y)));
                    }
                }
                Err(_) => prop_assert!(whole.is_err()),
            }
        }
    }
}

/// On open ground the corridor of a straight query is the band of clusters along the line, not
/// the map.
#[test]
fn an_open_map_gives_a_narrow_corridor() {
    let mask = CellMask::from_fn(1000, 1000, |_| false);
    let graph = ClusterGraph::build(&mask, |_| 0.0);
    assert_eq!(graph.nodes(), 32 * 32);
    let found = graph.corridor(&mask, (5, 5), (990, 990), || false).expect("a corridor");
    // A staircase of about 62 clusters and its ring: far fewer than the 1024 of the map.
    assert!(found.corridor.clusters() < 300, "{} clusters", found.corridor.clusters());
    assert!(found.expansions < 200, "{} expansions", found.expansions);
}

/// A wall with one gap: the corridor goes through the gap, and a stop is honoured.
#[test]
fn the_corridor_finds_the_only_gap_and_stops_when_asked() {
    let mut mask = CellMask::from_fn(640, 640, |_| false);
    for y in 0..640 {
        if !(600..604).contains(&y) {
            mask.set(320, y, true);
        }
    }
    let graph = ClusterGraph::build(&mask, |_| 0.0);
    let found = graph.corridor(&mask, (10, 10), (630, 10), || false).expect("through the gap");
    assert!(found.corridor.contains(320, 601));
    assert!(found.corridor.clusters() < 400 - 20, "{} clusters", found.corridor.clusters());
    assert_eq!(graph.corridor(&mask, (10, 10), (320, 10), || false), Err(CorridorFailure::BlockedEndpoint));
    assert_eq!(graph.corridor(&mask, (10, 10), (630, 10), || true), Err(CorridorFailure::Stopped));
}

/// A change over most of a big map (a SLAM map replaced whole) is repaired in parallel, to the
/// same graph as a fresh build.
#[test]
fn a_whole_map_repair_equals_a_rebuild() {
    let mut mask = random_mask(700, 600, 5, 20);
    let mut graph = ClusterGraph::build(&mask, |_| 0.0);
    let other = random_mask(700, 600, 6, 25);
    for y in 0..600 {
        for x in 0..700 {
            mask.set(x, y, other.blocked(x as i64, y as i64));
        }
    }
    let weight = |k: usize| (k % 3) as f64;
    graph.repair(&mask, &[CellRect { x: 3, y: 2, width: 690, height: 590 }], &[], weight);
    assert_eq!(graph, ClusterGraph::build(&mask, weight));
    // The costs changed over most of the map (a costmap's inflation republished), the mask in
    // one patch: the many clusters are reweighed in parallel too.
    let heavier = |k: usize| (k % 5) as f64 * 0.5;
    for x in 100..110 {
        mask.set(x, 100, true);
    }
    let patch = CellRect { x: 100, y: 100, width: 10, height: 1 };
    graph.repair(&mask, &[patch], &[CellRect { x: 0, y: 0, width: 700, height: 600 }], heavier);
    assert_eq!(graph, ClusterGraph::build(&mask, heavier));
}
