//! Scenario and property tests of the refinement pipeline and the full Directional A* searches.

use super::*;
use crate::geometry::{Point2, Pose2};
use crate::grid::Grid;
use crate::stages::{SolvedBy, Stage};
use crate::trajectory::Trajectory;
use std::f64::consts::PI;

fn ctx(radius: f64, footprint: f64) -> Directional {
    Directional::new(RefineParams { turning_radius: radius, footprint_radius: footprint, ..Default::default() })
        .unwrap()
}

/// The any-angle guide the planner uses: Block A* (conservative line of sight) between the
/// corners nearest to `start` and `goal` of their cells on the centre mask. `None` when an end is
/// blocked or no path exists.
pub(super) fn block_astar_guide(mask: &Grid, start: Point2, goal: Point2) -> Option<Vec<Point2>> {
    use crate::block_astar::{BlockAStar, BlockGrid};
    use crate::lddb::{Lddb, Metric};
    use crate::search::los::LosRule;
    static LDDB: std::sync::OnceLock<Lddb> = std::sync::OnceLock::new();
    let lddb = LDDB.get_or_init(|| Lddb::load_or_build(None, 4, &|_, _| {}).expect("LDDB").0);
    let corner = |p: Point2| -> Option<(u32, u32)> {
        let (cx, cy) = (p.x.floor(), p.y.floor());
        if mask.is_blocked(cx as i64, cy as i64) {
            return None;
        }
        Some(((cx + (p.x - cx).round()) as u32, (cy + (p.y - cy).round()) as u32))
    };
    let blocks = BlockGrid::new(mask, lddb.side()).ok()?;
    let path = BlockAStar::new()
        .find_path(lddb, &blocks, corner(start)?, corner(goal)?, Metric::AnyAngle, LosRule::Conservative, || false)
        .ok()?;
    Some(path.points.iter().map(|&(x, y)| Point2::new(f64::from(x), f64::from(y))).collect())
}

fn any_angle(map: &CollisionMap, fp: f64, start: Pose2, goal: Pose2) -> Vec<Point2> {
    let mask = map.centre_mask(fp, 0.5);
    block_astar_guide(&mask, start.point(), goal.point()).unwrap_or_default()
}

fn run(grid: &Grid, radius: f64, fp: f64, start: Pose2, goal: Pose2, free: bool) -> Result<Refined, RefineError> {
    let map = CollisionMap::new(grid);
    let c = ctx(radius, fp);
    let wp = any_angle(&map, fp, start, goal);
    refine(&c, &map, &wp, start, goal, free, &mut || false)
}

fn check(grid: &Grid, t: &Trajectory, radius: f64, fp: f64, start: Pose2, goal: Pose2, free: bool) {
    let map = CollisionMap::new(grid);
    verify_trajectory(&map, t, &Vehicle::forward(fp, radius), start, goal, free).unwrap();
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
    // The free shortest curve is taken before any smoothing.
    assert_eq!(r.stats.solved_by, SolvedBy::Direct);
}

/// With traversal costs the free shortest curve is taken at once only while its costs add at
/// most `DIRECT_COST_SLACK` of its length: a light cost on the way (a grade in one cell) keeps it
/// (not towards a free goal heading, where the curve is not proved the shortest), a band across
/// the field sends the request on to the guide and smoothing, which cannot do better than the
/// same line through the band, and find it.
#[test]
fn a_free_curve_is_taken_with_costs_only_within_the_slack() {
    use crate::costs::{CostField, CostRule};
    use crate::map::{MapInfo, OccupancyMap, Traversability};
    use crate::trajectory::Segment;
    let (w, h) = (80usize, 80usize);
    let (s, e) = (Pose2::new(10.5, 40.5, 0.0), Pose2::new(70.5, 40.5, 0.0));
    let line = [Segment::line(s, 60.0)];
    let traversability = Traversability { occupied_threshold: 65, allow_unknown: false };
    let rule = CostRule { cost_penalty: 1.0, preferred_clearance: 0.0, inscribed: 0.0, traversability };
    let refined_to = |graded: &dyn Fn(usize, usize) -> bool, grade: i8, free: bool| {
        let data = (0..w * h).map(|k| if graded(k % w, k / w) { grade } else { 0 }).collect();
        let occupancy = OccupancyMap::new(MapInfo::at_origin(w, h, 1.0), data, usize::MAX).unwrap();
        let mut map = CollisionMap::new(&Grid::new_free(w, h).unwrap());
        map.set_costs(Some(CostField::of_map(&occupancy, rule)));
        let extra = map.extra_cost(&line);
        let c = ctx(6.0, 1.5);
        let r = refine(&c, &map, &[s.point(), e.point()], s, e, free, &mut || false).unwrap();
        (extra, r)
    };
    let refined = |graded: &dyn Fn(usize, usize) -> bool, grade: i8| refined_to(graded, grade, false);
    // One light cell on the line: a little above its length, within the slack.
    let (extra, r) = refined(&|x, y| (x, y) == (40, 40), 10);
    assert!(extra > 0.0 && extra <= DIRECT_COST_SLACK * 60.0, "{extra}");
    assert_eq!(r.stats.solved_by, SolvedBy::Direct);
    assert_eq!(r.trajectory.segments.len(), 1);
    // Towards a free heading the curve is not proved the shortest path: no slack there.
    let (_, r) = refined_to(&|x, y| (x, y) == (40, 40), 10, true);
    assert_ne!(r.stats.solved_by, SolvedBy::Direct);
    // A band of heavier cells across the whole field: beyond the slack.
    let (extra, r) = refined(&|x, _| (39..42).contains(&x), 50);
    assert!(extra > DIRECT_COST_SLACK * 60.0, "{extra}");
    assert_ne!(r.stats.solved_by, SolvedBy::Direct);
    assert!(r.stats.stages.iter().any(|st| st.name == Stage::Direct && st.outcome.contains("passes costs")));
    assert!((r.trajectory.length() - 60.0).abs() < 1e-6, "{}", r.trajectory.length());
}

