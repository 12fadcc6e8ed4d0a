//! TEMPORARY any-angle source, used by `bench-nav` and the tests until Block A* lands: octile A*
//! on the vehicle's centre mask followed by a greedy line-of-sight string-pulling pass. Swap it
//! for Block A* by changing the one call in `cli::bench_nav::any_angle_path`.

use crate::geometry::Point2;
use crate::grid::Grid;
use crate::search::octile::octile_astar;

/// True when the segment `a`-`b` (cell units) crosses only free cells of `mask` (sampled every
/// 0.1 cell, corners included by checking both cells a diagonal step passes).
pub(crate) fn line_of_sight(mask: &Grid, a: Point2, b: Point2) -> bool {
    let n = (a.distance(b) / 0.1).ceil().max(1.0) as usize;
    let (mut px, mut py) = (a.x.floor() as i64, a.y.floor() as i64);
    if mask.is_blocked(px, py) {
        return false;
    }
    for k in 1..=n {
        let t = k as f64 / n as f64;
        let (x, y) = ((a.x + t * (b.x - a.x)).floor() as i64, (a.y + t * (b.y - a.y)).floor() as i64);
        if (x, y) != (px, py) {
            if mask.is_blocked(x, y) || (x != px && y != py && (mask.is_blocked(px, y) || mask.is_blocked(x, py))) {
                return false;
            }
            (px, py) = (x, y);
        }
    }
    true
}

/// An any-angle-like path from `start` to `goal` (cell units) on `mask` (cells the vehicle's
/// centre may not occupy): octile A* between the two cells, then string pulling. `None` when
/// either end is blocked, no path exists or `should_stop` fired.
pub(crate) fn octile_string_pulled(
    mask: &Grid,
    start: Point2,
    goal: Point2,
    should_stop: &mut dyn FnMut() -> bool,
) -> Option<Vec<Point2>> {
    let cell = |p: Point2| (p.x.floor().max(0.0) as usize, p.y.floor().max(0.0) as usize);
    let path = octile_astar(mask, cell(start), cell(goal), should_stop)?;
    let mut pts: Vec<Point2> = vec![start];
    pts.extend(path.cells.iter().map(|&(x, y)| Point2::new(x as f64 + 0.5, y as f64 + 0.5)));
    pts.push(goal);
    let mut out = vec![pts[0]];
    let mut anchor = 0;
    let mut k = 1;
    while k < pts.len() {
        // Extend the straight run while the anchor still sees the next point.
        if k + 1 < pts.len() && line_of_sight(mask, pts[anchor], pts[k + 1]) {
            k += 1;
            continue;
        }
        out.push(pts[k]);
        anchor = k;
        k += 1;
    }
    Some(out)
}
