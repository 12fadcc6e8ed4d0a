//! Tests of planning with reversing (the Reeds-Shepp motion model): the gear-aware search
//! prices what it returns, is never dearer than forwards only, backs out of what traps a
//! forward-only vehicle, and its penalties steer how much and how often it reverses.

use super::chain::PoseChain;
use super::lattice::{Lattice, LatticeRect};
use super::search::{directional_astar, Outcome, Source, Target};
use super::tests::{block_astar_guide, grid_from, random_rect_map, rnd};
use super::*;
use crate::geometry::{Point2, Pose2};
use crate::trajectory::Trajectory;
use std::f64::consts::PI;

fn params(radius: f64, fp: f64, model: MotionModel, reverse_penalty: f64, change_penalty: f64) -> RefineParams {
    RefineParams {
        turning_radius: radius,
        footprint_radius: fp,
        motion_model: model,
        reverse_penalty,
        change_penalty,
        ..Default::default()
    }
}

/// Free poses of a random rectangle map, drawn as the other tests do.
fn draw(map: &CollisionMap, fp: f64, seed: &mut u64) -> Pose2 {
    loop {
        let p = Point2::new(rnd(seed) * 70.0, rnd(seed) * 70.0);
        if map.disk_free(p, footprint::sampled_radius(fp) + 1e-6) {
            return Pose2::new(p.x, p.y, (rnd(seed) * 2.0 - 1.0) * PI);
        }
    }
}

/// The independent checks of a trajectory with reversing: verification for a vehicle that may
/// reverse, and each segment's gear consistent with its motion (a reverse segment moves against
/// the heading it starts with, a forward one along it).
fn check_reverse(map: &CollisionMap, t: &Trajectory, p: &RefineParams, s: Pose2, e: Pose2, free: bool) {
    verify_trajectory(map, t, &p.vehicle(), s, e, free).unwrap();
    for seg in t.segments.iter().filter(|seg| seg.length > 1e-6) {
        let q = seg.pose_at(1e-4f64.min(seg.length));
        let ahead = (q.x - seg.start.x) * seg.start.yaw.cos() + (q.y - seg.start.y) * seg.start.yaw.sin();
        assert_eq!(ahead < 0.0, seg.reverse, "{seg:?}");
    }
}

#[test]
fn the_search_with_a_gear_costs_what_its_chain_costs_and_never_more_than_forwards() {
    let mut seed = 17u64;
    let (radius, fp) = (6.0, 1.5);
    let forward = Directional::new(params(radius, fp, MotionModel::Forward, 1.0, 0.0)).unwrap();
    let rs = Directional::new(params(radius, fp, MotionModel::ReedsShepp, 2.0, 4.0)).unwrap();
    let motion = rs.params().motion();
    let (mut compared, mut only_rs, mut with_reverse, mut worst) = (0, 0, 0, 0f64);
    for _ in 0..25 {
        let g = random_rect_map(&mut seed);
        let map = CollisionMap::new(&g);
        for _ in 0..4 {
            let (s, e) = (draw(&map, fp, &mut seed), draw(&map, fp, &mut seed));
            let free = rnd(&mut seed) < 0.3;
            let all = LatticeRect::all(&Lattice::new(70, 70, rs.params().spacing()));
            let src = [Source { pose: s, g: 0.0, wide: true }];
            let target = Target::Pose { pose: e, free };
            let d24 = Neighbourhood::Directional24;
            let f = directional_astar(&forward, &map, all, d24, &src, target, &mut || false);
            let Outcome::Found(r) = directional_astar(&rs, &map, all, d24, &src, target, &mut || false) else {
                assert!(!matches!(f, Outcome::Found(_)), "forwards found what the search with reversing did not");
                continue;
            };
            // The search's own cost is the cost of the chain it returns, cusps at its poses included.
            let chain = PoseChain { poses: r.poses.clone(), goal_free: free, gears: r.gears.clone() };
            let traj = chain.trajectory(&motion);
            assert!(
                (r.cost - motion.cost(&traj.segments)).abs() < 1e-6,
                "{} vs {}",
                r.cost,
                motion.cost(&traj.segments)
            );
            check_reverse(&map, &traj, rs.params(), s, e, free);
            with_reverse += traj.segments.iter().any(|seg| seg.reverse) as usize;
            match f {
                // A forward path is a path with reversing too, at its length; only a hair dearer
                // (the heuristic table is exact on lattice goals only, so A* may settle a hair
                // above the lattice's best).
                Outcome::Found(f) => {
                    compared += 1;
                    worst = worst.max(r.cost / f.cost - 1.0);
                }
                _ => only_rs += 1,
            }
            // The refined result (final smoothing, verification) holds too.
            let refined = full_search(&rs, &map, s, e, free, d24, &mut || false).unwrap();
            check_reverse(&map, &refined.trajectory, rs.params(), s, e, free);
            assert!(motion.cost(&refined.trajectory.segments) <= r.cost + 1e-6);
        }
    }
    assert!(compared >= 40 && only_rs >= 3 && with_reverse >= 10, "{compared} {only_rs} {with_reverse}");
    assert!(worst < 0.005, "with reversing up to {:.3}% dearer than forwards", worst * 100.0);
}

