//! Several vehicle profiles planning on one map: one set of clearance annotations, one LDDB.
//!
//! Harabor's annotated map answers "does an agent of size k fit here" for every size at once, so
//! a site with small AMRs beside a tugger or a forklift needs one annotated map, not one per
//! vehicle. A [`Fleet`] holds one [`Planner`] per named profile (Nav2's `planner_plugins`): they
//! share the map, its obstacle distance and clearance, and the LDDB; each keeps what is its own
//! (its vehicle's mask and regions inside the shared annotations; its collision map, costs,
//! Block A* pattern codes and Directional A* tables). A map update reaches the annotations once
//! and every profile follows it.
//!
//! ```
//! use blockstar_planner::map::{MapInfo, OccupancyMap};
//! use blockstar_planner::planner::{Budget, Fleet, PlannerConfig};
//! use blockstar_planner::geometry::Pose2;
//!
//! let small = PlannerConfig { robot_radius: 0.2, min_turning_radius: 0.0, ..Default::default() };
//! let large = PlannerConfig { robot_radius: 0.6, min_turning_radius: 0.0, ..Default::default() };
//! let mut fleet = Fleet::new(vec![("amr".into(), small), ("tugger".into(), large)]).unwrap();
//! // A 4 m x 4 m room at 0.1 m per cell, with a wall across it and a 0.8 m door.
//! let origin = Pose2::new(0.0, 0.0, 0.0);
//! let info = MapInfo { width: 40, height: 40, resolution: 0.1, origin, frame_id: "map".into() };
//! let mut data = vec![0i8; 1600];
//! for x in 0..40 {
//!     if !(16..24).contains(&x) {
//!         data[20 * 40 + x] = 100;
//!     }
//! }
//! fleet.set_map(OccupancyMap { info, data }).unwrap();
//! let (start, goal) = (Pose2::new(2.0, 1.0, 0.0), Pose2::new(2.0, 3.0, 0.0));
//! let budget = Budget::new(2.0, None);
//! assert!(fleet.planner("amr").unwrap().plan(start, goal, true, &budget).is_ok());
//! // The tugger's 1.2 m disk does not pass the door.
//! assert!(fleet.planner("tugger").unwrap().plan(start, goal, true, &budget).is_err());
//! ```

use super::{maps, MapUpdate, PlanError, Planner, PlannerConfig, ProfileBytes, SiteBytes, StatusCode, LDDB_BLOCK_SIDE};
use crate::clearance::PatchRect;
use crate::lddb::Lddb;
use crate::map::OccupancyMap;
use std::sync::Arc;

/// Most profiles one fleet serves (each costs memory per map cell: see the README).
pub const MAX_PROFILES: usize = 16;

/// Named vehicle profiles sharing one map, its annotations and the LDDB. The first profile is the
/// default (an empty name asks for it, as Nav2's empty `planner_id`).
#[derive(Debug, Clone)]
pub struct Fleet {
    names: Vec<String>,
    planners: Vec<Planner>,
}

impl Fleet {
    /// A fleet of `profiles` (name, parameters) with no map, loading the LDDB once (see
    /// [`Planner::new`]). Fails with `INVALID_INPUT` when there are none or more than
    /// [`MAX_PROFILES`], a name is empty or repeated, or a profile's parameters are out of range.
    pub fn new(profiles: Vec<(String, PlannerConfig)>) -> Result<Self, PlanError> {
        let first = profiles.first().map(|(_, c)| c.clone()).unwrap_or_default();
        let lddb = Planner::new(first)?.lddb().clone();
        Self::with_lddb(profiles, lddb)
    }

    /// A fleet of `profiles` sharing an already loaded LDDB; fails as [`Fleet::new`].
    pub fn with_lddb(profiles: Vec<(String, PlannerConfig)>, lddb: Arc<Lddb>) -> Result<Self, PlanError> {
        let invalid = |m: String| PlanError::new(StatusCode::InvalidInput, m);
        if profiles.is_empty() || profiles.len() > MAX_PROFILES {
            return Err(invalid(format!("a fleet has 1 to {MAX_PROFILES} profiles, not {}", profiles.len())));
        }
        if lddb.side() != LDDB_BLOCK_SIDE {
            return Err(invalid(format!("LDDB block side must be {LDDB_BLOCK_SIDE}")));
        }
        let (mut names, mut planners) = (Vec::new(), Vec::new());
        for (name, config) in profiles {
            if name.is_empty() || names.contains(&name) {
                return Err(invalid(format!("profile name {name:?} is empty or repeated")));
            }
            let planner = Planner::with_lddb(config, lddb.clone())
                .map_err(|e| PlanError::new(e.code, format!("profile {name}: {}", e.message)))?;
            names.push(name);
            planners.push(planner);
        }
        Ok(Self { names, planners })
    }

