//! The map and everything derived from it for the vehicle, kept current as the map changes.

use super::refiner::{self, Refine};
use super::{PlanError, PlannerConfig, StatusCode};
use crate::block_astar::BlockGrid;
use crate::clearance::{Capability, ChangedRegion, Classifier, ClearanceConfig, ClearanceMap, Footprint, Vehicle};
use crate::costs::CostField;
use crate::directional::verify::Vehicle as VerifiedVehicle;
use crate::directional::{self, CollisionMap, Directional, Obstacles};
use crate::grid::CellRect;
use crate::hierarchy::ClusterGraph;
use crate::lddb::Lddb;
use crate::map::OccupancyMap;
use crate::search::cost_astar::MapRevision;
use std::sync::Arc;

/// The map and what every vehicle profile shares of it: the occupancy values as received and
/// the clearance annotations (obstacle distance, true clearance per capability, and the mask and
/// regions of every vehicle it tracks). One site serves one [`PreparedMap`] per vehicle profile
/// ([`crate::planner::Fleet`]); a single [`crate::planner::Planner`] is a fleet of one.
#[derive(Debug, Clone)]
pub struct SiteMap {
    /// Obstacle distance, true clearance, regions and the vehicle masks, kept current, with the
    /// occupancy map they describe ([`SiteMap::map`]).
    pub clearance: ClearanceMap,
}

