//! The footprint's sweeps against brute force.

use super::*;
use crate::geometry::{Point2, Pose2};
use crate::grid::Grid;
use crate::trajectory::Segment;
use crate::trajectory::Turn;

/// Brute force: cells whose square lies within `rho` of some sample.
fn brute(points: &[Point2], rho: f64) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    for y in -20..40 {
        for x in -20..40 {
            let hit = points.iter().any(|p| {
                let nx = p.x.clamp(x as f64, x as f64 + 1.0);
                let ny = p.y.clamp(y as f64, y as f64 + 1.0);
                (p.x - nx).hypot(p.y - ny) <= rho
            });
            if hit {
                out.push((x, y));
            }
        }
    }
    out
}

#[test]
fn spans_match_brute_force() {
    let a = Segment::arc(Pose2::new(5.3, 4.1, 0.4), 7.0, 4.0, Turn::Left);
    let b = Segment::line(a.end(), 3.0);
    let segs = [a, b];
    let spans = swept_spans(&segs, 1.7, 0.0);
    let mut cells: Vec<(i64, i64)> = spans
        .iter()
        .flat_map(|s| (s.x0..=s.x1).map(move |x| (x as i64, s.y as i64)))
        .filter(|&(x, y)| (-20..40).contains(&x) && (-20..40).contains(&y))
        .collect();
    cells.sort_by_key(|&(x, y)| (y, x));
    let mut pts = Vec::new();
    for s in &segs {
        sample_segment(s, |p| {
            pts.push(p);
            true
        });
    }
    let mut expect = brute(&pts, sampled_radius(1.7));
    expect.sort_by_key(|&(x, y)| (y, x));
    assert_eq!(cells, expect);
}

#[test]
fn collision_map_runs() {
    let g = Grid::from_rows(&["....", ".@..", "...."]).unwrap();
    let m = CollisionMap::new(&g);
    assert!(m.run_free(0, 0, 3));
    assert!(!m.run_free(1, 0, 3));
    assert!(m.run_free(1, 2, 3));
    assert!(!m.run_free(1, 2, 4));
    assert!(!m.run_free(-1, 0, 0));
    assert!(m.disk_free(Point2::new(3.5, 2.5), 0.4));
    assert!(!m.disk_free(Point2::new(2.5, 2.5), 1.0));
    // A line through the blocked cell is caught, one beside it is not (radius 0).
    let hit = Segment::line(Pose2::new(0.5, 1.5, 0.0), 3.0);
    assert!(!m.sweep_free(&[hit], 0.0, 0.0));
    let miss = Segment::line(Pose2::new(0.5, 2.5, 0.0), 3.0);
    assert!(m.sweep_free(&[miss], 0.0, 0.0));
}

/// Runs are tested a 64-cell word at a time: on a long row (many words, a run of 2^16 blocked
/// cells and a few scattered after them) runs of any length answer like brute force.
#[test]
fn long_runs_answer_like_brute_force() {
    let w = 3 * 65_536 + 17;
    let blocked = |x: usize| x < 65_536 || x == 150_001 || x == 196_000;
    let g = Grid::from_blocked(w, 1, (0..w).map(blocked).collect()).unwrap();
    let m = CollisionMap::new(&g);
    let brute = |x0: usize, x1: usize| (x0..=x1).all(|x| !blocked(x));
    let mut next = uniform(7);
    let mut ends: Vec<(usize, usize)> =
        vec![(0, w - 1), (0, 65_535), (0, 150_000), (65_536, w - 1), (65_536, 150_000), (65_535, 131_071)];
    ends.extend((0..400).map(|_| {
        let (a, b) = ((next() * w as f64) as usize, (next() * w as f64) as usize);
        (a.min(b), a.max(b))
    }));
    for (x0, x1) in ends {
        assert_eq!(m.run_free(0, x0 as i64, x1 as i64), brute(x0, x1), "run {x0}..={x1}");
    }
}

