//! End-to-end tests of the planner facade: every answer's status code, and every returned
//! trajectory checked against a brute-force footprint test and closed-form Dubins lengths.

use blockstar_planner::directional::{self, Neighbourhood};
use blockstar_planner::geometry::{normalize_angle, Point2, Pose2};
use blockstar_planner::map::{MapInfo, MapUnits, OccupancyMap};
use blockstar_planner::map_io::load_map_file;
use blockstar_planner::planner::{Budget, Plan, PlanError, Planner, PlannerConfig, StatusCode};
use blockstar_planner::stages::{SolvedBy, Stage};
use blockstar_planner::trajectory::SegmentKind;
use std::f64::consts::PI;

const RES: f64 = 0.05;

/// A map from text rows (row 0 is the top line, as drawn; '@' occupied, '?' unknown), each
/// character `scale x scale` cells.
fn map_from_rows(rows: &[&str], scale: usize) -> OccupancyMap {
    let h = rows.len() * scale;
    let w = rows[0].len() * scale;
    let mut data = vec![0i8; w * h];
    for (r, row) in rows.iter().enumerate() {
        for (c, ch) in row.chars().enumerate() {
            let v = match ch {
                '@' => 100,
                '?' => -1,
                _ => 0,
            };
            for dy in 0..scale {
                for dx in 0..scale {
                    // Row 0 of the drawing is the top of the map: the last map row.
                    let y = h - 1 - (r * scale + dy);
                    data[y * w + c * scale + dx] = v;
                }
            }
        }
    }
    let info =
        MapInfo { width: w, height: h, resolution: RES, origin: Pose2::new(-1.0, 2.0, 0.0), frame_id: "map".into() };
    OccupancyMap::new(info, data, usize::MAX).unwrap()
}

fn planner(map: OccupancyMap, robot_radius: f64, turning_radius: f64) -> Planner {
    let config = PlannerConfig { robot_radius, min_turning_radius: turning_radius, ..PlannerConfig::default() };
    let mut p = Planner::new(config).unwrap();
    p.set_map(map).unwrap();
    p
}

/// A planner pricing lengths alone (`cost_penalty` 0): the shortest legal paths, where a test
/// is about the stages that find them.
fn shortest_planner(map: OccupancyMap, robot_radius: f64, turning_radius: f64) -> Planner {
    let config = PlannerConfig {
        robot_radius,
        min_turning_radius: turning_radius,
        cost_penalty: 0.0,
        ..PlannerConfig::default()
    };
    let mut p = Planner::new(config).unwrap();
    p.set_map(map).unwrap();
    p
}

fn plan(p: &Planner, s: Pose2, g: Pose2, free: bool) -> Result<Plan, PlanError> {
    p.plan(s, g, free, &Budget::without_deadline(None))
}

/// Brute force: the disk of `radius` metres around every pose sampled every 5 mm along the
/// trajectory touches no cell that is occupied (>= threshold) or unknown, nor leaves the map.
fn assert_footprint_free(map: &OccupancyMap, plan: &Plan, radius: f64) {
    let info = &map.info;
    let t = &plan.trajectory;
    let n = (t.length() / 0.005).ceil() as usize + 1;
    for k in 0..=n {
        let p = t.pose_at(t.length() * k as f64 / n as f64).unwrap();
        let c = info.world_to_cell(p.point());
        let r = radius / info.resolution;
        let (x0, x1) = ((c.x - r - 1.0).floor() as i64, (c.x + r + 1.0).ceil() as i64);
        let (y0, y1) = ((c.y - r - 1.0).floor() as i64, (c.y + r + 1.0).ceil() as i64);
        for y in y0..=y1 {
            for x in x0..=x1 {
                let inside = x >= 0 && y >= 0 && (x as usize) < info.width && (y as usize) < info.height;
                let blocked = !inside || {
                    let v = map.data[y as usize * info.width + x as usize];
                    !(0..65).contains(&v)
                };
                if blocked {
                    // Distance from the point to the cell square.
                    let dx = (x as f64 - c.x).max(0.0).max(c.x - (x as f64 + 1.0));
                    let dy = (y as f64 - c.y).max(0.0).max(c.y - (y as f64 + 1.0));
                    assert!(dx.hypot(dy) > r, "footprint at {p:?} touches cell ({x}, {y})");
                }
            }
        }
    }
}

fn assert_legal(map: &OccupancyMap, plan: &Plan, s: Pose2, g: Pose2, free: bool, radius: f64, turning: f64) {
    let t = &plan.trajectory;
    assert!(t.check_continuity() < 1e-6, "discontinuous trajectory");
    for seg in &t.segments {
        assert!(seg.curvature.abs() <= 1.0 / turning + 1e-9, "curvature {} above the limit", seg.curvature);
    }
    let a = t.pose_at(0.0).unwrap();
    let b = t.pose_at(t.length()).unwrap();
    assert!(a.point().distance(s.point()) < 1e-6 && (a.yaw - s.yaw).sin().abs() < 1e-6, "starts at {a:?}, not {s:?}");
    assert!(b.point().distance(g.point()) < 1e-6, "ends at {b:?}, not {g:?}");
    if !free {
        assert!(
            (b.yaw - g.yaw).sin().abs() < 1e-6 && (b.yaw - g.yaw).cos() > 0.0,
            "final heading {} not {}",
            b.yaw,
            g.yaw
        );
    }
    assert_footprint_free(map, plan, radius);
    // The published poses are the trajectory, sampled no further apart than path_spacing.
    for w in plan.poses.windows(2) {
        assert!(w[0].point().distance(w[1].point()) <= 0.05 + 1e-9);
    }
}