/// The map and what is derived from it for one vehicle. Plans in flight hold an `Arc` of it;
/// updates copy it first when it is shared (copy-on-write), so a plan always sees one consistent
/// map.
#[derive(Debug, Clone)]
pub struct PreparedMap {
    /// The map and its clearance annotations, shared with every other profile on the same map.
    pub site: Arc<SiteMap>,
    /// The vehicle the clearance map tracks for this profile (capability and footprint in cells).
    pub vehicle: Vehicle,
    /// Cells the vehicle's footprint may not touch (what the capability may not enter), and the
    /// traversal costs when `cost_penalty` > 0 ([`crate::costs`]), kept current with the map.
    pub collision: CollisionMap,
    /// Block A* pattern codes of the vehicle mask.
    pub blocks: BlockGrid,
    /// The vehicle mask's pieces cluster by cluster, weighted by the costs: the corridors of
    /// long costed plans ([`crate::hierarchy`]); `None` without costs (the shortest paths do not
    /// use it).
    pub hierarchy: Option<ClusterGraph>,
    /// Step 4's motion model for this map's resolution: turns on the spot, or Directional A*'s
    /// curves with their tables (see `planner::refiner`).
    pub(super) refiner: Arc<dyn Refine>,
    /// Names this state of the mask and the costs for the cost guide's searcher, which keeps
    /// what it worked out on one revision for the next plan on it: fresh whenever the map is
    /// derived or follows an update.
    pub(super) revision: MapRevision,
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
    /// The update found the map it changed still held elsewhere (a plan in flight, or a clone
    /// the caller kept) and changed a copy: the map's structures were held twice meanwhile,
    /// several bytes per cell. A caller that owns the only handle never sees it.
    pub copied: bool,
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

/// What one profile asks of the site it plans on.
struct SiteNeeds {
    /// The classifier's threshold (the annotations' obstacles are the planner's).
    occupied_threshold: i8,
    /// The distance cap (cells) the profile's mask needs.
    distance_cap: u16,
    /// The vehicle whose mask and regions the site keeps for the profile.
    vehicle: Vehicle,
}

impl SiteNeeds {
    /// What `config` needs of a site at `resolution` (m per cell). Fails with `INVALID_INPUT`
    /// when the footprint does not suit the map (reaching beyond [`MAX_FOOTPRINT_REACH`] cells, or
    /// a radius that is not a finite number).
    fn of(config: &PlannerConfig, resolution: f64) -> Result<Self, PlanError> {
        let invalid = |m: String| PlanError::new(StatusCode::InvalidInput, m);
        // A polygon's mask is its inscribed disk, so the clearance cap below does not bound how
        // far it reaches; every sweep rasterises it whole, so bound that here.
        let reach = config.circumradius() / resolution;
        if reach > f64::from(MAX_FOOTPRINT_REACH) {
            return Err(invalid(format!(
                "the footprint ({}) reaches {:.3} m from base_link: more than {MAX_FOOTPRINT_REACH} cells of this map ({} m per cell)",
                config.footprint_words("m"),
                config.circumradius(),
                crate::map::Resolution(resolution)
            )));
        }
        let radius_cells = config.mask_radius() / resolution + mask_margin();
        // The annotations' obstacle distance is also what the collision map and the costs read
        // (one field per traversability), so it reaches as far as the costs need too.
        let mask_cap = radius_cells.floor() as u16 + 2;
        let cost_cap = config.cost_rule(resolution).map_or(0, |rule| rule.distance_cap());
        let distance_cap = mask_cap.max(cost_cap).clamp(crate::clearance::DEFAULT_CAP, 127);
        let capability = Capability::from_traversability(config.traversability());
        let footprint = Footprint::circle(radius_cells).map_err(|e| invalid(format!("robot_radius: {e}")))?;
        // The annotations' obstacles are the planner's: at another occupied_threshold than the
        // classifier's default (65), a mask built at 65 closed gaps the collision map left open
        // (a Nav2 costmap read at 100) or opened ones it closed; and the collision map and the
        // costs read the annotations' obstacle distance.
        let occupied_threshold = config.occupied_threshold;
        Ok(Self { occupied_threshold, distance_cap, vehicle: Vehicle { capability, footprint } })
    }
}

/// What a profile's map may take from another profile's on the same site instead of building
/// its own: the blocked cells (same traversability), Directional A*'s tables (same vehicle and
/// lattice). See `planner::maps`.
#[derive(Debug, Clone, Default)]
pub(super) struct Donor {
    pub(super) obstacles: Option<Obstacles>,
    /// The other profiles' refiners, whose tables a profile shares when they are the ones it
    /// would build (after its own previous refiner's).
    pub(super) refiners: Vec<Arc<dyn Refine>>,
}

/// True when two profiles' maps on one site read the same blocked cells.
pub(super) fn same_obstacles(a: &PlannerConfig, b: &PlannerConfig) -> bool {
    a.traversability() == b.traversability()
}

/// The heap one profile holds of its own, by component (bytes; see [`PreparedMap::own_bytes`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProfileBytes {
    /// Its vehicle's mask and regions, kept in the shared annotations (shared with any profile
    /// whose vehicle is the same).
    pub mask_and_regions: usize,
    /// The collision map without the costs: the blocked cells, a bit each (shared with any
    /// profile of the same traversability; the obstacle distance it reads is the annotations').
    pub collision: usize,
    /// The traversal costs' tables (0 at `cost_penalty` 0): a few kilobytes, whatever the
    /// map's size, since a cell's cost is read from the site's values and obstacle distance.
    pub costs: usize,
    /// Block A*'s pattern codes (the mask they are read from is the vehicle's, in
    /// `mask_and_regions`).
    pub blocks: usize,
    /// The cluster graph of long plans' corridors.
    pub hierarchy: usize,
}

impl ProfileBytes {
    /// All of it.
    pub fn total(&self) -> usize {
        self.mask_and_regions + self.collision + self.costs + self.blocks + self.hierarchy
    }

    /// Each component with its name, as `bench-nav`, `bench-fleet` and `/diagnostics` report
    /// them.
    pub fn components(&self) -> [(&'static str, usize); 5] {
        [
            ("mask_and_regions", self.mask_and_regions),
            ("collision", self.collision),
            ("costs", self.costs),
            ("blocks", self.blocks),
            ("hierarchy", self.hierarchy),
        ]
    }
}

/// The heap every profile on a site shares, by component (bytes; see [`SiteMap::bytes`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SiteBytes {
    /// The occupancy values as received.
    pub occupancy: usize,
    /// The clearance annotations: each cell's class and one layer of capabilities per
    /// traversability (the vehicles' masks and regions are the
    /// profiles': see [`ProfileBytes`]).
    pub annotations: usize,
}