#[test]
fn smoothing_solves_an_open_field_with_a_post_in_the_way_of_the_shortest_curve() {
    // A post on the straight line: the direct curve collides, smoothing follows the guide round
    // it, and the result is never shorter than the (blocked) shortest curve.
    let g = grid_from(80, 40, |x, y| (38..=41).contains(&x) && (18..=21).contains(&y));
    let (s, e) = (Pose2::new(8.5, 20.5, 0.0), Pose2::new(72.5, 20.5, 0.0));
    let r = run(&g, 6.0, 1.5, s, e, false).unwrap();
    check(&g, &r.trajectory, 6.0, 1.5, s, e, false);
    assert_eq!(r.stats.solved_by, SolvedBy::Smoothing);
    assert!(r.stats.stages.iter().any(|st| st.name == Stage::Direct && st.outcome.contains("collides")));
    // The coarse path points suffice: the dense programme never runs.
    assert!(r
        .stats
        .stages
        .iter()
        .any(|st| st.name == Stage::SmoothingCoarse && st.outcome.contains("reached the goal")));
    assert!(r.stats.stages.iter().all(|st| st.name != Stage::SmoothingForward));
    assert!(r.trajectory.length() > 64.0 + 1e-6);
}

/// A grid from a predicate over cells.
pub(super) fn grid_from(w: usize, h: usize, blocked: impl Fn(i64, i64) -> bool) -> Grid {
    let cells = (0..w * h).map(|k| blocked((k % w) as i64, (k / w) as i64)).collect();
    Grid::from_blocked(w, h, cells).unwrap()
}

fn total_turning(t: &Trajectory) -> f64 {
    t.segments.iter().map(|s| s.length * s.curvature.abs()).sum()
}

#[test]
fn a_loop_when_the_goal_lies_just_behind() {
    // Open room: to reach a pose 6 cells behind with the same heading the vehicle must loop.
    let g = grid_from(80, 80, |x, y| !(1..79).contains(&x) || !(1..79).contains(&y));
    let (s, e) = (Pose2::new(40.5, 30.5, 0.0), Pose2::new(34.5, 30.5, 0.0));
    let r = run(&g, 6.0, 1.5, s, e, false).unwrap();
    check(&g, &r.trajectory, 6.0, 1.5, s, e, false);
    assert!(total_turning(&r.trajectory) >= 2.0 * PI - 1e-6, "turning {}", total_turning(&r.trajectory));
    // Nothing blocks the shortest loop, so the result is exactly the Dubins curve.
    let best = crate::curves::dubins_shortest(s, e, 6.0).unwrap().length();
    assert!((r.trajectory.length() - best).abs() < 1e-6);

    // A wall just above the start line: the loop must be made below it (turning right).
    let walled = grid_from(80, 80, |x, y| !(1..79).contains(&x) || !(1..79).contains(&y) || y >= 34);
    let r = run(&walled, 6.0, 1.5, s, e, false).unwrap();
    check(&walled, &r.trajectory, 6.0, 1.5, s, e, false);
    assert!(total_turning(&r.trajectory) >= 2.0 * PI - 1e-6);
    let top = r.trajectory.sample(0.1).iter().map(|p| p.y).fold(f64::MIN, f64::max);
    assert!(top <= 34.0 - 1.5, "the footprint crosses the wall: top {top}");
}

#[test]
fn pinter_figure_8_the_turn_at_c_is_impossible_so_the_path_swings_through_b() {
    // An L-shaped corridor: east along y in [10, 30), then north along x in [40, 70). The
    // any-angle path cuts the inner corner c = (40, 30); a vehicle with turning radius 12 and
    // footprint 2 cannot turn there and must swing out through the junction's far side b.
    let g = grid_from(80, 90, |x, y| {
        let east = (2..70).contains(&x) && (10..30).contains(&y);
        let north = (40..70).contains(&x) && (10..88).contains(&y);
        !(east || north)
    });
    let (radius, fp) = (12.0, 2.0);
    let (s, e) = (Pose2::new(6.5, 20.5, 0.0), Pose2::new(55.5, 80.5, PI / 2.0));
    let map = CollisionMap::new(&g);
    let wp = any_angle(&map, fp, s, e);
    // The guide turns within a few cells of the inner corner c.
    let c = Point2::new(40.0, 30.0);
    assert!(wp.iter().any(|p| p.distance(c) < 4.0), "guide {wp:?}");
    // Turning at c is impossible: the quarter turn of radius 12 hugging c hits the walls.
    let before_c = Pose2::new(c.x - radius, c.y - 3.0, 0.0);
    let after_c = Pose2::new(c.x + 3.0, c.y + radius, PI / 2.0);
    let hug = crate::curves::dubins_shortest(before_c, after_c, radius).unwrap().segments();
    assert!(!map.sweep_free(&hug, fp, 0.0));
    let r = refine(&ctx(radius, fp), &map, &wp, s, e, false, &mut || false).unwrap();
    check(&g, &r.trajectory, radius, fp, s, e, false);
    // The trajectory goes through b: into the junction, past the corner line x = 40 before it
    // has climbed past the corner.
    let poses = r.trajectory.sample(0.2);
    assert!(poses.iter().any(|p| p.y < c.y + 3.0 && p.x > c.x + 2.0), "no swing through b");
}