/// Closed-form shortest Dubins lengths for two cases, through the whole pipeline in open space.
#[test]
fn open_space_matches_dubins_closed_forms() {
    let rows = vec!["................................................"; 48];
    let map = map_from_rows(&rows, 2); // 96 x 96 cells = 4.8 m square
    let p = planner(map.clone(), 0.1, 0.5);
    let o = map.info.origin;
    // Straight ahead 2 m: exactly 2.
    let s = Pose2::new(o.x + 1.0, o.y + 2.4, 0.0);
    let g = Pose2::new(o.x + 3.0, o.y + 2.4, 0.0);
    let r = plan(&p, s, g, false).unwrap();
    assert_legal(&map, &r, s, g, false, 0.1, 0.5);
    assert!((r.trajectory.length() - 2.0).abs() < 1e-6, "length {}", r.trajectory.length());
    // A U-turn onto the parallel line 2 r away: a half circle, pi r.
    let s = Pose2::new(o.x + 2.0, o.y + 1.5, 0.0);
    let g = Pose2::new(o.x + 2.0, o.y + 2.5, PI);
    let r = plan(&p, s, g, false).unwrap();
    assert_legal(&map, &r, s, g, false, 0.1, 0.5);
    let len = r.trajectory.length();
    assert!((PI * 0.5 - 1e-6..=PI * 0.5 * 1.02).contains(&len), "U-turn length {len}, closed form {}", PI * 0.5);
}

/// At a turning radius of 0 the vehicle turns on the spot: at the start (from its heading), at
/// each corner and at the goal (to its heading, unless free), as explicit turns, so every
/// segment joins the next in position and heading; turning round in place is one such turn.
#[test]
fn at_radius_zero_every_turn_on_the_spot_is_a_segment() {
    let mut rows = vec!["................................................"; 48];
    for row in rows.iter_mut().take(40).skip(8) {
        *row = "........................@@@@@@..................";
    }
    let map = map_from_rows(&rows, 2);
    let p = planner(map.clone(), 0.1, 0.0);
    let o = map.info.origin;
    let s = Pose2::new(o.x + 0.6, o.y + 2.4, PI);
    let g = Pose2::new(o.x + 4.2, o.y + 2.4, -PI / 2.0);
    let r = plan(&p, s, g, false).unwrap();
    assert_legal(&map, &r, s, g, false, 0.1, 0.0);
    let t = &r.trajectory;
    assert!(t.check_continuity() < 1e-9);
    let kinds: Vec<SegmentKind> = t.segments.iter().map(|x| x.kind()).collect();
    assert_eq!(kinds.first(), Some(&SegmentKind::Rotate), "facing away from the path: a turn first ({kinds:?})");
    assert_eq!(kinds.last(), Some(&SegmentKind::Rotate), "a turn to the goal's heading last ({kinds:?})");
    assert!(kinds.windows(2).all(|w| w != [SegmentKind::Rotate, SegmentKind::Rotate]), "{kinds:?}");
    assert!(kinds.iter().filter(|k| **k == SegmentKind::Line).count() >= 2, "around the wall: {kinds:?}");
    assert!(t.segments.iter().all(|x| x.kind() != SegmentKind::Rotate || (x.length == 0.0 && x.rotation.abs() <= PI)));
    let end = t.segments.last().unwrap().end();
    assert!(end.point().distance(g.point()) < 1e-6 && normalize_angle(end.yaw - g.yaw).abs() < 1e-9);
    // A free goal heading: no last turn.
    let free = plan(&p, s, g, true).unwrap();
    assert_eq!(free.trajectory.segments.last().map(|x| x.kind()), Some(SegmentKind::Line));
    // Turning round in place: one turn of pi.
    let back = Pose2::new(s.x, s.y, 0.0);
    let turn = plan(&p, s, back, false).unwrap();
    assert_eq!(turn.trajectory.segments.len(), 1);
    assert!((turn.trajectory.segments[0].rotation.abs() - PI).abs() < 1e-9);
    assert_eq!(turn.stats.solved_by, [SolvedBy::AtGoal]);
    assert!(normalize_angle(turn.poses.last().unwrap().yaw).abs() < 1e-9);
}

/// At a turning radius of 0, a start and a goal that see each other are joined by one straight
/// line (closed form: the distance between them), with at most a turn on the spot at each end,
/// wherever they stand in their cells: the guide's vertices are cell corners, and the vehicle
/// must not detour through the corners beside its start and goal (as it did before the guide was
/// string-pulled on the exact map). With the default costs too, far from anything costly.
#[test]
fn at_radius_zero_poses_that_see_each_other_are_joined_by_one_line() {
    let map = map_from_rows(&vec!["................................................"; 48], 2);
    let o = map.info.origin;
    let mut rnd = random_poses(&map, 11);
    for p in [planner(map.clone(), 0.1, 0.0), shortest_planner(map.clone(), 0.1, 0.0)] {
        for _ in 0..40 {
            // Poses in the middle of the 4.8 m square, over a metre from its edges.
            let inner = |q: Pose2| Pose2::new(o.x + 1.2 + q.x / 2.0, o.y + 1.2 + q.y / 2.0, q.yaw);
            let (s, g) = (inner(rnd()), inner(rnd()));
            let r = plan(&p, s, g, false).unwrap();
            assert_legal(&map, &r, s, g, false, 0.1, 0.0);
            let t = &r.trajectory;
            let lines: Vec<_> = t.segments.iter().filter(|x| x.kind() == SegmentKind::Line).collect();
            assert_eq!(lines.len(), 1, "{s:?} -> {g:?}: {:?}", t.segments);
            assert!((t.length() - s.point().distance(g.point())).abs() < 1e-9, "{} m", t.length());
            assert!(t.segments.len() <= 3, "{:?}", t.segments);
        }
    }
}