/// Every run of a few rows three words and a bit wide (so runs start and end on, before and
/// after every word boundary, and the last word is partial) answers like brute force, as built
/// and after each of a series of random patches applied in place.
#[test]
fn every_run_answers_like_brute_force_across_words_and_patches() {
    let (w, h) = (64 * 3 + 5, 4);
    let mut next = uniform(11);
    let mut cells: Vec<bool> = (0..w * h).map(|_| next() < 0.02).collect();
    let mut m = CollisionMap::new(&Grid::from_blocked(w, h, cells.clone()).unwrap());
    for round in 0..6 {
        for y in 0..h {
            let row = &cells[y * w..(y + 1) * w];
            for x0 in 0..w {
                let mut clear = true;
                for (x1, &blocked) in row.iter().enumerate().skip(x0) {
                    clear &= !blocked;
                    assert_eq!(
                        m.run_free(y as i64, x0 as i64, x1 as i64),
                        clear,
                        "round {round}, row {y}, {x0}..={x1}"
                    );
                }
            }
        }
        // Outside the map is blocked.
        assert!(!m.run_free(0, -1, 3) && !m.run_free(0, 0, w as i64) && !m.run_free(h as i64, 0, 0));
        let (rw, rh) = (1 + (next() * 80.0) as usize, 1 + (next() * 3.0) as usize);
        let (x, y) = ((next() * (w - rw + 1) as f64) as usize, (next() * (h - rh + 1) as f64) as usize);
        for yy in y..y + rh {
            for xx in x..x + rw {
                cells[yy * w + xx] = next() < 0.5;
            }
        }
        let grid = Grid::from_blocked(w, h, cells.clone()).unwrap();
        m.update_rect(&grid, crate::grid::CellRect { x, y, width: rw, height: rh }).unwrap();
        assert_eq!(m, CollisionMap::new(&grid), "round {round}: a patch applied in place equals a fresh build");
    }
}

