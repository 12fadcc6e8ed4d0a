//! Long costed plans through the cluster graph's corridors (`hierarchy_min_distance`), against
//! the same planner searching the whole map: the same pairs solved, every plan legal on the grid
//! (checked here, cell by cell, from its poses), its cost within a stated factor of the whole
//! map's; and after patches the planner's graph equals a fresh build's.

use blockstar_planner::geometry::Pose2;
use blockstar_planner::map::{MapInfo, OccupancyMap};
use blockstar_planner::planner::{Budget, Planner, PlannerConfig};
use blockstar_planner::stages::Stage;

const RES: f64 = 0.05;

struct Lcg(u64);
impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// A warehouse-like map: shelves (long thin blocks) and pillars, with graded cells (Nav2-style
/// costs of 30-60) in patches.
fn site(w: usize, h: usize, seed: u64) -> OccupancyMap {
    let mut r = Lcg(seed);
    let mut data = vec![0i8; w * h];
    for _ in 0..(w * h / 2500) {
        let (x, y) = (r.below(w as u64) as usize, r.below(h as u64) as usize);
        let (bw, bh) =
            if r.below(2) == 0 { (4 + r.below(60), 2 + r.below(6)) } else { (2 + r.below(6), 4 + r.below(60)) };
        let v = if r.below(5) == 0 { 30 + r.below(30) as i8 } else { 100 };
        for yy in y..(y + bh as usize).min(h) {
            for xx in x..(x + bw as usize).min(w) {
                data[yy * w + xx] = v;
            }
        }
    }
    let info =
        MapInfo { width: w, height: h, resolution: RES, origin: Pose2::new(0.0, 0.0, 0.0), frame_id: "map".into() };
    OccupancyMap { info, data }
}

fn planner(map: &OccupancyMap, hierarchy_min_distance: f64) -> Planner {
    let config = PlannerConfig {
        robot_radius: 0.15,
        min_turning_radius: 0.3,
        hierarchy_min_distance,
        max_planning_time: 30.0,
        ..PlannerConfig::default()
    };
    let mut p = Planner::new(config).unwrap();
    p.set_map(map.clone()).unwrap();
    p
}

/// True when the disk of `radius` (m) around every pose touches only free cells (value 0),
/// cells taken as closed squares.
fn poses_clear(map: &OccupancyMap, poses: &[Pose2], radius: f64) -> bool {
    let (w, h) = (map.info.width as i64, map.info.height as i64);
    poses.iter().all(|p| {
        let (cx, cy) = (p.x / RES, p.y / RES);
        let r = radius / RES;
        let (x0, x1) = ((cx - r).floor() as i64, (cx + r).floor() as i64);
        let (y0, y1) = ((cy - r).floor() as i64, (cy + r).floor() as i64);
        (y0..=y1).all(|y| {
            (x0..=x1).all(|x| {
                // The nearest point of the cell's square to the centre.
                let nx = cx.clamp(x as f64, x as f64 + 1.0);
                let ny = cy.clamp(y as f64, y as f64 + 1.0);
                let inside = (nx - cx).hypot(ny - cy) < r - 1e-9;
                !inside || (x >= 0 && y >= 0 && x < w && y < h && map.data[(y * w + x) as usize] < 65)
            })
        })
    })
}

/// Long pairs on a 30 m x 22.5 m site: the corridor plans solve what the whole-map search solves,
/// are legal on the grid, and cost at most 15% more (measured on this map: see the README's
/// site-scale section for the figures on the tiled benchmark map).
#[test]
fn corridor_plans_match_the_whole_map_search() {
    let map = site(600, 450, 7);
    let (with, without) = (planner(&map, 5.0), planner(&map, f64::MAX));
    let mut r = Lcg(11);
    let free = |x: f64, y: f64| poses_clear(&map, &[Pose2::new(x, y, 0.0)], 0.45);
    let (mut pairs, mut compared, mut worst) = (0, 0, 1.0f64);
    while pairs < 14 {
        let p = |r: &mut Lcg| (r.below(2900) as f64 / 100.0 + 0.5, r.below(2150) as f64 / 100.0 + 0.5);
        let (s, g) = (p(&mut r), p(&mut r));
        if !free(s.0, s.1) || !free(g.0, g.1) || (s.0 - g.0).hypot(s.1 - g.1) < 12.0 {
            continue;
        }
        pairs += 1;
        let (s, g) = (Pose2::new(s.0, s.1, 0.3), Pose2::new(g.0, g.1, -2.0));
        let a = with.plan(s, g, false, &Budget::without_deadline(None));
        let b = without.plan(s, g, false, &Budget::without_deadline(None));
        assert_eq!(a.is_ok(), b.is_ok(), "{s:?} -> {g:?}: {:?} / {:?}", a.as_ref().err(), b.as_ref().err());
        let (Ok(a), Ok(b)) = (a, b) else { continue };
        assert!(a.stats.stage_ms.iter().any(|t| t.stage == Stage::Corridor), "the corridor was used");
        assert!(b.stats.stage_ms.iter().all(|t| t.stage != Stage::Corridor));
        assert!(poses_clear(&map, &a.poses, 0.15), "{s:?} -> {g:?}: the corridor plan hits an obstacle");
        let ratio = a.stats.figures.cost / b.stats.figures.cost;
        worst = worst.max(ratio);
        compared += 1;
    }
    eprintln!("compared {compared}, worst cost ratio {worst:.4}");
    assert!(compared >= 10, "only {compared} pairs solved");
    assert!(worst <= 1.15, "a corridor plan costs {worst:.3} times the whole map's");
}

/// Patches (blocked, freed, graded) repair the planner's cluster graph to what a fresh build on
/// the patched map holds.
#[test]
fn patches_repair_the_graph_as_a_fresh_build() {
    let map = site(300, 200, 3);
    let mut p = planner(&map, 5.0);
    let mut r = Lcg(5);
    for step in 0..20 {
        let (pw, ph) = (1 + r.below(20) as i64, 1 + r.below(20) as i64);
        let (x, y) = (r.below(300 - pw as u64) as i64, r.below(200 - ph as u64) as i64);
        let v = [0i8, 100, 45, -1][r.below(4) as usize];
        p.apply_patch(x, y, pw, ph, &vec![v; (pw * ph) as usize]).unwrap();
        let held = p.map().unwrap();
        let fresh = planner(held.site.map(), 5.0);
        assert_eq!(held.hierarchy, fresh.map().unwrap().hierarchy, "after step {step}");
    }
}
