//! Traversal costs end to end, against things computed here: a brute-force Dijkstra over the
//! same cost field (the guide's optimality), a gap and a wide way round (the route a cost
//! penalty picks), a keep-out zone raised and lowered by patches, and the figures of a plan
//! recomputed from its poses and the grid.

use blockstar_planner::costs::{CostField, CostRule, COST_STEP};
use blockstar_planner::geometry::{Point2, Pose2};
use blockstar_planner::grid::Grid;
use blockstar_planner::map::{MapInfo, OccupancyMap, Traversability};
use blockstar_planner::planner::{Budget, Plan, Planner, PlannerConfig};
use blockstar_planner::search::cost_astar::{pull_strings, CostAStar};
use blockstar_planner::search::los::{CellMask, LosRule};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::f64::consts::FRAC_PI_2;

const RES: f64 = 0.05;

fn info(w: usize, h: usize) -> MapInfo {
    MapInfo { width: w, height: h, resolution: RES, origin: Pose2::new(0.0, 0.0, 0.0), frame_id: "map".into() }
}

struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// `∫ penalty c ds` along the straight line from `a` to `b` (cells), by this test's own sampling:
/// the midpoints of equal steps of at most a quarter cell.
fn extra(field: &CostField, penalty: f64, a: Point2, b: Point2) -> f64 {
    let len = a.distance(b);
    if len == 0.0 {
        return 0.0;
    }
    let n = (len / COST_STEP).ceil();
    let ds = len / n;
    (0..n as usize)
        .map(|k| {
            let t = (k as f64 + 0.5) / n;
            field.cost_at(Point2::new(a.x + t * (b.x - a.x), a.y + t * (b.y - a.y))) * penalty * ds
        })
        .sum()
}

/// Every cell the closed segment between two cell centres touches, by dense sampling (every
/// point checked against the closed cell squares).
fn touches_only_free(blocked: &dyn Fn(i64, i64) -> bool, a: (i64, i64), b: (i64, i64)) -> bool {
    let (ax, ay, bx, by) = (a.0 as f64 + 0.5, a.1 as f64 + 0.5, b.0 as f64 + 0.5, b.1 as f64 + 0.5);
    for k in 0..=1000 {
        let t = k as f64 / 1000.0;
        let (x, y) = (ax + t * (bx - ax), ay + t * (by - ay));
        for cx in [(x - 1e-9).floor() as i64, (x + 1e-9).floor() as i64] {
            for cy in [(y - 1e-9).floor() as i64, (y + 1e-9).floor() as i64] {
                if blocked(cx, cy) {
                    return false;
                }
            }
        }
    }
    true
}

const MOVES: [(i64, i64); 16] = [
    (1, 0),
    (-1, 0),
    (0, 1),
    (0, -1),
    (1, 1),
    (1, -1),
    (-1, 1),
    (-1, -1),
    (1, 2),
    (2, 1),
    (-1, 2),
    (-2, 1),
    (1, -2),
    (2, -1),
    (-1, -2),
    (-2, -1),
];

/// For every cell, which of the 16 moves leave it with an open segment touching no blocked cell.
fn legal_moves(grid: &Grid) -> Vec<[bool; 16]> {
    let (w, h) = (grid.width() as i64, grid.height() as i64);
    let blocked = |x: i64, y: i64| x < 0 || y < 0 || x >= w || y >= h || grid.is_blocked(x, y);
    (0..w * h)
        .map(|k| {
            let (x, y) = (k % w, k / w);
            std::array::from_fn(|m| {
                let (nx, ny) = (x + MOVES[m].0, y + MOVES[m].1);
                !blocked(x, y) && !blocked(nx, ny) && touches_only_free(&blocked, (x, y), (nx, ny))
            })
        })
        .collect()
}