/// The sample-by-sample rule the skipping sweep must reproduce.
/// A reproducible stream of numbers uniform in `[0, 1)` (a linear congruential generator).
fn uniform(mut state: u64) -> impl FnMut() -> f64 {
    move || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Every cell the disk of radius `rho` around `p` touches tested by its row runs, without the
/// obstacle-distance shortcut of [`CollisionMap::disk_free`].
fn exact_disk_free(m: &CollisionMap, p: Point2, rho: f64) -> bool {
    let mut ok = true;
    disk_runs(p, rho, |y, x0, x1| {
        ok = ok && m.run_free(y, x0, x1);
        ok
    });
    ok
}

fn reference_sweep(m: &CollisionMap, segs: &[Segment], radius: f64, margin: f64) -> bool {
    let rho = sampled_radius(radius) + margin;
    segs.iter().all(|seg| {
        let mut ok = true;
        sample_segment(seg, |p| {
            ok = ok && exact_disk_free(m, p, rho);
            ok
        });
        ok
    })
}

#[test]
fn skipping_sweep_answers_like_every_sample() {
    // Random obstacles, random arcs and lines, several footprints: both outcomes occur and
    // the answers always agree.
    let mut g = Grid::new_free(80, 60).unwrap();
    let mut rnd = uniform(12345);
    for _ in 0..60 {
        g.set_blocked((rnd() * 80.0) as usize, (rnd() * 60.0) as usize, true).unwrap();
    }
    let plain = CollisionMap::new(&g);
    let (mut free, mut hit) = (0, 0);
    for _ in 0..3000 {
        let start = Pose2::new(rnd() * 80.0, rnd() * 60.0, rnd() * 6.3);
        let len = rnd() * 30.0;
        let seg = match (rnd() * 3.0) as u32 {
            0 => Segment::line(start, len),
            1 => Segment::arc(start, len, 2.0 + rnd() * 8.0, Turn::Left),
            _ => Segment::arc(start, len, 2.0 + rnd() * 8.0, Turn::Right),
        };
        for radius in [0.0, 1.5, 3.0] {
            let expect = reference_sweep(&plain, &[seg], radius, SEARCH_MARGIN);
            assert_eq!(plain.sweep_free(&[seg], radius, SEARCH_MARGIN), expect, "{seg:?} {radius}");
            if expect {
                free += 1;
            } else {
                hit += 1;
            }
        }
    }
    assert!(free > 500 && hit > 500, "free {free} hit {hit}");
}

#[test]
fn multi_segment_sweeps_answer_like_every_sample() {
    // Dubins curves (up to three segments, each with its own coarse proofs) and longer runs
    // of segments (beyond the segments whose proofs are kept), near and far from obstacles.
    let mut g = Grid::new_free(90, 70).unwrap();
    let mut rnd = uniform(777);
    for _ in 0..40 {
        let (x, y) = ((rnd() * 86.0) as usize, (rnd() * 66.0) as usize);
        for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
            g.set_blocked(x + dx, y + dy, true).unwrap();
        }
    }
    let prepared = CollisionMap::new(&g);
    let (mut free, mut hit) = (0, 0);
    for k in 0..2000 {
        let a = Pose2::new(5.0 + rnd() * 80.0, 5.0 + rnd() * 60.0, rnd() * 6.3);
        let b = Pose2::new(5.0 + rnd() * 80.0, 5.0 + rnd() * 60.0, rnd() * 6.3);
        let mut segs = crate::curves::dubins_shortest(a, b, 3.0 + rnd() * 6.0).unwrap().segments();
        if k % 3 == 0 {
            // A longer chain: the same curve continued by a second one.
            let end = segs.last().map_or(a, |s| s.end());
            let c = Pose2::new(5.0 + rnd() * 80.0, 5.0 + rnd() * 60.0, rnd() * 6.3);
            segs.extend(crate::curves::dubins_shortest(end, c, 4.0).unwrap().segments());
        }
        for radius in [0.5, 2.0] {
            let expect = reference_sweep(&prepared, &segs, radius, SEARCH_MARGIN);
            assert_eq!(prepared.sweep_free(&segs, radius, SEARCH_MARGIN), expect, "{segs:?} {radius}");
            // Where: found exactly when the sweep fails, at a sample whose disk is blocked.
            let first = prepared.first_blocked(&segs, radius, SEARCH_MARGIN);
            assert_eq!(first.is_none(), expect, "{segs:?} {radius}");
            if let Some(p) = first {
                assert!(!prepared.disk_free(p, sampled_radius(radius) + SEARCH_MARGIN), "{p:?}");
            }
            if expect {
                free += 1;
            } else {
                hit += 1;
            }
        }
    }
    assert!(free > 300 && hit > 300, "free {free} hit {hit}");
}

#[test]
fn disk_tests_answer_like_brute_force() {
    // The obstacle-distance shortcut must never call a disk free that touches a blocked cell or
    // the outside, near obstacles, near the border and far from both.
    let mut g = Grid::new_free(30, 30).unwrap();
    for (x, y) in [(10, 10), (11, 10), (20, 5), (5, 25)] {
        g.set_blocked(x, y, true).unwrap();
    }
    let map = CollisionMap::new(&g);
    // A closed disk touches a closed cell square when the square's nearest point is within it.
    let touches = |p: Point2, rho: f64, x: i64, y: i64| {
        let nx = p.x.clamp(x as f64, x as f64 + 1.0);
        let ny = p.y.clamp(y as f64, y as f64 + 1.0);
        (p.x - nx).hypot(p.y - ny) <= rho
    };
    let brute = |p: Point2, rho: f64| {
        let r = rho.ceil() as i64 + 2;
        let (cx, cy) = (p.x.floor() as i64, p.y.floor() as i64);
        (cy - r..=cy + r).all(|y| {
            (cx - r..=cx + r).all(|x| {
                let blocked = x < 0 || y < 0 || x >= 30 || y >= 30 || g.is_blocked(x, y);
                !(blocked && touches(p, rho, x, y))
            })
        })
    };
    let (mut free, mut hit) = (0, 0);
    for k in 0..3000 {
        let p = Point2::new((k % 59) as f64 * 0.51, (k / 59) as f64 * 0.53 + 0.1);
        for rho in [sampled_radius(2.0), sampled_radius(2.0) + SEARCH_MARGIN, 1.0, 3.0, 7.5] {
            let expect = brute(p, rho);
            assert_eq!(map.disk_free(p, rho), expect, "{p:?} {rho}");
            if expect {
                free += 1;
            } else {
                hit += 1;
            }
        }
    }
    assert!(free > 3000 && hit > 3000, "free {free} hit {hit}");
}

