//! Where a drawn path comes nearest an obstacle, for the picture's legend and mark: measured as
//! the planner's figures measure it (`planner::figures`): samples every quarter cell along the
//! path, each sample's cell centre against the nearest obstacle cell's centre.

use crate::clearance::distance::DistanceField;
use crate::costs::COST_STEP;
use crate::geometry::Point2;
use crate::map::{OccupancyMap, Traversability};

/// Farthest obstacle (cells) the measure looks for, as the planner's figures.
const REACH: u16 = 32;

/// The point of a path nearest an obstacle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Nearest {
    /// The sample of the path (m, map frame).
    pub at: Point2,
    /// The centre of the obstacle cell (m, map frame).
    pub obstacle: Point2,
    /// Distance (m) between the sample's cell centre and the obstacle cell's centre.
    pub distance: f64,
}

/// Where `path` (m, map frame; a polyline) comes nearest a cell blocked under `rule` or outside
/// the map (a vehicle may not leave it, as everywhere in the planner): the first
/// sample (every quarter cell, at the midpoints of equal steps, per segment) whose cell centre
/// lies nearest an obstacle cell's centre. `None` when no sample on the map lies within 32
/// cells of an obstacle. Stretches off the map, and segments with a non-finite end, are skipped.
pub fn nearest_obstacle(map: &OccupancyMap, rule: Traversability, path: &[Point2]) -> Option<Nearest> {
    let (w, h) = (map.info.width, map.info.height);
    let blocked: Vec<bool> = map.data.iter().map(|&v| rule.is_blocked(v)).collect();
    let field = DistanceField::new(w, h, &blocked, REACH);
    let limit = u32::from(REACH) * u32::from(REACH);
    let cells: Vec<Point2> = path.iter().map(|&p| map.info.world_to_cell(p)).collect();
    let mut best: Option<(u32, Point2, (usize, usize))> = None;
    for pair in cells.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        let Some((t0, t1)) = clip_to(a, b, w as f64, h as f64) else { continue };
        // The samples of the whole segment, visited only where it crosses the map.
        let n = (a.distance(b) / COST_STEP).ceil().max(1.0);
        if n > 1e15 {
            continue;
        }
        let first = (t0 * n - 0.5).floor().max(0.0) as usize;
        let last = ((t1 * n - 0.5).ceil().max(0.0) as usize).min(n as usize - 1);
        for k in first..=last {
            let t = (k as f64 + 0.5) / n;
            let p = Point2::new(a.x + t * (b.x - a.x), a.y + t * (b.y - a.y));
            let (x, y) = (p.x.floor(), p.y.floor());
            if x < 0.0 || y < 0.0 || x >= w as f64 || y >= h as f64 {
                continue;
            }
            let (x, y) = (x as usize, y as usize);
            let d2 = u32::from(field.values()[y * w + x]);
            if d2 < limit && best.is_none_or(|(b2, _, _)| d2 < b2) {
                best = Some((d2, p, (x, y)));
            }
        }
    }
    let (d2, at, (x, y)) = best?;
    // The obstacle cell at exactly that squared distance (the field is exact between centres).
    let r = (f64::from(d2).sqrt().ceil() as i64) + 1;
    let (x, y) = (x as i64, y as i64);
    let obstacle = (-r..=r)
        .flat_map(|dy| (-r..=r).map(move |dx| (dx, dy)))
        .filter(|&(dx, dy)| (dx * dx + dy * dy) as u32 == d2)
        .map(|(dx, dy)| (x + dx, y + dy))
        .find(|&(ox, oy)| {
            let outside = ox < 0 || oy < 0 || ox >= w as i64 || oy >= h as i64;
            outside || blocked[oy as usize * w + ox as usize]
        })?;
    let centre = |cx: i64, cy: i64| map.info.cell_to_world(Point2::new(cx as f64 + 0.5, cy as f64 + 0.5));
    Some(Nearest {
        at: map.info.cell_to_world(at),
        obstacle: centre(obstacle.0, obstacle.1),
        distance: f64::from(d2).sqrt() * map.info.resolution,
    })
}