/// At a turning radius of 0, a start the vehicle mask does not cover (within the mask's margin
/// of the map's edge) but where the footprint stands free on the exact map is planned from, by the
/// search on the exact map, as with a turning radius; it was refused START_OCCUPIED, "obstacles
/// within its radius", with nothing within it.
#[test]
fn at_radius_zero_a_start_beside_the_maps_edge_where_the_vehicle_stands_is_planned_from() {
    let map = map_from_rows(&vec!["........................................"; 40], 1);
    let o = map.info.origin;
    let (s, g) = (Pose2::new(o.x + 0.03, o.y + 0.03, 0.0), Pose2::new(o.x + 1.0, o.y + 1.0, 0.0));
    for turning in [0.0, 0.3] {
        let r = plan(&planner(map.clone(), 0.01, turning), s, g, true).unwrap_or_else(|e| panic!("{turning}: {e}"));
        assert_legal(&map, &r, s, g, true, 0.01, turning);
    }
}

/// At a turning radius of 0, a gap the vehicle fits through but the vehicle mask's margin closes
/// is found by the search on the exact map (`exact_search`), and the plan is legal by brute
/// force; a gap too narrow for the exact footprint is refused saying so.
#[test]
fn at_radius_zero_a_gap_the_mask_closes_is_found_on_the_exact_map() {
    // 60 x 40 cells of 5 cm; a wall at columns 30-31 with a gap of `gap` cells in the middle.
    let rows_with = |gap: usize| -> Vec<String> {
        (0..40)
            .map(|r| {
                let open = (20 - gap / 2..20 - gap / 2 + gap).contains(&r);
                (0..60).map(|c| if (30..32).contains(&c) && !open { '@' } else { '.' }).collect()
            })
            .collect()
    };
    let s = |map: &OccupancyMap| Pose2::new(map.info.origin.x + 0.5, map.info.origin.y + 1.0, 0.0);
    let g = |map: &OccupancyMap| Pose2::new(map.info.origin.x + 2.5, map.info.origin.y + 1.0, 0.0);
    // Robot radius 0.1 m = 2 cells: the exact test needs 2 x 2.125 cells, the mask 2 x 2.83.
    let rows = rows_with(5);
    let map = map_from_rows(&rows.iter().map(String::as_str).collect::<Vec<_>>(), 1);
    let p = shortest_planner(map.clone(), 0.1, 0.0);
    let r = plan(&p, s(&map), g(&map), false).unwrap();
    assert_eq!(r.stats.solved_by, [SolvedBy::ExactSearch]);
    assert_legal(&map, &r, s(&map), g(&map), false, 0.1, 0.0);
    assert!(r.trajectory.check_continuity() < 1e-9);
    // With costs the guide joins cell centres, which pass where the mask leaves a passage one
    // cell wide (Block A*'s corner paths cannot): legal either way.
    let p = planner(map.clone(), 0.1, 0.0);
    let r = plan(&p, s(&map), g(&map), false).unwrap();
    assert_legal(&map, &r, s(&map), g(&map), false, 0.1, 0.0);
    // Four cells: too narrow for the footprint itself.
    let rows = rows_with(4);
    let map = map_from_rows(&rows.iter().map(String::as_str).collect::<Vec<_>>(), 1);
    let p = planner(map.clone(), 0.1, 0.0);
    let e = plan(&p, s(&map), g(&map), false).unwrap_err();
    assert_eq!(e.code, StatusCode::NoValidPath, "{e}");
}

/// Turning round where the vehicle stands (same place, heading reversed) is a loop: the
/// shortest one when it is free, else the full search finds another; the same pose again is
/// nothing to drive.
#[test]
fn turning_round_in_place_is_a_loop_or_a_searched_one() {
    let rows = vec!["................................................"; 48];
    let map = map_from_rows(&rows, 2);
    let p = planner(map.clone(), 0.1, 0.5);
    let o = map.info.origin;
    let s = Pose2::new(o.x + 2.4, o.y + 2.4, 0.0);
    let back = Pose2::new(s.x, s.y, PI);
    let r = plan(&p, s, back, false).unwrap();
    assert_legal(&map, &r, s, back, false, 0.1, 0.5);
    assert_eq!(r.stats.solved_by, [SolvedBy::Direct]);
    // A post in the middle of that loop: searched around.
    let mid = r.trajectory.pose_at(r.trajectory.length() / 2.0).unwrap();
    let mut blocked = map.clone();
    let c = blocked.info.world_to_cell(mid.point());
    for dy in -1..=1i64 {
        for dx in -1..=1i64 {
            let (x, y) = ((c.x.floor() as i64 + dx) as usize, (c.y.floor() as i64 + dy) as usize);
            let w = blocked.info.width;
            blocked.data[y * w + x] = 100;
        }
    }
    let p2 = planner(blocked.clone(), 0.1, 0.5);
    let r2 = plan(&p2, s, back, false).unwrap();
    assert_legal(&blocked, &r2, s, back, false, 0.1, 0.5);
    assert_eq!(r2.stats.solved_by, [SolvedBy::FullSearch]);
    assert!(r2.trajectory.length() > r.trajectory.length() + 1e-6);
    let still = plan(&p, s, s, false).unwrap();
    assert!(still.trajectory.is_empty());
    assert_eq!(still.stats.solved_by, [SolvedBy::AtGoal]);
}

