//! The update queue: whole maps (`<map_topic>`), map updates (`<map_topic>_updates`) and
//! parameter changes (`ros2 param set`, lifecycle configure) waiting in arrival order, applied in
//! batches on a worker thread (incrementally where the geometry allows) so the executor never
//! waits. The node lends a batch its maps ([`Fleet::lend_maps`]) and starts one only when no plan
//! is in flight, so the map is changed in place, never copied.
//!
//! The queue knows nothing of the node: the node pushes updates, takes a [`Batch`] when it may
//! start one, runs [`Batch::apply`] on a worker thread and hands the [`Applied`] result back
//! ([`UpdateQueue::finished`]).

use crate::map::OccupancyMap;
use crate::planner::{Fleet, MapUpdate, PlanError, PlannerConfig, StatusCode};

/// Most map updates waiting while a batch is applied; beyond it updates are refused (with a
/// status). With the cell cap below, the queue holds at most [`MAX_QUEUED_UPDATES`] updates and
/// `max_map_cells` cells of update data (one byte each), plus one whole map and one parameter set.
pub const MAX_QUEUED_UPDATES: usize = 1000;

/// A map update checked for its own consistency; whether it fits the held map is checked when it
/// is applied ([`Planner::apply_patch`](crate::planner::Planner::apply_patch)).
#[derive(Debug, Clone, PartialEq)]
pub struct Patch {
    /// Column of the update's first cell.
    pub x: i64,
    /// Row of the update's first cell.
    pub y: i64,
    /// Columns.
    pub width: i64,
    /// Rows.
    pub height: i64,
    /// Occupancy values, row-major (`width * height` of them).
    pub data: Vec<i8>,
}

/// One change to apply.
pub enum Update {
    /// A whole map.
    Map(OccupancyMap),
    /// A rectangular update of the held map.
    Patch(Patch),
    /// New planner parameters: one set per profile, in the fleet's order.
    Config(Vec<PlannerConfig>),
}

/// What kind of input an update (or its refusal) was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A whole map.
    Map,
    /// A map update.
    Patch,
    /// A parameter change.
    Config,
}

impl Kind {
    /// How a refusal of this kind starts its message.
    pub fn refused(self) -> &'static str {
        match self {
            Kind::Map => "map rejected",
            Kind::Patch => "map update rejected",
            Kind::Config => "parameter change rejected",
        }
    }
}

/// The outcome of one update.
pub struct Report {
    /// What was applied.
    pub kind: Kind,
    /// What to log on success, or why it was refused.
    pub result: Result<String, PlanError>,
    /// The map or the parameters changed.
    pub changed: bool,
    /// The map was changed on a copy (it was still held elsewhere: see [`MapUpdate::copied`]).
    pub copied: bool,
}

/// Updates waiting, and whether a batch is being applied.
#[derive(Default)]
pub struct UpdateQueue {
    queued: Vec<Update>,
    /// Cells of update data waiting.
    queued_cells: usize,
    running: bool,
    /// The parameter set of the running batch, if it brings one.
    running_config: Option<Vec<PlannerConfig>>,
}

/// A batch taken from the queue: the updates and the fleet they are applied to (the node's, its
/// maps lent for the batch).
pub struct Batch {
    fleet: Fleet,
    updates: Vec<Update>,
}

/// A batch applied: the fleet holding the result, and one report per update.
pub struct Applied {
    /// The fleet with every accepted update applied.
    pub fleet: Fleet,
    /// One per update, in order.
    pub reports: Vec<Report>,
}

impl Applied {
    /// What a batch that died leaves: `mapless` (the node's profiles, whose maps the batch held
    /// and lost) and one refusal saying so; the next whole map is taken as a first one.
    pub fn failed(mapless: Fleet, why: &str) -> Self {
        let message = format!(
            "applying the map updates stopped on an internal error (a bug, please report it): {why}; no map \
             until the next one"
        );
        let refusal = Report {
            kind: Kind::Map,
            result: Err(PlanError::new(StatusCode::NoMap, message)),
            changed: true,
            copied: false,
        };
        Self { fleet: mapless, reports: vec![refusal] }
    }
}

impl UpdateQueue {
    /// Updates waiting (at most [`MAX_QUEUED_UPDATES`]).
    pub fn len(&self) -> usize {
        self.queued.len()
    }

    /// True when no update waits.
    pub fn is_empty(&self) -> bool {
        self.queued.is_empty()
    }

    /// True while a batch is being applied.
    pub fn busy(&self) -> bool {
        self.running
    }

    /// True when a parameter change waits.
    pub fn config_waiting(&self) -> bool {
        self.queued.iter().any(|u| matches!(u, Update::Config(_)))
    }

