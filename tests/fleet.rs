//! A fleet of vehicle profiles on one map: each profile plans exactly as a planner of its own on
//! the same map would (the same trajectories, byte for byte), its derived data equals a fresh
//! build after any sequence of updates, the annotations are shared (one site, every vehicle
//! tracked once), a parameter change touches its own profile only, and an unknown profile is
//! refused naming the ones served.

use blockstar_planner::directional::MotionModel;
use blockstar_planner::geometry::Pose2;
use blockstar_planner::map::{MapInfo, OccupancyMap};
use blockstar_planner::map_io::load_map_file;
use blockstar_planner::planner::{Budget, Fleet, Plan, PlanError, Planner, PlannerConfig, StatusCode};
use blockstar_planner::polygon::Polygon;
use std::f64::consts::PI;
use std::sync::Arc;

fn rng(mut seed: u64) -> impl FnMut() -> f64 {
    move || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Three vehicles as a mixed site has them: a small AMR turning on the spot, a car-like robot
/// with reversing, and a rectangular tugger with `base_link` on its rear axle.
fn profiles() -> Vec<(String, PlannerConfig)> {
    let amr = PlannerConfig { robot_radius: 0.2, min_turning_radius: 0.0, ..Default::default() };
    let car = PlannerConfig {
        robot_radius: 0.3,
        min_turning_radius: 0.6,
        motion_model: MotionModel::ReedsShepp,
        ..Default::default()
    };
    let tugger = PlannerConfig {
        footprint: Some(Polygon::parse_nav2("[[0.9, 0.3], [0.9, -0.3], [-0.2, -0.3], [-0.2, 0.3]]").unwrap().unwrap()),
        min_turning_radius: 0.8,
        ..Default::default()
    };
    vec![("GridBased".into(), amr), ("Car".into(), car), ("Tugger".into(), tugger)]
}

/// A map of `w` x `h` cells of `resolution` m, its origin at (0, 0).
fn info(w: usize, h: usize, resolution: f64) -> MapInfo {
    MapInfo { width: w, height: h, resolution, origin: Pose2::new(0.0, 0.0, 0.0), frame_id: "map".into() }
}

fn depot() -> OccupancyMap {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ros_maps/depot.yaml");
    load_map_file(&path, "map", usize::MAX).unwrap()
}

/// The plan's outcome in a comparable form: the trajectory's text, or the error.
fn outcome(result: Result<Plan, PlanError>) -> String {
    match result {
        Ok(plan) => format!("{:?}", plan.trajectory),
        Err(e) => format!("{:?}: {}", e.code, e.message),
    }
}

fn random_pairs(map: &OccupancyMap, n: usize, seed: u64) -> Vec<(Pose2, Pose2)> {
    let (w, h) = (map.info.width as f64 * map.info.resolution, map.info.height as f64 * map.info.resolution);
    let mut r = rng(seed);
    let mut pose = move || Pose2::new(r() * w, r() * h, (r() * 2.0 - 1.0) * PI);
    (0..n).map(|_| (pose(), pose())).collect()
}

#[test]
fn each_profile_plans_as_a_planner_of_its_own() {
    let map = depot();
    let mut fleet = Fleet::new(profiles()).unwrap();
    fleet.set_map(map.clone()).unwrap();
    let pairs = random_pairs(&map, 12, 5);
    let mut solved = 0;
    for (name, config) in profiles() {
        let mut alone = Planner::with_lddb(config, fleet.default_planner().lddb().clone()).unwrap();
        alone.set_map(map.clone()).unwrap();
        let member = fleet.planner(&name).unwrap();
        for &(s, g) in &pairs {
            let budget = || Budget::without_deadline(None);
            let (a, b) = (member.plan(s, g, false, &budget()), alone.plan(s, g, false, &budget()));
            solved += usize::from(a.is_ok());
            assert_eq!(outcome(a), outcome(b), "{name}: {s:?} -> {g:?}");
        }
    }
    assert!(solved >= 6, "only {solved} plans solved: the comparison would not exercise planning");
}

/// The site keeps a mask for each distinct vehicle of the profiles, and no other.
fn assert_tracks_exactly_the_profiles(fleet: &Fleet) {
    let tracked = fleet.default_planner().map().unwrap().site.clearance.tracked_vehicles();
    let mut wanted = Vec::new();
    for (_, p) in fleet.profiles() {
        let v = p.map().unwrap().vehicle;
        if !wanted.contains(&v) {
            wanted.push(v);
        }
    }
    assert_eq!(tracked.len(), wanted.len(), "tracked {tracked:?}, wanted {wanted:?}");
    assert!(wanted.iter().all(|v| tracked.contains(v)), "tracked {tracked:?}, wanted {wanted:?}");
}

#[test]
fn one_site_serves_every_profile() {
    let mut fleet = Fleet::new(profiles()).unwrap();
    fleet.set_map(depot()).unwrap();
    let sites: Vec<_> = fleet.profiles().map(|(_, p)| p.map().unwrap().site.clone()).collect();
    assert!(sites.iter().all(|s| Arc::ptr_eq(s, &sites[0])), "the profiles do not share one site");
    assert_tracks_exactly_the_profiles(&fleet);
    // The tugger's inscribed disk about its rear axle is the AMR's: their masks are one.
    let vehicle = |name: &str| fleet.planner(name).unwrap().map().unwrap().vehicle;
    assert_eq!(vehicle("GridBased"), vehicle("Tugger"));
    assert_eq!(sites[0].clearance.tracked_vehicles().len(), 2);
}

/// After every step of a random sequence of patches and whole-map replacements, every profile's
/// derived data equals a fresh planner's of its own on the same map, and the site is still shared.
#[test]
fn updates_reach_every_profile_as_a_fresh_build() {
    let info = info(48, 36, 0.1);
    // A fourth profile prices the map as the car does (same inscribed disk and cost settings).
    let mut profiles = profiles();
    let twin = PlannerConfig { min_turning_radius: 0.9, ..profiles[1].1.clone() };
    profiles.push(("Twin".into(), twin));
    let mut fleet = Fleet::new(profiles).unwrap();
    fleet.set_map(OccupancyMap { info: info.clone(), data: vec![0; 48 * 36] }).unwrap();
    let mut r = rng(9);
    let mut rnd = |n: i64| ((r() * n as f64) as i64).min(n - 1);
    let (w, h) = (48i64, 36i64);
    let mut previous = fleet.default_planner().map().unwrap().clone();
    let twin_config = fleet.planner("Twin").unwrap().config().clone();
    let mut previous_twin = fleet.planner("Twin").unwrap().map().unwrap().clone();
    // The map as the test itself keeps it, patch by patch: the fleet's copy must equal it.
    let mut expected = OccupancyMap { info: info.clone(), data: vec![0; 48 * 36] };
    for step in 0..24 {
        let updates = if step % 6 == 5 {
            let mut next = expected.clone();
            for _ in 0..8 {
                let k = rnd(w * h) as usize;
                next.data[k] = [0, 100, -1, 40][rnd(4) as usize];
            }
            expected = next.clone();
            fleet.update_map(next).unwrap()
        } else {
            let (pw, ph) = (1 + rnd(8), 1 + rnd(8));
            let (x, y) = (rnd(w - pw + 1), rnd(h - ph + 1));
            let v = [0i8, 100, -1, 50][rnd(4) as usize];
            for yy in y..y + ph {
                for xx in x..x + pw {
                    expected.data[(yy * w + xx) as usize] = v;
                }
            }
            fleet.apply_patch(x, y, pw, ph, &vec![v; (pw * ph) as usize]).unwrap()
        };
        assert_eq!(updates.len(), 4);
        assert_eq!(fleet.default_planner().map().unwrap().site.map(), &expected, "the held map after step {step}");
        // What plans in flight hold stays as it was: the donor's map, and a map taking the
        // donor's copy (the twin's).
        for (held, config) in [(&previous, fleet.default_planner().config()), (&previous_twin, &twin_config)] {
            let mut then = Planner::new(config.clone()).unwrap();
            then.set_map(held.site.map().clone()).unwrap();
            assert_eq!(held.collision, then.map().unwrap().collision, "a plan in flight saw step {step}");
        }
        previous = fleet.default_planner().map().unwrap().clone();
        previous_twin = fleet.planner("Twin").unwrap().map().unwrap().clone();
        let site = fleet.default_planner().map().unwrap().site.clone();
        for (name, member) in fleet.profiles() {
            let held = member.map().unwrap();
            assert!(Arc::ptr_eq(&held.site, &site), "{name} left the shared site at step {step}");
            let mut fresh = Planner::new(member.config().clone()).unwrap();
            fresh.set_map(expected.clone()).unwrap();
            let f = fresh.map().unwrap();
            assert_eq!(held.vehicle_mask(), f.vehicle_mask(), "{name}: mask differs after step {step}");
            assert_eq!(held.blocks, f.blocks, "{name}: pattern codes differ after step {step}");
            assert_eq!(held.collision, f.collision, "{name}: collision map differs after step {step}");
            assert_eq!(held.hierarchy, f.hierarchy, "{name}: cluster graph differs after step {step}");
        }
        // One copy of the blocked cells' counts for all (one traversability); the costs of
        // every profile read the site's one copy of the values (and hold no copy of their own).
        let maps: Vec<_> = fleet.profiles().map(|(_, p)| p.map().unwrap().clone()).collect();
        assert!(maps.iter().all(|m| m.collision.shares_obstacles_with(&maps[0].collision)), "step {step}");
        assert!(maps.iter().all(|m| m.collision.costs().unwrap().reads(m.site.map())), "step {step}");
        drop(maps);
    }
    // A bad patch changes nothing for anyone.
    let before: Vec<_> = fleet.profiles().map(|(_, p)| p.map().unwrap().clone()).collect();
    assert_eq!(fleet.apply_patch(w - 1, 0, 2, 1, &[0, 0]).unwrap_err().code, StatusCode::InvalidInput);
    for ((_, p), b) in fleet.profiles().zip(&before) {
        assert!(Arc::ptr_eq(p.map().unwrap(), b));
    }
}

#[test]
fn a_parameter_change_touches_its_own_profile_only() {
    let mut fleet = Fleet::new(profiles()).unwrap();
    fleet.set_map(depot()).unwrap();
    let before: Vec<_> = fleet.profiles().map(|(_, p)| p.map().unwrap().clone()).collect();
    // A turning radius: the annotations stay, the other profiles keep their maps as they were.
    let car = PlannerConfig { min_turning_radius: 1.2, ..fleet.planner("Car").unwrap().config().clone() };
    fleet.set_config("Car", car).unwrap();
    assert_eq!(fleet.planner("Car").unwrap().config().min_turning_radius, 1.2);
    for ((name, p), b) in fleet.profiles().zip(&before) {
        let now = p.map().unwrap();
        assert!(Arc::ptr_eq(&now.site, &b.site), "the annotations were made anew for a turning radius");
        assert_eq!(Arc::ptr_eq(now, b), name != "Car", "{name}");
    }
    // A vehicle's size: the annotations are made anew for all, the others plan as before.
    let pairs = random_pairs(before[0].site.map(), 8, 21);
    let plans = |f: &Fleet, name: &str| -> Vec<String> {
        let p = f.planner(name).unwrap();
        pairs.iter().map(|&(s, g)| outcome(p.plan(s, g, false, &Budget::without_deadline(None)))).collect()
    };
    let (amr, tugger) = (plans(&fleet, "GridBased"), plans(&fleet, "Tugger"));
    let bigger = PlannerConfig { robot_radius: 0.45, ..fleet.planner("Car").unwrap().config().clone() };
    fleet.set_config("Car", bigger).unwrap();
    let site = fleet.default_planner().map().unwrap().site.clone();
    assert!(!Arc::ptr_eq(&site, &before[0].site));
    assert_tracks_exactly_the_profiles(&fleet);
    assert_eq!(plans(&fleet, "GridBased"), amr);
    assert_eq!(plans(&fleet, "Tugger"), tugger);
    // Refused changes change nothing.
    let threshold = PlannerConfig { occupied_threshold: 30, ..fleet.planner("Car").unwrap().config().clone() };
    let e = fleet.set_config("Car", threshold).unwrap_err();
    assert_eq!(e.code, StatusCode::InvalidInput);
    assert!(e.message.contains("occupied_threshold"), "{}", e.message);
    assert_eq!(fleet.planner("Car").unwrap().config().robot_radius, 0.45);
    assert!(Arc::ptr_eq(&fleet.default_planner().map().unwrap().site, &site));
    // The map's threshold changes for every profile in one step, and the map is annotated anew.
    let all: Vec<PlannerConfig> =
        fleet.profiles().map(|(_, p)| PlannerConfig { occupied_threshold: 30, ..p.config().clone() }).collect();
    fleet.set_configs(all).unwrap();
    assert!(fleet.profiles().all(|(_, p)| p.config().occupied_threshold == 30));
    let now = fleet.default_planner().map().unwrap().site.clone();
    assert!(!Arc::ptr_eq(&now, &site));
    assert_eq!(now.clearance.config().classifier.occupied_threshold, 30);
    assert_tracks_exactly_the_profiles(&fleet);
}

#[test]
fn profiles_are_named_and_checked() {
    let fleet = Fleet::new(profiles()).unwrap();
    assert_eq!(fleet.names(), ["GridBased", "Car", "Tugger"]);
    assert_eq!(fleet.planner("").unwrap().config().robot_radius, 0.2);
    let e = fleet.planner("Forklift").unwrap_err();
    assert_eq!(e.code, StatusCode::InvalidPlanner);
    assert!(e.message.contains("Forklift") && e.message.contains("Tugger"), "{}", e.message);
    let mut twice = profiles();
    twice[1].0 = "GridBased".into();
    assert_eq!(Fleet::new(twice).unwrap_err().code, StatusCode::InvalidInput);
    assert_eq!(Fleet::new(Vec::new()).unwrap_err().code, StatusCode::InvalidInput);
    let mut bad = profiles();
    bad[2].1.robot_radius = f64::NAN;
    bad[2].1.footprint = None;
    assert_eq!(Fleet::new(bad).unwrap_err().code, StatusCode::InvalidInput);
}

/// A door the AMR passes and the tugger does not: the AMR's plan goes through it, the tugger's
/// is refused (there is no way round).
#[test]
fn a_narrow_door_is_for_the_small_vehicle_only() {
    // 6 m x 5 m at 5 cm, a wall across at y = 2.5 m with a 0.55 m door: the AMR (0.4 m) fits,
    // the tugger (0.6 m wide) does not.
    let (w, h) = (120usize, 100usize);
    let mut data = vec![0i8; w * h];
    for x in 0..w {
        if !(55..66).contains(&x) {
            data[50 * w + x] = 100;
        }
    }
    let info = info(w, h, 0.05);
    let mut fleet = Fleet::new(profiles()).unwrap();
    fleet.set_map(OccupancyMap { info, data }).unwrap();
    let (s, g) = (Pose2::new(3.0, 1.0, PI / 2.0), Pose2::new(3.0, 4.0, PI / 2.0));
    let budget = || Budget::without_deadline(None);
    let amr = fleet.planner("GridBased").unwrap().plan(s, g, false, &budget()).unwrap();
    let through = amr.trajectory.sample(0.02).iter().any(|p| (p.y - 2.525).abs() < 0.03 && (p.x - 3.025).abs() < 0.3);
    assert!(through, "the AMR does not pass the door");
    let e = fleet.planner("Tugger").unwrap().plan(s, g, false, &budget()).unwrap_err();
    assert_eq!(e.code, StatusCode::NoValidPath, "{}", e.message);
}

/// Profiles of one vehicle on one lattice (a careful variant of the tugger: other penalties,
/// other costs) share one set of Directional A* tables, filled once; a profile whose turning
/// radius differs has its own, and shares again once it is back to the same vehicle. Sharing
/// changes no plan.
#[test]
fn profiles_of_one_vehicle_share_directional_tables() {
    let map = depot();
    let mut profiles = profiles();
    let tugger = profiles[2].1.clone();
    let careful = PlannerConfig { cost_penalty: 6.0, turn_penalty: 0.3, ..tugger.clone() };
    profiles.push(("Careful".into(), careful.clone()));
    let mut fleet = Fleet::new(profiles).unwrap();
    fleet.set_map(map.clone()).unwrap();
    let edges = |f: &Fleet, name: &str| {
        let d = f.planner(name).unwrap().map().unwrap().directional().unwrap().clone();
        d.edges() as *const _ as usize
    };
    assert_eq!(edges(&fleet, "Careful"), edges(&fleet, "Tugger"));
    assert_ne!(edges(&fleet, "Car"), edges(&fleet, "Tugger"));
    // Its plans are a planner of its own's.
    let mut alone = Planner::with_lddb(careful.clone(), fleet.default_planner().lddb().clone()).unwrap();
    alone.set_map(map.clone()).unwrap();
    let mut solved = 0;
    for (s, g) in random_pairs(&map, 40, 77) {
        let budget = || Budget::without_deadline(None);
        let (a, b) =
            (fleet.planner("Careful").unwrap().plan(s, g, false, &budget()), alone.plan(s, g, false, &budget()));
        solved += usize::from(a.is_ok());
        assert_eq!(outcome(a), outcome(b), "{s:?} -> {g:?}");
    }
    assert!(solved >= 3, "only {solved} plans solved");
    // Parameters the tables do not depend on keep them shared; a turning radius does not.
    fleet.set_config("Careful", PlannerConfig { cost_penalty: 2.0, ..careful.clone() }).unwrap();
    assert_eq!(edges(&fleet, "Careful"), edges(&fleet, "Tugger"));
    fleet.set_config("Careful", PlannerConfig { min_turning_radius: 1.1, ..careful.clone() }).unwrap();
    assert_ne!(edges(&fleet, "Careful"), edges(&fleet, "Tugger"));
    fleet.set_config("Careful", careful).unwrap();
    assert_eq!(edges(&fleet, "Careful"), edges(&fleet, "Tugger"), "back to the tugger's vehicle: its tables again");
}

#[test]
fn lent_maps_are_updated_in_place_and_clones_copy() {
    let mut fleet = Fleet::new(profiles()).unwrap();
    fleet.set_map(depot()).unwrap();
    let patch = |fleet: &mut Fleet| fleet.apply_patch(10, 10, 2, 2, &[100; 4]).unwrap();
    // A clone (as a plan in flight holds one) makes the update copy what both hold.
    let mut clone = fleet.clone();
    assert!(patch(&mut clone).iter().all(|u| u.copied));
    // Lent, the map is held once: changed in place, and the same as the clone's after the patch.
    let mut lent = fleet.lend_maps();
    assert!(fleet.default_planner().map().is_none() && fleet.memory().is_none());
    assert_eq!(fleet.profiles().count(), lent.profiles().count());
    assert!(patch(&mut lent).iter().all(|u| !u.copied));
    assert!(patch(&mut lent).iter().all(|u| !u.copied), "still held once after an update");
    let (a, b) = (lent.default_planner().map().unwrap(), clone.default_planner().map().unwrap());
    assert_eq!(a.site.map().data, b.site.map().data);
}