#[test]
fn pinter_figure_12_a_legal_curve_only_directional_24_finds() {
    // A corridor that jogs sideways by 10 cells with a 45-degree slant: a lattice of spacing 5
    // with one-cell Directional-8 hops cannot change heading inside it at radius 10, while the
    // (2, 1) hops of Directional-24 can.
    let g = grid_from(120, 60, |x, y| {
        let centre = if x < 45 {
            20.0
        } else if x < 55 {
            20.0 + (x - 45) as f64
        } else {
            30.0
        };
        ((y as f64 + 0.5) - (centre + 0.5)).abs() > 6.5 || !(1..119).contains(&x)
    });
    let c = Directional::new(RefineParams {
        turning_radius: 10.0,
        footprint_radius: 3.0,
        lattice_spacing: Some(5),
        ..Default::default()
    })
    .unwrap();
    let (s, e) = (Pose2::new(7.5, 20.5, 0.0), Pose2::new(112.5, 30.5, 0.0));
    let map = CollisionMap::new(&g);
    let d8 = full_search(&c, &map, s, e, false, Neighbourhood::Directional8, &mut || false);
    let d24 = full_search(&c, &map, s, e, false, Neighbourhood::Directional24, &mut || false);
    assert!(matches!(d8, Err(RefineError::NoPath(_))), "{d8:?}");
    let d24 = d24.unwrap();
    check(&g, &d24.trajectory, 10.0, 3.0, s, e, false);
    // And the pipeline finds it too.
    let wp = any_angle(&map, 3.0, s, e);
    let p = refine(&c, &map, &wp, s, e, false, &mut || false).unwrap();
    check(&g, &p.trajectory, 10.0, 3.0, s, e, false);
}

#[test]
fn free_goal_heading_ends_on_an_arc_then_line() {
    let g = Grid::new_free(60, 60).unwrap();
    let (s, e) = (Pose2::new(10.5, 10.5, PI), Pose2::new(40.5, 40.5, 0.0));
    let r = run(&g, 5.0, 1.0, s, e, true).unwrap();
    check(&g, &r.trajectory, 5.0, 1.0, s, e, true);
    let best = crate::curves::pose_to_point(s, e.point(), 5.0).unwrap().length();
    assert!((r.trajectory.length() - best).abs() < 1e-6);
}

#[test]
fn bad_input_is_rejected_and_stop_is_honoured() {
    let g = grid_from(40, 40, |x, y| (18..22).contains(&x) && (18..22).contains(&y));
    let map = CollisionMap::new(&g);
    let c = ctx(4.0, 1.0);
    let ok = Pose2::new(5.5, 5.5, 0.0);
    let nan = Pose2::new(f64::NAN, 5.5, 0.0);
    assert!(matches!(refine(&c, &map, &[], nan, ok, false, &mut || false), Err(RefineError::InvalidInput(_))));
    assert!(matches!(refine(&c, &map, &[], ok, ok, false, &mut || false), Err(RefineError::InvalidInput(_))));
    let inside = Pose2::new(20.0, 20.0, 0.0);
    assert_eq!(refine(&c, &map, &[], inside, ok, false, &mut || false), Err(RefineError::StartBlocked));
    assert_eq!(refine(&c, &map, &[], ok, inside, false, &mut || false), Err(RefineError::GoalBlocked));
    let far = Pose2::new(34.5, 34.5, 0.0);
    assert_eq!(refine(&c, &map, &[], ok, far, false, &mut || true), Err(RefineError::Stopped));
    // Parameters out of range are refused and the context keeps its tables.
    let mut d = ctx(4.0, 1.0);
    let e = d.set_params(RefineParams { turning_radius: -1.0, ..d.params().clone() }).unwrap_err();
    assert_eq!((e.name, e.value.as_str()), ("turning_radius", "-1"));
    assert_eq!(e.to_string(), "turning_radius must be in (0, 8192] (MAX_TURNING_RADIUS), got -1");
    for bad in [f64::NAN, f64::INFINITY, MAX_TURNING_RADIUS + 1.0] {
        let e = d.set_params(RefineParams { turning_radius: bad, ..d.params().clone() }).unwrap_err();
        assert_eq!(e.name, "turning_radius", "{bad}");
    }
    d.set_params(RefineParams { turning_radius: MAX_TURNING_RADIUS, ..d.params().clone() }).unwrap();
    d.set_params(RefineParams { turning_radius: 4.0, ..d.params().clone() }).unwrap();
    let e = d.set_params(RefineParams { smoothing_hops: Some(0), ..d.params().clone() }).unwrap_err();
    assert_eq!(e.to_string(), "smoothing_hops must be in 1..=16, got 0");
    assert_eq!(d.params().turning_radius, 4.0);
    d.set_params(RefineParams { turning_radius: 6.0, ..d.params().clone() }).unwrap();
    assert_eq!(d.edges().key().turning_radius, 6.0);
}

