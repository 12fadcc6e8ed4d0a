//! A path for a vehicle that turns on the spot (minimum turning radius 0), searched on the exact
//! collision map instead of the vehicle mask: the fallback when the mask's margin closes a gap
//! the footprint fits through, or when the any-angle guide fails the exact sweep.
//!
//! A* over the points of a lattice of half a cell (cell centres, corners and edge midpoints),
//! 8-connected, where each move is the straight line between two points and is taken only when
//! the footprint's disk swept along it (the verification's own rule, [`CollisionMap::sweep_free`])
//! touches no blocked cell; the start and the goal join the search by such lines too. The chain
//! is then shortened by string pulling with the same test. It finds a path whenever one exists
//! through the lattice's points (resolution-complete: a passage whose free band for the
//! footprint's centre is narrower than half a cell may hold no lattice point), within the
//! caller's budget.
//!
//! With traversal costs on the map ([`CollisionMap::costs`]) every line is priced as every other
//! stage prices a curve, its length plus its cost integral above it ([`CollisionMap::extra_cost`]):
//! the search finds the cheapest chain, the straight line from start to goal is taken at once only
//! over cost-free ground, and string pulling drops a point only where the line that skips it
//! costs no more than the chain it replaces. Without costs the prices are the lengths.

use crate::directional::footprint::{CollisionMap, SEARCH_MARGIN};
use crate::geometry::{Point2, Pose2};
use crate::search::astar::astar;
use crate::trajectory::Segment;

/// What the search found: the polyline from the start point to the goal point (cells), and the
/// cells it expanded.
#[derive(Debug, Clone, PartialEq)]
pub struct ExactPath {
    /// Points from the start to the goal, both included; consecutive points are joined by lines
    /// the footprint sweeps freely.
    pub points: Vec<Point2>,
    /// Cells taken off the open list.
    pub expansions: usize,
}

/// Why no path was returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExactFailure {
    /// No chain of cell centres joins start and goal for the footprint.
    NoPath,
    /// `should_stop` ended the search.
    Stopped,
}

/// The line from `a` to `b` as a segment.
fn line(a: Point2, b: Point2) -> Segment {
    let yaw = (b.y - a.y).atan2(b.x - a.x);
    Segment::line(Pose2::new(a.x, a.y, yaw), a.distance(b))
}

/// True when the disk of `radius` cells swept along the line from `a` to `b` touches no blocked
/// cell of `map` (with the search margin the verification allows for).
fn line_free(map: &CollisionMap, a: Point2, b: Point2, radius: f64) -> bool {
    map.sweep_free(&[line(a, b)], radius, SEARCH_MARGIN)
}

/// The price of the line from `a` to `b` when the disk swept along it is free: its length plus
/// its traversal cost above it (see the module doc; just the length without costs).
fn free_line_price(map: &CollisionMap, a: Point2, b: Point2, radius: f64) -> Option<f64> {
    let segment = line(a, b);
    if !map.sweep_free(std::slice::from_ref(&segment), radius, SEARCH_MARGIN) {
        return None;
    }
    Some(match map.costs() {
        Some(_) => a.distance(b) + map.extra_cost(&[segment]),
        None => a.distance(b),
    })
}

/// Spacing of the lattice (cells).
const STEP: f64 = 0.5;

/// The point of lattice node `n`.
fn centre(n: (i64, i64)) -> Point2 {
    Point2::new(n.0 as f64 * STEP, n.1 as f64 * STEP)
}