/// The parameters `t0 <= t1` of the part of segment `a`-`b` inside `[0, w] x [0, h]`
/// (Liang-Barsky, the drawing's own clip), so a far-off point costs no samples; `None` when no
/// part is, or an end is not finite.
fn clip_to(a: Point2, b: Point2, w: f64, h: f64) -> Option<(f64, f64)> {
    if ![a.x, a.y, b.x, b.y].iter().all(|v| v.is_finite()) {
        return None;
    }
    super::draw::clip_to_rect((a.x, a.y), (b.x, b.y), (0.0, 0.0), (w, h))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Pose2;
    use crate::map::MapInfo;

    fn random_map(seed: u64, w: usize, h: usize) -> OccupancyMap {
        let mut s = seed;
        let mut next = move || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            s >> 33
        };
        let data = (0..w * h).map(|_| if next() % 23 == 0 { 100 } else { 0 }).collect();
        let info = MapInfo {
            width: w,
            height: h,
            resolution: 0.1,
            origin: Pose2::new(-1.0, 2.0, 0.0),
            frame_id: "map".into(),
        };
        OccupancyMap { info, data }
    }

    /// Against a brute force over every obstacle cell and every sample, on random maps and
    /// random paths that leave the map and come back.
    #[test]
    fn the_nearest_obstacle_is_the_brute_force_one() {
        let rule = Traversability { occupied_threshold: 65, allow_unknown: false };
        for seed in 0..20u64 {
            let map = random_map(seed, 30, 20);
            let (w, h) = (map.info.width, map.info.height);
            let mut s = seed + 99;
            let mut coord = move |lo: f64, hi: f64| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                lo + (hi - lo) * ((s >> 11) as f64 / (1u64 << 53) as f64)
            };
            let path: Vec<Point2> = (0..5).map(|_| Point2::new(coord(-2.0, 2.5), coord(1.5, 4.5))).collect();
            let found = nearest_obstacle(&map, rule, &path);
            // Brute force: every sample's cell against every obstacle cell.
            let mut best = f64::INFINITY;
            for pair in path.windows(2) {
                let (a, b) = (map.info.world_to_cell(pair[0]), map.info.world_to_cell(pair[1]));
                let n = (a.distance(b) / COST_STEP).ceil().max(1.0) as usize;
                for k in 0..n {
                    let t = (k as f64 + 0.5) / n as f64;
                    let (x, y) = ((a.x + t * (b.x - a.x)).floor(), (a.y + t * (b.y - a.y)).floor());
                    if x < 0.0 || y < 0.0 || x >= w as f64 || y >= h as f64 {
                        continue;
                    }
                    for oy in 0..h {
                        for ox in 0..w {
                            if map.data[oy * w + ox] >= 65 {
                                best = best.min((ox as f64 - x).hypot(oy as f64 - y) * 0.1);
                            }
                        }
                    }
                    // The cells beyond the map's edge count as obstacles.
                    let edge = (x + 1.0).min(y + 1.0).min(w as f64 - x).min(h as f64 - y);
                    best = best.min(edge * 0.1);
                }
            }
            match found {
                Some(n) => {
                    assert!((n.distance - best).abs() < 1e-9, "seed {seed}: {} vs brute force {best}", n.distance);
                    // The obstacle named is one, at that distance from the sample's cell centre.
                    let o = map.info.world_to_cell(n.obstacle);
                    let c = map.info.world_to_cell(n.at);
                    let (ox, oy) = (o.x.floor(), o.y.floor());
                    let outside = ox < 0.0 || oy < 0.0 || ox >= w as f64 || oy >= h as f64;
                    assert!(outside || map.data[oy as usize * w + ox as usize] >= 65, "seed {seed}");
                    let centre = Point2::new(c.x.floor() + 0.5, c.y.floor() + 0.5);
                    assert!((centre.distance(o) * 0.1 - n.distance).abs() < 1e-9, "seed {seed}");
                }
                None => assert!(best > 3.2 - 1e-9, "seed {seed}: none found, brute force {best}"),
            }
        }
    }

    #[test]
    fn far_and_broken_points_cost_nothing() {
        let rule = Traversability { occupied_threshold: 65, allow_unknown: false };
        let map = random_map(3, 30, 20);
        let far = [Point2::new(-1e12, 3.0), Point2::new(1e12, 3.0)];
        // Crosses the map once: as cheap as a path across it.
        assert!(nearest_obstacle(&map, rule, &far).is_some());
        let broken = [Point2::new(f64::NAN, 3.0), Point2::new(0.5, f64::INFINITY), Point2::new(0.5, 3.0)];
        assert_eq!(nearest_obstacle(&map, rule, &broken), None);
        assert_eq!(nearest_obstacle(&map, rule, &[]), None);
    }
}
