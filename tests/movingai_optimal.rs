//! Every scenario of every Moving AI map in ../shared/data/movingai: `block-oct` and `astar-oct`
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
use blockstar_planner::map_io::{load_movingai_map, parse_scenarios};
use blockstar_planner::search::grid_astar::{CellHeuristic, GridAStar};
use blockstar_planner::search::los::{CellMask, LosRule};
use rayon::prelude::*;
use std::path::Path;

fn tolerance(field: &str) -> f64 {
    let decimals = field.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
    (10f64.powi(-decimals) + 1e-9).max(1e-4)
}

#[test]
fn all_movingai_scenarios_are_reproduced() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/movingai");
    let mut maps: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("test data {} is required: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "map"))
        .collect();
    maps.sort();
    assert!(!maps.is_empty(), "no .map files in {}", dir.display());
    let lddb = Lddb::build(4, &|_, _| {}).unwrap();
    let mut total = 0usize;
    for map in &maps {
        let grid = load_movingai_map(map).unwrap();
        let scen_path = map.with_extension("map.scen");
        let text = std::fs::read_to_string(&scen_path).unwrap();
        let scens = parse_scenarios(&text).unwrap();
        let fields: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("version"))
            .map(|l| l.split_whitespace().last().unwrap_or(""))
            .collect();
        assert_eq!(fields.len(), scens.len());
        let blocks = BlockGrid::new(&grid, 4).unwrap();
        let mask = CellMask::from_grid(&grid);
        let failures: Vec<String> = scens
            .par_iter()
            .zip(fields.par_iter())
            .enumerate()
            .map_init(
                || (BlockAStar::new(), GridAStar::new()),
                |(block, astar), (index, (q, field))| {
                    let (s, t) = ((q.start.0 as u32, q.start.1 as u32), (q.goal.0 as u32, q.goal.1 as u32));
                    let tol = tolerance(field);
                    let mut errs = vec![];
                    let b = block.find_path(&lddb, &blocks, s, t, Metric::Octile, LosRule::MovingAi, || false);
                    let a = astar.find_path(&mask, s, t, CellHeuristic::Octile, || false);
                    for (name, r) in [("block-oct", &b), ("astar-oct", &a)] {
                        match r {
                            Ok(p) if (p.length - q.optimal_length).abs() <= tol => {}
                            other => errs.push(format!(
                                "{name} {s:?}->{t:?}: {:?} vs optimal {}",
                                other.as_ref().map(|p| p.length),
                                q.optimal_length
                            )),
                        }
                    }
                    if index % 3 != 0 {
                        return errs.join("\n");
                    }
                    let aa = block.find_path(&lddb, &blocks, s, t, Metric::AnyAngle, LosRule::MovingAi, || false);
                    match aa {
                        Ok(p) => {
                            let straight = f64::from(s.0.abs_diff(t.0)).hypot(f64::from(s.1.abs_diff(t.1)));
                            if p.length < straight - 1e-9 || p.length > q.optimal_length + tol {
                                errs.push(format!(
                                    "block-aa {s:?}->{t:?}: length {} outside [{straight}, octile]",
                                    p.length
                                ));
                            }
                            for w in p.points.windows(2) {
                                let (u, v) =
                                    ((i64::from(w[0].0), i64::from(w[0].1)), (i64::from(w[1].0), i64::from(w[1].1)));
                                if !mask.los_vertices(LosRule::MovingAi, u, v) {
                                    errs.push(format!("block-aa {s:?}->{t:?}: segment {u:?}->{v:?} is blocked"));
                                }
                            }
                        }
                        Err(e) => errs.push(format!("block-aa {s:?}->{t:?}: {e}")),
                    }
                    errs.join("\n")
                },
            )
            .filter(|e| !e.is_empty())
            .collect();
        assert!(failures.is_empty(), "{}: {} failures\n{}", map.display(), failures.len(), failures.join("\n"));
        total += scens.len();
    }
    println!("{total} scenarios on {} maps reproduced", maps.len());
}