/// Seeding prices a first link to every lattice pose around a wide source, each a curve swept by
/// the footprint; a cancel must not wait for all of them. A search stopped at its first poll
/// answers `Stopped`, even one whose target is a direct link away and would come off the open
/// list first.
#[test]
fn a_search_stops_while_seeding() {
    use super::lattice::{Lattice, LatticeRect};
    use super::search::{directional_astar, Outcome, Source, Target};
    let g = Grid::new_free(40, 40).unwrap();
    let map = CollisionMap::new(&g);
    let c = ctx(4.0, 1.0);
    let all = LatticeRect::all(&Lattice::new(40, 40, c.params().spacing()));
    let src = [Source { pose: Pose2::new(10.5, 20.5, 0.0), g: 0.0, wide: true }];
    let target = Target::Pose { pose: Pose2::new(14.5, 20.5, 0.0), free: false };
    let d24 = Neighbourhood::Directional24;
    let found = directional_astar(&c, &map, all, d24, &src, target, &mut || false);
    assert!(matches!(found, Outcome::Found(f) if f.expansions == 0), "the target is a direct link away");
    let mut polls = 0;
    let stopped = directional_astar(&c, &map, all, d24, &src, target, &mut || {
        polls += 1;
        true
    });
    assert!(matches!(stopped, Outcome::Stopped));
    assert_eq!(polls, 1);
}

pub(super) use crate::test_rng::splitmix as rnd;

#[test]
fn random_maps_every_trajectory_verifies_and_the_pipeline_solves_what_directional_24_solves() {
    let mut seed = 2024u64;
    let (radius, fp) = (6.0, 1.5);
    let c = ctx(radius, fp);
    let (mut d24_solved, mut both, mut pipeline_solved, mut pairs) = (0, 0, 0, 0);
    // How the coarse Smoothing pass fared: solved, or stuck with the dense pass or a repair
    // solving the pair after it.
    let (mut coarse_solved, mut coarse_stuck_then_solved, mut both_passes) = (0, 0, 0);
    for _ in 0..25 {
        // 70x70 with random rectangles.
        let mut rects = Vec::new();
        for _ in 0..8 {
            let (x, y) = ((rnd(&mut seed) * 60.0) as i64, (rnd(&mut seed) * 60.0) as i64);
            let (w, h) = (2 + (rnd(&mut seed) * 12.0) as i64, 2 + (rnd(&mut seed) * 12.0) as i64);
            rects.push((x, y, w, h));
        }
        let g = grid_from(70, 70, |x, y| {
            !(1..69).contains(&x)
                || !(1..69).contains(&y)
                || rects.iter().any(|&(rx, ry, w, h)| x >= rx && x < rx + w && y >= ry && y < ry + h)
        });
        let map = CollisionMap::new(&g);
        let mask = map.centre_mask(fp, 0.5);
        let draw = |seed: &mut u64| loop {
            let p = Point2::new(rnd(seed) * 70.0, rnd(seed) * 70.0);
            if mask.is_free(p.x as i64, p.y as i64) && map.disk_free(p, footprint::sampled_radius(fp) + 1e-6) {
                return Pose2::new(p.x, p.y, (rnd(seed) * 2.0 - 1.0) * PI);
            }
        };
        for _ in 0..3 {
            let s = draw(&mut seed);
            let e = draw(&mut seed);
            if s.point().distance(e.point()) < 15.0 {
                continue;
            }
            pairs += 1;
            let free = rnd(&mut seed) < 0.3;
            let reference = full_search(&c, &map, s, e, free, Neighbourhood::Directional24, &mut || false);
            let wp = block_astar_guide(&mask, s.point(), e.point());
            let piped = wp.map(|wp| refine(&c, &map, &wp, s, e, free, &mut || false));
            for t in [
                reference.as_ref().ok().map(|r| &r.trajectory),
                piped.as_ref().and_then(|r| r.as_ref().ok()).map(|r| &r.trajectory),
            ]
            .into_iter()
            .flatten()
            {
                check(&g, t, radius, fp, s, e, free);
                // Sampling: positions and headings move continuously, curvature bounded.
                let poses = t.sample(0.1);
                for w in poses.windows(2) {
                    assert!(w[0].point().distance(w[1].point()) <= 0.1 + 1e-9);
                    assert!(crate::geometry::normalize_angle(w[1].yaw - w[0].yaw).abs() <= 0.1 / radius + 1e-9);
                }
            }
            if let Some(Ok(r)) = &piped {
                // The chain kept is never dearer than one a Smoothing pass found (the trajectory,
                // after final smoothing, is no longer than its chain).
                let cost_of = |name: Stage| {
                    let st = r.stats.stages.iter().find(|st| st.name == name)?;
                    st.outcome.split("cost ").nth(1)?.split([' ', ')']).next()?.parse::<f64>().ok()
                };
                let (coarse_cost, dense_cost) = (cost_of(Stage::SmoothingCoarse), cost_of(Stage::SmoothingForward));
                for c in [coarse_cost, dense_cost].into_iter().flatten() {
                    assert!(r.trajectory.length() <= c + 0.01, "{} > {c}: {:?}", r.trajectory.length(), r.stats.stages);
                }
                both_passes += (coarse_cost.is_some() && dense_cost.is_some()) as usize;
                let coarse = r.stats.stages.iter().find(|st| st.name == Stage::SmoothingCoarse);
                match coarse.map(|st| st.outcome.contains("reached the goal")) {
                    Some(true) => coarse_solved += 1,
                    Some(false) => coarse_stuck_then_solved += 1,
                    None => {}
                }
            }
            let p_ok = matches!(piped, Some(Ok(_)));
            pipeline_solved += p_ok as usize;
            if reference.is_ok() {
                d24_solved += 1;
                both += p_ok as usize;
            }
        }
    }
    assert!(pairs >= 50 && d24_solved >= 20, "too few cases: {pairs} pairs, {d24_solved} solved");
    assert!(
        both as f64 >= 0.99 * d24_solved as f64,
        "pipeline solved {both} of the {d24_solved} directional-24 solved"
    );
    assert!(pipeline_solved >= both);
    // Both ways through Smoothing occur, so the dense fallback is exercised and checked above.
    assert!(coarse_solved > 0 && coarse_stuck_then_solved > 0, "{coarse_solved} {coarse_stuck_then_solved}");
    assert!(both_passes > 0, "the coarse chain never sent a pair to the dense programme");
}