/// The guide needs no search where the straight segment between the ends is clear on the
/// vehicle mask: it is the shortest any-angle path, so Block A* does not run. A post off that
/// line blocks the shortest curve (which swings out towards it), so the plan goes through the
/// refinement all the same.
#[test]
fn a_clear_straight_line_is_the_guide_without_a_search() {
    let mut rows = vec!["................................................"; 48];
    let post = "............@@@@................................";
    for row in rows.iter_mut().take(18).skip(10) {
        *row = post;
    }
    let map = map_from_rows(&rows, 2); // 96 x 96 cells = 4.8 m square
    let p = planner(map.clone(), 0.1, 0.5);
    let o = map.info.origin;
    let s = Pose2::new(o.x + 1.0, o.y + 2.4, PI / 2.0);
    let g = Pose2::new(o.x + 3.8, o.y + 2.4, -PI / 2.0);
    let r = plan(&p, s, g, false).unwrap();
    assert_legal(&map, &r, s, g, false, 0.1, 0.5);
    let stages: Vec<Stage> = r.stats.stage_ms.iter().map(|t| t.stage).collect();
    assert!(stages.contains(&Stage::GuideLineOfSight) && !stages.contains(&Stage::BlockAstar), "{stages:?}");
    assert_eq!(r.any_angle.len(), 2, "the guide is the straight segment: {:?}", r.any_angle);
}

#[test]
fn door_map_plans_are_legal_and_avoid_walls() {
    let rows = [
        "@@@@@@@@@@@@@@@@@@@@",
        "@........@.........@",
        "@........@.........@",
        "@........@.........@",
        "@..................@",
        "@..................@",
        "@........@.........@",
        "@........@.........@",
        "@@@@@@@@@@@@@@@@@@@@",
    ];
    let map = map_from_rows(&rows, 10); // 200 x 90 cells
    let o = map.info.origin;
    let s = Pose2::new(o.x + 1.5, o.y + 1.0, PI / 2.0);
    let g = Pose2::new(o.x + 8.5, o.y + 3.5, 0.0);
    // With costs (the default): legal, through the cost-aware guide.
    let with_costs = planner(map.clone(), 0.15, 0.4);
    let r = plan(&with_costs, s, g, false).unwrap();
    assert_legal(&map, &r, s, g, false, 0.15, 0.4);
    assert!(r.stats.stage_ms.iter().any(|t| t.stage == Stage::CostGuide), "{:?}", r.stats.stage_ms);
    // The shortest paths' guide stages.
    let p = shortest_planner(map.clone(), 0.15, 0.4);
    let r = plan(&p, s, g, false).unwrap();
    assert_legal(&map, &r, s, g, false, 0.15, 0.4);
    assert!(r.stats.any_angle_length > 0.0 && r.trajectory.length() >= s.point().distance(g.point()));
    // The straight line runs through the door: it is the guide. A goal the wall hides from the
    // start needs a searched guide.
    assert!(r.stats.stage_ms.iter().any(|t| t.stage == Stage::GuideLineOfSight), "{:?}", r.stats.stage_ms);
    let hidden = Pose2::new(o.x + 8.5, o.y + 0.8, 0.0);
    let r = plan(&p, s, hidden, false).unwrap();
    assert_legal(&map, &r, s, hidden, false, 0.15, 0.4);
    assert!(r.stats.stage_ms.iter().any(|t| t.stage == Stage::BlockAstar), "{:?}", r.stats.stage_ms);
    // Free final heading.
    let r = plan(&p, s, g, true).unwrap();
    assert_legal(&map, &r, s, g, true, 0.15, 0.4);
    // Turning radius 0: the any-angle path itself, a polyline.
    let q = shortest_planner(map.clone(), 0.15, 0.0);
    let r = plan(&q, s, g, true).unwrap();
    assert_eq!(r.stats.solved_by, [SolvedBy::AnyAngle]);
    assert_footprint_free(&map, &r, 0.15);
}

#[test]
fn every_failure_has_its_code() {
    let rows = [
        "@@@@@@@@@@@@@@@@@@@@",
        "@........@.........@",
        "@........@.........@",
        "@........@.........@",
        "@@@@@@@@@@@@@@@@@@@@",
    ];
    let map = map_from_rows(&rows, 10);
    let o = map.info.origin;
    let empty = Planner::new(PlannerConfig::default()).unwrap();
    let s = Pose2::new(o.x + 1.5, o.y + 1.0, 0.0);
    let g = Pose2::new(o.x + 8.0, o.y + 1.0, 0.0);
    let code = |r: Result<Plan, PlanError>| r.map(|_| StatusCode::Success).unwrap_or_else(|e| e.code);
    assert_eq!(code(plan(&empty, s, g, false)), StatusCode::NoMap);
    let p = planner(map, 0.15, 0.4);
    // The wall at column 9 cuts the map in two: the regions answer at once.
    let e = plan(&p, s, g, false).unwrap_err();
    assert_eq!(e.code, StatusCode::NoValidPath);
    assert!(e.message.contains("no gap wide enough"), "{}", e.message);
    assert_eq!(code(plan(&p, Pose2::new(-50.0, 0.0, 0.0), g, false)), StatusCode::StartOutsideMap);
    assert_eq!(code(plan(&p, s, Pose2::new(o.x + 100.0, o.y, 0.0), false)), StatusCode::GoalOutsideMap);
    assert_eq!(code(plan(&p, Pose2::new(f64::NAN, 0.0, 0.0), g, false)), StatusCode::InvalidInput);
    assert_eq!(code(plan(&p, s, Pose2::new(o.x + 3.0, o.y + 1.0, f64::NAN), false)), StatusCode::InvalidInput);
    // A NaN heading is fine when the heading is free.
    assert_eq!(code(plan(&p, s, Pose2::new(o.x + 3.0, o.y + 1.0, f64::NAN), true)), StatusCode::Success);
    // Inside the wall and far from any place the vehicle fits.
    assert_eq!(code(plan(&p, Pose2::new(o.x + 0.05, o.y + 0.05, 0.0), g, false)), StatusCode::StartOccupied);
    assert_eq!(code(plan(&p, s, Pose2::new(o.x + 0.05, o.y + 0.05, 0.0), false)), StatusCode::GoalOccupied);
    // A budget already spent.
    let spent = Budget::new(0.0, None);
    assert_eq!(
        code(p.plan(s, Pose2::new(o.x + 3.5, o.y + 1.5, 0.0), false, &spent).map(|_| ()).map(|_| unreachable!())),
        StatusCode::Timeout
    );
}