/// Searches a polyline from `start` to `goal` (cell units) for a disk footprint of `radius` cells
/// that turns on the spot. `should_stop` is polled every 1024 open-list entries taken, stale
/// ones included.
///
/// Fails with [`ExactFailure::NoPath`] when no chain of lattice points joins them (or an end
/// cannot reach a neighbouring point), or [`ExactFailure::Stopped`].
pub fn exact_footprint_path(
    map: &CollisionMap,
    start: Point2,
    goal: Point2,
    radius: f64,
    mut should_stop: impl FnMut() -> bool,
) -> Result<ExactPath, ExactFailure> {
    let (w, h) = (map.width() as i64, map.height() as i64);
    let cell_of = |p: Point2| ((p.x / STEP).round() as i64, (p.y / STEP).round() as i64);
    // Points on the map's border or beyond could never hold a footprint.
    let inside = |c: (i64, i64)| c.0 > 0 && c.1 > 0 && (c.0 as f64) * STEP < w as f64 && (c.1 as f64) * STEP < h as f64;
    let around = |c: (i64, i64)| (-1..=1).flat_map(move |dy| (-1..=1).map(move |dx| (c.0 + dx, c.1 + dy)));
    // A free line over cost-free ground is the cheapest path there is.
    if line_free(map, start, goal, radius) && map.extra_cost(&[line(start, goal)]) == 0.0 {
        return Ok(ExactPath { points: vec![start, goal], expansions: 0 });
    }
    // The search runs from the start point through lattice points to the goal point; every
    // edge is a line the footprint sweeps freely, priced alike, the legs from the start and to
    // the goal included (so the point the chain leaves the lattice from is the cheapest one).
    let goal_cell = cell_of(goal);
    let near_goal = |c: (i64, i64)| (c.0 - goal_cell.0).abs() <= 1 && (c.1 - goal_cell.1).abs() <= 1;
    let point = |node: &Node| match *node {
        Node::Start => start,
        Node::Lattice(c) => centre(c),
        Node::Goal => goal,
    };
    let mut stopped = false;
    let found = astar(
        Node::Start,
        |node, out| {
            let from = point(node);
            let neighbours: Vec<(i64, i64)> = match *node {
                Node::Start => around(cell_of(start)).collect(),
                Node::Lattice(c) => around(c).filter(|&n| n != c).collect(),
                Node::Goal => return,
            };
            for n in neighbours.into_iter().filter(|n| inside(*n)) {
                if let Some(price) = free_line_price(map, from, centre(n), radius) {
                    out.push((Node::Lattice(n), price));
                }
            }
            // The goal joins from the start itself (a free line over costs: taken when nothing
            // cheaper goes round them) and from the lattice points around it.
            let joins_goal = match *node {
                Node::Start => true,
                Node::Lattice(c) => near_goal(c),
                Node::Goal => false,
            };
            if joins_goal {
                if let Some(price) = free_line_price(map, from, goal, radius) {
                    out.push((Node::Goal, price));
                }
            }
        },
        |node| point(node).distance(goal),
        |node| *node == Node::Goal,
        || {
            stopped = should_stop();
            stopped
        },
    );
    let Some(found) = found else {
        return Err(if stopped { ExactFailure::Stopped } else { ExactFailure::NoPath });
    };
    let mut points: Vec<Point2> = found.path.iter().map(point).collect();
    points.dedup_by(|a, b| a.distance(*b) < 1e-9);
    Ok(ExactPath { points: pull_string(map, &points, radius), expansions: found.expansions })
}

/// A node of the search: the start point, a lattice point (its index: the point is
/// `index * STEP`), or the goal point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Node {
    Start,
    Lattice((i64, i64)),
    Goal,
}

/// [`pull_string`] over the first and the last [`ENDS_PULLED`] + 1 points of `points` only (the
/// whole of a shorter chain), the middle kept as it is: for a guide whose vertices are already
/// taut between its ends (an any-angle path on the vehicle mask), where only the start and goal
/// poses, off the mask's vertices, leave anything to pull. Its work is bounded whatever the
/// guide's length (a few sweeps at each end), so it needs no budget.
pub(super) fn pull_ends(map: &CollisionMap, points: &[Point2], radius: f64) -> Vec<Point2> {
    let n = points.len();
    if n <= 2 * ENDS_PULLED + 2 {
        return pull_string(map, points, radius);
    }
    let mut out = pull_string(map, &points[..=ENDS_PULLED], radius);
    out.extend_from_slice(&points[ENDS_PULLED + 1..n - 1 - ENDS_PULLED]);
    out.extend(pull_string(map, &points[n - 1 - ENDS_PULLED..], radius));
    out
}

/// How many points beyond each end [`pull_ends`] may drop.
const ENDS_PULLED: usize = 4;