/// A vehicle nose-in at the end of a slot: forwards it is trapped (refused at once, by proof);
/// with reversing it backs out, and every stage's result verifies.
#[test]
fn a_start_nose_in_at_a_wall_backs_out_with_reversing() {
    let (radius, fp) = (6.0, 1.5);
    // A slot 5 cells wide ending in a wall at x = 7, open to the east.
    let g = grid_from(70, 40, |x, y| {
        !(1..69).contains(&x) || !(1..39).contains(&y) || x < 7 || ((y == 17 || y == 23) && x < 24)
    });
    let map = CollisionMap::new(&g);
    let start = Pose2::new(10.5, 20.5, PI);
    for (goal, free) in [
        (Pose2::new(55.5, 20.5, 0.0), false),
        (Pose2::new(50.5, 8.5, PI / 2.0), false),
        (Pose2::new(40.5, 30.5, 0.0), true),
    ] {
        let mask = map.centre_mask(fp, 0.5);
        let guide = block_astar_guide(&mask, start.point(), goal.point()).expect("a disk reaches the goal");
        let fwd = Directional::new(params(radius, fp, MotionModel::Forward, 1.0, 0.0)).unwrap();
        let refused = refine(&fwd, &map, &guide, start, goal, free, &mut || false).unwrap_err();
        assert!(matches!(&refused, RefineError::NoPath(why) if why.contains("ahead")), "{refused}");
        for (rp, cp) in [(1.0, 0.0), (3.0, 10.0)] {
            let p = params(radius, fp, MotionModel::ReedsShepp, rp, cp);
            let rs = Directional::new(p.clone()).unwrap();
            let r = refine(&rs, &map, &guide, start, goal, free, &mut || false).unwrap();
            check_reverse(&map, &r.trajectory, &p, start, goal, free);
            assert!(r.trajectory.segments[0].reverse, "it starts by backing out: {:?}", r.trajectory.segments[0]);
        }
    }
}

/// Over many random pairs, a high change penalty buys fewer cusps, and a high reverse penalty
/// less reversing, than none: the user's two controls act as documented.
#[test]
fn the_change_penalty_cuts_cusps_and_the_reverse_penalty_cuts_reversing() {
    let mut seed = 123u64;
    let (radius, fp) = (6.0, 1.5);
    let settings = [(1.0, 0.0), (1.0, 60.0), (6.0, 0.0)];
    let ctxs: Vec<Directional> = settings
        .iter()
        .map(|&(rp, cp)| Directional::new(params(radius, fp, MotionModel::ReedsShepp, rp, cp)).unwrap())
        .collect();
    let mut cusps = [0usize; 3];
    let mut reverse = [0f64; 3];
    let mut solved = 0;
    for _ in 0..12 {
        let g = random_rect_map(&mut seed);
        let map = CollisionMap::new(&g);
        let mask = map.centre_mask(fp, 0.5);
        for _ in 0..5 {
            let (s, e) = (draw(&map, fp, &mut seed), draw(&map, fp, &mut seed));
            let Some(guide) = block_astar_guide(&mask, s.point(), e.point()) else { continue };
            let results: Vec<_> = ctxs.iter().map(|c| refine(c, &map, &guide, s, e, false, &mut || false)).collect();
            if results.iter().any(|r| r.is_err()) {
                continue;
            }
            solved += 1;
            for (k, r) in results.iter().enumerate() {
                let t = &r.as_ref().unwrap().trajectory;
                check_reverse(&map, t, ctxs[k].params(), s, e, false);
                cusps[k] += t.cusps();
                reverse[k] += t.reverse_length();
            }
        }
    }
    assert!(solved >= 30, "{solved}");
    assert!(cusps[1] * 2 <= cusps[0] && cusps[0] >= 10, "cusps without / with change penalty: {cusps:?}");
    assert!(reverse[2] * 2.0 <= reverse[0] && reverse[0] > 0.0, "reverse length without / with penalty: {reverse:?}");
}
