//! What a plan keeps from obstacles and what it costs, measured once on its final trajectory:
//! the figures a user compares plans by ([`PathFigures`]).

use super::PreparedMap;
use crate::costs::COST_STEP;
use crate::trajectory::Trajectory;
use serde::Serialize;

/// A trajectory's cost and clearance on the map it was planned on, sampled every quarter cell
/// along its centre line (the midpoints of equal steps, as the planner prices paths).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct PathFigures {
    /// The cost (map units, m): the length weighted by `1 + cost_penalty c` along it (see
    /// [`crate::costs`]); the length itself at `cost_penalty` 0.
    pub cost: f64,
    /// Mean normalised traversal cost `c` (0..1) along the trajectory, by length; 0 without
    /// costs or without length.
    pub mean_cost: f64,
    /// Largest normalised traversal cost along the trajectory; 0 without costs.
    pub max_cost: f64,
    /// Smallest distance (map units, m) from a sample's cell centre to the nearest obstacle
    /// cell's centre (Navigation2's inflation distance); `None` when every sample is farther than
    /// 32 cells, or the trajectory has no length.
    pub min_clearance: Option<f64>,
}

impl PathFigures {
    /// The figures of `trajectory` (map frame) on `prepared`.
    pub fn measure(prepared: &PreparedMap, trajectory: &Trajectory) -> Self {
        let info = &prepared.site.map().info;
        let cells = trajectory.to_cells(info);
        let costs = prepared.collision.costs();
        let (mut length, mut weighted, mut max_cost) = (0.0, 0.0, 0.0f64);
        let mut min_clearance: Option<f64> = None;
        for s in cells.segments.iter().filter(|s| s.length > 0.0) {
            let n = (s.length / COST_STEP).ceil().max(1.0);
            let ds = s.length / n;
            for k in 0..n as usize {
                let p = s.pose_at((k as f64 + 0.5) * ds).point();
                let (x, y) = (p.x.floor() as i64, p.y.floor() as i64);
                let c = costs.map_or(0.0, |f| f.cost(x, y));
                weighted += c * ds;
                max_cost = max_cost.max(c);
                if let Some(d) = prepared.collision.centre_distance(x, y) {
                    min_clearance = Some(min_clearance.map_or(d, |m: f64| m.min(d)));
                }
            }
            length += s.length;
        }
        let penalty = costs.map_or(0.0, |f| f.penalty());
        let res = info.resolution;
        Self {
            cost: (length + penalty * weighted) * res,
            mean_cost: if length > 0.0 { weighted / length } else { 0.0 },
            max_cost,
            min_clearance: min_clearance.map(|d| d * res),
        }
    }
}