/// Plain Dijkstra over cell centres with the 16 moves (or the 8 neighbours) `legal`, priced
/// `length + ∫ penalty c ds`.
fn dijkstra(
    grid: &Grid,
    legal: &[[bool; 16]],
    field: &CostField,
    penalty: f64,
    s: (i64, i64),
    g: (i64, i64),
    sixteen: bool,
) -> f64 {
    let (w, h) = (grid.width() as i64, grid.height() as i64);
    let moves = if sixteen { 16 } else { 8 };
    let mut dist = vec![f64::INFINITY; (w * h) as usize];
    let mut heap = BinaryHeap::new();
    dist[(s.1 * w + s.0) as usize] = 0.0;
    heap.push(Reverse((0u64, s)));
    while let Some(Reverse((d, (x, y)))) = heap.pop() {
        let d = f64::from_bits(d);
        if d > dist[(y * w + x) as usize] {
            continue;
        }
        if (x, y) == g {
            return d;
        }
        for (m, &(dx, dy)) in MOVES.iter().enumerate().take(moves) {
            let (nx, ny) = (x + dx, y + dy);
            if !legal[(y * w + x) as usize][m] {
                continue;
            }
            let (a, b) = (Point2::new(x as f64 + 0.5, y as f64 + 0.5), Point2::new(nx as f64 + 0.5, ny as f64 + 0.5));
            let nd = d + a.distance(b) + extra(field, penalty, a, b);
            if nd < dist[(ny * w + nx) as usize] {
                dist[(ny * w + nx) as usize] = nd;
                heap.push(Reverse((nd.to_bits(), (nx, ny))));
            }
        }
    }
    f64::INFINITY
}

/// The cost-aware guide (cheapest 16-connected path, then cost-aware string pulling) is never
/// dearer than the 16-connected optimum a plain Dijkstra finds over the same field, and the
/// search alone finds exactly that optimum. On random maps with obstacles and graded cells.
#[test]
fn the_cost_guide_is_never_dearer_than_the_16_connected_optimum() {
    let mut rng = Lcg(7);
    let (w, h) = (36usize, 28usize);
    let mut worst_vs_8: f64 = 0.0;
    let mut compared = 0;
    for round in 0..25 {
        let mut data = vec![0i8; w * h];
        for v in data.iter_mut() {
            *v = match rng.next(100) {
                0..=11 => 100,
                12..=25 => (1 + rng.next(60)) as i8,
                _ => 0,
            };
        }
        let map = OccupancyMap::new(info(w, h), data, usize::MAX).unwrap();
        let traversability = Traversability { occupied_threshold: 65, allow_unknown: false };
        let penalty = [0.5, 2.0, 8.0][round % 3];
        let rule = CostRule { cost_penalty: penalty, preferred_clearance: 3.0, inscribed: 0.5, traversability };
        let field = CostField::of_map(&map, rule);
        let grid = map.to_grid(traversability);
        let mask = CellMask::from_grid(&grid);
        let legal = legal_moves(&grid);
        let extra_cell = field.extra_per_cell();
        let mut search = CostAStar::new();
        for _ in 0..6 {
            let mut pick = || loop {
                let (x, y) = (rng.next(w as u64) as i64, rng.next(h as u64) as i64);
                if !grid.is_blocked(x, y) {
                    return (x, y);
                }
            };
            let (s, g) = (pick(), pick());
            let optimum = dijkstra(&grid, &legal, &field, penalty, s, g, true);
            let found =
                search.find_path(&mask, (s.0 as u32, s.1 as u32), (g.0 as u32, g.1 as u32), &extra_cell, || false);
            let Ok(found) = found else {
                assert!(optimum.is_infinite(), "round {round}: no path found, Dijkstra has {optimum}");
                continue;
            };
            assert!(
                (found.cost - optimum).abs() < 1e-6 * optimum.max(1.0),
                "round {round}: {} vs {optimum}",
                found.cost
            );
            let pulled = pull_strings(
                &mask,
                LosRule::Conservative,
                &found.cells,
                |a, b| field.extra_line(a, b),
                |x, y| field.cost(x, y) == 0.0,
            );
            let centre = |c: (u32, u32)| Point2::new(f64::from(c.0) + 0.5, f64::from(c.1) + 0.5);
            let guide_cost: f64 = pulled
                .windows(2)
                .map(|p| {
                    let (a, b) = (centre(p[0]), centre(p[1]));
                    a.distance(b) + extra(&field, penalty, a, b)
                })
                .sum();
            assert!(guide_cost <= optimum + 1e-6, "round {round}: guide {guide_cost} above the optimum {optimum}");
            let eight = dijkstra(&grid, &legal, &field, penalty, s, g, false);
            worst_vs_8 = worst_vs_8.max(guide_cost / eight.max(1e-9));
            compared += 1;
        }
    }
    assert!(compared > 100, "only {compared} pairs compared");
    // Never dearer than the 8-connected optimum either (the 16 moves include the 8).
    assert!(worst_vs_8 <= 1.0 + 1e-9, "{worst_vs_8}");
}

/// A room split by a thick wall with a narrow gap on the direct line and a wide opening a little
/// further: the shortest path takes the gap, a cost penalty the wide way.
fn gap_or_wide_way() -> OccupancyMap {
    let (w, h) = (200usize, 160usize);
    let mut data = vec![0i8; w * h];
    for y in 40..100 {
        for x in 0..w {
            let in_gap = (56..66).contains(&x);
            let in_opening = (90..140).contains(&x);
            if !(in_gap || in_opening) {
                data[y * w + x] = 100;
            }
        }
    }
    OccupancyMap::new(info(w, h), data, usize::MAX).unwrap()
}

