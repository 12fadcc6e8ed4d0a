//! The distance a path keeps from obstacles, measured as Navigation2's planner benchmark
//! (`tools/planner_benchmarking`) measures it, from the map alone and independently of the
//! planner: the path sampled every quarter cell, each sample's cost that of its cell under
//! costmap_2d's InflationLayer formula.
//!
//! A cell's cost, for `d` the exact distance (map units) between its centre and the nearest
//! blocked cell's centre: 254 on an obstacle (`d` = 0), 253 within the inscribed radius,
//! `floor(252 exp(-cost_scaling_factor (d - inscribed_radius)))` up to the inflation radius, 0
//! beyond. The distance is found by scanning the blocked cells within the inflation radius of the
//! cell (no distance transform of the planner's is used), and kept per cell once found.

use crate::grid::Grid;
use crate::trajectory::Trajectory;
use std::collections::HashMap;

/// costmap_2d's InflationLayer parameters (map units).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Inflation {
    /// The robot's inscribed radius: cells nearer an obstacle than this cost 253.
    pub inscribed_radius: f64,
    /// Cells farther than this from every obstacle cost 0.
    pub inflation_radius: f64,
    /// The decay of the cost between the two radii.
    pub cost_scaling_factor: f64,
}

impl Inflation {
    /// The cost (0-254) of a cell at distance `d` (map units) from the nearest obstacle.
    pub fn cost(&self, d: f64) -> u8 {
        if d <= 0.0 {
            254
        } else if d <= self.inscribed_radius {
            253
        } else if d <= self.inflation_radius {
            (252.0 * (-self.cost_scaling_factor * (d - self.inscribed_radius)).exp()).floor() as u8
        } else {
            0
        }
    }
}

/// What one path keeps: the mean and the largest sample cost, and the smallest distance (map
/// units) from a sample's cell centre to an obstacle cell's centre, `None` when every sample is
/// beyond the inflation radius (nothing nearer was looked for).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PathCost {
    /// Mean sample cost (0-254).
    pub mean_cost: f64,
    /// Largest sample cost.
    pub max_cost: u8,
    /// Smallest sample distance to an obstacle (map units), within the inflation radius.
    pub min_clearance: Option<f64>,
}

/// Measures paths on one map (blocked cells `grid`, `resolution` map units per cell).
pub struct Nav2Cost<'a> {
    grid: &'a Grid,
    resolution: f64,
    inflation: Inflation,
    /// Per cell: the distance to the nearest obstacle within the inflation radius (cells), or
    /// `None` when there is none.
    distances: HashMap<(i64, i64), Option<f64>>,
}

impl<'a> Nav2Cost<'a> {
    /// A measure on `grid` (blocked cells) at `resolution` (map units per cell).
    pub fn new(grid: &'a Grid, resolution: f64, inflation: Inflation) -> Self {
        Self { grid, resolution, inflation, distances: HashMap::new() }
    }

    /// Distance (cells) from cell `c`'s centre to the nearest blocked cell's centre, if within
    /// the inflation radius. Cells off the map are not obstacles (costmap_2d does not inflate
    /// the map's edge).
    fn distance(&mut self, c: (i64, i64)) -> Option<f64> {
        if let Some(&d) = self.distances.get(&c) {
            return d;
        }
        let reach = self.inflation.inflation_radius / self.resolution;
        let r = reach.ceil() as i64;
        let mut best: Option<f64> = None;
        for dy in -r..=r {
            for dx in -r..=r {
                let d = ((dx * dx + dy * dy) as f64).sqrt();
                if d <= reach
                    && best.is_none_or(|b| d < b)
                    && self.grid.contains(c.0 + dx, c.1 + dy)
                    && self.grid.is_blocked(c.0 + dx, c.1 + dy)
                {
                    best = Some(d);
                }
            }
        }
        self.distances.insert(c, best);
        best
    }

    /// Measures `trajectory` (cell units). `None` for a trajectory that does not move.
    pub fn measure(&mut self, trajectory: &Trajectory) -> Option<PathCost> {
        let samples = trajectory.sample(0.25);
        if samples.len() < 2 {
            return None;
        }
        let (mut sum, mut max_cost, mut min_clearance) = (0.0, 0u8, None::<f64>);
        for p in &samples {
            let cell = (p.x.floor() as i64, p.y.floor() as i64);
            let d = self.distance(cell).map(|d| d * self.resolution);
            let cost = d.map_or(0, |d| self.inflation.cost(d));
            sum += f64::from(cost);
            max_cost = max_cost.max(cost);
            if let Some(d) = d {
                min_clearance = Some(min_clearance.map_or(d, |m| m.min(d)));
            }
        }
        Some(PathCost { mean_cost: sum / samples.len() as f64, max_cost, min_clearance })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Point2;

    const NAV2: Inflation = Inflation { inscribed_radius: 0.22, inflation_radius: 0.55, cost_scaling_factor: 3.0 };

    #[test]
    fn costs_follow_the_inflation_layer_formula() {
        assert_eq!(NAV2.cost(0.0), 254);
        assert_eq!(NAV2.cost(0.1), 253);
        assert_eq!(NAV2.cost(0.22), 253);
        // 252 e^{-3 (0.3 - 0.22)} = 198.6
        assert_eq!(NAV2.cost(0.3), 198);
        // 252 e^{-3 (0.55 - 0.22)} = 93.6
        assert_eq!(NAV2.cost(0.55), 93);
        assert_eq!(NAV2.cost(0.56), 0);
    }

    #[test]
    fn a_straight_path_beside_a_wall_costs_what_its_distance_says() {
        // 5 cm cells; a wall along row 0; the path along row 6 (cell centres 6 cells = 0.30 m
        // from the wall's centres), far from the map's other edges.
        let (w, h) = (200, 80);
        let mut grid = Grid::new_free(w, h).unwrap();
        for x in 0..w {
            grid.set_blocked(x, 0, true).unwrap();
        }
        let mut cost = Nav2Cost::new(&grid, 0.05, NAV2);
        let path = Trajectory::turning_on_the_spot(&[Point2::new(50.5, 6.5), Point2::new(150.5, 6.5)], None, None);
        let measured = cost.measure(&path).unwrap();
        assert_eq!(measured.max_cost, NAV2.cost(0.30));
        assert!((measured.mean_cost - f64::from(NAV2.cost(0.30))).abs() < 1e-9);
        assert!((measured.min_clearance.unwrap() - 0.30).abs() < 1e-9);
        // Beyond the inflation radius nothing is near.
        let far = Trajectory::turning_on_the_spot(&[Point2::new(50.5, 30.5), Point2::new(150.5, 30.5)], None, None);
        assert_eq!(cost.measure(&far).unwrap(), PathCost { mean_cost: 0.0, max_cost: 0, min_clearance: None });
    }
}