impl SiteBytes {
    /// All of it.
    pub fn total(&self) -> usize {
        self.occupancy + self.annotations
    }

    /// Each component with its name, as `bench-nav` and `/diagnostics` report them.
    pub fn components(&self) -> [(&'static str, usize); 2] {
        [("occupancy", self.occupancy), ("annotations", self.annotations)]
    }
}

/// What [`SiteMap::new`] builds for a group of profiles: the annotations' configuration, one
/// capability layer per distinct traversability, one tracked vehicle per distinct vehicle.
struct SitePlan {
    config: ClearanceConfig,
    capabilities: Vec<Capability>,
    vehicles: Vec<Vehicle>,
    /// The mask radius (m) of each of `vehicles`, for messages.
    radii: Vec<f64>,
}

impl SitePlan {
    /// The site `configs` (at least one) need at `resolution`. Fails with `INVALID_INPUT` as
    /// [`SiteMap::new`].
    fn of(configs: &[&PlannerConfig], resolution: f64) -> Result<Self, PlanError> {
        let invalid = |m: String| PlanError::new(StatusCode::InvalidInput, m);
        let needs = configs.iter().map(|c| SiteNeeds::of(c, resolution)).collect::<Result<Vec<_>, _>>()?;
        let first = needs.first().ok_or_else(|| invalid("a map needs at least one vehicle profile".into()))?;
        if let Some(other) = needs.iter().find(|n| n.occupied_threshold != first.occupied_threshold) {
            return Err(invalid(format!(
                "the vehicle profiles read the map with occupied_threshold {} and {}: it is the map's, one for all",
                first.occupied_threshold, other.occupied_threshold
            )));
        }
        let classifier = Classifier { occupied_threshold: first.occupied_threshold, cost_bands: Vec::new() };
        let distance_cap = needs.iter().map(|n| n.distance_cap).max().unwrap_or(first.distance_cap);
        let config = ClearanceConfig { classifier, distance_cap, ..ClearanceConfig::default() };
        let (mut capabilities, mut vehicles, mut radii) = (Vec::new(), Vec::<Vehicle>::new(), Vec::new());
        for (n, c) in needs.iter().zip(configs) {
            if !capabilities.contains(&n.vehicle.capability) {
                capabilities.push(n.vehicle.capability);
            }
            if !vehicles.contains(&n.vehicle) {
                vehicles.push(n.vehicle);
                radii.push(c.mask_radius());
            }
        }
        Ok(Self { config, capabilities, vehicles, radii })
    }
}

impl SiteMap {
    /// Annotates `map` for every profile in `configs` (at least one): one capability layer per
    /// distinct traversability, one mask and region set per distinct vehicle, the distance cap
    /// the largest of them needs. Fails with `INVALID_INPUT` when a footprint does not suit the
    /// map, or when the profiles read the map with different `occupied_threshold`s (the
    /// annotations' obstacles are shared: the threshold is the map's, not a vehicle's).
    pub fn new(map: OccupancyMap, configs: &[&PlannerConfig]) -> Result<Self, PlanError> {
        let invalid = |m: String| PlanError::new(StatusCode::InvalidInput, m);
        let plan = SitePlan::of(configs, map.info.resolution)?;
        let mut clearance = ClearanceMap::holding(map, plan.config, &plan.capabilities)
            .map_err(|e| invalid(format!("map rejected: {e}")))?;
        for (vehicle, radius) in plan.vehicles.into_iter().zip(plan.radii) {
            clearance.track_vehicle(vehicle).map_err(|e| invalid(format!("footprint radius {radius} m: {e}")))?;
        }
        Ok(Self { clearance })
    }

    /// The occupancy map as received and last patched or replaced (one copy, held by the
    /// annotations).
    pub fn map(&self) -> &OccupancyMap {
        self.clearance.map()
    }