#[test]
fn local_updates_equal_a_fresh_build() {
    let mut seed = 11u64;
    let mut rnd = |n: usize| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((seed >> 33) as usize) % n
    };
    let (w, h) = (40, 30);
    let cells: Vec<bool> = (0..w * h).map(|_| rnd(10) == 0).collect();
    let mut grid = Grid::from_blocked(w, h, cells).unwrap();
    let mut map = CollisionMap::new(&grid);
    for _ in 0..40 {
        let rect = crate::grid::CellRect { x: rnd(w - 5), y: rnd(h - 5), width: 1 + rnd(5), height: 1 + rnd(5) };
        let value = rnd(2) == 0;
        for y in rect.y..rect.y + rect.height {
            for x in rect.x..rect.x + rect.width {
                grid.set_blocked(x, y, value).unwrap();
            }
        }
        map.update_rect(&grid, rect).unwrap();
        assert_eq!(map, CollisionMap::new(&grid));
    }
    let before = map.clone();
    let outside = crate::grid::CellRect { x: 38, y: 0, width: 5, height: 1 };
    assert!(map.update_rect(&grid, outside).is_err());
    assert!(map.update_rect(&Grid::new_free(3, 3).unwrap(), outside).is_err());
    assert_eq!(map, before);
}

/// Brute force: does the closed square of half side `half` at `(cx, cy, yaw)` intersect the
/// closed cell `(x, y)`? Separating axis test on the two squares' axes.
fn square_hits_cell(cx: f64, cy: f64, yaw: f64, half: f64, x: i64, y: i64) -> bool {
    let (c, s) = (yaw.cos(), yaw.sin());
    let corners: Vec<(f64, f64)> = [(half, half), (-half, half), (-half, -half), (half, -half)]
        .iter()
        .map(|&(u, v)| (cx + c * u - s * v, cy + s * u + c * v))
        .collect();
    let cell = [
        (x as f64, y as f64),
        (x as f64 + 1.0, y as f64),
        (x as f64 + 1.0, y as f64 + 1.0),
        (x as f64, y as f64 + 1.0),
    ];
    let axes = [(1.0, 0.0), (0.0, 1.0), (c, s), (-s, c)];
    axes.iter().all(|&(ax, ay)| {
        let proj = |pts: &[(f64, f64)]| {
            let v: Vec<f64> = pts.iter().map(|p| p.0 * ax + p.1 * ay).collect();
            (v.iter().cloned().fold(f64::INFINITY, f64::min), v.iter().cloned().fold(f64::NEG_INFINITY, f64::max))
        };
        let (a0, a1) = proj(&corners);
        let (b0, b1) = proj(&cell);
        a0 <= b1 + 1e-12 && b0 <= a1 + 1e-12
    })
}

#[test]
fn square_runs_equal_brute_force_cells() {
    let mut rnd = uniform(3);
    for _ in 0..300 {
        let (cx, cy, yaw, half) = (10.0 + rnd() * 5.0, 10.0 + rnd() * 5.0, rnd() * 7.0 - 3.5, 0.3 + rnd() * 3.0);
        let mut got = Vec::new();
        square_runs(cx, cy, yaw, half, |y, x0, x1| {
            got.extend((x0..=x1).map(|x| (x, y)));
            true
        });
        got.sort_by_key(|&(x, y)| (y, x));
        let mut expect = Vec::new();
        for y in 0..30 {
            for x in 0..30 {
                if square_hits_cell(cx, cy, yaw, half, x, y) {
                    expect.push((x, y));
                }
            }
        }
        assert_eq!(got, expect, "{cx} {cy} {yaw} {half}");
    }
}

