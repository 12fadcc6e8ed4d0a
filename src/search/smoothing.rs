//! Post-smoothing: drop waypoints while line of sight holds (greedy, from the start). Works on
//! points in half-cell units (see [`super::los`]) so it applies to vertex paths of any-angle
//! searches and to cell-centre paths of octile searches alike.

use super::los::{CellMask, LosRule};

/// Greedy post-smoothing of `points` (half-cell units), the classic linear pass: a waypoint is
/// dropped when the last kept waypoint sees the next one under `rule`. The result is never
/// longer than the input (triangle inequality), and every segment of it has line of sight when
/// every segment of the input had.
pub fn smooth_doubled(mask: &CellMask, rule: LosRule, points: &[(i64, i64)]) -> Vec<(i64, i64)> {
    if points.len() < 3 {
        return points.to_vec();
    }
    let mut out = vec![points[0]];
    for i in 1..points.len() - 1 {
        let anchor = *out.last().unwrap_or(&points[0]);
        if !mask.los_doubled(rule, anchor, points[i + 1]) {
            out.push(points[i]);
        }
    }
    out.push(points[points.len() - 1]);
    out
}

/// Length (cell units) of a polyline given in half-cell units.
pub fn length_doubled(points: &[(i64, i64)]) -> f64 {
    points.windows(2).map(|w| ((w[1].0 - w[0].0) as f64).hypot((w[1].1 - w[0].1) as f64) / 2.0).sum()
}

/// Vertex path to half-cell units.
pub fn vertices_to_doubled(points: &[(u32, u32)]) -> Vec<(i64, i64)> {
    points.iter().map(|&(x, y)| (2 * i64::from(x), 2 * i64::from(y))).collect()
}

/// Cell path to its cell centres in half-cell units.
pub fn cells_to_doubled(points: &[(u32, u32)]) -> Vec<(i64, i64)> {
    points.iter().map(|&(x, y)| (2 * i64::from(x) + 1, 2 * i64::from(y) + 1)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Grid;

    #[test]
    fn smoothing_shortens_and_keeps_sight() {
        let g = Grid::from_rows(&["....", ".@@.", "...."]).unwrap();
        let m = CellMask::from_grid(&g);
        // A staircase of cell centres around the wall.
        let cells = [(0, 0), (1, 0), (2, 0), (3, 0), (3, 1), (3, 2)];
        let d = cells_to_doubled(&cells);
        let s = smooth_doubled(&m, LosRule::MovingAi, &d);
        assert_eq!(s, vec![(1, 1), (7, 1), (7, 5)]);
        assert!(length_doubled(&s) <= length_doubled(&d));
        for w in s.windows(2) {
            assert!(m.los_doubled(LosRule::MovingAi, w[0], w[1]));
        }
    }
}