#[test]
fn sixteen_bins_and_directional_48_on_an_open_field() {
    let g = grid_from(90, 90, |x, y| !(1..89).contains(&x) || !(1..89).contains(&y));
    let params = RefineParams { heading_bins: HeadingBins::Sixteen, ..RefineParams::from_metres(0.1, 0.4, 0.05) };
    assert_eq!((params.turning_radius, params.footprint_radius), (8.0, 2.0));
    let c = Directional::new(params).unwrap();
    let map = CollisionMap::new(&g);
    let (s, e) = (Pose2::new(15.3, 20.7, 0.4), Pose2::new(70.2, 65.9, 2.5));
    for n in [Neighbourhood::Directional8, Neighbourhood::Directional24, Neighbourhood::Directional48] {
        let r = full_search(&c, &map, s, e, false, n, &mut || false).unwrap();
        check(&g, &r.trajectory, 8.0, 2.0, s, e, false);
        // Final smoothing finds the direct curve in an open field: the Dubins optimum.
        let best = crate::curves::dubins_shortest(s, e, 8.0).unwrap().length();
        assert!((r.trajectory.length() - best).abs() < 1e-6, "{}: {} vs {best}", n.name(), r.trajectory.length());
        assert!(r.stats.expansions > 0);
    }
}

#[test]
fn a_search_that_runs_out_of_states_inside_its_window_says_so_and_a_clipped_one_does_not() {
    use super::lattice::{Lattice, LatticeRect};
    use super::search::{directional_astar, directional_astar_below, Outcome, Source, Target};
    // A closed room holding the start; the goal outside it.
    let mut g = Grid::new_free(100, 100).unwrap();
    for k in 10..=50 {
        for (x, y) in [(k, 10), (k, 50), (10, k), (50, k)] {
            g.set_blocked(x, y, true).unwrap();
        }
    }
    let map = CollisionMap::new(&g);
    let c = ctx(4.0, 1.0);
    let lattice = Lattice::new(100, 100, c.params().spacing());
    let start = [Source { pose: Pose2::new(30.5, 30.5, 0.0), g: 0.0, wide: true }];
    let outside = Target::Pose { pose: Pose2::new(80.5, 80.5, 0.0), free: false };
    let search = |window: LatticeRect| {
        directional_astar(&c, &map, window, Neighbourhood::Directional24, &start, outside, &mut || false)
    };
    let cell = |x: f64, y: f64| lattice.cell_of(Point2::new(x, y));
    // The whole lattice, or a window holding the room: nothing reachable leaves the room.
    assert!(matches!(search(LatticeRect::all(&lattice)), Outcome::Exhausted(e) if e > 0));
    let room = LatticeRect::around([cell(8.0, 8.0), cell(52.0, 52.0)], 0, &lattice);
    assert!(matches!(search(room), Outcome::Exhausted(e) if e > 0));
    // A window smaller than the room cuts the search: that is no proof.
    let small = LatticeRect::around([cell(24.0, 24.0), cell(36.0, 36.0)], 0, &lattice);
    assert!(matches!(search(small), Outcome::NoPath(_)));
    // With the wall opened the goal is found; below its cost, it is not (and that is no proof).
    let mut open = g.clone();
    for y in 26..=34 {
        open.set_blocked(50, y, false).unwrap();
    }
    let map = CollisionMap::new(&open);
    let all = LatticeRect::all(&lattice);
    let found = match directional_astar(&c, &map, all, Neighbourhood::Directional24, &start, outside, &mut || false) {
        Outcome::Found(f) => f,
        other => panic!("expected a path, got {other:?}"),
    };
    let below = directional_astar_below(
        &c,
        &map,
        all,
        Neighbourhood::Directional24,
        &start,
        outside,
        found.cost - 1e-6,
        &mut || false,
    );
    assert!(matches!(below, Outcome::NoPath(_)), "{below:?}");
    let above = directional_astar_below(
        &c,
        &map,
        all,
        Neighbourhood::Directional24,
        &start,
        outside,
        found.cost + 1e-6,
        &mut || false,
    );
    assert!(matches!(above, Outcome::Found(ref f) if (f.cost - found.cost).abs() < 1e-9), "{above:?}");
}

#[test]
fn turning_round_on_the_spot_is_a_verified_loop_and_a_blocked_loop_is_searched_around() {
    let c = ctx(6.0, 1.5);
    let s = Pose2::new(40.5, 40.5, 0.0);
    let back = Pose2::new(40.5, 40.5, PI);
    let g = Grid::new_free(80, 80).unwrap();
    let map = CollisionMap::new(&g);
    let r = refine(&c, &map, &[], s, back, false, &mut || false).unwrap();
    check(&g, &r.trajectory, 6.0, 1.5, s, back, false);
    let best = crate::curves::dubins_shortest(s, back, 6.0).unwrap();
    assert!((r.trajectory.length() - best.length()).abs() < 1e-6);
    // Block the middle of that loop: the search finds another one, longer.
    let mid = r.trajectory.pose_at(r.trajectory.length() / 2.0).unwrap();
    let blocked = grid_from(80, 80, |x, y| (x - mid.x as i64).abs() <= 1 && (y - mid.y as i64).abs() <= 1);
    let map = CollisionMap::new(&blocked);
    let r2 = refine(&c, &map, &[], s, back, false, &mut || false).unwrap();
    check(&blocked, &r2.trajectory, 6.0, 1.5, s, back, false);
    assert!(r2.trajectory.length() > best.length() + 1e-6);
    assert_eq!(r2.stats.solved_by, SolvedBy::FullSearch);
    // Same place and heading, or a free heading: nothing to drive.
    assert!(matches!(refine(&c, &map, &[], s, s, false, &mut || false), Err(RefineError::InvalidInput(_))));
    assert!(matches!(refine(&c, &map, &[], s, back, true, &mut || false), Err(RefineError::InvalidInput(_))));
}

