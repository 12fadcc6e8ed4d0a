//! The map and everything derived from it for the vehicle, kept current as the map changes.

use super::refiner::{self, Refine};
use super::{PlanError, PlannerConfig, StatusCode};
use crate::block_astar::BlockGrid;
use crate::clearance::{Capability, ChangedRegion, Classifier, ClearanceConfig, ClearanceMap, Footprint, Vehicle};
use crate::costs::CostField;
use crate::directional::verify::Vehicle as VerifiedVehicle;
use crate::directional::{self, CollisionMap, Directional};
use crate::grid::{CellRect, Grid};
use crate::lddb::Lddb;
use crate::map::OccupancyMap;
use std::sync::Arc;

/// The map and what is derived from it. Plans in flight hold an `Arc` of it; updates copy it
/// first when it is shared (copy-on-write), so a plan always sees one consistent map.
#[derive(Debug, Clone)]
pub struct PreparedMap {
    /// The occupancy map as received.
    pub map: OccupancyMap,
    /// Obstacle distance, true clearance, regions and the vehicle mask, kept current.
    pub clearance: ClearanceMap,
    /// The vehicle the clearance map tracks (capability and footprint in cells).
    pub vehicle: Vehicle,
    /// Cells the vehicle's footprint may not touch (what the capability may not enter), and the
    /// traversal costs when `cost_penalty` > 0 ([`crate::costs`]), kept current with the map.
    pub collision: CollisionMap,
    /// Block A* pattern codes of the vehicle mask.
    pub blocks: BlockGrid,
    /// Step 4's motion model for this map's resolution: turns on the spot, or Directional A*'s
    /// curves with their tables (see `planner::refiner`).
    pub(super) refiner: Arc<dyn Refine>,
}

/// What a map update changed.
#[derive(Debug, Clone, PartialEq)]
pub struct MapUpdate {
    /// Bounding box of the cells whose traversability class changed (`None`: nothing changed).
    pub changed: Option<CellRect>,
    /// True when everything was derived anew (new geometry, or a change too large to pay for
    /// local updates).
    pub rebuilt: bool,
    /// Bounding box of the cells whose traversal cost may have changed (`None`: none, or no
    /// costs are priced): a grade raised or lowered, or the clearance cost around a changed
    /// obstacle. A trajectory still legal may now be dearer than another.
    pub costs_changed: Option<CellRect>,
}

impl MapUpdate {
    /// Anything a plan depends on changed: traversability, costs, or everything.
    pub fn changed_anything(&self) -> bool {
        self.changed.is_some() || self.rebuilt || self.costs_changed.is_some()
    }
}

/// Extra radius (cells) of the vehicle mask over the footprint, so the footprint fits at every
/// point of a mask cell, not just its centre: half a cell diagonal plus the sampling allowance of
/// the trajectory check. Any-angle paths through mask cells are then collision-free.
fn mask_margin() -> f64 {
    std::f64::consts::FRAC_1_SQRT_2
        + directional::footprint::sampled_radius(0.0)
        + 2.0 * directional::footprint::SEARCH_MARGIN
}

/// Farthest a footprint may reach from its reference point (cells), as the clearance annotations
/// bound a disk's radius.
pub const MAX_FOOTPRINT_REACH: u16 = 125;

