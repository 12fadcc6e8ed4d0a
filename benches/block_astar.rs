//! Criterion benchmark: Block A* (any-angle), octile A* and Theta* side by side on a fixed set of
//! arena2 scenarios (every 8th query of the Moving AI scenario file, all difficulty buckets).
//!
//! Before timing, the octile lengths of `block-oct` and `astar-oct` are checked against the
//! scenario file's optimal lengths, and every any-angle path against line of sight, so a wrong
//! search can never produce a fast-looking figure. The data lives in `tests/data` (see its README).
//!
//! Run: `cargo bench --no-default-features --bench block_astar`.

use blockstar_planner::block_astar::{BlockAStar, BlockGrid};
use blockstar_planner::lddb::{Lddb, Metric};
use blockstar_planner::map_io::{load_movingai_map, load_scenarios, Scenario};
use blockstar_planner::search::grid_astar::{CellHeuristic, GridAStar};
use blockstar_planner::search::los::{CellMask, LosRule};
use blockstar_planner::search::theta::ThetaStar;
use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use std::path::PathBuf;

/// Every `STEP`-th scenario of the file is benchmarked.
const STEP: usize = 8;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/movingai").join(name)
}

fn cell(p: (usize, usize)) -> (u32, u32) {
    (p.0 as u32, p.1 as u32)
}

fn side_by_side(c: &mut Criterion) {
    let grid = load_movingai_map(&data("arena2.map")).expect("arena2.map (tests/data)");
    let all = load_scenarios(&data("arena2.map.scen")).expect("arena2.map.scen");
    let scens: Vec<Scenario> = all.into_iter().step_by(STEP).collect();
    assert!(!scens.is_empty(), "no arena2 scenarios");
    let (lddb, _) = Lddb::load_or_build(None, 4, &|_, _| {}).expect("LDDB");
    let blocks = BlockGrid::new(&grid, lddb.side()).expect("block grid");
    let mask = CellMask::from_grid(&grid);
    let rule = LosRule::MovingAi;
    let (mut block, mut astar, mut theta) = (BlockAStar::new(), GridAStar::new(), ThetaStar::new());

    // Correctness first: octile lengths equal the scenario optima; any-angle paths are valid.
    for q in &scens {
        let (a, b) = (cell(q.start), cell(q.goal));
        let oct = block.find_path(&lddb, &blocks, a, b, Metric::Octile, rule, || false).expect("block-oct path");
        let reference = astar.find_path(&mask, a, b, CellHeuristic::Octile, || false).expect("astar-oct path");
        for (name, len) in [("block-oct", oct.length), ("astar-oct", reference.length)] {
            assert!(q.is_optimal(len), "{name} {q:?}: length {len} against the optimal {}", q.optimal_length);
        }
        let aa = block.find_path(&lddb, &blocks, a, b, Metric::AnyAngle, rule, || false).expect("block-aa path");
        let th = theta.find_path(&mask, rule, a, b, || false).expect("theta path");
        for (name, path) in [("block-aa", &aa), ("theta", &th)] {
            for w in path.points.windows(2) {
                let (p, r) = ((i64::from(w[0].0), i64::from(w[0].1)), (i64::from(w[1].0), i64::from(w[1].1)));
                assert!(mask.los_vertices(rule, p, r), "{name} {q:?}: no line of sight {p:?} -> {r:?}");
            }
        }
    }

    let mut group = c.benchmark_group(format!("arena2 {} queries", scens.len()));
    group.sample_size(20);
    group.bench_function("block-aa", |bench| {
        bench.iter(|| {
            for q in &scens {
                let p = block.find_path(&lddb, &blocks, cell(q.start), cell(q.goal), Metric::AnyAngle, rule, || false);
                black_box(p.map(|p| p.length).unwrap_or(f64::NAN));
            }
        })
    });
    group.bench_function("astar-oct", |bench| {
        bench.iter(|| {
            for q in &scens {
                let p = astar.find_path(&mask, cell(q.start), cell(q.goal), CellHeuristic::Octile, || false);
                black_box(p.map(|p| p.length).unwrap_or(f64::NAN));
            }
        })
    });
    group.bench_function("theta", |bench| {
        bench.iter(|| {
            for q in &scens {
                let p = theta.find_path(&mask, rule, cell(q.start), cell(q.goal), || false);
                black_box(p.map(|p| p.length).unwrap_or(f64::NAN));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, side_by_side);
criterion_main!(benches);
