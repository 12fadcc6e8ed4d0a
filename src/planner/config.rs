//! The planner's parameters and the values derived from them.

use super::{PlanError, StatusCode};
use crate::directional::{HeadingBins, MotionModel, Neighbourhood, RefineParams};
use crate::map::{Traversability, DEFAULT_MAX_MAP_CELLS};
use crate::param_table::{check_all, field, ParamSpec, Range};
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
    /// The vehicle's polygon (m, vehicle frame: origin at the reference point `base_link`, x
    /// forward, y left; any simple polygon), Nav2's `footprint`; `None` (`"[]"`): the circle or
    /// square above. When set it wins over `robot_radius` and `robot_side`.
    ///
    /// Clearance rule: the vehicle mask, regions, reachability proofs and any-angle guide use the
    /// polygon's inscribed disk about the reference point ([`PlannerConfig::inradius`]): wherever
    /// the vehicle fits in some heading, that disk fits, so nothing reachable is refused; what the
    /// disk lets by that the polygon does not, refinement (which checks the polygon swept along
    /// every arc and line) goes around, or refuses. At `min_turning_radius` 0 the vehicle turns on
    /// the spot about its reference point, sweeping the polygon's circumscribed disk; there every
    /// check uses that disk.
    pub footprint: Option<crate::polygon::Polygon>,
    /// Nav2's `footprint_padding` (m, >= 0): every vertex of `footprint` moved this far outwards
    /// along x and along y.
    pub footprint_padding: f64,
    /// Minimum turning radius (m, >= 0; 0 allows turning on the spot).
    pub min_turning_radius: f64,
    /// Whether unknown cells may be driven through.
    pub allow_unknown: bool,
    /// Occupancy value (0..=100) at or above which a cell is an obstacle.
    pub occupied_threshold: i8,
    /// Spacing of the poses in the published path (m, at least [`MIN_PATH_SPACING`]).
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
    /// Weight (0..=[`MAX_COST_PENALTY`]) of the normalised traversal cost along a path (Smac's `cost_penalty`): a
    /// path costs `∫ (1 + cost_penalty c) ds`, `c` in `[0, 1]` the larger of the map's grade and
    /// the clearance cost (see [`crate::costs`]). 0: the shortest legal path.
    pub cost_penalty: f64,
    /// Gap (m, >= 0) between the footprint and the nearest obstacle below which a cell's cost
    /// rises (0 at this gap, 1 at the footprint's reach); 0: the map's grades alone.
    pub preferred_clearance: f64,
    /// Distance (m, >= 0) between start and goal beyond which the cost guide searches only the
    /// corridor the cluster graph gives ([`crate::hierarchy`]); nearer pairs are searched over
    /// the whole map, exactly.
    pub hierarchy_min_distance: f64,
}

impl Default for PlannerConfig {
    fn default() -> Self {
        Self {
            robot_radius: 0.15,
            robot_side: 0.0,
            footprint: None,
            footprint_padding: 0.0,
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
            hierarchy_min_distance: 25.0,
        }
    }
}

/// Smallest `path_spacing` (m, map units in the CLI): the poses of a plan are held and published.
pub const MIN_PATH_SPACING: f64 = 0.001;

/// Largest `cost_penalty`: every price along a path stays finite below it.
pub const MAX_COST_PENALTY: f64 = 1000.0;