/// A start or goal where the vehicle cannot stand is named as the caller gave it, in the caller's
/// units, and the message says whether it is in an obstacle or in unknown space.
#[test]
fn refused_endpoints_are_named_in_the_callers_units() {
    let rows = ["@@@@@@@@@@", "@....????@", "@....????@", "@........@", "@@@@@@@@@@"];
    let map = map_from_rows(&rows, 10);
    let o = map.info.origin;
    let mut p = planner(map, 0.15, 0.4);
    let free = Pose2::new(o.x + 1.25, o.y + 0.75, 0.0);
    let wall = Pose2::new(o.x + 0.25, o.y + 0.25, 0.0);
    let unknown = Pose2::new(o.x + 3.25, o.y + 1.75, 0.0);
    let refused = |p: &Planner, s: Pose2, g: Pose2| plan(p, s, g, true).map(|_| ()).unwrap_err();
    let at = |what: &str, q: Pose2, unit: &str| format!("{what} ({:.3}, {:.3}) {unit}", q.x, q.y);

    let e = refused(&p, free, wall);
    assert_eq!(e.code, StatusCode::GoalOccupied);
    assert_eq!(e.message, format!("{} is in an obstacle (occupancy 100)", at("goal", wall, "m")));
    let e = refused(&p, free, unknown);
    assert_eq!(e.code, StatusCode::GoalOccupied);
    assert_eq!(
        e.message,
        format!("{} is in unknown space (occupancy -1, allow_unknown is false)", at("goal", unknown, "m"))
    );
    let e = refused(&p, unknown, free);
    assert_eq!(e.code, StatusCode::StartOccupied);
    assert_eq!(
        e.message,
        format!("{} is in unknown space (occupancy -1, allow_unknown is false)", at("start", unknown, "m"))
    );
    let outside = Pose2::new(o.x - 1.0, o.y, 0.0);
    assert_eq!(refused(&p, outside, free).message, format!("{} is outside the map", at("start", outside, "m")));
    // A Moving AI map is in cells, and so are its messages.
    p.set_units(MapUnits::Cells);
    let e = refused(&p, wall, free);
    assert_eq!(e.code, StatusCode::StartOccupied);
    assert_eq!(e.message, format!("{} is in an obstacle (occupancy 100)", at("start", wall, "cells")));
}

/// A footprint too large for the map's cells is refused in the name of the parameter it comes
/// from: a `robot_radius` of 7 m set while a polygon was in force is accepted (the polygon wins),
/// and clearing the polygon then brings the radius back, so the refusal names `robot_radius`,
/// not the `footprint` being cleared. The map and parameters in force stay.
#[test]
fn a_footprint_too_large_for_the_map_is_refused_in_its_parameters_name() {
    let rows = ["@@@@@@@@@@", "@........@", "@........@", "@@@@@@@@@@"];
    let map = map_from_rows(&rows, 10);
    let polygon = blockstar_planner::polygon::Polygon::new(vec![
        Point2::new(0.3, 0.2),
        Point2::new(-0.2, 0.2),
        Point2::new(-0.2, -0.2),
        Point2::new(0.3, -0.2),
    ])
    .unwrap();
    let with_polygon = PlannerConfig { footprint: Some(polygon), min_turning_radius: 0.4, ..PlannerConfig::default() };
    let mut p = Planner::new(with_polygon.clone()).unwrap();
    p.set_map(map).unwrap();
    p.set_config(PlannerConfig { robot_radius: 7.0, ..with_polygon.clone() }).unwrap();
    let cleared = PlannerConfig { footprint: None, robot_radius: 7.0, ..with_polygon };
    let e = p.set_config(cleared.clone()).unwrap_err();
    assert_eq!(e.code, StatusCode::InvalidInput);
    assert!(
        e.message
            .starts_with("the footprint (robot_radius 7.000 m) reaches 7.000 m from base_link: more than 125 cells"),
        "{}",
        e.message
    );
    assert!(p.config().footprint.is_some(), "the parameters in force stay");
    let e = p.set_config(PlannerConfig { robot_radius: 0.1, robot_side: 10.0, ..cleared }).unwrap_err();
    assert!(e.message.starts_with("the footprint (robot_side 10.000 m) reaches 7.071 m"), "{}", e.message);
}