fn config(cost_penalty: f64) -> PlannerConfig {
    PlannerConfig { robot_radius: 0.15, min_turning_radius: 0.3, cost_penalty, ..PlannerConfig::default() }
}

fn planned(map: &OccupancyMap, config: PlannerConfig, s: Pose2, g: Pose2) -> Plan {
    let mut p = Planner::new(config).unwrap();
    p.set_map(map.clone()).unwrap();
    p.plan(s, g, false, &Budget::without_deadline(None)).unwrap()
}

/// Where the trajectory crosses the wall's middle row (x in metres).
fn crossing(plan: &Plan) -> f64 {
    let mid = 70.0 * RES;
    plan.poses.iter().min_by(|a, b| (a.y - mid).abs().total_cmp(&(b.y - mid).abs())).unwrap().x
}

#[test]
fn a_cost_penalty_takes_the_wide_way_round_and_zero_the_gap() {
    let map = gap_or_wide_way();
    let (s, g) = (Pose2::new(3.05, 1.0, FRAC_PI_2), Pose2::new(3.05, 7.0, FRAC_PI_2));
    let shortest = planned(&map, config(0.0), s, g);
    let kept = planned(&map, config(3.0), s, g);
    assert!((2.8..3.3).contains(&crossing(&shortest)), "shortest crosses at x {}", crossing(&shortest));
    assert!((4.5..7.0).contains(&crossing(&kept)), "with costs crosses at x {}", crossing(&kept));
    assert!(kept.trajectory.length() > shortest.trajectory.length());
    // What each keeps from the walls, and what each costs under the other's measure.
    let (a, b) = (shortest.stats.figures.min_clearance.unwrap(), kept.stats.figures.min_clearance.unwrap());
    assert!(b > a + 0.1, "nearest obstacle {a} -> {b}");
    let mut judge = Planner::new(config(3.0)).unwrap();
    judge.set_map(map).unwrap();
    assert!(kept.stats.figures.cost < judge.figures(&shortest.trajectory).cost);
}

/// The largest `cost_penalty` still plans, with a finite cost, the wide way; beyond it (where
/// the prices overflowed: 1e308 answered "no path exists" with a path in plain sight) the value
/// is refused, naming its range.
#[test]
fn the_largest_cost_penalty_plans_with_finite_prices_and_beyond_it_is_refused() {
    use blockstar_planner::planner::MAX_COST_PENALTY;
    let map = gap_or_wide_way();
    let (s, g) = (Pose2::new(3.05, 1.0, FRAC_PI_2), Pose2::new(3.05, 7.0, FRAC_PI_2));
    let heaviest = planned(&map, config(MAX_COST_PENALTY), s, g);
    assert!(heaviest.stats.figures.cost.is_finite(), "{}", heaviest.stats.figures.cost);
    assert!((4.5..7.0).contains(&crossing(&heaviest)), "crosses at x {}", crossing(&heaviest));
    for absurd in [MAX_COST_PENALTY * 1.001, 1e308, f64::INFINITY] {
        let e = Planner::new(config(absurd)).unwrap_err();
        assert!(e.message.contains("cost_penalty") && e.message.contains("0..=1000"), "{}", e.message);
    }
    // The value as the user wrote it, not 309 digits.
    let e = Planner::new(config(1e308)).unwrap_err();
    assert!(e.message.ends_with("got 1e308"), "{}", e.message);
}

/// A keep-out zone raised on the straight way (a Nav2 costmap's value 90, below the occupied
/// threshold of such a map, 99) diverts the path; lowered again, the path comes back.
#[test]
fn a_raised_zone_diverts_the_path_and_lowering_it_brings_it_back() {
    let (w, h) = (160usize, 100usize);
    let map = OccupancyMap::new(info(w, h), vec![0; w * h], usize::MAX).unwrap();
    let config = PlannerConfig { occupied_threshold: 99, ..config(3.0) };
    let mut p = Planner::new(config).unwrap();
    p.set_map(map).unwrap();
    let (s, g) = (Pose2::new(1.0, 2.5, 0.0), Pose2::new(7.0, 2.5, 0.0));
    let budget = Budget::without_deadline(None);
    let before = p.plan(s, g, false, &budget).unwrap();
    let zone_cost =
        |plan: &Plan| plan.poses.iter().filter(|q| (3.5..4.5).contains(&q.x) && (1.5..3.5).contains(&q.y)).count();
    assert!(zone_cost(&before) > 0, "the straight way crosses the zone");
    // Raise cells x 70..90, y 30..70 (3.5..4.5 m by 1.5..3.5 m) to 90.
    p.apply_patch(70, 30, 20, 40, &[90; 800]).unwrap();
    let diverted = p.plan(s, g, false, &budget).unwrap();
    assert_eq!(zone_cost(&diverted), 0, "the path still crosses the raised zone");
    assert!(diverted.stats.figures.max_cost < 0.9);
    p.apply_patch(70, 30, 20, 40, &[0; 800]).unwrap();
    let back = p.plan(s, g, false, &budget).unwrap();
    assert_eq!(back.trajectory, before.trajectory);
}