/// Random 70x70 maps with rectangles and a border, as the property tests use.
pub(super) fn random_rect_map(seed: &mut u64) -> Grid {
    let mut rects = Vec::new();
    for _ in 0..8 {
        let (x, y) = ((rnd(seed) * 60.0) as i64, (rnd(seed) * 60.0) as i64);
        let (w, h) = (2 + (rnd(seed) * 12.0) as i64, 2 + (rnd(seed) * 12.0) as i64);
        rects.push((x, y, w, h));
    }
    grid_from(70, 70, |x, y| {
        !(1..69).contains(&x)
            || !(1..69).contains(&y)
            || rects.iter().any(|&(rx, ry, w, h)| x >= rx && x < rx + w && y >= ry && y < ry + h)
    })
}

#[test]
fn under_a_turn_penalty_the_full_search_is_optimal_for_its_own_cost() {
    use super::chain::PoseChain;
    use super::lattice::{Lattice, LatticeRect};
    use super::search::{directional_astar, Outcome, Source, Target};
    let mut seed = 99u64;
    let (radius, fp, tp) = (6.0, 1.5, 3.0);
    let plain = ctx(radius, fp);
    let pen = Directional::new(RefineParams { turn_penalty: tp, ..plain.params().clone() }).unwrap();
    let motion = pen.params().motion();
    let curve_cost = |segs: &[crate::trajectory::Segment]| motion.cost(segs);
    let cost =
        |poses: &[Pose2], free: bool| curve_cost(&PoseChain::new(poses.to_vec(), free).trajectory(&motion).segments);
    let (mut compared, mut final_worse, mut worst_excess) = (0, 0, 0.0f64);
    for _ in 0..30 {
        let g = random_rect_map(&mut seed);
        let map = CollisionMap::new(&g);
        let draw = |seed: &mut u64| loop {
            let p = Point2::new(rnd(seed) * 70.0, rnd(seed) * 70.0);
            if map.disk_free(p, footprint::sampled_radius(fp) + 1e-6) {
                return Pose2::new(p.x, p.y, (rnd(seed) * 2.0 - 1.0) * PI);
            }
        };
        for _ in 0..4 {
            let (s, e) = (draw(&mut seed), draw(&mut seed));
            let free = rnd(&mut seed) < 0.3;
            let all = LatticeRect::all(&Lattice::new(70, 70, plain.params().spacing()));
            let src = [Source { pose: s, g: 0.0, wide: true }];
            let t = Target::Pose { pose: e, free };
            let d24 = Neighbourhood::Directional24;
            let a = directional_astar(&plain, &map, all, d24, &src, t, &mut || false);
            let b = directional_astar(&pen, &map, all, d24, &src, t, &mut || false);
            let (Outcome::Found(a), Outcome::Found(b)) = (a, b) else { continue };
            compared += 1;
            // The search's own cost is the penalised cost of the chain it returns ...
            assert!((b.cost - cost(&b.poses, free)).abs() < 1e-6, "{} vs {}", b.cost, cost(&b.poses, free));
            // ... and no lattice path costs less: not the unpenalised search's path either.
            assert!(b.cost <= cost(&a.poses, free) + 1e-6, "penalised {} > {}", b.cost, cost(&a.poses, free));
            // Final smoothing never makes it dearer.
            let fb = full_search(&pen, &map, s, e, free, d24, &mut || false).unwrap();
            let final_cost = curve_cost(&fb.trajectory.segments);
            assert!(final_cost <= b.cost + 1e-6, "smoothing raised the cost {} -> {final_cost}", b.cost);
            // Against the smoothed unpenalised result: smoothing shortcuts leave the lattice, so a
            // different chain may smooth into something slightly cheaper; only by a hair.
            let fa = full_search(&plain, &map, s, e, free, d24, &mut || false).unwrap();
            let other = curve_cost(&fa.trajectory.segments);
            if final_cost > other + 1e-6 {
                final_worse += 1;
                worst_excess = worst_excess.max(final_cost / other - 1.0);
            }
        }
    }
    assert!(compared >= 40, "only {compared} pairs compared");
    assert!(final_worse * 20 <= compared && worst_excess < 0.005, "{final_worse} of {compared}, worst {worst_excess}");
}

