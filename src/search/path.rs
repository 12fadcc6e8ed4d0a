//! The path type every grid search in this crate returns.

/// A path found by a grid search.
///
/// `points` are **vertices** (cell corners, `0..=width` x `0..=height`) for any-angle searches
/// and **cells** for octile and tile searches; consecutive any-angle points have line of sight
/// under the rule the search used, consecutive cell points are one legal move apart, unless a
/// function documents otherwise.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GridPath {
    /// Waypoints from start to goal, both included.
    pub points: Vec<(u32, u32)>,
    /// Length in cell units (Euclidean sum over the waypoints for any-angle paths, octile or
    /// tile move costs for cell paths).
    pub length: f64,
    /// Nodes (A*, Theta*) or blocks (Block A*) expanded.
    pub expansions: usize,
}

/// Why a search returned no path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SearchFailure {
    /// Start or goal lies outside the grid.
    #[error("start or goal is outside the grid")]
    OutOfBounds,
    /// Start or goal is blocked (a blocked cell, or a vertex no path can use).
    #[error("start or goal is blocked")]
    BlockedEndpoint,
    /// The block grid and the database use different block sides.
    #[error("block grid and LDDB use different block sides")]
    BlockSideMismatch,
    /// Every reachable node was searched without reaching the goal.
    #[error("no path exists")]
    NoPath,
    /// The caller's `should_stop` asked the search to give up.
    #[error("search stopped by the caller")]
    Stopped,
}

/// Euclidean length of a polyline of integer points.
pub fn polyline_length(points: &[(u32, u32)]) -> f64 {
    points
        .windows(2)
        .map(|w| {
            let dx = f64::from(w[1].0) - f64::from(w[0].0);
            let dy = f64::from(w[1].1) - f64::from(w[0].1);
            dx.hypot(dy)
        })
        .sum()
}

/// Removes repeated points and interior points collinear with their neighbours (the path's
/// geometry is unchanged). Valid for the Moving AI rule; under the conservative rule use
/// [`remove_collinear_if`] with a line-of-sight check, since a straight run through a vertex
/// touching a blocked corner is only valid as two segments.
pub fn remove_collinear(points: &mut Vec<(u32, u32)>) {
    remove_collinear_if(points, |_, _| true)
}

/// [`remove_collinear`], dropping a collinear point only when `merge_ok(a, c)` accepts the
/// merged segment from its predecessor `a` to its successor `c`.
pub fn remove_collinear_if(points: &mut Vec<(u32, u32)>, mut merge_ok: impl FnMut((u32, u32), (u32, u32)) -> bool) {
    points.dedup();
    if points.len() < 3 {
        return;
    }
    let mut out: Vec<(u32, u32)> = Vec::with_capacity(points.len());
    for &p in points.iter() {
        while out.len() >= 2 {
            let (a, b) = (out[out.len() - 2], out[out.len() - 1]);
            let cross = (i64::from(b.0) - i64::from(a.0)) * (i64::from(p.1) - i64::from(b.1))
                - (i64::from(b.1) - i64::from(a.1)) * (i64::from(p.0) - i64::from(b.0));
            let dot = (i64::from(b.0) - i64::from(a.0)) * (i64::from(p.0) - i64::from(b.0))
                + (i64::from(b.1) - i64::from(a.1)) * (i64::from(p.1) - i64::from(b.1));
            // Only drop b when the path goes straight on through it (not when it reverses).
            if cross == 0 && dot > 0 && merge_ok(a, p) {
                out.pop();
            } else {
                break;
            }
        }
        out.push(p);
    }
    *points = out;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collinear_points_go_lengths_stay() {
        let mut p = vec![(0, 0), (1, 1), (1, 1), (2, 2), (2, 3), (2, 5), (2, 4)];
        let before = polyline_length(&p);
        remove_collinear(&mut p);
        assert_eq!(p, vec![(0, 0), (2, 2), (2, 5), (2, 4)]);
        assert!((polyline_length(&p) - before).abs() < 1e-12);
    }
}