    /// The parameter set the fleet is to have once the updates waiting and running land (the
    /// newest set waiting, else the running batch's), or `None` when none is on its way: what a
    /// new parameter change is to be compared with, not the fleet's set, which a change on its
    /// way is about to replace (a value set back to the fleet's meanwhile would be lost).
    pub fn config_on_its_way(&self) -> Option<&[PlannerConfig]> {
        newest_config(&self.queued).or(self.running_config.as_deref())
    }

    /// The parameter set of the running batch, if it brings one.
    pub fn running_config(&self) -> Option<&[PlannerConfig]> {
        self.running_config.as_deref()
    }

    /// Queues a whole map; the maps and map updates queued before it are moot and dropped.
    pub fn push_map(&mut self, map: OccupancyMap) {
        self.queued.retain(|u| matches!(u, Update::Config(_)));
        self.queued_cells = 0;
        self.queued.push(Update::Map(map));
    }

    /// Queues a map update.
    ///
    /// Fails (`INVALID_INPUT`, nothing queued) when [`MAX_QUEUED_UPDATES`] updates or `max_cells`
    /// cells of update data already wait.
    pub fn push_patch(&mut self, patch: Patch, max_cells: usize) -> Result<(), PlanError> {
        let cells = patch.data.len();
        if self.queued.len() >= MAX_QUEUED_UPDATES || self.queued_cells + cells > max_cells {
            return Err(PlanError::new(
                StatusCode::InvalidInput,
                format!(
                    "too many map updates waiting ({} updates, {} cells; at most {MAX_QUEUED_UPDATES} updates and \
                     max_map_cells {max_cells} cells)",
                    self.queued.len(),
                    self.queued_cells
                ),
            ));
        }
        self.queued_cells += cells;
        self.queued.push(Update::Patch(patch));
        Ok(())
    }

    /// Queues a parameter set (one per profile, in the fleet's order); an older one still
    /// waiting is moot (a set is a full snapshot).
    pub fn push_config(&mut self, configs: Vec<PlannerConfig>) {
        self.queued.retain(|u| !matches!(u, Update::Config(_)));
        self.queued.push(Update::Config(configs));
    }

    /// Drops the map updates and parameter sets waiting (lifecycle cleanup); a whole map waiting
    /// stays (its latched topic would not send it again).
    pub fn clear(&mut self) {
        self.queued.retain(|u| matches!(u, Update::Map(_)));
        self.queued_cells = 0;
    }

    /// Whether updates wait and no batch runs: [`UpdateQueue::start`] would start one.
    pub fn ready(&self) -> bool {
        !self.running && !self.queued.is_empty()
    }

    /// Takes the waiting updates as a batch on `fleet` (the node's, its maps lent: see
    /// [`Fleet::lend_maps`]), or gives `fleet` back when a batch is running or nothing waits.
    /// Until [`UpdateQueue::finished`], [`UpdateQueue::busy`] is true.
    pub fn start(&mut self, fleet: Fleet) -> Result<Batch, Fleet> {
        if !self.ready() {
            return Err(fleet);
        }
        self.running = true;
        self.queued_cells = 0;
        let updates = std::mem::take(&mut self.queued);
        self.running_config = newest_config(&updates).map(<[PlannerConfig]>::to_vec);
        Ok(Batch { fleet, updates })
    }

    /// The running batch is done.
    pub fn finished(&mut self) {
        self.running = false;
        self.running_config = None;
    }
}

/// The newest parameter set among `updates`.
fn newest_config(updates: &[Update]) -> Option<&[PlannerConfig]> {
    updates.iter().rev().find_map(|u| match u {
        Update::Config(c) => Some(c.as_slice()),
        _ => None,
    })
}

impl Batch {
    /// The whole maps this batch brings, as a line for the log (`preparing map 4000x4000 at 0.05
    /// m/cell`), or `None` when it brings none: preparing a big map takes seconds, and its
    /// `in use` line comes only after.
    pub fn maps_to_prepare(&self) -> Option<String> {
        let maps: Vec<String> = self
            .updates
            .iter()
            .filter_map(|u| match u {
                Update::Map(m) => Some(format!(
                    "{}x{} at {} m/cell",
                    m.info.width,
                    m.info.height,
                    crate::map::Resolution(m.info.resolution)
                )),
                _ => None,
            })
            .collect();
        (!maps.is_empty()).then(|| format!("preparing map {}", maps.join(", then ")))
    }

    /// Applies every update in order (meant for a worker thread); a refused update changes
    /// nothing and is reported.
    pub fn apply(self) -> Applied {
        let mut fleet = self.fleet;
        let reports = self.updates.into_iter().map(|u| apply(&mut fleet, u)).collect();
        Applied { fleet, reports }
    }
}