#[test]
fn cheapest_subchain_equals_brute_force_over_all_subchains() {
    use super::chain::PoseChain;
    use super::refine::cheapest_subchain;
    let mut seed = 5u64;
    let (radius, fp, tp) = (4.0, 1.0, 2.5);
    let c = Directional::new(RefineParams {
        turning_radius: radius,
        footprint_radius: fp,
        turn_penalty: tp,
        ..Default::default()
    })
    .unwrap();
    let motion = c.params().motion();
    let link = |a: Pose2, b: Pose2| motion.link(a, b, false);
    let curve_cost = |segs: &[crate::trajectory::Segment]| motion.cost(segs);
    let mut improved = 0;
    for _ in 0..40 {
        let g = random_rect_map(&mut seed);
        let map = CollisionMap::new(&g);
        // A wandering chain of free poses whose consecutive links are free.
        let mut poses = Vec::new();
        let mut tries = 0;
        while poses.len() < 9 && tries < 5000 {
            tries += 1;
            let q = Pose2::new(rnd(&mut seed) * 70.0, rnd(&mut seed) * 70.0, (rnd(&mut seed) * 2.0 - 1.0) * PI);
            if !map.disk_free(q.point(), footprint::sampled_radius(fp) + 1e-6) {
                continue;
            }
            let ok = poses.last().is_none_or(|&l: &Pose2| {
                l.point().distance(q.point()) < 25.0
                    && link(l, q).is_some_and(|s| map.sweep_free(&s, fp, footprint::SEARCH_MARGIN))
            });
            if ok {
                poses.push(q);
            }
        }
        if poses.len() < 9 {
            continue;
        }
        let chain = PoseChain::new(poses.clone(), false);
        let dp = cheapest_subchain(&c, &map, &chain);
        let dp_cost = curve_cost(&dp.trajectory(&motion).segments);
        // Brute force over the 2^7 choices of inner poses.
        let n = poses.len();
        let mut best = f64::INFINITY;
        for mask in 0u32..(1 << (n - 2)) {
            let sub: Vec<Pose2> =
                (0..n).filter(|&k| k == 0 || k == n - 1 || mask & (1 << (k - 1)) != 0).map(|k| poses[k]).collect();
            let links: Option<Vec<_>> = sub.windows(2).map(|w| link(w[0], w[1])).collect();
            let Some(links) = links else { continue };
            if links.iter().all(|s| map.sweep_free(s, fp, footprint::SEARCH_MARGIN)) {
                best = best.min(links.iter().map(|s| curve_cost(s)).sum());
            }
        }
        assert!((dp_cost - best).abs() < 1e-6, "dp {dp_cost} brute force {best}");
        let greedy_like = curve_cost(&chain.trajectory(&motion).segments);
        improved += (dp_cost < greedy_like - 1e-6) as usize;
    }
    assert!(improved >= 5, "only {improved} chains could be shortened");
}

#[test]
fn a_loop_in_the_coarse_chain_sends_a_short_guide_to_the_dense_programme() {
    // Found on a random map: the start faces away from the guide, and the coarse path points
    // only allow a long loop (cost 85), the dense ones a much shorter way round (47). The dense
    // chain is kept, and being no loop, it needs no loop repair.
    let rects = [(33, 22, 7, 9), (53, 38, 11, 9), (51, 19, 5, 2), (41, 33, 6, 10), (1, 29, 6, 8), (6, 10, 10, 9)];
    let g = grid_from(70, 50, |x, y| {
        !(1..69).contains(&x)
            || !(1..49).contains(&y)
            || rects.iter().any(|&(rx, ry, w, h)| x >= rx && x < rx + w && y >= ry && y < ry + h)
    });
    let (radius, fp) = (6.0, 1.5);
    let map = CollisionMap::new(&g);
    let (s, e) = (Pose2::new(51.5, 6.5, -3.0 * PI / 4.0), Pose2::new(34.5, 37.5, PI / 2.0));
    let guide = [(52, 7), (48, 9), (44, 12), (36, 16), (32, 19), (31, 20), (30, 24), (30, 32), (32, 35), (35, 38)];
    let wp: Vec<Point2> = guide.iter().map(|&(x, y)| Point2::new(f64::from(x), f64::from(y))).collect();
    let r = refine(&ctx(radius, fp), &map, &wp, s, e, false, &mut || false).unwrap();
    check(&g, &r.trajectory, radius, fp, s, e, false);
    let cost_of = |name: Stage| {
        let st = r.stats.stages.iter().find(|st| st.name == name)?;
        st.outcome.split("cost ").nth(1)?.split([' ', ')']).next()?.parse::<f64>().ok()
    };
    let (coarse, dense) = (cost_of(Stage::SmoothingCoarse).unwrap(), cost_of(Stage::SmoothingForward).unwrap());
    assert!(dense + 10.0 < coarse, "coarse {coarse}, dense {dense}");
    assert!(r.trajectory.length() <= dense + 0.01, "{} > {dense}", r.trajectory.length());
    assert!(r.stats.stages.iter().all(|st| st.name != Stage::LoopRepair), "{:?}", r.stats.stages);
}

/// Figure 12's jogging corridor, its start and goal, and the parameters the table tests search it
/// with.
fn jogging_corridor() -> (CollisionMap, Pose2, Pose2, RefineParams) {
    let g = grid_from(120, 60, |x, y| {
        let centre = 20.0 + (x.clamp(45, 55) - 45) as f64;
        ((y as f64 + 0.5) - (centre + 0.5)).abs() > 6.5 || !(1..119).contains(&x)
    });
    let params =
        RefineParams { turning_radius: 10.0, footprint_radius: 3.0, lattice_spacing: Some(5), ..Default::default() };
    (CollisionMap::new(&g), Pose2::new(7.5, 20.5, 0.0), Pose2::new(112.5, 30.5, 0.0), params)
}