/// A goal just inside a wall's reach (the robot does not fit there) is planned to the nearest
/// covering cell, and the plan says so.
#[test]
fn subsumed_goal_is_planned_to_its_covering_cell() {
    let rows = ["@@@@@@@@@@", "@........@", "@........@", "@........@", "@@@@@@@@@@"];
    let map = map_from_rows(&rows, 10); // walls 10 cells thick
    let p = planner(map.clone(), 0.1, 0.0);
    let o = map.info.origin;
    let s = Pose2::new(o.x + 2.0, o.y + 1.25, 0.0);
    // 0.075 m from the wall face: a 0.1 m robot does not fit there, one cell further in it does.
    let g = Pose2::new(o.x + 2.5, o.y + 0.575, 0.0);
    let r = plan(&p, s, g, true).unwrap();
    let note = r.stats.note.clone().expect("a note about the covering cell");
    assert!(note.contains("goal"), "{note}");
    assert_footprint_free(&map, &r, 0.1);
    let end = r.trajectory.pose_at(r.trajectory.length()).unwrap();
    assert!(end.point().distance(g.point()) <= 0.1 + 0.05, "ended {end:?}, far from {g:?}");
}

/// The depot map of `tests/data` (map_server YAML, metres).
fn depot_map() -> OccupancyMap {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ros_maps/depot.yaml");
    load_map_file(&path, "map", usize::MAX).unwrap()
}

/// A reproducible stream (from `seed`) of poses uniform over `map`'s extent (metres) and over
/// headings; not necessarily free.
fn random_poses(map: &OccupancyMap, mut seed: u64) -> impl FnMut() -> Pose2 {
    let (w, h) = (map.info.width as f64 * RES, map.info.height as f64 * RES);
    move || {
        let mut rnd = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        Pose2::new(rnd() * w, rnd() * h, (rnd() * 2.0 - 1.0) * PI)
    }
}

/// Random pairs on a real map: every success is legal by the brute-force check.
#[test]
fn depot_random_pairs_are_legal() {
    let map = depot_map();
    let p = planner(map.clone(), 0.2, 0.5);
    let mut random_pose = random_poses(&map, 7);
    let mut solved = 0;
    let mut tried = 0;
    while tried < 12 {
        let (s, g) = (random_pose(), random_pose());
        match plan(&p, s, g, false) {
            Ok(r) => {
                tried += 1;
                if r.stats.note.is_none() {
                    assert_legal(&map, &r, s, g, false, 0.2, 0.5);
                } else {
                    assert_footprint_free(&map, &r, 0.2);
                }
                solved += 1;
            }
            Err(e) => {
                if !matches!(e.code, StatusCode::StartOccupied | StatusCode::GoalOccupied) {
                    tried += 1;
                }
            }
        }
    }
    assert!(solved >= 6, "only {solved} of {tried} pairs solved");
}

#[test]
fn bad_maps_keep_the_previous_one() {
    let rows = vec!["........"; 8];
    let map = map_from_rows(&rows, 4);
    let mut p = planner(map.clone(), 0.05, 0.0);
    let mut bad = map.clone();
    bad.data.pop();
    assert_eq!(p.set_map(bad).unwrap_err().code, StatusCode::InvalidInput);
    let mut bad = map.clone();
    bad.info.resolution = f64::NAN;
    assert!(p.set_map(bad).is_err());
    assert_eq!(p.map().unwrap().site.map(), &map);
    let o = map.info.origin;
    let s = Pose2::new(o.x + 0.3, o.y + 0.3, 0.0);
    assert!(plan(&p, s, Pose2::new(o.x + 1.2, o.y + 1.2, 0.0), true).is_ok());
    let _ = Point2::new(0.0, 0.0);
}

/// After every step of a random sequence of patches and whole-map replacements, the planner's
/// derived data (vehicle mask, Block A* pattern codes, collision map) equals a fresh build on the
/// same map, and plans on the updated map are legal on it.
#[test]
fn incremental_updates_equal_a_fresh_build() {
    let rows = vec!["........................................"; 30];
    let map = map_from_rows(&rows, 1);
    let mut p = planner(map.clone(), 0.1, 0.3);
    let mut seed = 3u64;
    let mut rnd = |n: i64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((seed >> 33) as i64) % n
    };
    let (w, h) = (map.info.width as i64, map.info.height as i64);
    for step in 0..30 {
        if step % 5 == 4 {
            // A whole new map with the same geometry: a few scattered changes.
            let mut next = p.map().unwrap().site.map().clone();
            for _ in 0..6 {
                let k = rnd(w * h) as usize;
                next.data[k] = if next.data[k] == 0 { 100 } else { 0 };
            }
            p.update_map(next).unwrap();
        } else {
            let (pw, ph) = (1 + rnd(6), 1 + rnd(6));
            let (x, y) = (rnd(w - pw + 1), rnd(h - ph + 1));
            let v = [0i8, 100, -1][rnd(3) as usize];
            let data = vec![v; (pw * ph) as usize];
            p.apply_patch(x, y, pw, ph, &data).unwrap();
        }
        let held = p.map().unwrap().clone();
        let mut fresh = Planner::new(p.config().clone()).unwrap();
        fresh.set_map(held.site.map().clone()).unwrap();
        let f = fresh.map().unwrap();
        assert_eq!(held.vehicle_mask(), f.vehicle_mask(), "mask differs after step {step}");
        assert_eq!(held.blocks, f.blocks, "pattern codes differ after step {step}");
        assert_eq!(held.collision, f.collision, "collision map differs after step {step}");
    }
    // Bad patches change nothing.
    let before = p.map().unwrap().site.map().clone();
    assert_eq!(p.apply_patch(w - 1, 0, 2, 1, &[0, 0]).unwrap_err().code, StatusCode::InvalidInput);
    assert_eq!(p.apply_patch(0, 0, 2, 2, &[0; 3]).unwrap_err().code, StatusCode::InvalidInput);
    assert_eq!(p.apply_patch(0, 0, -1, 2, &[]).unwrap_err().code, StatusCode::InvalidInput);
    assert_eq!(p.map().unwrap().site.map(), &before);
    let mut empty = Planner::new(PlannerConfig::default()).unwrap();
    assert_eq!(empty.apply_patch(0, 0, 1, 1, &[0]).unwrap_err().code, StatusCode::NoMap);
}