    /// The profiles' names, the default first.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The profile named `name` (`""`: the default). Fails with `INVALID_PLANNER`, naming the
    /// profiles served, when there is none of that name.
    pub fn planner(&self, name: &str) -> Result<&Planner, PlanError> {
        Ok(&self.planners[self.index(name)?])
    }

    /// The default profile (the first).
    pub fn default_planner(&self) -> &Planner {
        &self.planners[0]
    }

    /// Every profile with its name, in order.
    pub fn profiles(&self) -> impl Iterator<Item = (&str, &Planner)> {
        self.names.iter().map(String::as_str).zip(&self.planners)
    }

    /// The position of profile `name` among [`Fleet::profiles`] (`""`: 0, the default). Fails
    /// with `INVALID_PLANNER`, naming the profiles served, when there is none of that name.
    pub fn index(&self, name: &str) -> Result<usize, PlanError> {
        if name.is_empty() {
            return Ok(0);
        }
        self.names.iter().position(|n| n == name).ok_or_else(|| {
            PlanError::new(
                StatusCode::InvalidPlanner,
                format!("planner_id {name:?} is not served here; this node serves {:?}", self.names),
            )
        })
    }

    /// Moves the maps into a fleet of their own (the same profiles and parameters), leaving this
    /// one with none until the caller puts the other back in its place. Updates applied to the
    /// lent fleet then change the map in place, where updates applied to a clone would copy every
    /// structure this fleet still held ([`MapUpdate::copied`]: several bytes per cell, a
    /// whole-map copy on each update of a site-scale map).
    pub fn lend_maps(&mut self) -> Fleet {
        let lent = self.clone();
        for planner in &mut self.planners {
            planner.map = None;
        }
        lent
    }

    /// The heap the map holds for the fleet, each buffer counted once (`None` with no map): what
    /// every profile shares ([`SiteMap::bytes`](super::SiteMap::bytes)), and per
    /// profile, in order, what it holds beyond the profiles before it. A mask or the blocked cells
    /// that several profiles share are counted for the first of them (see
    /// [`PreparedMap::bytes_beside`](super::PreparedMap::bytes_beside)).
    pub fn memory(&self) -> Option<(SiteBytes, Vec<ProfileBytes>)> {
        let maps = self.planners.iter().map(|p| p.map().map(|m| m.as_ref())).collect::<Option<Vec<_>>>()?;
        let shared = maps.first()?.site.bytes();
        Some((shared, maps.iter().enumerate().map(|(i, m)| m.bytes_beside(&maps[..i])).collect()))
    }

    fn group(&mut self) -> Vec<&mut Planner> {
        self.planners.iter_mut().collect()
    }

    /// Replaces the map of every profile (annotated once for all of them). On error nothing
    /// changes; see [`Planner::set_map`].
    pub fn set_map(&mut self, map: OccupancyMap) -> Result<(), PlanError> {
        maps::set_map(&mut self.group(), map)
    }

    /// Applies a map patch once to the shared annotations, then to every profile's layers; one
    /// update per profile, in order. Fails as [`Planner::apply_patch`]; nothing changes then.
    pub fn apply_patch(
        &mut self,
        x: i64,
        y: i64,
        width: i64,
        height: i64,
        data: &[i8],
    ) -> Result<Vec<MapUpdate>, PlanError> {
        maps::apply_patch(&mut self.group(), PatchRect { x, y, width, height }, data)
    }

    /// Replaces the map, updating only what differs when the geometry is the same; one update
    /// per profile, in order. Fails as [`Planner::update_map`]; nothing changes then.
    pub fn update_map(&mut self, map: OccupancyMap) -> Result<Vec<MapUpdate>, PlanError> {
        maps::update_map(&mut self.group(), map)
    }

    /// Gives profile `name` (`""`: the default) new parameters; the other profiles plan as
    /// before. Fails with `INVALID_PLANNER` (no such profile) or as [`Fleet::set_configs`];
    /// nothing changes then.
    pub fn set_config(&mut self, name: &str, config: PlannerConfig) -> Result<(), PlanError> {
        let index = self.index(name)?;
        let mut configs: Vec<PlannerConfig> = self.planners.iter().map(|p| p.config().clone()).collect();
        configs[index] = config;
        self.set_configs(configs)
    }

    /// Gives every profile its parameters at once (`configs` in the profiles' order), so a change
    /// that must reach all of them together (the map's `occupied_threshold`) is one step. The
    /// map is annotated anew, once, only when the annotations the profiles need changed (a
    /// vehicle's size or traversability, the threshold, the obstacle distance's cap when a
    /// profile's costs reach beyond 31 cells); a profile whose parameters did not
    /// change keeps its map otherwise. Fails with `INVALID_INPUT` (a count that is not the
    /// profiles', parameters out of range, profiles reading the map with different thresholds, a
    /// footprint the map cannot annotate); nothing changes then.
    pub fn set_configs(&mut self, configs: Vec<PlannerConfig>) -> Result<(), PlanError> {
        maps::set_configs(&mut self.group(), configs)
    }
}
