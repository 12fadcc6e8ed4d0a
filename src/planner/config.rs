//! The planner's parameters and the values derived from them.

use super::{PlanError, StatusCode};
use crate::directional::{HeadingBins, MotionModel, Neighbourhood, RefineParams};
use crate::map::{Traversability, DEFAULT_MAX_MAP_CELLS};
use serde::Serialize;

/// Planner parameters. Names match the ROS parameters of `config/planner.yaml`, and the defaults
/// are that file's values (a test keeps them equal), so `blockstar plan` without `--params` and
/// the node with the bundled file plan alike.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannerConfig {
    /// Radius of the vehicle's circular footprint (m, >= 0); used when `robot_side` is 0.
    pub robot_radius: f64,
    /// Side of the vehicle's square footprint (m, >= 0; 0 = the circle of `robot_radius`),
    /// centred on the reference point and turning with the heading along arcs and lines.
    ///
    /// Clearance rule: the vehicle mask, regions and any-angle guide use the square's
    /// circumscribed circle (radius `side / sqrt(2)`): wherever that disk fits, the square fits in
    /// every heading it may turn to, so the mask is conservative for a turning square, whereas
    /// true clearance (obstacle-free squares anchored at a cell, axis aligned) only describes a
    /// square that never turns. The trajectory itself (hit-check tables,
    /// searches, verification) is checked with the turning square.
    pub robot_side: f64,
    /// Minimum turning radius (m, >= 0; 0 allows turning on the spot).
    pub min_turning_radius: f64,
    /// Whether unknown cells may be driven through.
    pub allow_unknown: bool,
    /// Occupancy value (0..=100) at or above which a cell is an obstacle.
    pub occupied_threshold: i8,
    /// Spacing of the poses in the published path (m, > 0).
    pub path_spacing: f64,
    /// Time budget for one plan (s, > 0).
    pub max_planning_time: f64,
    /// Largest map accepted (cells).
    pub max_map_cells: usize,
    /// Heading bins of Directional A* (8 as Pinter, or 16).
    pub heading_bins: usize,
    /// Neighbourhood of the Directional A* window repair (8, 24 or 48).
    pub neighbourhood: usize,
    /// Extra cost per radian turned, in metres (0 = shortest path).
    pub turn_penalty: f64,
    /// Forwards only (`forward`, the default) or forwards and backwards (`reeds_shepp`). At a
    /// turning radius of 0 the vehicle turns on the spot and never needs to reverse: ignored.
    pub motion_model: MotionModel,
    /// With `reeds_shepp`: factor (>= 1) on the length driven backwards.
    pub reverse_penalty: f64,
    /// With `reeds_shepp`: cost in metres (>= 0) added per change of gear.
    pub change_penalty: f64,
    /// Weight (>= 0) of the normalised traversal cost along a path (Smac's `cost_penalty`): a
    /// path costs `∫ (1 + cost_penalty c) ds`, `c` in `[0, 1]` the larger of the map's grade and
    /// the clearance cost (see [`crate::costs`]). 0: the shortest legal path.
    pub cost_penalty: f64,
    /// Gap (m, >= 0) between the footprint and the nearest obstacle below which a cell's cost
    /// rises (0 at this gap, 1 at the footprint's reach); 0: the map's grades alone.
    pub preferred_clearance: f64,
}

impl Default for PlannerConfig {
    fn default() -> Self {
        Self {
            robot_radius: 0.15,
            robot_side: 0.0,
            min_turning_radius: 0.3,
            allow_unknown: false,
            occupied_threshold: 65,
            path_spacing: 0.05,
            max_planning_time: 2.0,
            max_map_cells: DEFAULT_MAX_MAP_CELLS,
            heading_bins: 8,
            neighbourhood: 24,
            turn_penalty: 0.0,
            motion_model: MotionModel::Forward,
            reverse_penalty: 1.0,
            change_penalty: 0.0,
            cost_penalty: 2.0,
            preferred_clearance: 0.35,
        }
    }
}

impl PlannerConfig {
    /// Checks every field's range, by the node's parameter table ([`crate::params::PARAMS`]: one
    /// set of ranges for the library, the CLI and the node); the message names the offending
    /// parameter, its range and its value.
    pub fn validate(&self) -> Result<(), PlanError> {
        crate::params::NodeParams { planner: self.clone(), ..Default::default() }.validate()
    }