/// Patches and whole-map replacements keep the cost field equal to a fresh build.
#[test]
fn cost_updates_equal_a_fresh_build() {
    let (w, h) = (60usize, 40usize);
    let map = OccupancyMap::new(info(w, h), vec![0; w * h], usize::MAX).unwrap();
    let mut p = Planner::new(config(2.0)).unwrap();
    // The map as the test itself keeps it: the planner's copy must equal it.
    let mut expected = map.clone();
    p.set_map(map).unwrap();
    let mut rng = Lcg(11);
    for step in 0..30 {
        if step % 5 == 4 {
            let mut next = expected.clone();
            for _ in 0..8 {
                let k = rng.next((w * h) as u64) as usize;
                next.data[k] = [0i8, 30, 100][rng.next(3) as usize];
            }
            expected = next.clone();
            p.update_map(next).unwrap();
        } else {
            let (pw, ph) = (1 + rng.next(6) as i64, 1 + rng.next(6) as i64);
            let (x, y) = (rng.next(w as u64 - pw as u64 + 1) as i64, rng.next(h as u64 - ph as u64 + 1) as i64);
            let v = [0i8, 100, 40, 10][rng.next(4) as usize];
            for yy in y..y + ph {
                for xx in x..x + pw {
                    expected.data[yy as usize * w + xx as usize] = v;
                }
            }
            p.apply_patch(x, y, pw, ph, &vec![v; (pw * ph) as usize]).unwrap();
        }
        let held = p.map().unwrap();
        assert_eq!(held.site.map(), &expected, "the held map after step {step}");
        let mut fresh = Planner::new(p.config().clone()).unwrap();
        fresh.set_map(expected.clone()).unwrap();
        assert_eq!(held.collision, fresh.map().unwrap().collision, "step {step}");
        assert!(held.collision.costs().is_some());
    }
}

/// A planner that planned on the map before a patch plans after it as one built on the patched
/// map does: nothing its searches keep between plans (the cost guide's open ground, kept per
/// state of the map) outlives a change. Every plan is asked for twice in a row, so the second
/// starts with what the first kept.
#[test]
fn plans_after_patches_equal_those_of_a_fresh_planner() {
    let (w, h) = (120usize, 80usize);
    let mut data = vec![0i8; w * h];
    // A wall across the middle with two doors, so the cost guide searches.
    for y in 0..h {
        for x in 58..62 {
            if !(10..24).contains(&y) && !(52..70).contains(&y) {
                data[y * w + x] = 100;
            }
        }
    }
    let mut expected = OccupancyMap::new(info(w, h), data, usize::MAX).unwrap();
    let mut p = Planner::new(config(2.0)).unwrap();
    p.set_map(expected.clone()).unwrap();
    let (s, g) = (Pose2::new(1.0, 2.0, 0.0), Pose2::new(5.0, 2.0, 0.0));
    let budget = Budget::without_deadline(None);
    let outcome = |p: &Planner| p.plan(s, g, false, &budget).map(|plan| plan.trajectory).map_err(|e| e.to_string());
    let mut rng = Lcg(5);
    let mut changed = 0;
    for step in 0..30 {
        let before = outcome(&p);
        assert_eq!(outcome(&p), before, "step {step}: the same plan twice");
        // A box of obstacles, of costs or cleared, between the two ends.
        let (pw, ph) = (2 + rng.next(12) as usize, 2 + rng.next(12) as usize);
        let (x, y) = (24 + rng.next((72 - pw) as u64) as usize, rng.next((h - ph) as u64) as usize);
        let v = [0i8, 100, 60, 30][rng.next(4) as usize];
        for yy in y..y + ph {
            for xx in x..x + pw {
                expected.data[yy * w + xx] = v;
            }
        }
        p.apply_patch(x as i64, y as i64, pw as i64, ph as i64, &vec![v; pw * ph]).unwrap();
        let after = outcome(&p);
        let mut fresh = Planner::new(p.config().clone()).unwrap();
        fresh.set_map(expected.clone()).unwrap();
        assert_eq!(after, outcome(&fresh), "step {step}: a {pw}x{ph} patch of {v} at ({x}, {y})");
        changed += usize::from(after != before);
    }
    assert!(changed >= 4, "the patches changed only {changed} plans");
}