#[test]
fn square_sweep_is_never_optimistic_against_brute_force_poses() {
    // Random obstacles and random arcs/lines: whenever the sampled sweep of a turning square
    // says free, the exact square at poses every 0.01 cells along the curve touches no
    // blocked cell; and both answers occur. The tables' spans agree with the sweep.
    let mut rnd = uniform(17);
    let mut g = Grid::new_free(60, 50).unwrap();
    for _ in 0..40 {
        g.set_blocked((rnd() * 60.0) as usize, (rnd() * 50.0) as usize, true).unwrap();
    }
    let m = CollisionMap::new(&g);
    let side = 2.5;
    let (mut free, mut hit) = (0, 0);
    for _ in 0..600 {
        let start = Pose2::new(8.0 + rnd() * 44.0, 8.0 + rnd() * 34.0, rnd() * 6.3);
        let len = rnd() * 12.0;
        let seg = match (rnd() * 3.0) as u32 {
            0 => Segment::line(start, len),
            1 => Segment::arc(start, len, 2.0 + rnd() * 6.0, Turn::Left),
            _ => Segment::arc(start, len, 2.0 + rnd() * 6.0, Turn::Right),
        };
        let says_free = m.sweep_free(&[seg], Shape::Square(side), 0.0);
        assert_eq!(m.first_blocked(&[seg], Shape::Square(side), 0.0).is_none(), says_free, "{seg:?}");
        let spans = swept_spans(&[seg], Shape::Square(side), 0.0);
        assert_eq!(m.spans_free(&spans, 0, 0), says_free, "{seg:?}");
        let steps = (seg.length / 0.01).ceil() as usize;
        let exact_free = (0..=steps).all(|k| {
            let q = seg.pose_at(seg.length * k as f64 / steps.max(1) as f64);
            let mut ok = true;
            for y in (q.y - 3.0) as i64..=(q.y + 3.0) as i64 {
                for x in (q.x - 3.0) as i64..=(q.x + 3.0) as i64 {
                    if g.is_blocked(x, y) && square_hits_cell(q.x, q.y, q.yaw, side / 2.0, x, y) {
                        ok = false;
                    }
                }
            }
            ok
        });
        if says_free {
            assert!(exact_free, "sweep said free but the square hits a cell: {seg:?}");
            free += 1;
        } else {
            hit += 1;
        }
    }
    assert!(free > 100 && hit > 100, "free {free} hit {hit}");
}

#[test]
fn a_square_turning_in_a_tight_gap_is_caught_where_its_inscribed_disk_is_not() {
    // A gap 3 cells wide: a square of side 2.6 passes straight through; turned by 45 degrees
    // its diagonal (3.68) does not fit, though its inscribed disk (radius 1.3) would.
    let mut g = Grid::new_free(30, 30).unwrap();
    for x in 0..30 {
        g.set_blocked(x, 10, true).unwrap();
        g.set_blocked(x, 14, true).unwrap();
    }
    let m = CollisionMap::new(&g);
    let straight = Segment::line(Pose2::new(5.0, 12.5, 0.0), 10.0);
    assert!(m.sweep_free(&[straight], Shape::Square(2.6), 0.0));
    let turned = Segment::line(Pose2::new(5.0, 12.5, 0.0), 0.0);
    let diagonal = Pose2::new(10.0, 12.5, std::f64::consts::FRAC_PI_4);
    assert!(!m.pose_free(diagonal, Shape::Square(2.6), 0.0));
    assert!(m.pose_free(diagonal, Shape::Disk(1.3), 0.0));
    assert!(m.pose_free(turned.start, Shape::Square(2.6), 0.0));
}