/// A door closing (a patch) makes the planner route around it, and closing the only way makes
/// the goal unreachable at once.
#[test]
fn patches_change_the_route() {
    let rows = [
        "@@@@@@@@@@@@@@@@@@@@",
        "@........@.........@",
        "@........@.........@",
        "@..................@",
        "@..................@",
        "@........@.........@",
        "@..................@",
        "@..................@",
        "@@@@@@@@@@@@@@@@@@@@",
    ];
    let map = map_from_rows(&rows, 10);
    let mut p = planner(map.clone(), 0.1, 0.3);
    let o = map.info.origin;
    let s = Pose2::new(o.x + 1.5, o.y + 3.0, 0.0);
    let g = Pose2::new(o.x + 8.5, o.y + 3.0, 0.0);
    assert!(plan(&p, s, g, true).is_ok());
    // Close the upper door (drawing rows 3-4 = map rows 40..60, columns 90..100).
    p.apply_patch(90, 40, 10, 20, &[100; 200]).unwrap();
    let r = plan(&p, s, g, true).unwrap();
    let mut patched = map.clone();
    for y in 40..60 {
        for x in 90..100 {
            patched.data[y * map.info.width + x] = 100;
        }
    }
    assert_footprint_free(&patched, &r, 0.1);
    // Close the lower door too: unreachable.
    p.apply_patch(90, 10, 10, 20, &[100; 200]).unwrap();
    assert_eq!(plan(&p, s, g, true).unwrap_err().code, StatusCode::NoValidPath);
}

/// Brute force for a square vehicle of side `side` metres turning with the heading: at poses every
/// 5 mm along the trajectory, no cell that is occupied, unknown or outside the map intersects the
/// square (separating axis test).
fn assert_square_free(map: &OccupancyMap, plan: &Plan, side: f64) {
    let info = &map.info;
    let t = &plan.trajectory;
    let n = (t.length() / 0.005).ceil() as usize + 1;
    let half = side / 2.0 / info.resolution;
    for k in 0..=n {
        let p = t.pose_at(t.length() * k as f64 / n as f64).unwrap();
        let c = info.world_to_cell(p.point());
        let (co, si) = (p.yaw.cos(), p.yaw.sin());
        let corners: Vec<(f64, f64)> = [(half, half), (-half, half), (-half, -half), (half, -half)]
            .iter()
            .map(|&(u, v)| (c.x + co * u - si * v, c.y + si * u + co * v))
            .collect();
        let reach = half * 1.5 + 1.0;
        for y in (c.y - reach).floor() as i64..=(c.y + reach).ceil() as i64 {
            for x in (c.x - reach).floor() as i64..=(c.x + reach).ceil() as i64 {
                let inside = x >= 0 && y >= 0 && (x as usize) < info.width && (y as usize) < info.height;
                let bad = !inside || {
                    let v = map.data[y as usize * info.width + x as usize];
                    !(0..65).contains(&v)
                };
                if !bad {
                    continue;
                }
                let cell = [
                    (x as f64, y as f64),
                    (x as f64 + 1.0, y as f64),
                    (x as f64 + 1.0, y as f64 + 1.0),
                    (x as f64, y as f64 + 1.0),
                ];
                let separated = [(1.0, 0.0), (0.0, 1.0), (co, si), (-si, co)].iter().any(|&(ax, ay)| {
                    let proj = |pts: &[(f64, f64)]| {
                        let v: Vec<f64> = pts.iter().map(|q| q.0 * ax + q.1 * ay).collect();
                        (
                            v.iter().cloned().fold(f64::INFINITY, f64::min),
                            v.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
                        )
                    };
                    let ((a0, a1), (b0, b1)) = (proj(&corners), proj(&cell));
                    a1 < b0 || b1 < a0
                });
                assert!(separated, "the square at {p:?} touches cell ({x}, {y})");
            }
        }
    }
}

#[test]
fn square_vehicle_plans_on_depot_are_legal_for_the_turning_square() {
    let map = depot_map();
    let side = 0.3;
    let config = PlannerConfig { robot_side: side, min_turning_radius: 0.5, ..PlannerConfig::default() };
    let mut p = Planner::new(config).unwrap();
    p.set_map(map.clone()).unwrap();
    let mut random_pose = random_poses(&map, 21);
    let mut solved = 0;
    for _ in 0..60 {
        let (s, g) = (random_pose(), random_pose());
        if let Ok(r) = plan(&p, s, g, false) {
            assert!(r.trajectory.segments.iter().all(|seg| seg.curvature.abs() <= 1.0 / 0.5 + 1e-9));
            assert_square_free(&map, &r, side);
            solved += 1;
        }
    }
    assert!(solved >= 8, "only {solved} pairs solved");
    // A negative side is refused.
    assert!(Planner::new(PlannerConfig { robot_side: -0.1, ..PlannerConfig::default() }).is_err());
}