/// The figures a plan reports are those this test computes from its poses and the grid: the
/// nearest obstacle by brute force over the obstacle cells.
#[test]
fn the_reported_nearest_obstacle_is_the_brute_force_one() {
    let map = gap_or_wide_way();
    let (s, g) = (Pose2::new(3.05, 1.0, FRAC_PI_2), Pose2::new(3.05, 7.0, FRAC_PI_2));
    for penalty in [0.0, 3.0] {
        let plan = planned(&map, config(penalty), s, g);
        let (w, h) = (map.info.width as i64, map.info.height as i64);
        let obstacles: Vec<(i64, i64)> =
            (0..w * h).filter(|&k| map.data[k as usize] >= 65).map(|k| (k % w, k / w)).collect();
        // The samples the figures are defined by: per segment, the midpoints of equal steps of
        // at most a quarter cell.
        let mut nearest = f64::INFINITY;
        for seg in plan.trajectory.segments.iter().filter(|q| q.length > 0.0) {
            let n = (seg.length / RES / COST_STEP).ceil();
            for k in 0..n as usize {
                let q = seg.pose_at((k as f64 + 0.5) * seg.length / n);
                let (cx, cy) = ((q.x / RES).floor() as i64, (q.y / RES).floor() as i64);
                // Cells outside the map count as obstacles.
                let border = [cx + 1, cy + 1, w - cx, h - cy].into_iter().min().unwrap() as f64;
                let d = obstacles.iter().map(|&(x, y)| ((x - cx) as f64).hypot((y - cy) as f64)).fold(border, f64::min);
                nearest = nearest.min(d * RES);
            }
        }
        let reported = plan.stats.figures.min_clearance.unwrap();
        assert!((reported - nearest).abs() < 1e-9, "penalty {penalty}: reported {reported}, brute force {nearest}");
    }
}

/// A Nav2 costmap (lethal 100, the inscribed band 99, inflation 98 exp(-3 (d - r)) to 0.55 m)
/// read at `occupied_threshold` 100: the lethal cells alone are obstacles, for the clearance
/// annotations (mask, regions, the reach proof) as for the collision map, so the corridor past a
/// pillar is open; at the default 65 the inflated pillar and walls close it.
#[test]
fn the_occupied_threshold_reaches_the_clearance_annotations() {
    let (w, h) = (100i64, 40i64);
    let lethal = |x: i64, y: i64| {
        x == 0 || y == 0 || x == w - 1 || y == h - 1 || ((45..55).contains(&x) && (15..25).contains(&y))
    };
    let mut data = vec![0i8; (w * h) as usize];
    for y in 0..h {
        for x in 0..w {
            let mut d = f64::INFINITY;
            for oy in (y - 12).max(0)..(y + 13).min(h) {
                for ox in (x - 12).max(0)..(x + 13).min(w) {
                    if lethal(ox, oy) {
                        d = d.min(((ox - x) as f64).hypot((oy - y) as f64) * RES);
                    }
                }
            }
            data[(y * w + x) as usize] = if d == 0.0 {
                100
            } else if d <= 0.15 {
                99
            } else if d <= 0.55 {
                ((98.0 * (-3.0 * (d - 0.15)).exp()) as i8).max(1)
            } else {
                0
            };
        }
    }
    let map = OccupancyMap::new(info(w as usize, h as usize), data, usize::MAX).unwrap();
    let (s, g) = (Pose2::new(0.6, 1.0, 0.0), Pose2::new(4.4, 1.0, 0.0));
    let nav2 = PlannerConfig { occupied_threshold: 100, ..config(2.0) };
    let plan = planned(&map, nav2, s, g);
    assert!(plan.stats.figures.mean_cost > 0.0 && plan.stats.figures.max_cost < 1.0);
    let mut default = Planner::new(config(2.0)).unwrap();
    default.set_map(map).unwrap();
    let refused = default.plan(s, g, false, &Budget::without_deadline(None)).unwrap_err();
    assert_eq!(refused.code, blockstar_planner::planner::StatusCode::NoValidPath, "{refused}");
}