/// Brute force of [`CollisionMap::overlap_depth`]: points of every blocked cell (and of the
/// outside) on a fine lattice, each inside the footprint counted by its distance to the outline
/// (Euclidean for the disk; for the square, the distance to its nearest side).
fn depth_by_points(blocked: &dyn Fn(i64, i64) -> bool, pose: Pose2, shape: &Shape) -> f64 {
    const N: usize = 60;
    let reach = shape.circumradius() + 1.0;
    let (c, s) = (pose.yaw.cos(), pose.yaw.sin());
    let mut depth: f64 = 0.0;
    for y in (pose.y - reach).floor() as i64..=(pose.y + reach).ceil() as i64 {
        for x in (pose.x - reach).floor() as i64..=(pose.x + reach).ceil() as i64 {
            if !blocked(x, y) {
                continue;
            }
            for j in 0..=N {
                for i in 0..=N {
                    let (px, py) = (x as f64 + i as f64 / N as f64 - pose.x, y as f64 + j as f64 / N as f64 - pose.y);
                    let (u, v) = (px * c + py * s, -px * s + py * c);
                    let inside = match shape {
                        Shape::Disk(r) => r - px.hypot(py),
                        Shape::Square(a) => a / 2.0 - u.abs().max(v.abs()),
                        Shape::Polygon(p) => {
                            let q = Point2::new(u, v);
                            if p.contains(q) {
                                p.distance_to_boundary(q)
                            } else {
                                0.0
                            }
                        }
                    };
                    depth = depth.max(inside);
                }
            }
        }
    }
    depth
}

#[test]
fn overlap_depth_matches_brute_force_for_disks_turning_squares_and_polygons() {
    // A 30 x 20 map: its border outside, a wall at x = 12, a block at (20..23, 5..9).
    let (w, h) = (30usize, 20usize);
    let inside = |x: i64, y: i64| x >= 0 && y >= 0 && x < w as i64 && y < h as i64;
    let blocked = move |x: i64, y: i64| !inside(x, y) || x == 12 || ((20..23).contains(&x) && (5..9).contains(&y));
    let cells: Vec<bool> = (0..w * h).map(|k| blocked((k % w) as i64, (k / w) as i64)).collect();
    let map = CollisionMap::new(&Grid::from_blocked(w, h, cells).unwrap());
    let mut rng = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut overlapping = 0;
    for k in 0..300 {
        let pose = Pose2::new(next() * 34.0 - 2.0, next() * 24.0 - 2.0, next() * 6.4 - 3.2);
        let shape = match k % 3 {
            0 => Shape::Disk(0.5 + next() * 3.0),
            1 => Shape::Square(1.0 + next() * 5.0),
            _ => Shape::Polygon(std::sync::Arc::new(random_polygon(&mut next))),
        };
        let got = map.overlap_depth(pose, &shape);
        let want = depth_by_points(&blocked, pose, &shape);
        // The lattice's points lie within 1/120 cell of every point of a cell (half a spacing
        // diagonally), so the brute force may fall short of the exact depth by that much; the
        // polygon's own lattice is 17 x 17 a cell (within 0.045 cells).
        let above = if matches!(shape, Shape::Polygon(_)) { super::shape::POLYGON_DEPTH_SLACK } else { 0.0 };
        assert!(got >= want - 1e-9 && got <= want + 0.012 + above, "{pose:?} {shape:?}: {got} vs {want}");
        // A polygon meeting a blocked cell never reads as free of it.
        if let Shape::Polygon(p) = &shape {
            assert_eq!(got > 0.0, !map.polygon_free(p, pose, 0.0), "{pose:?} {shape:?}");
        }
        if !matches!(shape, Shape::Polygon(_)) {
            assert!(got <= shape.inradius() + 1e-12);
        }
        overlapping += usize::from(got > 0.0);
    }
    assert!(overlapping > 50, "the random poses overlap obstacles often enough: {overlapping}");
}