impl PreparedMap {
    /// Derives everything from `map` under `config`, reusing `previous` tables when they still
    /// apply. Fails with `INVALID_INPUT` when the footprint does not suit the map (for example a
    /// robot radius beyond the clearance cap at this resolution).
    pub fn new(
        map: OccupancyMap,
        config: &PlannerConfig,
        lddb: &Lddb,
        previous: Option<&PreparedMap>,
    ) -> Result<Self, PlanError> {
        let invalid = |m: String| PlanError::new(StatusCode::InvalidInput, m);
        let res = map.info.resolution;
        let capability = Capability::from_traversability(config.traversability());
        // A polygon's mask is its inscribed disk, so the clearance cap below does not bound how
        // far it reaches; every sweep rasterises it whole, so bound that here.
        let reach = config.circumradius() / res;
        if reach > f64::from(MAX_FOOTPRINT_REACH) {
            return Err(invalid(format!(
                "the footprint reaches {:.3} m from base_link: more than {MAX_FOOTPRINT_REACH} cells of this map ({} m per cell)",
                config.circumradius(),
                res
            )));
        }
        let radius_cells = config.mask_radius() / res + mask_margin();
        let cap = (radius_cells.floor() as u16 + 2).max(crate::clearance::DEFAULT_CAP);
        // The annotations' obstacles are the planner's: at another occupied_threshold than the
        // classifier's default (65), a mask built at 65 closed gaps the collision map left open
        // (a Nav2 costmap read at 100) or opened ones it closed. The classifier needs 1..=100; at
        // 0 (every known cell blocked) the collision map still refuses what the mask lets by.
        let classifier = Classifier { occupied_threshold: config.occupied_threshold.max(1), cost_bands: Vec::new() };
        let clearance_config = ClearanceConfig { classifier, distance_cap: cap.min(127), ..ClearanceConfig::default() };
        let mut clearance = ClearanceMap::new(&map, clearance_config, &[capability])
            .map_err(|e| invalid(format!("map rejected: {e}")))?;
        let vehicle = Vehicle {
            capability,
            footprint: Footprint::circle(radius_cells).map_err(|e| invalid(format!("robot_radius: {e}")))?,
        };
        clearance
            .track_vehicle(vehicle)
            .map_err(|e| invalid(format!("footprint radius {} m: {e}", config.mask_radius())))?;
        let obstacles = map.to_grid(config.traversability());
        let mut collision = CollisionMap::with_footprint(&obstacles, config.mask_radius() / res);
        collision.set_costs(config.cost_rule(res).map(|rule| CostField::new(&map, rule)));
        let mask = clearance.vehicle_mask(&vehicle).map_err(|e| invalid(e.to_string()))?;
        let blocks = BlockGrid::new(mask, lddb.side()).map_err(|e| invalid(e.to_string()))?;
        let refiner = refiner::for_config(config, res, previous.map(|p| p.refiner.as_ref()))?;
        Ok(Self { map, clearance, vehicle, collision, blocks, refiner })
    }

    /// Brings the data derived from the clearance map (Block A* pattern codes, collision map)
    /// and from the map's values (the costs) up to date after the clearance map reported
    /// `changed`; `values` bounds the cells whose occupancy values changed.
    pub(super) fn follow(
        &mut self,
        changed: &ChangedRegion,
        values: Option<CellRect>,
        config: &PlannerConfig,
        lddb: &Lddb,
    ) -> Result<MapUpdate, PlanError> {
        let invalid = |m: String| PlanError::new(StatusCode::InvalidInput, m);
        let obstacles = self.map.to_grid(config.traversability());
        let res = self.map.info.resolution;
        if changed.rebuilt {
            self.collision = CollisionMap::with_footprint(&obstacles, config.mask_radius() / res);
            self.collision.set_costs(config.cost_rule(res).map(|rule| CostField::new(&self.map, rule)));
            let mask = self.clearance.vehicle_mask(&self.vehicle).map_err(|e| invalid(e.to_string()))?;
            self.blocks = BlockGrid::new(mask, lddb.side()).map_err(|e| invalid(e.to_string()))?;
            return Ok(MapUpdate { changed: changed.cells, rebuilt: true, costs_changed: changed.cells });
        }
        if let Some(rect) = changed.cells {
            self.collision.update_rect(&obstacles, rect).map_err(|e| invalid(e.to_string()))?;
        }
        let costs_changed = match (self.collision.costs_mut(), values) {
            (Some(costs), Some(rect)) => Some(costs.update(&self.map, rect)),
            _ => None,
        };
        let mask = self.clearance.vehicle_mask(&self.vehicle).map_err(|e| invalid(e.to_string()))?;
        for m in changed.masks.iter().filter(|m| m.vehicle == self.vehicle) {
            self.blocks.update_rect(mask, m.rect).map_err(|e| invalid(e.to_string()))?;
        }
        Ok(MapUpdate { changed: changed.cells, rebuilt: false, costs_changed })
    }

    /// Directional A*'s parameters and tables for this map's resolution; `None` at a turning
    /// radius of 0 (the vehicle turns on the spot).
    pub fn directional(&self) -> Option<&Arc<Directional>> {
        self.refiner.directional()
    }

    /// The vehicle every trajectory on this map is verified with, in cells: with a turning
    /// radius the refinement's footprint (disk, or square turned with the heading) and gears;
    /// turning on the spot, the disk of the footprint's circumscribed radius.
    pub fn verified_vehicle(&self) -> VerifiedVehicle {
        self.refiner.vehicle()
    }

    /// The grid the any-angle search runs on: free where the vehicle fits.
    pub fn vehicle_mask(&self) -> &Grid {
        // The vehicle was tracked when this map was prepared.
        self.clearance.vehicle_mask(&self.vehicle).expect("vehicle tracked at construction")
    }
}
