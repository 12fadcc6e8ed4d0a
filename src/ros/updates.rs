//! Map and parameter updates: full maps on `/map`, patches on `/map_updates` and parameter
//! changes (`ros2 param set`) are queued in arrival order and applied in batches on a worker
//! thread to a clone of the planner (incrementally where the geometry allows), so the executor
//! never waits and a plan in flight finishes on the map and parameters it started with. A full
//! map makes the maps and patches queued before it moot. Whatever fails is answered with a status
//! and changes nothing.

use super::convert::{map_from_msg, patch_from_msg, Patch, StatusEvent};
use super::live_params::from_r2r;
use super::state::{Done, NodeState};
use crate::map::OccupancyMap;
use crate::planner::{PlanError, Planner, PlannerConfig, StatusCode};
use r2r::blockstar_planner_msgs::msg as bs;
use r2r::geometry_msgs::msg as geo;
use r2r::nav_msgs::msg as nav;

/// Most patches waiting while a batch is applied; beyond it patches are refused (with a status).
pub const MAX_QUEUED_UPDATES: usize = 1000;

/// One change to apply.
pub enum Update {
    /// A whole map (`/map`).
    Map(OccupancyMap),
    /// A patch (`/map_updates`).
    Patch(Patch),
    /// New planner parameters (`ros2 param set`).
    Config(PlannerConfig),
}

/// Updates waiting, and whether a batch is being applied.
#[derive(Default)]
pub struct UpdateQueue {
    queued: Vec<Update>,
    running: bool,
}

impl UpdateQueue {
    /// True while a batch is being applied.
    pub fn busy(&self) -> bool {
        self.running
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Map,
    Patch,
    Config,
}

struct Report {
    kind: Kind,
    /// What to log on success, or why it was refused.
    result: Result<String, PlanError>,
    /// The map or the parameters changed.
    changed: bool,
}

/// A batch applied: the planner holding the result, and one report per update.
pub struct Applied {
    planner: Planner,
    reports: Vec<Report>,
}

fn apply(planner: &mut Planner, update: Update) -> Report {
    match update {
        Update::Map(map) => {
            let (w, h, r) = (map.info.width, map.info.height, map.info.resolution);
            // Same geometry as the held map (SLAM republishing the whole grid): only the changed
            // area is re-derived; otherwise everything is built anew.
            let result = planner.update_map(map);
            let changed = result.as_ref().is_ok_and(|u| u.changed.is_some() || u.rebuilt);
            Report { kind: Kind::Map, result: result.map(|_| format!("map {w}x{h} at {r} m/cell in use")), changed }
        }
        Update::Patch(p) => {
            let result = planner.apply_patch(p.x, p.y, p.width, p.height, &p.data);
            let changed = result.as_ref().is_ok_and(|u| u.changed.is_some() || u.rebuilt);
            let text = format!("patch {}x{} at ({}, {}) applied", p.width, p.height, p.x, p.y);
            Report { kind: Kind::Patch, result: result.map(|_| text), changed }
        }
        Update::Config(config) => {
            let text = format!(
                "parameters in use: robot_radius {} m, min_turning_radius {} m, heading_bins {}, neighbourhood {}, \
                 path_spacing {} m, turn_penalty {}",
                config.robot_radius,
                config.min_turning_radius,
                config.heading_bins,
                config.neighbourhood,
                config.path_spacing,
                config.turn_penalty
            );
            let result = planner.set_config(config);
            Report { kind: Kind::Config, changed: result.is_ok(), result: result.map(|_| text) }
        }
    }
}

impl NodeState {
    /// A whole map on `/map`.
    pub fn on_map(&mut self, msg: nav::OccupancyGrid) {
        match map_from_msg(&msg, &self.params.global_frame, self.params.planner.max_map_cells) {
            Err(e) => self.refuse(Kind::Map, e),
            Ok(map) => {
                // The whole map replaces whatever maps and patches still wait.
                self.updates.queued.retain(|u| matches!(u, Update::Config(_)));
                self.updates.queued.push(Update::Map(map));
                self.schedule();
            }
        }
    }

    /// A patch on `/map_updates`.
    pub fn on_patch(&mut self, msg: bs::GridPatch) {
        match patch_from_msg(&msg, &self.params.global_frame) {
            Err(e) => self.refuse(Kind::Patch, e),
            Ok(_) if self.updates.queued.len() >= MAX_QUEUED_UPDATES => {
                let e = PlanError::new(StatusCode::InvalidInput, "too many map updates waiting");
                self.refuse(Kind::Patch, e)
            }
            Ok(patch) => {
                self.updates.queued.push(Update::Patch(patch));
                self.schedule();
            }
        }
    }

    /// r2r accepted a parameter change (the range checks passed): the planner's part is applied
    /// off the planning path, `replan_period` at once.
    pub fn on_param_event(&mut self, name: &str, value: &r2r::ParameterValue) {
        let wanted = match self.live.lock() {
            Ok(live) => live.params.clone(),
            Err(_) => return r2r::log_error!(self.logger(), "parameter lock poisoned"),
        };
        r2r::log_info!(self.logger(), "parameter {name} set to {:?}", from_r2r(value));
        self.params.replan_period = wanted.replan_period;
        if wanted.planner != *self.planner.config() {
            // A configuration is a full snapshot: an older one still waiting is moot.
            self.updates.queued.retain(|u| !matches!(u, Update::Config(_)));
            self.updates.queued.push(Update::Config(wanted.planner));
        }
        self.schedule();
    }

    /// Starts applying the waiting updates, when no batch is running.
    pub(super) fn kick_updates(&mut self) {
        if self.updates.running || self.updates.queued.is_empty() {
            return;
        }
        self.updates.running = true;
        let batch = std::mem::take(&mut self.updates.queued);
        let mut planner = self.planner.clone();
        let done = self.done.clone();
        tokio::task::spawn_blocking(move || {
            let reports = batch.into_iter().map(|u| apply(&mut planner, u)).collect();
            let _ = done.send(Done::Update(Applied { planner, reports }));
        });
    }

    /// A batch was applied: the planner holding it takes over; refusals get a status.
    pub(super) fn on_applied(&mut self, applied: Applied) {
        self.updates.running = false;
        self.planner = applied.planner;
        let mut changed = false;
        for report in applied.reports {
            match report.result {
                Ok(text) => {
                    r2r::log_info!(self.logger(), "{text}");
                    changed |= report.changed;
                }
                Err(e) => self.refuse(report.kind, e),
            }
        }
        // The parameters in force are the planner's (a refused change is undone), unless a newer
        // change still waits.
        self.params.planner = self.planner.config().clone();
        if !self.updates.queued.iter().any(|u| matches!(u, Update::Config(_))) {
            if let Ok(mut live) = self.live.lock() {
                live.params.planner = self.planner.config().clone();
            }
        }
        if changed {
            self.map_version += 1;
            self.recheck = true;
            let planner = self.planner.clone();
            self.out.clearance(&planner);
        }
    }

    /// Refuses an update with a log line and a status (code and reason), keeping what is held.
    fn refuse(&mut self, kind: Kind, e: PlanError) {
        let what = match kind {
            Kind::Map => "map rejected",
            Kind::Patch => "map patch rejected",
            Kind::Config => "parameter change rejected",
        };
        r2r::log_error!(self.logger(), "{what}, keeping the previous one: {e}");
        let goal = geo::PoseStamped::default();
        let message = format!("{what}: {}", e.message);
        self.out.status(StatusEvent::InputRefused, &goal, &Err(PlanError::new(e.code, message)), "", None);
    }
}