    /// Heap bytes every profile shares, by component: the occupancy values and the clearance
    /// annotations (the vehicles' masks and regions excluded: see [`ProfileBytes`]).
    pub fn bytes(&self) -> SiteBytes {
        use crate::memory::HeapSize;
        SiteBytes { occupancy: self.map().heap_bytes(), annotations: self.clearance.annotation_bytes() }
    }

    /// The obstacle distance of the cells `vehicle` may not enter (the annotations' field of its
    /// capability, shared with every collision map and cost field on the site). `vehicle` must
    /// be one the site tracks (it panics otherwise: a site is built for its profiles).
    pub(super) fn obstacle_distance(&self, vehicle: &Vehicle) -> Arc<crate::clearance::distance::DistanceField> {
        let layer = self.clearance.layer(vehicle.capability).expect("the site annotates every profile's capability");
        layer.shared_distance()
    }

    /// [`SiteMap::bytes`] in all.
    pub fn shared_bytes(&self) -> usize {
        self.bytes().total()
    }

    /// True when this site is exactly what [`SiteMap::new`] would build for `configs`: the same
    /// annotations, layers and tracked vehicles, so the profiles can plan on it as it is.
    pub fn fits(&self, configs: &[&PlannerConfig]) -> bool {
        SitePlan::of(configs, self.map().info.resolution).is_ok_and(|plan| {
            plan.config == *self.clearance.config()
                && plan.capabilities == self.clearance.capabilities()
                && plan.vehicles == self.clearance.tracked_vehicles()
        })
    }
}

impl PreparedMap {
    /// Derives everything from `map` under `config` (a site of its own), reusing `previous`
    /// tables when they still apply. Fails with `INVALID_INPUT` when the footprint does not suit
    /// the map (for example a robot radius beyond the clearance cap at this resolution).
    pub fn new(
        map: OccupancyMap,
        config: &PlannerConfig,
        lddb: &Lddb,
        previous: Option<&PreparedMap>,
    ) -> Result<Self, PlanError> {
        let site = Arc::new(SiteMap::new(map, &[config])?);
        Self::on_site(site, config, lddb, previous)
    }

    /// Derives what `config`'s vehicle needs from `site`, which must track its vehicle (a site
    /// [`SiteMap::new`] built with `config` among its profiles'), reusing `previous` tables when
    /// they still apply. Fails with `INVALID_INPUT` when it does not.
    pub fn on_site(
        site: Arc<SiteMap>,
        config: &PlannerConfig,
        lddb: &Lddb,
        previous: Option<&PreparedMap>,
    ) -> Result<Self, PlanError> {
        Self::on_site_with(site, config, lddb, previous, Donor::default())
    }

    /// [`PreparedMap::on_site`], taking what `donor` gives instead of building it.
    pub(super) fn on_site_with(
        site: Arc<SiteMap>,
        config: &PlannerConfig,
        lddb: &Lddb,
        previous: Option<&PreparedMap>,
        donor: Donor,
    ) -> Result<Self, PlanError> {
        let invalid = |m: String| PlanError::new(StatusCode::InvalidInput, m);
        let res = site.map().info.resolution;
        let vehicle = SiteNeeds::of(config, res)?.vehicle;
        let mask = site
            .clearance
            .shared_vehicle_mask(&vehicle)
            .map_err(|e| invalid(format!("the map's annotations do not serve this vehicle: {e}")))?;
        let blocks = BlockGrid::on_mask(mask, lddb.side()).map_err(|e| invalid(e.to_string()))?;
        let holders: Vec<&dyn Refine> =
            previous.map(|p| p.refiner.as_ref()).into_iter().chain(donor.refiners.iter().map(|r| r.as_ref())).collect();
        let refiner = refiner::for_config(config, res, &holders)?;
        let collision = Self::collision_map(&site, config, &vehicle, donor.obstacles);
        let hierarchy = Self::cluster_graph(&blocks, &collision);
        Ok(Self { site, vehicle, collision, blocks, hierarchy, refiner, revision: MapRevision::fresh() })
    }

