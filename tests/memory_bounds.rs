//! The planner's memory does not grow with the number of plans: with the counting allocator
//! installed (as in `blockstar` and `planner_node`), the heap held after thousands of plans on a
//! real map equals the heap held after a warm-up, within a stated allowance. Bytes, not time.
//!
//! One test in this binary on purpose: the harness runs tests on parallel threads, and another
//! test's allocations would be counted too.
//!
//! The test command plans 1000 times after the warm-up (a leak of 66 bytes a plan or more shows
//! against the allowance); `BLOCKSTAR_MEMORY_PLANS=N` plans N times, for a longer soak.

use blockstar_planner::geometry::Pose2;
use blockstar_planner::map_io::load_map_file;
use blockstar_planner::memory::heap;
use blockstar_planner::planner::{Budget, Planner, PlannerConfig};
use std::f64::consts::PI;

blockstar_planner::install_counting_allocator!();

/// Heap the planner may gain between the warm-up and the end (bytes). The per-thread working
/// memory (the Dubins memo, Block A*'s scratch, sized to the map) is in place after the warm-up;
/// what is left is the allocator's counting of blocks that change size between plans.
const ALLOWANCE: u64 = 64 * 1024;

/// Plans after the warm-up unless `BLOCKSTAR_MEMORY_PLANS` says otherwise.
const PLANS: usize = 1000;

#[test]
fn thousands_of_plans_hold_no_more_heap_than_the_warm_up() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ros_maps/depot.yaml");
    let map = load_map_file(&path, "map", usize::MAX).unwrap();
    let (w, h) = (map.info.width as f64 * map.info.resolution, map.info.height as f64 * map.info.resolution);
    let config = PlannerConfig { robot_radius: 0.2, min_turning_radius: 0.5, ..PlannerConfig::default() };
    let mut planner = Planner::new(config).unwrap();
    planner.set_map(map).unwrap();

    let mut seed = 11u64;
    let mut rnd = move || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut pose = move || Pose2::new(rnd() * w, rnd() * h, (rnd() * 2.0 - 1.0) * PI);
    let mut plan_many = |n: usize| {
        let mut solved = 0;
        for _ in 0..n {
            // Random poses, many of them in obstacles or unreachable: the failures' paths count too.
            solved += usize::from(planner.plan(pose(), pose(), false, &Budget::without_deadline(None)).is_ok());
        }
        solved
    };

    let plans = match std::env::var("BLOCKSTAR_MEMORY_PLANS") {
        Ok(n) => n.parse().unwrap_or_else(|e| panic!("BLOCKSTAR_MEMORY_PLANS={n:?}: {e}")),
        Err(_) => PLANS,
    };
    assert!(plan_many(300) > 0);
    let warm = heap().expect("the counting allocator is installed");
    let solved = plan_many(plans);
    let end = heap().unwrap();
    assert!(solved > plans / 10, "only {solved} of {plans} random pairs solved: the test would not exercise planning");
    assert!(
        end.bytes <= warm.bytes + ALLOWANCE,
        "the heap grew by {} bytes over {plans} plans after the warm-up ({} -> {} bytes, {} -> {} blocks)",
        end.bytes.saturating_sub(warm.bytes),
        warm.bytes,
        end.bytes,
        warm.blocks,
        end.blocks
    );
}