/// The polygon's sweep proves samples free from the obstacle distance (its bounding disk, then
/// its disk cover) without testing them: on walls and scattered blocks, with random polygons
/// along random Dubins curves hugging them, it answers exactly as testing every sample does.
#[test]
fn skipping_polygon_sweep_answers_like_every_sample() {
    let mut g = Grid::new_free(120, 90).unwrap();
    let mut rnd = uniform(4242);
    // Walls (long vehicles run beside them, where the cover decides) and scattered blocks.
    for x in 10..110 {
        g.set_blocked(x, 20, true).unwrap();
        g.set_blocked(x, 70, true).unwrap();
    }
    for _ in 0..12 {
        let (x, y) = ((rnd() * 116.0) as usize, (rnd() * 86.0) as usize);
        for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
            g.set_blocked(x + dx, y + dy, true).unwrap();
        }
    }
    let map = CollisionMap::new(&g);
    let (mut free, mut hit) = (0, 0);
    for _ in 0..1500 {
        let polygon = std::sync::Arc::new(random_polygon(&mut rnd));
        let shape = Shape::Polygon(polygon);
        // Both ends on one side of one wall, a few cells from it, mostly heading along it.
        let wall = if rnd() < 0.5 { 20.0 } else { 70.0 };
        let side = if rnd() < 0.5 { 1.0 } else { -1.0 };
        let end = |x: f64, rnd: &mut dyn FnMut() -> f64| {
            let yaw = if rnd() < 0.8 { (rnd() - 0.5) * 0.3 } else { rnd() * 6.3 };
            Pose2::new(x, wall + side * (1.5 + rnd() * 5.0), yaw)
        };
        let x = 15.0 + rnd() * 60.0;
        let a = end(x, &mut rnd);
        let b = end(x + 8.0 + rnd() * 25.0, &mut rnd);
        let segs = crate::curves::dubins_shortest(a, b, 6.0 + rnd() * 10.0).unwrap().segments();
        let margin = if rnd() < 0.5 { 0.0 } else { SEARCH_MARGIN };
        let expect = map.first_blocked(&segs, shape.clone(), margin).is_none();
        assert_eq!(map.sweep_free(&segs, shape, margin), expect, "{segs:?}");
        if expect {
            free += 1;
        } else {
            hit += 1;
        }
    }
    assert!(free > 200 && hit > 200, "free {free} hit {hit}");
}

/// A random vehicle polygon (cells): a rectangle with its reference point anywhere along its
/// length, or an L shape, turned and stretched at random.
pub(super) fn random_polygon(next: &mut impl FnMut() -> f64) -> crate::polygon::Polygon {
    let (length, width) = (2.0 + next() * 6.0, 1.0 + next() * 3.0);
    let rear = -next() * length;
    let corners: Vec<(f64, f64)> = if next() < 0.5 {
        vec![(rear, -width / 2.0), (rear + length, -width / 2.0), (rear + length, width / 2.0), (rear, width / 2.0)]
    } else {
        // An L: the full width at the rear, half of it at the front.
        let notch = rear + length * (0.3 + 0.4 * next());
        vec![
            (rear, -width / 2.0),
            (rear + length, -width / 2.0),
            (rear + length, 0.0),
            (notch, 0.0),
            (notch, width / 2.0),
            (rear, width / 2.0),
        ]
    };
    crate::polygon::Polygon::new(corners.into_iter().map(|(x, y)| Point2::new(x, y)).collect()).unwrap()
}

/// A map read straight from its values equals the one built from its grid.
#[test]
fn a_map_read_from_values_equals_one_from_its_grid() {
    let (w, h) = (131, 7);
    let mut next = uniform(5);
    let values: Vec<i8> = (0..w * h).map(|_| [-1i8, 0, 0, 0, 40, 65, 100][(next() * 7.0) as usize]).collect();
    let rule = crate::map::Traversability { occupied_threshold: 65, allow_unknown: false };
    let blocked: Vec<bool> = values.iter().map(|&v| rule.is_blocked(v)).collect();
    let grid = Grid::from_blocked(w, h, blocked.clone()).unwrap();
    let distance = std::sync::Arc::new(crate::clearance::distance::DistanceField::new(w, h, &blocked, 20));
    let from_values = CollisionMap::on_values(&values, |v| rule.is_blocked(v), (w, h), distance.clone());
    assert_eq!(from_values, CollisionMap::on_distance(&grid, distance));
}