    /// The cluster graph of the vehicle mask under the costs; `None` without costs.
    fn cluster_graph(blocks: &BlockGrid, collision: &CollisionMap) -> Option<ClusterGraph> {
        collision.costs().map(|costs| ClusterGraph::build(blocks.mask(), costs.extra_per_cell()))
    }

    /// Repairs the cluster graph on `mask` (the vehicle's, as it now is) where the mask changed
    /// (`mask_rects`) and where the costs did (`cost_rects`).
    fn repair_cluster_graph(
        &mut self,
        mask: &crate::search::los::CellMask,
        mask_rects: &[CellRect],
        cost_rects: &[CellRect],
    ) {
        if let (Some(graph), Some(costs)) = (&mut self.hierarchy, self.collision.costs()) {
            graph.repair(mask, mask_rects, cost_rects, costs.extra_per_cell());
        }
    }

    /// The collision map of `config`'s footprint on `site`: `obstacles` (a donor's blocked cells)
    /// when given, and the site's obstacle distance.
    fn collision_map(
        site: &SiteMap,
        config: &PlannerConfig,
        vehicle: &Vehicle,
        obstacles: Option<Obstacles>,
    ) -> CollisionMap {
        let (res, info) = (site.map().info.resolution, &site.map().info);
        let distance = site.obstacle_distance(vehicle);
        let mut collision = match obstacles {
            Some(o) => CollisionMap::on_obstacles(o, distance.clone(), info.width, info.height),
            None => {
                let rule = config.traversability();
                let size = (info.width, info.height);
                CollisionMap::on_values(&site.map().data, |v| rule.is_blocked(v), size, distance.clone())
            }
        };
        collision
            .set_costs(config.cost_rule(res).map(|rule| CostField::new(site.clearance.shared_map(), rule, distance)));
        collision
    }

    /// The heap this profile's map holds beside the site, by component (the Directional A*
    /// tables, which do not grow with the map, left out). What it shares with other profiles (a
    /// mask, the blocked cells) is counted here too: see
    /// [`PreparedMap::bytes_beside`] to count each once.
    pub fn own_bytes(&self) -> ProfileBytes {
        self.bytes_beside(&[])
    }

    /// [`PreparedMap::own_bytes`] less what it shares with any of `others` (profiles on the
    /// same site): their vehicle's mask and regions, the blocked cells.
    pub fn bytes_beside(&self, others: &[&PreparedMap]) -> ProfileBytes {
        use crate::memory::HeapSize;
        let mask_shared = others.iter().any(|o| o.vehicle == self.vehicle);
        let obstacles_shared = others.iter().any(|o| o.collision.shares_obstacles_with(&self.collision));
        let unless = |shared: bool, bytes: usize| if shared { 0 } else { bytes };
        ProfileBytes {
            mask_and_regions: unless(mask_shared, self.site.clearance.vehicle_bytes(&self.vehicle).unwrap_or(0)),
            collision: unless(obstacles_shared, self.collision.obstacle_heap_bytes()),
            costs: self.collision.costs().map_or(0, HeapSize::heap_bytes),
            blocks: self.blocks.code_heap_bytes(),
            hierarchy: self.hierarchy.as_ref().map_or(0, ClusterGraph::heap_bytes),
        }
    }

    /// Splits off the site, so a group of profiles can hand theirs back and have it edited in
    /// place (see `planner::maps`).
    pub(super) fn detach(self) -> (Arc<SiteMap>, Detached) {
        let Self { site, vehicle, mut collision, mut blocks, hierarchy, refiner, revision: _ } = self;
        // The site updates the obstacle distance, the values the costs read and the vehicle
        // mask in place; `attach` takes them back.
        collision.release_distance();
        blocks.release_mask();
        (site, Detached { vehicle, collision, blocks, hierarchy, refiner })
    }