    /// The Directional A* parameters for a map of `resolution` metres per cell (`None` when the
    /// turning radius is 0: the any-angle path is then the trajectory). Fails with
    /// `INVALID_INPUT` when `heading_bins` or `neighbourhood` names no lattice (as
    /// [`PlannerConfig::validate`] would), never falling back to another.
    pub fn refine_params(&self, resolution: f64) -> Result<Option<RefineParams>, PlanError> {
        if self.min_turning_radius <= 0.0 {
            return Ok(None);
        }
        let invalid = |name: &str, allowed: &str, value: usize| {
            PlanError::new(StatusCode::InvalidInput, format!("{name} must be one of {allowed}, got {value}"))
        };
        let heading_bins = HeadingBins::with_count(self.heading_bins)
            .ok_or_else(|| invalid("heading_bins", "8, 16", self.heading_bins))?;
        let repair_neighbourhood = Neighbourhood::with_size(self.neighbourhood)
            .ok_or_else(|| invalid("neighbourhood", "8, 24, 48", self.neighbourhood))?;
        Ok(Some(RefineParams {
            heading_bins,
            repair_neighbourhood,
            // Per radian turned: metres of penalty become cells of penalty.
            turn_penalty: self.turn_penalty / resolution,
            motion_model: self.motion_model,
            reverse_penalty: self.reverse_penalty,
            change_penalty: self.change_penalty / resolution,
            footprint_side: self.robot_side / resolution,
            ..RefineParams::from_metres(self.robot_radius, self.min_turning_radius, resolution)
        }))
    }

    /// Radius (m) of the largest disk the footprint covers in every heading: the circle itself,
    /// or half the square's side.
    pub fn inradius(&self) -> f64 {
        if self.robot_side > 0.0 {
            self.robot_side / 2.0
        } else {
            self.robot_radius
        }
    }

    /// Radius (m) of the disk the vehicle mask, regions and start/goal placement use: the circle
    /// itself, or the square's circumscribed circle (see `robot_side`).
    pub fn mask_radius(&self) -> f64 {
        if self.robot_side > 0.0 {
            self.robot_side * std::f64::consts::FRAC_1_SQRT_2
        } else {
            self.robot_radius
        }
    }

    /// How traversal costs are made on a map of `resolution` metres per cell; `None` at
    /// `cost_penalty` 0 (lengths alone: no cost field is built).
    pub fn cost_rule(&self, resolution: f64) -> Option<crate::costs::CostRule> {
        (self.cost_penalty > 0.0).then(|| crate::costs::CostRule {
            cost_penalty: self.cost_penalty,
            preferred_clearance: self.preferred_clearance / resolution,
            inscribed: self.inradius() / resolution,
            traversability: self.traversability(),
        })
    }

    /// The rule turning occupancy values into blocked cells.
    pub fn traversability(&self) -> Traversability {
        Traversability { occupied_threshold: self.occupied_threshold, allow_unknown: self.allow_unknown }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lattice_that_does_not_exist_is_refused_not_replaced() {
        let good = PlannerConfig { heading_bins: 16, neighbourhood: 48, ..PlannerConfig::default() };
        let p = good.refine_params(0.05).unwrap().unwrap();
        assert_eq!((p.heading_bins, p.repair_neighbourhood), (HeadingBins::Sixteen, Neighbourhood::Directional48));
        // Unvalidated configurations reach `refine_params` from library users: no silent 24.
        let e = PlannerConfig { neighbourhood: 25, ..good.clone() }.refine_params(0.05).unwrap_err();
        assert_eq!(e.code, StatusCode::InvalidInput);
        assert!(e.message.contains("neighbourhood must be one of 8, 24, 48, got 25"), "{}", e.message);
        let e = PlannerConfig { heading_bins: 12, ..good.clone() }.refine_params(0.05).unwrap_err();
        assert!(e.message.contains("heading_bins must be one of 8, 16, got 12"), "{}", e.message);
        // Without a turning radius there is no lattice to name.
        assert_eq!(PlannerConfig { min_turning_radius: 0.0, ..good }.refine_params(0.05).unwrap(), None);
    }
}