/// True when any profile's plans may differ after `updates`.
fn any_changed(updates: &Result<Vec<MapUpdate>, PlanError>) -> bool {
    updates.as_ref().is_ok_and(|u| u.iter().any(MapUpdate::changed_anything))
}

/// True when any profile's map was changed on a copy.
fn any_copied(updates: &Result<Vec<MapUpdate>, PlanError>) -> bool {
    updates.as_ref().is_ok_and(|u| u.iter().any(|u| u.copied))
}

/// What a map's or patch's log line adds about values outside `-1..=100` (empty when none).
fn malformed_note(values: &[i8]) -> String {
    match crate::map::values_out_of_range(values) {
        0 => String::new(),
        1 => "; 1 cell holds a value outside -1..100, read as an obstacle".into(),
        n => format!("; {n} cells hold values outside -1..100, read as obstacles"),
    }
}

fn apply(fleet: &mut Fleet, update: Update) -> Report {
    match update {
        Update::Map(map) => {
            let (w, h, r) = (map.info.width, map.info.height, crate::map::Resolution(map.info.resolution));
            let malformed = malformed_note(&map.data);
            // Same geometry as the held map (SLAM or a costmap republishing the whole grid): only
            // the changed area is re-derived; otherwise everything is built anew.
            let result = fleet.update_map(map);
            let (changed, copied) = (any_changed(&result), any_copied(&result));
            let result = result.map(|_| format!("map {w}x{h} at {r} m/cell in use{malformed}"));
            Report { kind: Kind::Map, result, changed, copied }
        }
        Update::Patch(p) => {
            let result = fleet.apply_patch(p.x, p.y, p.width, p.height, &p.data);
            let (changed, copied) = (any_changed(&result), any_copied(&result));
            let malformed = malformed_note(&p.data);
            let text = format!("map update {}x{} at ({}, {}) applied{malformed}", p.width, p.height, p.x, p.y);
            Report { kind: Kind::Patch, result: result.map(|_| text), changed, copied }
        }
        Update::Config(configs) => {
            // Every profile's parameters in one step (all or nothing), so a change that reaches
            // every profile together (the map's threshold) is never half applied.
            let lines: Vec<String> = fleet
                .profiles()
                .zip(&configs)
                .filter(|((_, p), c)| p.config() != *c)
                .map(|((name, _), c)| {
                    format!(
                        "{name}: robot_radius {} m, footprint {}, min_turning_radius {} m, motion_model {}, heading_bins {}",
                        c.robot_radius,
                        crate::polygon::Polygon::to_nav2(c.footprint.as_ref()),
                        c.min_turning_radius,
                        c.motion_model.name(),
                        c.heading_bins,
                    )
                })
                .collect();
            let result = fleet.set_configs(configs);
            let changed = result.is_ok() && !lines.is_empty();
            let text =
                format!("parameters in use: {}", if lines.is_empty() { "unchanged".into() } else { lines.join("; ") });
            Report { kind: Kind::Config, changed, result: result.map(|_| text), copied: false }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::map::MapInfo;

    fn patch(cells: usize) -> Patch {
        Patch { x: 0, y: 0, width: cells as i64, height: 1, data: vec![0; cells] }
    }

    fn map() -> OccupancyMap {
        let info = MapInfo {
            width: 4,
            height: 4,
            resolution: 0.5,
            origin: crate::geometry::Pose2::default(),
            frame_id: "map".into(),
        };
        OccupancyMap::new(info, vec![0; 16], 1000).unwrap()
    }

    #[test]
    fn a_map_or_patch_with_values_outside_the_message_range_says_how_many() {
        let mut fleet = Fleet::new(vec![("GridBased".into(), PlannerConfig::default())]).unwrap();
        let mut m = map();
        m.data[3] = 120;
        m.data[7] = -50;
        let report = apply(&mut fleet, Update::Map(m));
        let text = report.result.unwrap();
        assert!(text.ends_with("in use; 2 cells hold values outside -1..100, read as obstacles"), "{text}");
        let report = apply(&mut fleet, Update::Patch(Patch { data: vec![0, 101, -1, 100], ..patch(4) }));
        let text = report.result.unwrap();
        assert!(text.ends_with("applied; 1 cell holds a value outside -1..100, read as an obstacle"), "{text}");
        let report = apply(&mut fleet, Update::Map(map()));
        assert!(report.result.unwrap().ends_with("m/cell in use"));
    }

    #[test]
    fn the_queue_stays_within_its_bounds() {
        let mut q = UpdateQueue::default();
        for _ in 0..MAX_QUEUED_UPDATES {
            q.push_patch(patch(1), 1_000_000).unwrap();
        }
        let e = q.push_patch(patch(1), 1_000_000).unwrap_err();
        assert!(e.message.contains("too many map updates"), "{e}");
        assert_eq!(q.queued.len(), MAX_QUEUED_UPDATES);
        // The cell cap: a fresh queue takes updates until their cells would pass max_cells.
        let mut q = UpdateQueue::default();
        q.push_patch(patch(60), 100).unwrap();
        assert!(q.push_patch(patch(41), 100).is_err());
        q.push_patch(patch(40), 100).unwrap();
        assert_eq!((q.queued.len(), q.queued_cells), (2, 100));
    }

    #[test]
    fn a_whole_map_makes_earlier_maps_and_updates_moot_but_keeps_parameters() {
        let mut q = UpdateQueue::default();
        q.push_patch(patch(5), 100).unwrap();
        q.push_config(vec![PlannerConfig::default()]);
        q.push_map(map());
        q.push_map(map());
        assert_eq!(q.queued.len(), 2);
        assert!(q.config_waiting());
        assert_eq!(q.queued_cells, 0);
        // A newer parameter set replaces the older one.
        q.push_config(vec![PlannerConfig::default()]);
        assert_eq!(q.queued.iter().filter(|u| matches!(u, Update::Config(_))).count(), 1);
    }

    #[test]
    fn the_parameter_set_on_its_way_is_the_newest_waiting_else_the_running_batchs() {
        let radius = |r: f64| vec![PlannerConfig { robot_radius: r, ..PlannerConfig::default() }];
        let mut q = UpdateQueue::default();
        assert!(q.config_on_its_way().is_none());
        q.push_config(radius(0.3));
        let fleet = Fleet::new(vec![("GridBased".into(), PlannerConfig::default())]).unwrap();
        let batch = q.start(fleet).expect("a batch starts");
        // Running: a set back to the fleet's value differs from what is on its way.
        assert_eq!(q.config_on_its_way(), Some(radius(0.3).as_slice()));
        q.push_patch(patch(1), 100).unwrap();
        assert_eq!(q.config_on_its_way(), Some(radius(0.3).as_slice()));
        q.push_config(radius(0.2));
        assert_eq!(q.config_on_its_way(), Some(radius(0.2).as_slice()));
        drop(batch.apply());
        q.finished();
        assert_eq!(q.config_on_its_way(), Some(radius(0.2).as_slice()));
        let fleet = Fleet::new(vec![("GridBased".into(), PlannerConfig::default())]).unwrap();
        drop(q.start(fleet).expect("the next batch").apply());
        q.finished();
        assert!(q.config_on_its_way().is_none());
    }

    #[test]
    fn a_batch_that_died_leaves_the_profiles_without_a_map_and_says_so() {
        let mut fleet = Fleet::new(vec![("GridBased".into(), PlannerConfig::default())]).unwrap();
        fleet.set_map(map()).unwrap();
        let mut mapless = fleet.clone();
        drop(mapless.lend_maps());
        let applied = Applied::failed(mapless, "boom");
        assert!(applied.fleet.default_planner().map().is_none());
        assert_eq!(applied.fleet.names(), fleet.names());
        let [report] = applied.reports.as_slice() else { panic!("one report") };
        let e = report.result.as_ref().unwrap_err();
        assert!(report.changed && e.code == StatusCode::NoMap && e.message.contains("boom"), "{e}");
    }

    #[test]
    fn batches_run_one_at_a_time_and_report_each_update() {
        let mut q = UpdateQueue::default();
        let planner = Fleet::new(vec![("GridBased".into(), PlannerConfig::default())]).unwrap();
        let planner = q.start(planner).err().expect("nothing waits: the fleet comes back");
        q.push_map(map());
        q.push_patch(Patch { x: 1, y: 1, width: 1, height: 1, data: vec![100] }, 100).unwrap();
        q.push_patch(Patch { x: 9, y: 9, width: 1, height: 1, data: vec![100] }, 100).unwrap();
        assert!(q.ready());
        let batch = q.start(planner.clone()).expect("a batch");
        assert!(q.busy());
        let m = map();
        let line = format!(
            "preparing map {}x{} at {} m/cell",
            m.info.width,
            m.info.height,
            crate::map::Resolution(m.info.resolution)
        );
        assert_eq!(batch.maps_to_prepare(), Some(line));
        q.push_patch(patch(1), 100).unwrap();
        assert!(!q.ready());
        assert!(q.start(planner.clone()).is_err(), "one batch at a time");
        let applied = batch.apply();
        let kinds: Vec<_> = applied.reports.iter().map(|r| (r.kind, r.result.is_ok())).collect();
        assert_eq!(kinds, [(Kind::Map, true), (Kind::Patch, true), (Kind::Patch, false)]);
        assert_eq!(applied.fleet.default_planner().map().unwrap().site.map().data[4 + 1], 100);
        q.finished();
        let patches_only = q.start(planner).expect("the patch that waited");
        assert_eq!(patches_only.maps_to_prepare(), None);
    }
}