impl PlannerConfig {
    /// Every parameter of the planner: its name (the node's ROS parameter and the parameters
    /// file's key), field, range and unit. The one owner of these ranges: the node's table adds
    /// its own parameters to these (`crate::params`), the CLI sets these by name.
    pub const PARAMS: [ParamSpec<PlannerConfig>; 19] = [
        ParamSpec {
            name: "robot_radius",
            field: field!(Double, robot_radius),
            range: Range::AtLeast(0.0),
            unit: "m",
            runtime: true,
            description: "Radius of the vehicle's circular footprint (m).",
        },
        ParamSpec {
            name: "robot_side",
            field: field!(Double, robot_side),
            range: Range::AtLeast(0.0),
            unit: "m",
            runtime: true,
            description: "Side of a square footprint turning with the vehicle (m); 0 = the circle of robot_radius.",
        },
        ParamSpec {
            name: "footprint",
            field: field!(Polygon, footprint),
            range: Range::Any,
            unit: "m",
            runtime: true,
            description: "The vehicle's polygon in base_link (m), Nav2's form: \"[[x, y], [x, y], ...]\"; \"[]\" = robot_side or robot_radius. Wins over both when set.",
        },
        ParamSpec {
            name: "footprint_padding",
            field: field!(Double, footprint_padding),
            range: Range::AtLeast(0.0),
            unit: "m",
            runtime: true,
            description: "Padding added outwards to every vertex of footprint (m), as Nav2 pads it.",
        },
        ParamSpec {
            name: "min_turning_radius",
            field: field!(Double, min_turning_radius),
            range: Range::AtLeast(0.0),
            unit: "m",
            runtime: true,
            description: "Minimum turning radius (m); 0 = turn on the spot.",
        },
        ParamSpec {
            name: "allow_unknown",
            field: field!(Flag, allow_unknown),
            range: Range::Any,
            unit: "",
            runtime: true,
            description: "Whether unknown (-1) cells may be driven through.",
        },
        ParamSpec {
            name: "occupied_threshold",
            field: field!(Occupancy, occupied_threshold),
            range: Range::Within(0.0, 100.0),
            unit: "",
            runtime: true,
            description: "Occupancy (0-100) at or above which a cell is an obstacle.",
        },
        ParamSpec {
            name: "path_spacing",
            field: field!(Double, path_spacing),
            // A bound below, not only 0: the poses are held and published, so their number
            // (length / spacing) is memory; at 1 mm a 1 km plan is a million poses.
            range: Range::AtLeast(MIN_PATH_SPACING),
            unit: "m",
            runtime: true,
            description: "Spacing of the poses in /plan (m, at least 0.001).",
        },
        ParamSpec {
            name: "max_planning_time",
            field: field!(Double, max_planning_time),
            range: Range::Above(0.0),
            unit: "s",
            runtime: true,
            description: "Time budget for one plan (s).",
        },
        ParamSpec {
            name: "max_map_cells",
            field: field!(Count, max_map_cells),
            range: Range::AtLeast(1.0),
            unit: "cells",
            runtime: false,
            description: "Largest map accepted (cells).",
        },
        ParamSpec {
            name: "heading_bins",
            field: field!(Count, heading_bins),
            range: Range::OneOf(&[8, 16]),
            unit: "",
            runtime: true,
            description: "Directional A* heading bins (8 or 16).",
        },
        ParamSpec {
            name: "neighbourhood",
            field: field!(Count, neighbourhood),
            range: Range::OneOf(&[8, 24, 48]),
            unit: "",
            runtime: true,
            description: "Directional A* window-repair neighbourhood (8, 24 or 48).",
        },
        ParamSpec {
            name: "turn_penalty",
            field: field!(Double, turn_penalty),
            range: Range::AtLeast(0.0),
            unit: "m per radian",
            runtime: true,
            description: "Extra cost per radian turned (m); 0 = shortest.",
        },
        ParamSpec {
            name: "motion_model",
            field: field!(Model, motion_model),
            range: Range::Any,
            unit: "",
            runtime: true,
            description: "forward (forwards only, Dubins) or reeds_shepp (forwards and backwards).",
        },
        ParamSpec {
            name: "reverse_penalty",
            field: field!(Double, reverse_penalty),
            range: Range::AtLeast(1.0),
            unit: "",
            runtime: true,
            description: "With reeds_shepp: factor (>= 1) on the length driven backwards.",
        },
        ParamSpec {
            name: "change_penalty",
            field: field!(Double, change_penalty),
            range: Range::AtLeast(0.0),
            unit: "m",
            runtime: true,
            description: "With reeds_shepp: cost (m) added per change of gear (cusp).",
        },
        ParamSpec {
            name: "cost_penalty",
            field: field!(Double, cost_penalty),
            // Bounded so that every price stays finite (at 1000 a metre at full cost already
            // weighs as a kilometre of free ground); beyond it the sums overflowed.
            range: Range::Within(0.0, MAX_COST_PENALTY),
            unit: "",
            runtime: true,
            description: "Weight of the traversal cost: a path costs its length times (1 + cost_penalty x cost), cost 0..1 from the map's grades and the clearance; 0 = shortest, at most 1000.",
        },
        ParamSpec {
            name: "preferred_clearance",
            field: field!(Double, preferred_clearance),
            range: Range::AtLeast(0.0),
            unit: "m",
            runtime: true,
            description: "Gap (m) to obstacles below which a cell's cost rises from 0 to 1 at the footprint; 0 = the map's grades alone.",
        },
        ParamSpec {
            name: "hierarchy_min_distance",
            field: field!(Double, hierarchy_min_distance),
            range: Range::AtLeast(0.0),
            unit: "m",
            runtime: true,
            description: "Start-goal distance (m) beyond which the costed guide searches only the corridor of the cluster graph (faster, may cost a little more); nearer pairs are searched whole.",
        },
    ];