    /// Brings the data derived from the clearance map (Block A* pattern codes, collision map)
    /// and from the map's values (the costs) up to date after the clearance map reported
    /// `changed`; `values` bounds the cells whose occupancy values changed.
    /// `donor` gives what another profile already brought up to date (see [`Donor`]); this
    /// profile must have released it first (`planner::maps`), so that one was edited in place.
    pub(super) fn follow(
        &mut self,
        changed: &ChangedRegion,
        values: Option<CellRect>,
        config: &PlannerConfig,
        lddb: &Lddb,
        donor: Donor,
    ) -> Result<MapUpdate, PlanError> {
        let invalid = |m: String| PlanError::new(StatusCode::InvalidInput, m);
        // Whatever follows below changes (on success or not), this is a new state.
        self.revision = MapRevision::fresh();
        if changed.rebuilt {
            self.collision = Self::collision_map(&self.site, config, &self.vehicle, donor.obstacles);
            let mask = self.site.clearance.shared_vehicle_mask(&self.vehicle).map_err(|e| invalid(e.to_string()))?;
            self.blocks = BlockGrid::on_mask(mask, lddb.side()).map_err(|e| invalid(e.to_string()))?;
            self.hierarchy = Self::cluster_graph(&self.blocks, &self.collision);
            // The structures replaced are gone: see `memory::trim_heap`.
            crate::memory::trim_heap();
            return Ok(MapUpdate {
                changed: changed.cells,
                rebuilt: true,
                costs_changed: changed.cells,
                copied: false,
            });
        }
        let mask = self.site.clearance.shared_vehicle_mask(&self.vehicle).map_err(|e| invalid(e.to_string()))?;
        let rects: Vec<CellRect> = changed.masks.iter().filter(|m| m.vehicle == self.vehicle).map(|m| m.rect).collect();
        // The costs read the site's values and distance, taken back on `attach`: only what may
        // have changed is reported.
        let costs_changed = values.and_then(|rect| Some(self.collision.costs()?.affected(rect)));
        // First, so no failure below leaves the graph behind the mask it is searched on.
        self.repair_cluster_graph(&mask, &rects, costs_changed.as_slice());
        match (donor.obstacles, changed.cells) {
            (Some(o), _) => self.collision.follow_obstacles(o),
            (None, Some(rect)) => {
                let (values, rule) = (&self.site.map().data, config.traversability());
                self.collision
                    .update_blocked(rect, |k| rule.is_blocked(values[k]))
                    .map_err(|e| invalid(e.to_string()))?
            }
            (None, None) => {}
        }
        self.blocks.follow_mask(mask, &rects).map_err(|e| invalid(e.to_string()))?;
        Ok(MapUpdate { changed: changed.cells, rebuilt: false, costs_changed, copied: false })
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
    pub fn vehicle_mask(&self) -> &crate::search::los::CellMask {
        // The vehicle was tracked when this map was prepared.
        self.site.clearance.vehicle_mask(&self.vehicle).expect("vehicle tracked at construction")
    }
}

/// A [`PreparedMap`] without its site, while the site is edited (see [`PreparedMap::detach`]).
pub(super) struct Detached {
    vehicle: Vehicle,
    collision: CollisionMap,
    blocks: BlockGrid,
    hierarchy: Option<ClusterGraph>,
    refiner: Arc<dyn Refine>,
}

impl Detached {
    /// Gives up what `donors` give this profile back (see `planner::maps`): its donors then
    /// hold the only copy and update it in place.
    pub(super) fn release(&mut self, donors: &super::maps::Donors) {
        if donors.obstacles.is_some() {
            self.collision.release_obstacles();
        }
    }

    /// The prepared map again, on `site`.
    pub(super) fn attach(self, site: Arc<SiteMap>) -> PreparedMap {
        let Self { vehicle, mut collision, mut blocks, hierarchy, refiner } = self;
        collision.set_distance(site.obstacle_distance(&vehicle), site.clearance.shared_map());
        let mask = site.clearance.shared_vehicle_mask(&vehicle).expect("the site tracks every profile's vehicle");
        blocks.follow_mask(mask, &[]).expect("the site's mask has the map's size");
        PreparedMap { site, vehicle, collision, blocks, hierarchy, refiner, revision: MapRevision::fresh() }
    }
}