/// Two rooms (3 m x 2 m in all, 5 cm cells) joined by a door `door` cells wide in a wall three
/// cells thick, centred on row 20.
fn two_rooms(door: usize) -> OccupancyMap {
    let (w, h) = (60usize, 40usize);
    let mut data = vec![0i8; w * h];
    let lo = 20 - door / 2;
    for y in 0..h {
        for x in 29..32 {
            if !(lo..lo + door).contains(&y) {
                data[y * w + x] = 100;
            }
        }
    }
    let info =
        MapInfo { width: w, height: h, resolution: RES, origin: Pose2::new(0.0, 0.0, 0.0), frame_id: "map".into() };
    OccupancyMap::new(info, data, usize::MAX).unwrap()
}

/// A 4-cell door (20 cm) is narrower than the vehicle (30 cm): refused at once with the reason,
/// and the full Directional A* on the same collision map finds nothing either.
#[test]
fn a_door_narrower_than_the_vehicle_is_refused_with_a_proof() {
    let map = two_rooms(4);
    let p = planner(map, 0.15, 0.3);
    let (s, g) = (Pose2::new(0.525, 1.025, 0.0), Pose2::new(2.525, 1.625, PI / 2.0));
    let e = plan(&p, s, g, false).expect_err("no way through");
    assert_eq!(e.code, StatusCode::NoValidPath);
    assert!(e.message.contains("no gap wide enough"), "{}", e.message);
    let prepared = p.map().unwrap();
    let ctx = prepared.directional().unwrap();
    let info = &prepared.site.map().info;
    let (sc, gc) = (info.world_pose_to_cell(s), info.world_pose_to_cell(g));
    let reference =
        directional::full_search(ctx, &prepared.collision, sc, gc, false, Neighbourhood::Directional24, &mut || false);
    assert!(reference.is_err(), "Directional-24 found a way through a door narrower than the vehicle");
}

/// Random obstacle fields full of gaps about as wide as the vehicle: every pair the full
/// Directional-24 search solves on the planner's own collision map, the planner solves too (some
/// only through gaps the vehicle mask's margin closes, where the planner falls back to that full
/// search instead of trusting the mask's regions), and every plan passes the brute-force
/// footprint check.
#[test]
fn the_planner_solves_every_pair_directional_24_solves_among_tight_gaps() {
    const DENSITY: f64 = 0.08;
    // A vehicle small against the cells (radius half a cell, turning radius three cells), where
    // the mask's margin matters most.
    const RADIUS: f64 = 0.5 * RES;
    const TURNING: f64 = 3.0 * RES;
    let (w, h) = (48usize, 36usize);
    let mut seed = 0x5eed_1234_u64;
    let mut rnd = move || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let (mut both, mut compared, mut through_gaps) = (0, 0, 0);
    for _ in 0..12 {
        let mut data = vec![0i8; w * h];
        // Single blocked cells scattered over the map (as in Moving AI's random maps).
        for v in data.iter_mut() {
            if rnd() < DENSITY {
                *v = 100;
            }
        }
        let info =
            MapInfo { width: w, height: h, resolution: RES, origin: Pose2::new(0.0, 0.0, 0.0), frame_id: "map".into() };
        let map = OccupancyMap::new(info, data, usize::MAX).unwrap();
        let p = planner(map.clone(), RADIUS, TURNING);
        let prepared = p.map().unwrap().clone();
        let ctx = prepared.directional().unwrap();
        let mut pairs = 0;
        let mut attempts = 0;
        while pairs < 10 && attempts < 400 {
            attempts += 1;
            let s = Pose2::new(rnd() * w as f64 * RES, rnd() * h as f64 * RES, (rnd() * 2.0 - 1.0) * PI);
            let g = Pose2::new(rnd() * w as f64 * RES, rnd() * h as f64 * RES, (rnd() * 2.0 - 1.0) * PI);
            let (sc, gc) = (map.info.world_pose_to_cell(s), map.info.world_pose_to_cell(g));
            let shape = ctx.params().shape();
            if !prepared.collision.stands_free(sc, &shape) || !prepared.collision.stands_free(gc, &shape) {
                continue;
            }
            pairs += 1;
            let reference = directional::full_search(
                ctx,
                &prepared.collision,
                sc,
                gc,
                false,
                Neighbourhood::Directional24,
                &mut || false,
            );
            let mine = plan(&p, s, g, false);
            if let Ok(r) = &mine {
                assert_legal(&map, r, s, g, false, RADIUS, TURNING);
                let cell = |q: Pose2| map.info.cell_of(map.info.world_to_cell(q.point())).unwrap();
                let split = !prepared.site.clearance.same_region(&prepared.vehicle, cell(s), cell(g)).unwrap_or(false);
                if split && r.stats.solved_by == [SolvedBy::FullSearch] {
                    through_gaps += 1;
                }
            }
            compared += 1;
            match (reference.is_ok(), mine.is_ok()) {
                (true, true) => both += 1,
                (true, false) => {
                    panic!("Directional-24 solves {s:?} -> {g:?} but the planner answers {:?}", mine.err())
                }
                _ => {}
            }
        }
    }
    assert!(both >= 10, "only {both} of {compared} pairs solved by both");
    // Some pairs were joined only through gaps the vehicle mask closes.
    assert!(through_gaps >= 1, "no pair needed the full search past the mask's regions");
}
