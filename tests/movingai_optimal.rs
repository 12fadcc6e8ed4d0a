//! Every scenario of every Moving AI map in tests/data/movingai: `block-oct` and `astar-oct`
//! reproduce the scenario's optimal length; on every third scenario (to keep the suite fast),
//! the `block-aa` path has line of sight (Moving AI rule) and lies between the straight line and
//! the octile optimum. (`block-tile` against BFS is in `block_astar_random.rs`.)
//!
//! Scenario files print lengths with a limited number of digits (6 significant digits in most
//! files, 2 decimals in bg512 ones), computed in single precision by the generator (e.g. 199.7645
//! is printed as 199.764); the tolerance is one unit of the last printed digit (and at least
//! 1e-4).

use blockstar_planner::block_astar::{BlockAStar, BlockGrid};
use blockstar_planner::lddb::{Lddb, Metric};
use blockstar_planner::map_io::{load_movingai_map, load_scenarios, Scenario};
use blockstar_planner::search::grid_astar::{CellHeuristic, GridAStar};
use blockstar_planner::search::los::{CellMask, LosRule};
use rayon::prelude::*;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

/// One map with everything its queries share (built once, read by all worker threads).
struct MapCase {
    name: String,
    blocks: BlockGrid,
    mask: CellMask,
    scens: Vec<Scenario>,
}

fn load_case(map: &Path) -> MapCase {
    let grid = load_movingai_map(map).unwrap();
    let scens = load_scenarios(&map.with_extension("map.scen")).unwrap();
    MapCase {
        name: map.display().to_string(),
        blocks: BlockGrid::new(&grid, 4).unwrap(),
        mask: CellMask::from_grid(&grid),
        scens,
    }
}

/// Checks scenario `index` of `case`; returns the failures found (empty when all hold).
fn check(lddb: &Lddb, case: &MapCase, index: usize, block: &mut BlockAStar, astar: &mut GridAStar) -> Vec<String> {
    let (q, mask, blocks) = (&case.scens[index], &case.mask, &case.blocks);
    let (s, t) = ((q.start.0 as u32, q.start.1 as u32), (q.goal.0 as u32, q.goal.1 as u32));
    let mut errs = vec![];
    let b = block.find_path(lddb, blocks, s, t, Metric::Octile, LosRule::MovingAi, || false);
    let a = astar.find_path(mask, s, t, CellHeuristic::Octile, || false);
    for (name, r) in [("block-oct", &b), ("astar-oct", &a)] {
        match r {
            Ok(p) if q.is_optimal(p.length) => {}
            other => errs.push(format!(
                "{} {name} {s:?}->{t:?}: {:?} vs optimal {}",
                case.name,
                other.as_ref().map(|p| p.length),
                q.optimal_length
            )),
        }
    }
    if index % 3 != 0 {
        return errs;
    }
    match block.find_path(lddb, blocks, s, t, Metric::AnyAngle, LosRule::MovingAi, || false) {
        Ok(p) => {
            let straight = f64::from(s.0.abs_diff(t.0)).hypot(f64::from(s.1.abs_diff(t.1)));
            if p.length < straight - 1e-9 || p.length > q.optimal_length + q.optimal_tolerance {
                errs.push(format!(
                    "{} block-aa {s:?}->{t:?}: length {} outside [{straight}, octile]",
                    case.name, p.length
                ));
            }
            for w in p.points.windows(2) {
                let (u, v) = ((i64::from(w[0].0), i64::from(w[0].1)), (i64::from(w[1].0), i64::from(w[1].1)));
                if !mask.los_vertices(LosRule::MovingAi, u, v) {
                    errs.push(format!("{} block-aa {s:?}->{t:?}: segment {u:?}->{v:?} is blocked", case.name));
                }
            }
        }
        Err(e) => errs.push(format!("{} block-aa {s:?}->{t:?}: {e}", case.name)),
    }
    errs
}

#[test]
fn all_movingai_scenarios_are_reproduced() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/movingai");
    let mut maps: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("test data {} is required: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "map"))
        .collect();
    maps.sort();
    assert!(!maps.is_empty(), "no .map files in {}", dir.display());
    let lddb = Lddb::build(4, &|_, _| {}).unwrap();
    let cases: Vec<MapCase> = maps.par_iter().map(|m| load_case(m)).collect();
    // One flat job list over all maps, so both cores stay busy to the end: larger maps first,
    // and within a map the longest queries first, so the slowest queries do not start last (maps
    // stay contiguous: a searcher resizes its arrays only when the map changes).
    let mut order: Vec<usize> = (0..cases.len()).collect();
    order.sort_by_key(|&m| std::cmp::Reverse(cases[m].mask.width() * cases[m].mask.height()));
    let mut jobs: Vec<(usize, usize)> = vec![];
    for m in order {
        let mut idx: Vec<usize> = (0..cases[m].scens.len()).collect();
        idx.sort_by(|&a, &b| cases[m].scens[b].optimal_length.total_cmp(&cases[m].scens[a].optimal_length));
        jobs.extend(idx.into_iter().map(|i| (m, i)));
    }
    // One worker per core, each with its own searcher pair reused for every query it takes from
    // the shared job counter (a searcher sizes its arrays to a map once, not per query).
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let failures: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let (mut block, mut astar) = (BlockAStar::new(), GridAStar::new());
                    let mut errs = vec![];
                    loop {
                        let j = next.fetch_add(1, Ordering::Relaxed);
                        let Some(&(m, i)) = jobs.get(j) else { break errs };
                        errs.extend(check(&lddb, &cases[m], i, &mut block, &mut astar));
                    }
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert!(failures.is_empty(), "{} failures\n{}", failures.len(), failures.join("\n"));
    println!("{} scenarios on {} maps reproduced", jobs.len(), cases.len());
}