#[test]
fn warming_fills_what_the_searches_look_up_and_changes_no_plan() {
    // Figure 12's jogging corridor; with reversing both gears are warmed; with unequal repair
    // and fallback neighbourhoods both sets of offsets are.
    let (map, s, e, base) = jogging_corridor();
    let (d8, d24, d48) = (Neighbourhood::Directional8, Neighbourhood::Directional24, Neighbourhood::Directional48);
    let cases = [
        (MotionModel::ReedsShepp, d24, d24, 2 * 8 * 8 * 24),
        (MotionModel::Forward, d48, d8, 8 * 8 * 48),
        (MotionModel::Forward, d8, d24, 8 * 8 * 24),
    ];
    for (motion_model, repair, fallback, expected) in cases {
        let params = RefineParams {
            motion_model,
            repair_neighbourhood: repair,
            fallback_neighbourhood: fallback,
            ..base.clone()
        };
        let cold = Directional::new(params.clone()).unwrap();
        let warm = Directional::new(params).unwrap();
        let warmer = warm.warmer().expect("the first caller gets the filling");
        assert!(warm.warmer().is_none(), "and only the first");
        assert_eq!(warmer.run(), Some(expected), "{motion_model:?} {repair:?} {fallback:?}");
        let filled = warm.edges().filled();
        assert_eq!(filled, expected);
        for n in [repair, fallback] {
            // Directional-8 finds nothing here (figure 12): the same nothing.
            let a = full_search(&cold, &map, s, e, false, n, &mut || false);
            let b = full_search(&warm, &map, s, e, false, n, &mut || false);
            let same = match (&a, &b) {
                (Ok(a), Ok(b)) => (&a.chain, &a.trajectory) == (&b.chain, &b.trajectory),
                (Err(a), Err(b)) => a == b,
                _ => false,
            };
            assert!(same, "warming changes no plan: {a:?} against {b:?}");
        }
        assert!(cold.edges().filled() > 0, "the searches look entries up");
        assert_eq!(warm.edges().filled(), filled, "and none the warming left out");
    }
}

/// A search that fills cold table entries polls after every entry it fills (each takes a
/// fraction of a millisecond, and one expansion looks up hundreds), so a cancel stops it within
/// one entry; with the tables filled it polls only periodically. The searches are the same
/// either way.
#[test]
fn a_search_filling_its_tables_polls_after_every_entry_it_fills() {
    let (map, s, e, params) = jogging_corridor();
    let cold = Directional::new(params.clone()).unwrap();
    let warm = Directional::new(params).unwrap();
    warm.warmer().expect("a new table").run();
    let search = |d: &Directional| {
        let mut polls = 0;
        let found = full_search(d, &map, s, e, false, Neighbourhood::Directional24, &mut || {
            polls += 1;
            false
        });
        (found.map(|r| (r.chain, r.trajectory)), polls)
    };
    let ((cold_found, cold_polls), (warm_found, warm_polls)) = (search(&cold), search(&warm));
    assert!(cold_found.is_ok() && cold_found == warm_found, "{cold_found:?} against {warm_found:?}");
    let filled = cold.edges().filled();
    assert!(
        cold_polls >= filled && filled > warm_polls,
        "polled {cold_polls} times cold, {warm_polls} warm, {filled} filled"
    );
    // Asked to stop once three entries are filled, a cold search stops with three filled (its
    // first expansion alone looks up 192).
    let colder = Directional::new(cold.params().clone()).unwrap();
    let stopped =
        full_search(&colder, &map, s, e, false, Neighbourhood::Directional24, &mut || colder.edges().filled() >= 3);
    assert!(stopped.is_err(), "{stopped:?}");
    assert_eq!(colder.edges().filled(), 3);
}

#[test]
fn tables_are_kept_with_their_filling_under_parameters_they_do_not_depend_on() {
    let d = ctx(10.0, 3.0);
    let warmer = d.warmer().expect("the first caller gets the filling");
    // A penalty: the same tables, already handed out.
    let same = d.with_params(RefineParams { turn_penalty: 0.5, ..d.params().clone() }).unwrap();
    assert!(std::ptr::eq(same.edges(), d.edges()));
    assert!(same.warmer().is_none(), "a kept table is not filled again");
    // A wider neighbourhood: the same tables, a filler for the 24 new offsets only; back to the
    // narrower one, nothing new.
    let wider = RefineParams { repair_neighbourhood: Neighbourhood::Directional48, ..d.params().clone() };
    let wider = same.with_params(wider).unwrap();
    assert!(std::ptr::eq(wider.edges(), d.edges()));
    assert_eq!(wider.warmer().expect("new offsets to fill").run(), Some(8 * 8 * 24));
    assert!(wider.warmer().is_none() && d.with_params(d.params().clone()).unwrap().warmer().is_none());
    // The turning radius: new tables, to be filled.
    let other = d.with_params(RefineParams { turning_radius: 12.0, ..d.params().clone() }).unwrap();
    assert!(!std::ptr::eq(other.edges(), d.edges()));
    assert!(other.warmer().is_some());
    // Tables nobody holds any more: the filler does nothing and says so. (The warmer holds them
    // weakly, so it keeps nothing alive.)
    drop((d, same, wider));
    assert_eq!(warmer.run(), None);
}

/// A filler whose table is dropped while it runs (the parameters replaced) stops after the pair of
/// headings it is filling: at a large turning radius an entry sweeps a long curve, and a filler
/// that looked only once per start heading ran on for minutes after its radius was abandoned.
#[test]
fn a_filler_stops_within_one_pair_of_headings_when_its_table_is_dropped() {
    let d = ctx(10.0, 3.0);
    let warmer = d.warmer().expect("a new table");
    let mut held = Some(d);
    let mut pairs = 0;
    let done = warmer.run_observed(|| {
        pairs += 1;
        if pairs == 3 {
            held = None;
        }
    });
    assert!(held.is_none());
    assert_eq!((done, pairs), (None, 3));
}