/// Drops every point whose neighbours a free line joins: from each kept point, the furthest
/// point in order that a free line reaches directly is kept next. Lines only get shorter (the
/// triangle inequality), and each kept line passed the sweep test. With costs a line must also
/// cost no more than the stretch of the chain it replaces, so pulling never makes a path dearer.
/// A line between consecutive points is kept as it is, whether it sweeps freely or not (the
/// caller verifies the result).
fn pull_string(map: &CollisionMap, points: &[Point2], radius: f64) -> Vec<Point2> {
    let Some(&first) = points.first() else { return Vec::new() };
    // The chain's price from its first point to each point (only needed with costs).
    let chain: Vec<f64> = match map.costs() {
        None => Vec::new(),
        Some(_) => std::iter::once(0.0)
            .chain(points.windows(2).scan(0.0, |sum, w| {
                *sum += w[0].distance(w[1]) + map.extra_cost(&[line(w[0], w[1])]);
                Some(*sum)
            }))
            .collect(),
    };
    let skips = |a: usize, k: usize| match map.costs() {
        None => line_free(map, points[a], points[k], radius),
        Some(_) => {
            free_line_price(map, points[a], points[k], radius).is_some_and(|price| price <= chain[k] - chain[a] + 1e-9)
        }
    };
    let mut out = vec![first];
    let mut anchor = 0;
    while anchor + 1 < points.len() {
        let mut next = anchor + 1;
        for k in (anchor + 2..points.len()).rev() {
            if skips(anchor, k) {
                next = k;
                break;
            }
        }
        out.push(points[next]);
        anchor = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Grid;

    fn map(w: usize, h: usize, blocked: impl Fn(i64, i64) -> bool) -> CollisionMap {
        let cells = (0..h * w).map(|i| blocked((i % w) as i64, (i / w) as i64)).collect();
        CollisionMap::new(&Grid::from_blocked(w, h, cells).unwrap())
    }

    /// Brute force: the disk swept along every line of the path, sampled every 0.05 cells, stays
    /// off every blocked cell (distance from the centre to the cell's square above the radius).
    fn assert_clear(blocked: impl Fn(i64, i64) -> bool, points: &[Point2], radius: f64, w: i64, h: i64) {
        for pair in points.windows(2) {
            let n = (pair[0].distance(pair[1]) / 0.05).ceil().max(1.0) as usize;
            for i in 0..=n {
                let t = i as f64 / n as f64;
                let p = Point2::new(pair[0].x + t * (pair[1].x - pair[0].x), pair[0].y + t * (pair[1].y - pair[0].y));
                for y in -1..=h {
                    for x in -1..=w {
                        let outside = x < 0 || y < 0 || x >= w || y >= h;
                        if outside || blocked(x, y) {
                            let nx = p.x.clamp(x as f64, x as f64 + 1.0);
                            let ny = p.y.clamp(y as f64, y as f64 + 1.0);
                            assert!((p.x - nx).hypot(p.y - ny) > radius, "{p:?} touches ({x}, {y})");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_gap_only_just_wide_enough_is_found_and_the_path_is_clear() {
        // A wall at x = 20 with a gap of 4 cells (y 10..14): a disk of radius 1.6 fits through
        // (a margin of a cell or more would close it).
        let blocked = |x: i64, y: i64| x == 20 && !(10..14).contains(&y);
        let m = map(40, 30, blocked);
        let (s, g) = (Point2::new(5.5, 25.5), Point2::new(35.5, 4.5));
        let path = exact_footprint_path(&m, s, g, 1.6, || false).unwrap();
        assert_eq!((path.points[0], *path.points.last().unwrap()), (s, g));
        assert!(path.points.len() >= 3, "around the wall: {:?}", path.points);
        assert_clear(blocked, &path.points, 1.6, 40, 30);
        // String pulling leaves no point a free line could skip.
        for w in path.points.windows(3) {
            assert!(!line_free(&m, w[0], w[2], 1.6), "{w:?}");
        }
        // Too wide for the gap: no path.
        assert_eq!(exact_footprint_path(&m, s, g, 2.2, || false), Err(ExactFailure::NoPath));
        // A stop request ends the search.
        let big = map(400, 400, |x, y| x == 200 && y != 399);
        let r = exact_footprint_path(&big, Point2::new(5.5, 5.5), Point2::new(390.5, 5.5), 0.4, || true);
        assert_eq!(r, Err(ExactFailure::Stopped));
    }

    /// A band of graded cells (occupancy 60: cost 0.6) across the straight line: with costs the
    /// search goes around it when that is cheaper, and its chain costs less than the straight
    /// line; without costs it is the straight line. The prices are checked here by sampling.
    #[test]
    fn with_costs_the_cheapest_chain_goes_around_a_costly_band() {
        use crate::costs::{CostField, CostRule};
        use crate::map::{MapInfo, OccupancyMap, Traversability};
        let (w, h) = (40usize, 30usize);
        let graded = |x: usize, y: usize| (18..22).contains(&x) && (8..22).contains(&y);
        let data: Vec<i8> = (0..w * h).map(|k| if graded(k % w, k / w) { 60 } else { 0 }).collect();
        let info = MapInfo::at_origin(w, h, 1.0);
        let occupancy = OccupancyMap::new(info, data, usize::MAX).unwrap();
        let traversability = Traversability { occupied_threshold: 65, allow_unknown: false };
        let rule = CostRule { cost_penalty: 3.0, preferred_clearance: 0.0, inscribed: 1.0, traversability };
        let plain = map(w, h, |_, _| false);
        let mut priced = plain.clone();
        priced.set_costs(Some(CostField::of_map(&occupancy, rule)));
        let (s, g) = (Point2::new(5.5, 15.5), Point2::new(34.5, 15.5));
        let straight = exact_footprint_path(&plain, s, g, 1.0, || false).unwrap();
        assert_eq!(straight.points, vec![s, g]);
        let around = exact_footprint_path(&priced, s, g, 1.0, || false).unwrap();
        // Price by sampling every 0.01 cells: 1 + 3 x 0.6 inside the band, 1 elsewhere.
        let price = |points: &[Point2]| -> f64 {
            points
                .windows(2)
                .map(|p| {
                    let n = (p[0].distance(p[1]) / 0.01).ceil() as usize;
                    let ds = p[0].distance(p[1]) / n as f64;
                    (0..n)
                        .map(|i| {
                            let t = (i as f64 + 0.5) / n as f64;
                            let (x, y) = (p[0].x + t * (p[1].x - p[0].x), p[0].y + t * (p[1].y - p[0].y));
                            ds * if graded(x as usize, y as usize) { 1.0 + 3.0 * 0.6 } else { 1.0 }
                        })
                        .sum::<f64>()
                })
                .sum()
        };
        assert!(around.points.len() > 2, "goes around: {:?}", around.points);
        assert!(
            price(&around.points) < price(&straight.points) - 1.0,
            "{} vs {}",
            price(&around.points),
            price(&straight.points)
        );
        assert!(around.points.iter().all(|p| !graded(p.x as usize, p.y as usize)), "{:?}", around.points);
    }

    /// Against brute force: Dijkstra over the same graph (start, the half-cell lattice inside the
    /// map, goal; every edge a line priced by [`free_line_price`]), written out here. On random
    /// maps with random graded cells the search's path never costs more than that optimum: the
    /// legs from the start and to the goal are priced like every other edge, so the search
    /// cannot end at a lattice point that is cheap to reach but dear to leave.
    #[test]
    fn the_chain_costs_no_more_than_dijkstra_over_the_same_lines() {
        use crate::costs::{CostField, CostRule};
        use crate::map::{MapInfo, OccupancyMap, Traversability};
        use crate::search::OrdF64;
        use std::cmp::Reverse;
        use std::collections::{BinaryHeap, HashMap};
        let mut seed = 0x5eed_u64;
        let mut rnd = move || crate::test_rng::splitmix(&mut seed);
        let (w, h, radius) = (16usize, 12usize, 0.7);
        let price_of = |m: &CollisionMap, points: &[Point2]| -> f64 {
            points.windows(2).map(|p| free_line_price(m, p[0], p[1], radius).expect("a free line")).sum()
        };
        let mut compared = 0;
        for _ in 0..200 {
            let data: Vec<i8> = (0..w * h)
                .map(|_| {
                    let r = rnd();
                    if r < 0.06 {
                        100
                    } else if r < 0.5 {
                        (rnd() * 60.0) as i8
                    } else {
                        0
                    }
                })
                .collect();
            let info = MapInfo::at_origin(w, h, 1.0);
            let occupancy = OccupancyMap::new(info, data.clone(), usize::MAX).unwrap();
            let traversability = Traversability { occupied_threshold: 65, allow_unknown: false };
            let rule = CostRule { cost_penalty: 4.0, preferred_clearance: 0.0, inscribed: radius, traversability };
            let mut m = map(w, h, |x, y| data[y as usize * w + x as usize] >= 65);
            m.set_costs(Some(CostField::of_map(&occupancy, rule)));
            let draw = |rnd: &mut dyn FnMut() -> f64| {
                Point2::new(1.0 + rnd() * (w as f64 - 2.0), 1.0 + rnd() * (h as f64 - 2.0))
            };
            let (s, g) = (draw(&mut rnd), draw(&mut rnd));
            if !line_free(&m, s, s, radius) || !line_free(&m, g, g, radius) {
                continue;
            }
            // Dijkstra: node 0 the start, 1 the goal, lattice points from 2.
            let (lw, lh) = (2 * w as i64, 2 * h as i64);
            let inside = |c: (i64, i64)| c.0 > 0 && c.1 > 0 && c.0 < lw && c.1 < lh;
            let cell = |p: Point2| ((p.x / STEP).round() as i64, (p.y / STEP).round() as i64);
            let mut best: HashMap<Option<(i64, i64)>, f64> = HashMap::new();
            let mut open = BinaryHeap::new();
            open.push((Reverse(OrdF64::new(0.0)), None::<(i64, i64)>, false));
            let mut optimum = None;
            while let Some((Reverse(d), node, is_goal)) = open.pop() {
                let d = d.get();
                if is_goal {
                    optimum = Some(d);
                    break;
                }
                if best.get(&node).is_some_and(|&b| b < d) {
                    continue;
                }
                let from = node.map_or(s, centre);
                let centre_cell = node.unwrap_or(cell(s));
                for dy in -1..=1 {
                    for dx in -1..=1 {
                        let n = (centre_cell.0 + dx, centre_cell.1 + dy);
                        if Some(n) == node || !inside(n) {
                            continue;
                        }
                        if let Some(p) = free_line_price(&m, from, centre(n), radius) {
                            if best.get(&Some(n)).is_none_or(|&b| d + p < b) {
                                best.insert(Some(n), d + p);
                                open.push((Reverse(OrdF64::new(d + p)), Some(n), false));
                            }
                        }
                    }
                }
                let gc = cell(g);
                let joins_goal = node.is_none_or(|c| (c.0 - gc.0).abs() <= 1 && (c.1 - gc.1).abs() <= 1);
                if joins_goal {
                    if let Some(p) = free_line_price(&m, from, g, radius) {
                        open.push((Reverse(OrdF64::new(d + p)), None, true));
                    }
                }
            }
            let found = exact_footprint_path(&m, s, g, radius, || false);
            match (optimum, found) {
                (Some(opt), Ok(path)) => {
                    let direct = line_free(&m, s, g, radius) && m.extra_cost(&[line(s, g)]) == 0.0;
                    let got = price_of(&m, &path.points);
                    assert!(direct || got <= opt + 1e-9, "{got} > Dijkstra's {opt}: {:?}", path.points);
                    compared += 1;
                }
                (None, Err(ExactFailure::NoPath)) => {}
                (o, f) => panic!("Dijkstra {o:?}, search {f:?}"),
            }
        }
        assert!(compared >= 60, "only {compared} pairs compared");
    }

    /// `pull_ends` pulls a short chain whole, and a long one only within `ENDS_PULLED` points of
    /// either end, keeping its middle point for point.
    #[test]
    fn pull_ends_pulls_the_ends_and_keeps_the_middle() {
        let m = map(40, 10, |_, _| false);
        let chain = |n: usize| (0..n).map(|i| Point2::new(5.0 + i as f64, 5.0)).collect::<Vec<_>>();
        let short = chain(2 * ENDS_PULLED + 2);
        assert_eq!(pull_ends(&m, &short, 1.0), vec![short[0], *short.last().unwrap()]);
        let long = chain(20);
        let n = long.len();
        let mut want = vec![long[0], long[ENDS_PULLED]];
        want.extend_from_slice(&long[ENDS_PULLED + 1..n - 1 - ENDS_PULLED]);
        want.extend([long[n - 1 - ENDS_PULLED], long[n - 1]]);
        assert_eq!(pull_ends(&m, &long, 1.0), want);
    }

    #[test]
    fn open_space_is_one_line() {
        let m = map(20, 20, |_, _| false);
        let path = exact_footprint_path(&m, Point2::new(3.2, 3.7), Point2::new(15.1, 12.9), 1.0, || false).unwrap();
        assert_eq!(path.points.len(), 2);
        assert_eq!(path.expansions, 0);
    }
}
