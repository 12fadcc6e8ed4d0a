//! Scenario and property tests of the refinement pipeline and the full Directional A* searches.

use super::footprint::SEARCH_MARGIN;
use super::lattice::LatticeRect;
use super::search::{directional_astar, Outcome, Source, Target};
use super::temp_any_angle::octile_string_pulled;
use super::*;
use crate::geometry::{Point2, Pose2};
use crate::grid::Grid;
use crate::trajectory::Trajectory;
use std::f64::consts::PI;

fn ctx(radius: f64, footprint: f64) -> Directional {
    Directional::new(RefineParams { turning_radius: radius, footprint_radius: footprint, ..Default::default() })
        .unwrap()
}

fn any_angle(map: &CollisionMap, fp: f64, start: Pose2, goal: Pose2) -> Vec<Point2> {
    let mask = map.centre_mask(fp, 0.5);
    octile_string_pulled(&mask, start.point(), goal.point(), &mut || false).unwrap_or_default()
}

fn run(grid: &Grid, radius: f64, fp: f64, start: Pose2, goal: Pose2, free: bool) -> Result<Refined, RefineError> {
    let map = CollisionMap::new(grid);
    let c = ctx(radius, fp);
    let wp = any_angle(&map, fp, start, goal);
    refine(&c, &map, &wp, start, goal, free, &mut || false)
}

fn full(grid: &Grid, c: &Directional, n: Neighbourhood, start: Pose2, goal: Pose2, free: bool) -> Option<Trajectory> {
    let map = CollisionMap::new(grid);
    let l = lattice::Lattice::new(grid.width(), grid.height(), c.params().spacing());
    let target = Target::Pose { pose: goal, free };
    match directional_astar(
        c,
        &map,
        LatticeRect::all(&l),
        n,
        &[Source { pose: start, g: 0.0, wide: true }],
        target,
        &mut || false,
    ) {
        Outcome::Found(f) => {
            Some(chain::PoseChain { poses: f.poses, goal_free: free }.trajectory(c.params().turning_radius))
        }
        _ => None,
    }
}

fn check(grid: &Grid, t: &Trajectory, radius: f64, fp: f64, start: Pose2, goal: Pose2, free: bool) {
    let map = CollisionMap::new(grid);
    verify_trajectory(&map, t, fp, radius, start, goal, free).unwrap();
    assert!(t.segments.iter().all(|s| s.curvature.abs() <= 1.0 / radius + 1e-9));
    assert!(t.check_continuity() < 1e-6);
}

#[test]
fn open_field_is_one_dubins_curve() {
    let g = Grid::new_free(80, 80).unwrap();
    let (s, e) = (Pose2::new(10.5, 10.5, 0.0), Pose2::new(60.5, 50.5, PI / 2.0));
    let r = run(&g, 6.0, 1.5, s, e, false).unwrap();
    check(&g, &r.trajectory, 6.0, 1.5, s, e, false);
    let best = crate::curves::dubins_shortest(s, e, 6.0).unwrap().length();
    assert!((r.trajectory.length() - best).abs() < 1e-6, "{} vs {best}", r.trajectory.length());
    assert_eq!(r.stats.solved_by, "smoothing");
}

#[test]
#[ignore]
fn debug_tb3() {
    let map =
        crate::map_io::load_map_file(std::path::Path::new("../shared/data/ros_maps/tb3_sandbox.yaml"), "map", 1 << 30)
            .unwrap();
    let grid = map.to_grid(crate::map::Traversability { occupied_threshold: 65, allow_unknown: false });
    let cm = CollisionMap::new(&grid);
    let c = ctx(10.0, 4.0);
    let start = Pose2::new(177.17807680418093, 213.52866236585942, 2.3089653282438474);
    let goal = Pose2::new(203.80061184193846, 158.7880931141768, -1.830839199031568);
    let wp = any_angle(&cm, 4.0, start, goal);
    println!("any-angle {wp:?}");
    let r = refine(&c, &cm, &wp, start, goal, false, &mut || false).unwrap();
    println!("pipeline len {} {:?}", r.trajectory.length(), r.stats);
    for p in &r.chain.poses {
        println!("  {:.1} {:.1} {:.2}", p.x, p.y, p.yaw);
    }
    let f = full_search(&c, &cm, start, goal, false, Neighbourhood::Directional24, &mut || false).unwrap();
    println!("d24 len {}", f.trajectory.length());
    for p in &f.chain.poses {
        println!("  {:.1} {:.1} {:.2}", p.x, p.y, p.yaw);
    }
}
