//! Criterion benchmark: the hybrid pipeline (the planner itself: regions, Block A* guide,
//! Smoothing-48, repairs, verification), forwards only and with reversing (`pipeline-rs`,
//! `motion_model: reeds_shepp`), against the full Directional-24 search, side by side on
//! the same random pose pairs of the `depot` map (bench-nav's protocol: robot radius 0.2 m,
//! minimum turning radius 0.5 m, seed 33, at least 3 m apart).
//!
//! Before timing, every trajectory either algorithm returns is re-verified independently
//! (curvature, gears and swept footprint on the map), the pipeline must solve every pair the full
//! search solves, and the pipeline with reversing every pair the forward one solves, so a wrong or lazy planner can never produce a fast-looking figure. The data
//! lives in `tests/data` (see its README).
//!
//! Run: `cargo bench --no-default-features --bench pipeline`.

use blockstar_planner::cli::bench_nav::random_pairs;
use blockstar_planner::directional::footprint::sampled_radius;
use blockstar_planner::directional::refine::full_search;
use blockstar_planner::directional::{
    verify_trajectory, CollisionMap, Directional, MotionModel, Neighbourhood, Vehicle,
};
use blockstar_planner::map::DEFAULT_MAX_MAP_CELLS;
use blockstar_planner::map_io::load_map_file;
use blockstar_planner::planner::{Budget, Planner, PlannerConfig};
use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use std::path::PathBuf;

/// Pose pairs timed per iteration.
const PAIRS: usize = 30;

fn side_by_side(c: &mut Criterion) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/ros_maps/depot.yaml");
    let map = load_map_file(&path, "map", DEFAULT_MAX_MAP_CELLS).expect("depot.yaml (tests/data)");
    let info = map.info.clone();
    let res = info.resolution;
    let config = PlannerConfig { robot_radius: 0.2, min_turning_radius: 0.5, ..PlannerConfig::default() };
    let grid = map.to_grid(config.traversability());
    let fp = config.robot_radius / res;
    let radius = config.min_turning_radius / res;
    let mut planner = Planner::new(config.clone()).expect("planner");
    planner.set_map(map.clone()).expect("map");
    let reversing = PlannerConfig { motion_model: MotionModel::ReedsShepp, ..config.clone() };
    let mut planner_rs = Planner::new(reversing).expect("planner");
    planner_rs.set_map(map).expect("map");
    let cmap = CollisionMap::new(&grid);
    let mask = cmap.centre_mask(fp, 0.0);
    let ctx = Directional::new(config.refine_params(res).expect("valid parameters").expect("a turning radius"))
        .expect("tables");
    ctx.edges().fill_all();
    let pairs = random_pairs(&cmap, &mask, sampled_radius(fp) + 1e-6, PAIRS, 33, 3.0 / res).expect("pairs");
    let plan_with = |planner: &Planner, s, g| {
        let budget = Budget::new(config.max_planning_time, None);
        planner.plan(info.cell_pose_to_world(s), info.cell_pose_to_world(g), false, &budget)
    };
    let plan = |s, g| plan_with(&planner, s, g);
    let plan_rs = |s, g| plan_with(&planner_rs, s, g);
    let full = |s, g| full_search(&ctx, &cmap, s, g, false, Neighbourhood::Directional24, &mut || false);

    // Correctness first.
    for &(s, g) in &pairs {
        let reference = full(s, g);
        if let Ok(r) = &reference {
            verify_trajectory(&cmap, &r.trajectory, &Vehicle::forward(fp, radius), s, g, false)
                .expect("directional-24 verified");
        }
        let forward = plan(s, g);
        match &forward {
            Ok(p) => {
                let t = p.trajectory.to_cells(&info);
                verify_trajectory(&cmap, &t, &Vehicle::forward(fp, radius), s, g, false).expect("pipeline verified");
            }
            Err(e) => assert!(reference.is_err(), "{s:?} -> {g:?}: directional-24 solves it, the pipeline: {e}"),
        }
        match plan_rs(s, g) {
            Ok(p) => {
                let t = p.trajectory.to_cells(&info);
                let vehicle = Vehicle { may_reverse: true, ..Vehicle::forward(fp, radius) };
                verify_trajectory(&cmap, &t, &vehicle, s, g, false).expect("pipeline-rs verified");
            }
            Err(e) => assert!(forward.is_err(), "{s:?} -> {g:?}: the pipeline solves it, with reversing: {e}"),
        }
    }

    let mut group = c.benchmark_group(format!("depot {PAIRS} pose pairs"));
    group.sample_size(10);
    group.bench_function("pipeline", |b| {
        b.iter(|| {
            for &(s, g) in &pairs {
                black_box(plan(s, g).map(|p| p.stats.trajectory_length).unwrap_or(f64::NAN));
            }
        })
    });
    group.bench_function("pipeline-rs", |b| {
        b.iter(|| {
            for &(s, g) in &pairs {
                black_box(plan_rs(s, g).map(|p| p.stats.trajectory_length).unwrap_or(f64::NAN));
            }
        })
    });
    group.bench_function("directional-24", |b| {
        b.iter(|| {
            for &(s, g) in &pairs {
                black_box(full(s, g).map(|r| r.trajectory.length()).unwrap_or(f64::NAN));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, side_by_side);
criterion_main!(benches);