    /// Checks every field's range ([`PlannerConfig::PARAMS`]); the message names the offending
    /// parameter, its range and its value, in the parameter's unit. Fails with `INVALID_INPUT`.
    pub fn validate(&self) -> Result<(), PlanError> {
        check_all(&Self::PARAMS, self)?;
        self.padded_footprint().map(|_| ())
    }

    /// `footprint` grown by `footprint_padding` (m), the polygon every check uses; `None` without
    /// one. Fails with `INVALID_INPUT` when the padding makes it cross itself.
    pub fn padded_footprint(&self) -> Result<Option<crate::polygon::Polygon>, PlanError> {
        self.footprint
            .as_ref()
            .map(|p| {
                p.padded(self.footprint_padding).map_err(|e| {
                    PlanError::new(
                        StatusCode::InvalidInput,
                        format!("footprint_padding {} m makes the footprint unusable: {e}", self.footprint_padding),
                    )
                })
            })
            .transpose()
    }

    /// The padded polygon, when it is usable (see [`PlannerConfig::padded_footprint`]).
    fn polygon(&self) -> Option<crate::polygon::Polygon> {
        self.padded_footprint().ok().flatten()
    }

    /// The Directional A* parameters for a map of `resolution` metres per cell (`None` when the
    /// turning radius is 0: the any-angle path is then the trajectory). Fails with
    /// `INVALID_INPUT` when `heading_bins` or `neighbourhood` names no lattice (as
    /// [`PlannerConfig::validate`] would), never falling back to another.
    pub fn refine_params(&self, resolution: f64) -> Result<Option<RefineParams>, PlanError> {
        if self.min_turning_radius <= 0.0 {
            return Ok(None);
        }
        let cells = self.min_turning_radius / resolution;
        if cells > crate::directional::MAX_TURNING_RADIUS {
            return Err(PlanError::new(
                StatusCode::InvalidInput,
                format!(
                    "min_turning_radius {:.3} m is {:.1} cells of this map ({} m per cell): at most {} cells ({} m) here",
                    crate::geometry::Coord(self.min_turning_radius),
                    crate::geometry::Coord(cells),
                    crate::map::Resolution(resolution),
                    crate::directional::MAX_TURNING_RADIUS,
                    (crate::directional::MAX_TURNING_RADIUS * resolution) as f32
                ),
            ));
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
            footprint_polygon: self.polygon().map(|p| std::sync::Arc::new(p.scaled(1.0 / resolution))),
            ..RefineParams::from_metres(self.robot_radius, self.min_turning_radius, resolution)
        }))
    }

    /// A radius (m) of the footprint in force: `of_polygon` of the polygon, `square` times the
    /// square's side, or the circle's radius.
    fn footprint_radius(&self, of_polygon: fn(&crate::polygon::Polygon) -> f64, square: f64) -> f64 {
        if let Some(p) = self.polygon() {
            of_polygon(&p)
        } else if self.robot_side > 0.0 {
            self.robot_side * square
        } else {
            self.robot_radius
        }
    }

    /// Radius (m) of the largest disk about the reference point the footprint covers in every
    /// heading: the circle itself, half the square's side, or the polygon's distance from the
    /// reference point to its nearest edge (0 when the point lies outside it).
    pub fn inradius(&self) -> f64 {
        self.footprint_radius(crate::polygon::Polygon::inradius, 0.5)
    }

    /// Radius (m) of the disk the vehicle mask, regions and start/goal placement use: the circle
    /// itself, the square's circumscribed circle (see `robot_side`), or the polygon's inscribed
    /// one (see `footprint`).
    pub fn mask_radius(&self) -> f64 {
        self.footprint_radius(crate::polygon::Polygon::inradius, std::f64::consts::FRAC_1_SQRT_2)
    }

    /// Radius (m) of the smallest disk about the reference point holding the footprint in every
    /// heading: what a turn on the spot sweeps (the circle, the square's circumscribed circle, the
    /// polygon's farthest vertex).
    pub fn circumradius(&self) -> f64 {
        self.footprint_radius(crate::polygon::Polygon::circumradius, std::f64::consts::FRAC_1_SQRT_2)
    }

    /// The parameter the footprint in force comes from, with its value in `unit`, for messages
    /// (`robot_radius 0.150 m`, `robot_side 0.500 m`, `footprint: a polygon of 4 vertices`): a
    /// change of `footprint` that brings back the disk of a `robot_radius` set earlier is
    /// refused in the radius's name.
    pub fn footprint_words(&self, unit: &str) -> String {
        use crate::geometry::Coord;
        if let Some(p) = self.polygon() {
            format!("footprint: a polygon of {} vertices", p.vertices().len())
        } else if self.robot_side > 0.0 {
            format!("robot_side {} {unit}", Coord(self.robot_side))
        } else {
            format!("robot_radius {} {unit}", Coord(self.robot_radius))
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
    fn the_planner_checks_its_own_ranges_by_its_own_table() {
        assert!(PlannerConfig::default().validate().is_ok());
        let cases = [
            (PlannerConfig { robot_radius: -0.1, ..Default::default() }, "robot_radius must be >= 0 m, got -0.1 m"),
            (PlannerConfig { reverse_penalty: 0.5, ..Default::default() }, "reverse_penalty must be >= 1, got 0.5"),
            (
                PlannerConfig { cost_penalty: f64::NAN, ..Default::default() },
                "cost_penalty must be in 0..=1000, got NaN",
            ),
            (PlannerConfig { heading_bins: 12, ..Default::default() }, "heading_bins must be one of 8, 16, got 12"),
            (PlannerConfig { occupied_threshold: 101, ..Default::default() }, "occupied_threshold must be in 0..=100"),
        ];
        for (config, message) in cases {
            let e = config.validate().unwrap_err();
            assert_eq!(e.code, StatusCode::InvalidInput);
            assert!(e.message.starts_with(message), "{}", e.message);
        }
        // One entry per field of the configuration, each name once.
        let mut names: Vec<&str> = PlannerConfig::PARAMS.iter().map(|p| p.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), PlannerConfig::PARAMS.len());
    }

    #[test]
    fn a_path_spacing_below_a_millimetre_is_refused() {
        // Its poses are held and published: 1e-5 m made a 9 m plan 892 190 poses in the node.
        assert!(PlannerConfig { path_spacing: MIN_PATH_SPACING, ..PlannerConfig::default() }.validate().is_ok());
        for spacing in [1e-5, 0.0, -1.0, f64::NAN] {
            let e = PlannerConfig { path_spacing: spacing, ..PlannerConfig::default() }.validate().unwrap_err();
            assert!(e.message.starts_with("path_spacing must be >= 0.001 m"), "{}", e.message);
        }
    }

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

    #[test]
    fn a_turning_radius_beyond_the_lattices_is_refused_in_metres() {
        let good = PlannerConfig::default();
        // A radius beyond Directional A*'s largest (8192 cells) is refused in metres, at this
        // map's resolution; 400 m is 8000 cells at 5 cm.
        assert!(PlannerConfig { min_turning_radius: 400.0, ..good.clone() }.refine_params(0.05).is_ok());
        let e = PlannerConfig { min_turning_radius: 1000.0, ..good.clone() }.refine_params(0.05).unwrap_err();
        assert_eq!(e.code, StatusCode::InvalidInput);
        assert!(
            e.message.starts_with("min_turning_radius 1000.000 m is 20000.0 cells")
                && e.message.ends_with("(409.6 m) here"),
            "{}",
            e.message
        );
        assert!(PlannerConfig { min_turning_radius: 1000.0, ..good }.refine_params(0.5).is_ok());
    }
}
