//! The node's state and its reactions: goals (topic and actions), start poses and transforms,
//! maps and map updates, parameter changes, lifecycle transitions, finished jobs and the periodic
//! tick.
//!
//! Each vehicle profile (`planner_plugins`) plans one job at a time (a goal, or a replan of the
//! trajectory that profile's vehicle follows) on a worker thread with a clone of its planner;
//! profiles plan side by side. A newer goal for a profile raises that profile's running job's cancel flag
//! (SUPERSEDED) and waits as its single pending goal. Map updates run on another worker thread
//! ([`UpdateQueue`]), between jobs; a plan finishing on a map older than the current one is
//! re-checked at once. Goals and start poses are brought into `global_frame` through TF when the job starts
//! ([`Frames`]).

use super::action_server::GoalRequest;
use super::convert::{map_from_msg, StatusEvent};
use super::frames::{stamp_of, Frames};
use super::live_params::LiveParams;
use super::markers::Outline;
use super::outputs::Outputs;
use super::reply::Reply;
#[cfg(ros_map_msgs)]
use super::updates::Patch;
use super::updates::{Applied, Kind, UpdateQueue};
use crate::geometry::{Coord, Pose2};
use crate::map_io::load_map_file;
use crate::params::NodeParams;
use crate::planner::{Budget, Fleet, Leeway, Plan, PlanError, Planner, PlannerConfig, StatusCode};
use crate::replan::{check_and_replan, Followed, Outcome, Trigger};
use crate::trajectory::Trajectory;
use r2r::blockstar_planner_msgs::action::ComputePath;
use r2r::geometry_msgs::msg as geo;
use r2r::nav_msgs::msg as nav;
use r2r::std_msgs::msg::Header;
use r2r::uuid::Uuid;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::mpsc;

/// Most distinct warnings remembered so each is logged once (bounded: a peer sending ever new
/// frame names cannot grow it; past the bound, warnings are logged again).
const MAX_WARNED: usize = 64;
/// Longest key remembered (bytes; a longer one is cut at a character boundary before it).
const MAX_WARNED_KEY_BYTES: usize = 512;

/// The warnings already logged: at most [`MAX_WARNED`] keys of at most [`MAX_WARNED_KEY_BYTES`]
/// bytes (about 40 KiB with the set's overhead). Past the count the set is emptied, so a warning
/// may be logged again.
#[derive(Default)]
struct Warned(HashSet<String>);

impl Warned {
    /// Remembers `key`; true when it was not remembered yet (log the warning).
    fn first_time(&mut self, mut key: String) -> bool {
        if key.len() > MAX_WARNED_KEY_BYTES {
            let cut = (0..=MAX_WARNED_KEY_BYTES).rev().find(|&i| key.is_char_boundary(i)).unwrap_or(0);
            key.truncate(cut);
        }
        if self.0.len() >= MAX_WARNED {
            self.0.clear();
        }
        self.0.insert(key)
    }
}

/// A goal to plan for, as received.
pub struct Request {
    /// Who asked, and how to answer.
    pub reply: Reply,
    /// The goal poses in order (one, except for Nav2's through-poses action), in any frame TF
    /// connects to `global_frame`.
    pub goals: Vec<geo::PoseStamped>,
    /// A start given with the request (the actions' `use_start`); otherwise the robot's pose.
    pub start: Option<geo::PoseStamped>,
    /// When it arrived (feedback reports the time since).
    pub received: Instant,
    /// The action client asked to cancel it.
    pub client_cancel: bool,
    /// The vehicle profile it is for (an index into the fleet's profiles; 0: the default).
    profile: usize,
}

impl Request {
    fn new(reply: Reply, goals: Vec<geo::PoseStamped>, start: Option<geo::PoseStamped>) -> Self {
        Self { reply, goals, start, received: Instant::now(), client_cancel: false, profile: 0 }
    }

    /// The goal statuses echo: the final goal as received.
    fn echo(&self) -> geo::PoseStamped {
        self.goals.last().cloned().unwrap_or_default()
    }
}

/// The trajectory the vehicle is following, and the goal it leads to (in `global_frame`).
#[derive(Clone)]
pub struct Current {
    goal_msg: geo::PoseStamped,
    goal: Pose2,
    trajectory: Trajectory,
    /// Its start-overlap stretch, re-checked as planned (see `replan::check_remaining`).
    start_overlap: Option<crate::planner::StartOverlap>,
}

/// What the running job does.
enum Work {
    Goal(Box<Request>, geo::PoseStamped, Pose2),
    Replan(Current, Trigger),
}

struct Running {
    work: Work,
    cancel: Arc<AtomicBool>,
    /// Why the cancel flag was raised, decided when it was: the answer of a goal that stops
    /// (deactivation, a newer goal or its client). Decided then, not when the job returns: a
    /// goal stopped by deactivation stays NOT_ACTIVE even if the node is active again by then.
    stop: Option<PlanError>,
    /// Map version the job plans on.
    map_version: u64,
}

/// One profile's jobs and the trajectory its vehicle follows.
struct Slot {
    running: Option<Running>,
    /// The newest goal, waiting for the running job or a map update to finish.
    pending: Option<Request>,
    /// The trajectory this profile's vehicle follows: the last success of a goal on the goal
    /// topic or the node's own action for this profile, kept legal and replanned.
    current: Option<Current>,
    /// The map or the parameters changed since `current` was last checked: what changed
    /// (`Trigger::MapChange` when both did).
    recheck: Option<Trigger>,
    /// When `current` was last planned or replanned (for `replan_period`).
    last_replan: Instant,
}

impl Slot {
    /// Marks `current` for a check after `change` (a map change wins over a parameter change
    /// already waiting: both are checked at once and said as the map's).
    fn mark_recheck(&mut self, change: Trigger) {
        self.recheck = match self.recheck {
            Some(Trigger::MapChange) => Some(Trigger::MapChange),
            _ => Some(change),
        };
    }
}

impl Default for Slot {
    fn default() -> Self {
        Self { running: None, pending: None, current: None, recheck: None, last_replan: Instant::now() }
    }
}

/// Most answered paths remembered with their profile (oldest forgotten first).
const MAX_PATH_OWNERS: usize = 256;

/// The profiles each recently answered path was planned for, so `is_path_valid` (whose request
/// names no profile) checks a path for the vehicles it was planned for. A path is known by its
/// poses' positions exactly as published (a path transformed or edited by its client is not
/// known, and is checked for the default profile).
#[derive(Default)]
struct PathOwners {
    owners: std::collections::HashMap<u64, Vec<usize>>,
    /// The keys, least recently answered first.
    order: std::collections::VecDeque<u64>,
}

impl PathOwners {
    fn key(positions: impl ExactSizeIterator<Item = (f64, f64)>) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        positions.len().hash(&mut h);
        for (x, y) in positions {
            (x.to_bits(), y.to_bits()).hash(&mut h);
        }
        h.finish()
    }

    /// Remembers that `plan` was planned for `profile` (the most recent answer last).
    fn insert(&mut self, plan: &Plan, profile: usize) {
        let key = Self::key(plan.poses.iter().map(|p| (p.x, p.y)));
        let owners = self.owners.entry(key).or_default();
        if !owners.contains(&profile) {
            owners.push(profile);
        }
        self.order.retain(|&k| k != key);
        self.order.push_back(key);
        while self.order.len() > MAX_PATH_OWNERS {
            if let Some(old) = self.order.pop_front() {
                self.owners.remove(&old);
            }
        }
    }

    /// The profiles `path` was planned for, when it is a remembered answer.
    #[cfg(ros_nav2_msgs)]
    fn owners(&self, path: &nav::Path) -> Option<Vec<usize>> {
        self.owners.get(&Self::key(path.poses.iter().map(|p| (p.pose.position.x, p.pose.position.y)))).cloned()
    }
}

/// A finished background job.
pub enum Done {
    /// The running goal's plan.
    Goal {
        /// The profile it was planned for.
        profile: usize,
        /// The plan, or why there is none (boxed: a plan is large beside the other variants).
        result: Box<Result<Plan, PlanError>>,
    },
    /// The running replan's outcome.
    Replan {
        /// The profile whose trajectory it checked.
        profile: usize,
        /// What the check and replan found.
        outcome: Outcome,
    },
    /// A batch of map and parameter updates was applied.
    Update(Applied),
}

/// The node's state, owned by the async loop.
pub struct NodeState {
    params: NodeParams,
    live: Arc<Mutex<LiveParams>>,
    /// The vehicle profiles on the shared map; the first is the default. While a batch of
    /// updates runs its maps are lent to the batch (none here): see [`NodeState::schedule`].
    fleet: Fleet,
    /// The map's heap figures as last seen while the maps were here (for `/diagnostics` while a
    /// batch holds them).
    map_memory: Option<(crate::planner::SiteBytes, Vec<crate::planner::ProfileBytes>)>,
    /// The clearance display is due once the batch running lands (asked for while it held the
    /// maps).
    clearance_due: bool,
    /// `is_path_valid` requests that came while a batch held the maps, answered when it lands.
    #[cfg(ros_nav2_msgs)]
    deferred_checks: Vec<r2r::ServiceRequest<r2r::nav2_msgs::srv::IsPathValid::Service>>,
    /// Sends the service responses (see `responder`).
    #[cfg_attr(not(ros_nav2_msgs), allow(dead_code))]
    responder: super::responder::Responder,
    /// Updates that found the map still held elsewhere and changed a copy (none expected: the
    /// batches wait for the plans in flight), for `/diagnostics`.
    map_copies: u64,
    frames: Frames,
    /// Lifecycle state ACTIVE: goals are planned and outputs published.
    active: bool,
    /// Shut down (lifecycle `finalized`): goals are refused saying so, not "activate it".
    finalized: bool,
    /// Per profile, in the fleet's order: its jobs and the trajectory its vehicle follows.
    slots: Vec<Slot>,
    /// The profile of each recently answered path (for `is_path_valid`).
    path_owners: PathOwners,
    updates: UpdateQueue,
    /// Bumped whenever the map or the planner's parameters change.
    map_version: u64,
    /// A configure replaced the planner while a batch of updates ran on the one it replaced:
    /// once that batch lands, configure again on top of it, as if the configure had come after.
    configure_after_batch: bool,
    /// A batch of updates just landed: the goals and re-checks that waited for it start before
    /// the next batch does (see [`NodeState::schedule`]).
    plans_first: bool,
    warned: Warned,
    /// When `/odom` was last logged, and its frame then.
    last_odom_log: Option<(Instant, String)>,
    out: Outputs,
    done: mpsc::UnboundedSender<Done>,
    /// The fault of `node::FAULT_HOLD_PLAN_MS` (tests only; `None` in use).
    hold_plan: Option<std::time::Duration>,
}

/// Most `is_path_valid` requests waiting for a batch of updates (Nav2 asks about once a second);
/// beyond, one is answered at once, invalid, as with no map.
#[cfg(ros_nav2_msgs)]
const MAX_DEFERRED_CHECKS: usize = 64;

/// Runs a worker's job, a panic caught and returned as its message. A bug, but a job that died
/// would never report: its profile, and with updates waiting for it every map update and plan,
/// would wait for it for ever. (The panic is also printed, by the default hook.)
fn caught<T>(job: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)).map_err(|payload| {
        match (payload.downcast_ref::<&str>(), payload.downcast_ref::<String>()) {
            (Some(text), _) => text.to_string(),
            (_, Some(text)) => text.clone(),
            _ => "a panic".to_string(),
        }
    })
}

/// The answer of a job that panicked (see [`caught`]).
fn internal_error(what: &str, why: &str) -> PlanError {
    PlanError::new(
        StatusCode::NoValidPath,
        format!("{what} stopped on an internal error (a bug, please report it): {why}"),
    )
}

fn superseded() -> PlanError {
    PlanError::new(StatusCode::Superseded, "a newer goal replaced this one")
}

fn cancelled_by_client() -> PlanError {
    // PlannerStatus has no code of its own for this; the action's goal status says CANCELED.
    PlanError::new(StatusCode::Superseded, "cancelled by the action client")
}

fn not_active(state: &str) -> PlanError {
    let what_next = match state {
        // Shut down: no transition leaves it.
        FINALIZED => "it plans no more; start the node again",
        _ => "activate it to plan",
    };
    PlanError::new(StatusCode::NotActive, format!("the planner is {state} (lifecycle): {what_next}"))
}

/// The lifecycle state after shutdown, as [`NodeState::deactivate`] is told it.
const FINALIZED: &str = "finalized";

impl NodeState {
    /// A node state holding `fleet` configured by `params`, unconfigured and inactive.
    pub fn new(
        params: NodeParams,
        live: Arc<Mutex<LiveParams>>,
        fleet: Fleet,
        out: Outputs,
        done: mpsc::UnboundedSender<Done>,
        responder: super::responder::Responder,
    ) -> Self {
        let frames = Frames::new(&params.global_frame, &params.robot_base_frame, params.transform_tolerance);
        let slots = fleet.names().iter().map(|_| Slot::default()).collect();
        Self {
            params,
            live,
            fleet,
            map_memory: None,
            clearance_due: false,
            #[cfg(ros_nav2_msgs)]
            deferred_checks: Vec::new(),
            responder,
            map_copies: 0,
            frames,
            active: false,
            finalized: false,
            slots,
            path_owners: PathOwners::default(),
            updates: UpdateQueue::default(),
            map_version: 0,
            configure_after_batch: false,
            plans_first: false,
            warned: Warned::default(),
            last_odom_log: None,
            out,
            done,
            hold_plan: None,
        }
    }

    /// Injects the fault of `node::FAULT_HOLD_PLAN_MS` (tests only): each goal's plan, once
    /// ended, waits `hold` on its worker before it is handed back.
    pub fn hold_plans(&mut self, hold: Option<std::time::Duration>) {
        self.hold_plan = hold;
    }

    fn logger(&self) -> &str {
        &self.out.logger
    }

    /// The node's parameters in force.
    #[cfg(ros_map_msgs)]
    pub fn params(&self) -> &NodeParams {
        &self.params
    }

    /// Logs `text` as a warning once per `key` (see [`MAX_WARNED`]).
    fn warn_once(&mut self, key: String, text: &str) {
        if self.warned.first_time(key) {
            r2r::log_warn!(self.logger(), "{text}");
        }
    }

    // --- Lifecycle ---------------------------------------------------------------------------

    /// Configure: the parameters in force are checked and applied, `map_file` is loaded, TF
    /// lookups use the frames and tolerance of the parameters. Fails with the reason (nothing
    /// changes then).
    pub fn configure(&mut self) -> Result<(), String> {
        let params = self.live.lock().map_err(|_| "parameter lock poisoned".to_string())?.params.clone();
        params.validate().map_err(|e| e.to_string())?;
        let mut fleet = self.fleet.clone();
        fleet.set_configs(params.profile_configs().into_iter().map(|(_, c)| c).collect()).map_err(|e| e.to_string())?;
        if !params.map_file.is_empty() {
            let path = std::path::Path::new(&params.map_file);
            let map = load_map_file(path, &params.global_frame, params.planner.max_map_cells)
                .map_err(|e| format!("cannot use map_file {}: {e}", path.display()))?;
            fleet.set_map(map).map_err(|e| format!("cannot use map_file {}: {e}", path.display()))?;
            r2r::log_info!(self.logger(), "loaded map_file {}", path.display());
        }
        self.frames.configure(&params.global_frame, &params.robot_base_frame, params.transform_tolerance);
        self.fleet = fleet;
        self.params = params;
        self.map_version += 1;
        self.publish_clearance();
        // A batch still running started from the planner just replaced: its result must not
        // undo this (on_applied configures again on top of it).
        self.configure_after_batch = self.updates.busy();
        self.warm_tables();
        Ok(())
    }

    /// Fills each profile's Directional A* hit-check table on a background thread at a lower
    /// CPU priority (10 nicer than the node, at most 19), once per table (a table kept across
    /// map updates and parameter changes it does not depend on is not filled again), so the
    /// first plans that need a window repair or a full search do not spend their time filling it
    /// (seconds for a polygon on a 2-core computer); a table kept under a wider neighbourhood
    /// gets a filler for its new offsets. A plan needing an entry meanwhile computes it itself
    /// rather than wait for the filler to, and gets the same entry, without that time counting
    /// against its `max_planning_time` ([`Budget`]); a table dropped meanwhile stops its filler.
    fn warm_tables(&self) {
        for (name, planner) in self.fleet.profiles() {
            let Some(warmer) = planner.map().and_then(|m| m.directional()).and_then(|d| d.warmer()) else { continue };
            let (logger, profile) = (self.logger().to_string(), name.to_string());
            let spawned = std::thread::Builder::new().name("blockstar-warm".into()).spawn(move || {
                lower_this_threads_priority(&logger);
                let t = Instant::now();
                if let Some(entries) = warmer.run() {
                    r2r::log_info!(
                        &logger,
                        "{profile}: Directional A* tables filled ({entries} edges computed in {:.1} s)",
                        t.elapsed().as_secs_f64()
                    );
                }
            });
            if let Err(e) = spawned {
                r2r::log_warn!(self.logger(), "{name}: tables are filled on first use (no thread: {e})");
            }
        }
    }

    /// Activate: goals are planned and outputs published (the clearance display at once, since
    /// it was muted when the map came).
    pub fn activate(&mut self) {
        self.active = true;
        self.out.enabled = true;
        self.publish_clearance();
        self.schedule();
    }

    /// How a goal refused while not active names the state: "not active", or "finalized" after
    /// shutdown.
    fn refused_as(&self) -> &'static str {
        match self.finalized {
            true => FINALIZED,
            false => "not active",
        }
    }

    /// Deactivate: the running goal is stopped and it and the pending one are answered
    /// NOT_ACTIVE; nothing is published until the next activation.
    pub fn deactivate(&mut self, state: &str) {
        self.active = false;
        self.finalized = state == FINALIZED;
        self.out.enabled = false;
        for profile in 0..self.slots.len() {
            self.stop_running(profile, not_active(if self.finalized { FINALIZED } else { "deactivated" }));
            if let Some(req) = self.slots[profile].pending.take() {
                self.finish(req, Err(not_active(state)));
            }
        }
    }

    /// Cleanup: every profile's current goal and trajectory and the waiting updates are dropped
    /// (maps received on the map topic are kept: the topic is latched and would not come again),
    /// and a configure that waited for a running batch is undone with the rest (the batch
    /// landing after cleanup or shutdown must not configure the node again).
    pub fn cleanup(&mut self) {
        for slot in &mut self.slots {
            (slot.current, slot.recheck) = (None, None);
        }
        self.updates.clear();
        self.configure_after_batch = false;
    }

    // --- Goals -------------------------------------------------------------------------------

    /// A goal on `goal_pose`.
    pub fn on_goal(&mut self, msg: geo::PoseStamped) {
        self.submit(Request::new(Reply::Topic, vec![msg], None));
    }

    /// A goal of the node's own `~/compute_path` action.
    pub fn on_own_goal(&mut self, request: GoalRequest<ComputePath::Action>) {
        let handle = match request.accept() {
            Ok(x) => x,
            Err(e) => return r2r::log_error!(self.logger(), "could not accept a compute_path goal: {e}"),
        };
        let g = &handle.goal;
        let (goal, start, planner_id) = (g.goal.clone(), g.use_start.then(|| g.start.clone()), g.planner_id.clone());
        self.submit_for(Request::new(Reply::Own(Box::new(handle)), vec![goal], start), &planner_id);
    }

    /// A goal of Nav2's `compute_path_to_pose`.
    #[cfg(ros_nav2_msgs)]
    pub fn on_to_pose_goal(&mut self, request: GoalRequest<r2r::nav2_msgs::action::ComputePathToPose::Action>) {
        let handle = match request.accept() {
            Ok(x) => x,
            Err(e) => return r2r::log_error!(self.logger(), "could not accept a compute_path_to_pose goal: {e}"),
        };
        let g = &handle.goal;
        let (goal, start, planner_id) = (g.goal.clone(), g.use_start.then(|| g.start.clone()), g.planner_id.clone());
        let req = Request::new(Reply::ToPose(Box::new(handle)), vec![goal], start);
        self.submit_for(req, &planner_id);
    }

    /// A goal of Nav2's `compute_path_through_poses`.
    #[cfg(ros_nav2_msgs)]
    pub fn on_through_poses_goal(
        &mut self,
        request: GoalRequest<r2r::nav2_msgs::action::ComputePathThroughPoses::Action>,
    ) {
        let handle = match request.accept() {
            Ok(x) => x,
            Err(e) => return r2r::log_error!(self.logger(), "could not accept a compute_path_through_poses goal: {e}"),
        };
        let g = &handle.goal;
        let (goals, start, planner_id) = (g.goals.clone(), g.use_start.then(|| g.start.clone()), g.planner_id.clone());
        let req = Request::new(Reply::ThroughPoses(Box::new(handle)), goals, start);
        if req.goals.is_empty() {
            let e = PlanError::new(StatusCode::InvalidInput, "the request gives no poses to plan through");
            return self.finish(req, Err(e));
        }
        self.submit_for(req, &planner_id);
    }

    /// Submits `req` for the profile `planner_id` names (empty: the default); an unknown name
    /// is answered INVALID_PLANNER with the names served.
    fn submit_for(&mut self, mut req: Request, planner_id: &str) {
        match self.fleet.index(planner_id) {
            Ok(profile) => req.profile = profile,
            Err(e) => return self.finish(req, Err(e)),
        }
        self.submit(req);
    }

    /// The action client asked to cancel goal `uuid`.
    pub fn on_cancel(&mut self, uuid: Uuid) {
        let is = |r: &Request| r.reply.uuid() == Some(uuid);
        for profile in 0..self.slots.len() {
            if self.slots[profile].pending.as_ref().is_some_and(is) {
                let mut req = self.slots[profile].pending.take().expect("checked");
                req.client_cancel = true;
                return self.finish(req, Err(cancelled_by_client()));
            }
            if let Some(Running { work: Work::Goal(req, ..), cancel, stop, .. }) = &mut self.slots[profile].running {
                if is(req) {
                    // The client's own cancel is its answer whatever stopped the goal before.
                    req.client_cancel = true;
                    *stop = Some(cancelled_by_client());
                    cancel.store(true, Ordering::Relaxed);
                }
            }
        }
    }

    /// Stops `profile`'s running job, if any: raises its cancel flag; a goal stopped so is
    /// answered `why`, unless something stopped it before (the first reason stands).
    fn stop_running(&mut self, profile: usize, why: PlanError) {
        if let Some(r) = &mut self.slots[profile].running {
            r.stop.get_or_insert(why);
            r.cancel.store(true, Ordering::Relaxed);
        }
    }

    /// A new goal supersedes its profile's running one and pending one (other profiles' goals
    /// plan on).
    fn submit(&mut self, req: Request) {
        if !self.active {
            return self.finish(req, Err(not_active(self.refused_as())));
        }
        let profile = req.profile;
        self.stop_running(profile, superseded());
        if let Some(old) = self.slots[profile].pending.take() {
            self.finish(old, Err(superseded()));
        }
        req.reply.feedback("queued", 0.0);
        self.slots[profile].pending = Some(req);
        self.schedule();
    }

    /// Starts what can start: the waiting updates, then per profile the pending goal, else a
    /// check of its current trajectory after a map or parameter change, else a periodic replan.
    ///
    /// A batch of updates changes the map in place: the node lends it its maps
    /// ([`Fleet::lend_maps`]) and gets them back when it lands. So it starts only when no plan is
    /// in flight: a plan keeps the map it started with, and changing that map would copy all of
    /// it (several bytes per cell, on every update: a site-scale map held twice over). Until the
    /// plans in flight end no new one starts. They finish (as in Nav2, whose costmap waits for a
    /// plan holding it), replans too: stopping a replan for every update would starve it under a
    /// costmap's stream of updates, and the trajectory it checks would never be checked.
    ///
    /// Batches and plans take turns: when a batch lands, the goals and re-checks that waited for
    /// it start before the next batch, which then waits for them. Otherwise updates arriving
    /// faster than their batches land (a costmap's stream on a large map) would start batch
    /// after batch and hold a goal back for as long as the stream lasts, its budget not even
    /// started.
    fn schedule(&mut self) {
        // Plans waiting go before the next batch of updates (a stream of map updates would
        // starve them), but not before a parameter change: a goal sent after a set's answer is
        // planned with the set in force.
        let plans_first =
            std::mem::take(&mut self.plans_first) && self.plans_waiting() && !self.updates.config_waiting();
        if self.updates.ready() && !plans_first {
            if self.slots.iter().any(|s| s.running.is_some()) {
                return;
            }
            self.map_memory = self.fleet.memory();
            let lent = self.fleet.lend_maps();
            match self.updates.start(lent) {
                Ok(batch) => {
                    if let Some(line) = batch.maps_to_prepare() {
                        r2r::log_info!(self.logger(), "{line}");
                    }
                    let done = self.done.clone();
                    // What the node is left with should the batch die: its profiles, no map.
                    let mapless = self.fleet.clone();
                    tokio::task::spawn_blocking(move || {
                        let applied = caught(|| batch.apply()).unwrap_or_else(|why| Applied::failed(mapless, &why));
                        let _ = done.send(Done::Update(applied));
                    });
                }
                Err(fleet) => self.fleet = fleet,
            }
        }
        if self.updates.busy() || !self.active {
            return;
        }
        let period = self.params.replan_period;
        for profile in 0..self.slots.len() {
            let slot = &mut self.slots[profile];
            if slot.running.is_some() {
                continue;
            }
            if let Some(req) = slot.pending.take() {
                self.start_goal(req);
                continue;
            }
            let Some(current) = slot.current.clone() else { continue };
            if let Some(trigger) = slot.recheck.take() {
                self.start_replan(profile, current, trigger);
            } else if period > 0.0 && slot.last_replan.elapsed().as_secs_f64() >= period {
                self.start_replan(profile, current, Trigger::Periodic);
            }
        }
    }

    /// Whether a goal or a re-check after a map or parameter change waits to start (while active).
    fn plans_waiting(&self) -> bool {
        self.active
            && self
                .slots
                .iter()
                .any(|s| s.running.is_none() && (s.pending.is_some() || (s.recheck.is_some() && s.current.is_some())))
    }

    /// Publishes the clearance display of the default profile's map, or once the batch holding
    /// the maps lands.
    fn publish_clearance(&mut self) {
        if self.updates.busy() {
            self.clearance_due = true;
            return;
        }
        let planner = self.fleet.default_planner().clone();
        self.out.clearance(&planner);
    }

    /// The ROS time now, as a transform-buffer stamp (noting a jump back, which clears TF).
    fn now(&mut self) -> crate::transform::Stamp {
        let now = stamp_of(&self.out.header().stamp);
        if self.frames.observe_time(now) {
            r2r::log_warn!(self.logger(), "ROS time jumped back: transforms and start poses forgotten");
        }
        now
    }

    /// The request's start and goals in `global_frame`.
    fn resolve(&mut self, req: &Request) -> Result<(Pose2, Vec<Pose2>), PlanError> {
        let mut goals = Vec::with_capacity(req.goals.len());
        for (i, g) in req.goals.iter().enumerate() {
            let what = if req.goals.len() == 1 { "the goal".to_string() } else { format!("goal {i}") };
            goals.push(self.frames.to_global(&what, &g.header.frame_id, &g.header.stamp, &g.pose)?);
        }
        let start = match &req.start {
            Some(s) => self.frames.to_global("the start", &s.header.frame_id, &s.header.stamp, &s.pose)?,
            None if req.profile == 0 => {
                let now = self.now();
                self.frames.robot_pose(now)?
            }
            // Another vehicle: where TF places its frame, never the first vehicle's pose.
            None => {
                let name = self.profile_name(req.profile);
                let frame = self.params.profile_base_frames.get(req.profile - 1).filter(|f| !f.is_empty());
                let Some(frame) = frame.cloned() else {
                    return Err(PlanError::new(
                        StatusCode::NoStart,
                        format!(
                            "no start for the {name} vehicle: give one (use_start) or set {name}.robot_base_frame to \
                             its frame in TF"
                        ),
                    ));
                };
                let now = self.now();
                self.frames.vehicle_pose(&frame, now)?
            }
        };
        Ok((start, goals))
    }

    fn start_goal(&mut self, req: Request) {
        let profile = req.profile;
        if self.fleet.default_planner().map().is_none() {
            let e = PlanError::new(StatusCode::NoMap, "no map has been received or loaded");
            return self.finish(req, Err(e));
        }
        let (start, goals) = match self.resolve(&req) {
            Ok(x) => x,
            Err(e) => return self.finish(req, Err(e)),
        };
        req.reply.feedback("planning", req.received.elapsed().as_secs_f64());
        let cancel = Arc::new(AtomicBool::new(false));
        let planner = self.profile_planner(profile).clone();
        let (done, flag) = (self.done.clone(), cancel.clone());
        let leeway = Leeway { tolerance: self.params.tolerance, start_overlap: self.params.start_overlap };
        let (echo, last) = (req.echo(), *goals.last().expect("a request has goals"));
        let hold = self.hold_plan.map(|hold| {
            let p = &echo.pose.position;
            (hold, format!("the plan of goal ({:.3}, {:.3})", Coord(p.x), Coord(p.y)), self.logger().to_string())
        });
        let work = Work::Goal(Box::new(req), echo, last);
        self.slots[profile].running = Some(Running { work, cancel, stop: None, map_version: self.map_version });
        tokio::task::spawn_blocking(move || {
            let budget = Budget::new(planner.config().max_planning_time, Some(flag.clone()));
            let result = caught(|| match goals.as_slice() {
                [goal] => planner.plan_near(start, *goal, false, leeway, &budget),
                _ => crate::waypoints::plan_through(&planner, start, &goals, &budget).map_err(PlanError::from),
            });
            let result = Box::new(result.unwrap_or_else(|why| Err(internal_error("the planner", &why))));
            if let Some((hold, held, logger)) = hold {
                r2r::log_warn!(&logger, "fault injection: {held} ended; held {} ms", hold.as_millis());
                std::thread::sleep(hold);
            }
            // Let go of the map before saying so: updates waiting for this plan change the map
            // in place only once nothing else holds it.
            drop(planner);
            let _ = done.send(Done::Goal { profile, result });
        });
    }

    /// Where profile `profile`'s vehicle is: for the first the robot's pose (TF, else
    /// `/initialpose` or `/odom`), for another TF's pose of its `<profile>.robot_base_frame`;
    /// why not when it is not known now.
    fn vehicle_pose(&mut self, profile: usize) -> Result<Pose2, String> {
        let now = self.now();
        if profile == 0 {
            return self.frames.robot_pose(now).map_err(|e| e.message);
        }
        let name = self.profile_name(profile);
        let Some(frame) = self.params.profile_base_frames.get(profile - 1).filter(|f| !f.is_empty()) else {
            return Err(format!(
                "the node does not know where the {name} vehicle is (set {name}.robot_base_frame to its frame in TF)"
            ));
        };
        self.frames.vehicle_pose(frame, now).map_err(|e| e.message)
    }

    /// Checks `profile`'s current trajectory and replans it when needed, from where its vehicle
    /// is. A vehicle the node cannot place now (a profile after the first without a pose through
    /// `<profile>.robot_base_frame`; the robot when TF's pose is stale or its chain broken) has
    /// its whole trajectory checked and is never replanned from a guess: when the map blocks it,
    /// it is stopped; periodic replans wait for its pose. Only the first profile's robot that
    /// never had a pose (planned for with an explicit start) is taken where its trajectory starts.
    fn start_replan(&mut self, profile: usize, current: Current, trigger: Trigger) {
        self.slots[profile].last_replan = Instant::now();
        let (known, unplaced) = match self.vehicle_pose(profile) {
            Ok(pose) => (Some(pose), None),
            Err(_) if profile == 0 && !self.frames.robot_pose_had_source() => (None, None),
            Err(_) if trigger == Trigger::Periodic => return,
            Err(why) => (None, Some(why)),
        };
        let Some(pose) = known.or_else(|| current.trajectory.pose_at(0.0)) else { return };
        let cancel = Arc::new(AtomicBool::new(false));
        let (planner, done, flag) = (self.profile_planner(profile).clone(), self.done.clone(), cancel.clone());
        let (trajectory, goal, overlap) = (current.trajectory.clone(), current.goal, current.start_overlap);
        let leeway = Leeway { tolerance: self.params.tolerance, start_overlap: self.params.start_overlap };
        let work = Work::Replan(current, trigger);
        self.slots[profile].running = Some(Running { work, cancel, stop: None, map_version: self.map_version });
        tokio::task::spawn_blocking(move || {
            let budget = Budget::new(planner.config().max_planning_time, Some(flag.clone()));
            let followed = Followed { trajectory: &trajectory, start_overlap: overlap.as_ref() };
            let outcome = caught(|| match unplaced {
                None => check_and_replan(&planner, followed, pose, goal, trigger, leeway, &budget),
                Some(why) => match crate::replan::check_remaining(&planner, &trajectory, pose, overlap.as_ref()) {
                    Ok(()) => Outcome::StillLegal,
                    Err(e) => Outcome::Blocked {
                        reason: trigger.blocked(&e.message),
                        error: PlanError::new(e.code, format!("not replanned: {why}; send it a new goal")),
                    },
                },
            });
            // A check that died keeps the trajectory (whether it is legal is not known).
            let outcome = outcome.unwrap_or_else(|why| Outcome::Kept { error: internal_error("the replan", &why) });
            drop(planner); // before saying so, as a goal's plan does
            let _ = done.send(Done::Replan { profile, outcome });
        });
    }

    /// Answers `req`: outputs on success, the status always (both muted while inactive), the
    /// action's result for an action.
    fn finish(&mut self, req: Request, result: Result<Plan, PlanError>) {
        let echo = req.echo();
        self.out.log_answer(&echo, &result, req.reply.name());
        let outline = Outline::of(self.profile_planner(req.profile).config());
        let header = match &result {
            Ok(plan) => {
                self.path_owners.insert(plan, req.profile);
                Some(self.out.plan(req.profile, plan, &outline))
            }
            Err(_) => None,
        };
        let name = self.profile_name(req.profile);
        self.out.status(StatusEvent::Goal, &name, &echo, &result, "", header);
        let header: Header = self.out.header();
        if let Err(e) = req.reply.send(&result, &header, req.client_cancel) {
            r2r::log_warn!(self.logger(), "could not send the action result: {e}");
        }
    }

    // --- Where the robot is ------------------------------------------------------------------

    /// Transforms on `/tf` (`is_static` false) or `/tf_static`.
    #[cfg(ros_tf2_msgs)]
    pub fn on_transforms(&mut self, transforms: &[geo::TransformStamped], is_static: bool) {
        self.now();
        for e in self.frames.add_transforms(transforms, is_static) {
            // Keyed by the kind of refusal and its edge, not the text (which holds stamps), so a
            // publisher sending bad data at its rate is reported once.
            use crate::transform::TransformError as E;
            let key = match &e {
                E::SecondParent { child, .. } => format!("second parent of {child}"),
                E::Loop { parent, child } | E::OldData { parent, child, .. } => format!("{parent}->{child}"),
                E::Invalid(_) => "invalid".into(),
                E::Full(_) => "full".into(),
                _ => "other".into(),
            };
            self.warn_once(format!("tf:{key}"), &format!("ignoring a transform: {e}"));
        }
        let dropped = self.frames.take_dropped_from_before_jump();
        if dropped > 0 {
            self.warn_once(
                "tf:before jump".into(),
                &format!("ignoring {dropped} transform(s) stamped before ROS time jumped back (sent before the jump)"),
            );
        }
    }

    /// The vehicle's pose from `/initialpose` or `/odom`, in any frame (brought into
    /// `global_frame` through TF when a plan starts).
    pub fn on_start(&mut self, source: &'static str, header: &Header, pose: &geo::Pose) {
        if let Err(e) = self.frames.set_received(source, &header.frame_id, &header.stamp, pose) {
            return self.warn_once(format!("{source}:{e}"), &format!("ignoring {source}: {}", e.message));
        }
        // Odometry streams at tens of Hz: log its poses at most once a second, and when its
        // frame changes.
        let now = Instant::now();
        let quiet = self
            .last_odom_log
            .as_ref()
            .is_some_and(|(t, frame)| *frame == header.frame_id && now.duration_since(*t).as_secs_f64() < 1.0);
        if source != "/odom" || !quiet {
            if source == "/odom" {
                self.last_odom_log = Some((now, header.frame_id.clone()));
            }
            let p = &pose.position;
            r2r::log_info!(
                self.logger(),
                "start pose ({:.3}, {:.3}) in {:?} from {source}",
                Coord(p.x),
                Coord(p.y),
                header.frame_id
            );
        }
    }

    /// Nav2's `is_path_valid`: the path's poses checked with the vehicle's footprint on the
    /// current map; invalid when any pose is. No map (or an inactive node) answers invalid with no
    /// indices. While a batch of updates holds the maps, or a parameter change waits for one, the
    /// request waits for it (as Nav2's planner_server waits for its costmap's lock), and is
    /// answered on the map and with the parameters it leaves.
    #[cfg(ros_nav2_msgs)]
    pub fn on_is_path_valid(&mut self, r: r2r::ServiceRequest<r2r::nav2_msgs::srv::IsPathValid::Service>) {
        use r2r::nav2_msgs::srv::IsPathValid;
        // Beyond the bound (or while inactive) answered at once: invalid, as with no map.
        let waits = self.updates.busy() || self.updates.config_waiting();
        if waits && self.active && self.deferred_checks.len() < MAX_DEFERRED_CHECKS {
            return self.deferred_checks.push(r);
        }
        let response = match self.invalid_poses(&r.message.path) {
            Ok(invalid) => IsPathValid::Response {
                is_valid: invalid.is_empty(),
                invalid_pose_indices: invalid.into_iter().map(|i| i.min(i32::MAX as usize) as i32).collect(),
            },
            Err(_) => IsPathValid::Response { is_valid: false, invalid_pose_indices: Vec::new() },
        };
        self.responder.respond("an is_path_valid request", r, response);
    }

    /// Indices of the poses of `path` (any frame TF connects to `global_frame`) where the
    /// vehicle it was planned for (see [`PathOwners`]; else the default profile's) does not fit
    /// on the current map, for Nav2's `is_path_valid`; a pose TF cannot
    /// transform is invalid. As Nav2's planner_server, only the poses from the one nearest the
    /// robot on are checked when the robot's pose is known (those behind it were driven).
    ///
    /// Fails when no map is held, the path is empty, or the node is not active.
    #[cfg(ros_nav2_msgs)]
    fn invalid_poses(&mut self, path: &nav::Path) -> Result<Vec<usize>, PlanError> {
        if !self.active {
            return Err(not_active(self.refused_as()));
        }
        if path.poses.is_empty() {
            return Err(PlanError::new(StatusCode::InvalidInput, "the path has no poses"));
        }
        let mut poses = Vec::with_capacity(path.poses.len());
        let mut untransformable = Vec::new();
        for (i, p) in path.poses.iter().enumerate() {
            // A pose without a frame of its own is in the path's frame.
            let h = if p.header.frame_id.is_empty() { &path.header } else { &p.header };
            match self.frames.to_global("the pose", &h.frame_id, &h.stamp, &p.pose) {
                Ok(pose) => poses.push(pose),
                Err(_) => {
                    untransformable.push(i);
                    // Off the map, hence invalid, without hiding the others.
                    poses.push(Pose2::new(f64::INFINITY, f64::INFINITY, 0.0));
                }
            }
        }
        // Every profile that answered with exactly this path (usually one); a path no answer
        // matches, the default profile's.
        let owners = self.path_owners.owners(path);
        let mut invalid = Vec::new();
        for &profile in owners.as_deref().unwrap_or(&[0]) {
            invalid.extend(crate::replan::invalid_poses(self.profile_planner(profile), &poses)?);
        }
        invalid.extend(untransformable);
        // The poses behind the robot were driven: the robot TF knows is the default profile's,
        // so only its own paths are trimmed so.
        let now = self.now();
        let trimmed = owners.as_deref().is_none_or(|o| o == [0]);
        if let (true, Ok(robot)) = (trimmed, self.frames.robot_pose(now)) {
            let distance = |p: &Pose2| p.point().distance(robot.point());
            let nearest = (0..poses.len())
                .filter(|&i| poses[i].is_finite())
                .min_by(|&a, &b| distance(&poses[a]).total_cmp(&distance(&poses[b])));
            if let Some(nearest) = nearest {
                invalid.retain(|&i| i >= nearest);
            }
        }
        invalid.sort_unstable();
        invalid.dedup();
        Ok(invalid)
    }

    // --- Maps and parameters -----------------------------------------------------------------

    /// A whole map on the map topic.
    pub fn on_map(&mut self, msg: nav::OccupancyGrid) {
        match map_from_msg(&msg, &self.params.global_frame, self.params.planner.max_map_cells) {
            Err(e) => self.refuse(Kind::Map, e),
            Ok(map) => {
                self.updates.push_map(map);
                self.schedule();
            }
        }
    }

    /// A map update on `<map topic>_updates`.
    #[cfg(ros_map_msgs)]
    pub fn on_map_update(&mut self, patch: Result<Patch, PlanError>) {
        match patch.and_then(|p| self.updates.push_patch(p, self.params.planner.max_map_cells)) {
            Ok(()) => self.schedule(),
            Err(e) => self.refuse(Kind::Patch, e),
        }
    }

    /// The parameter services accepted changes (the range checks passed): the planner's part is
    /// applied off the planning path, `replan_period`, `tolerance` and `start_overlap` at once.
    pub fn on_params_changed(&mut self) {
        let wanted = match self.live.lock() {
            Ok(live) => live.params.clone(),
            Err(_) => return r2r::log_error!(self.logger(), "parameter lock poisoned"),
        };
        self.params.replan_period = wanted.replan_period;
        self.params.tolerance = wanted.tolerance;
        self.params.start_overlap = wanted.start_overlap;
        self.queue_configs_of(&wanted);
        self.schedule();
    }

    /// Queues `wanted`'s planner parameters for a rebuild unless they are what the fleet is to
    /// have once the changes on their way land (compared with those, not the fleet's: a value set
    /// back to the fleet's meanwhile would be lost).
    fn queue_configs_of(&mut self, wanted: &NodeParams) {
        let configs: Vec<_> = wanted.profile_configs().into_iter().map(|(_, c)| c).collect();
        let differs = match self.updates.config_on_its_way() {
            Some(coming) => configs.as_slice() != coming,
            None => configs.iter().zip(self.fleet.profiles()).any(|(c, (_, p))| c != p.config()),
        };
        if differs {
            self.updates.push_config(configs);
        }
    }

    /// A batch was applied: the planner holding it takes over; refusals get a status.
    fn on_applied(&mut self, applied: Applied) {
        // The planner parameters the batch tried, if it brought any.
        let attempted = self.updates.running_config().map(<[_]>::to_vec);
        self.updates.finished();
        self.plans_first = true;
        self.fleet = applied.fleet;
        // The parameters in force are the profiles'. Where the batch's parameters did not take
        // (refused, or the batch failed), the live parameters still holding a value it tried are
        // put back to the one in force, announced under the lock (so a tool following
        // /parameter_events ends on the values in force); one set since is kept and queued. This
        // comes before the refusal is logged or published, so whoever reads the parameters on
        // seeing it reads the values in force.
        let in_force: Vec<PlannerConfig> = self.fleet.profiles().map(|(_, p)| p.config().clone()).collect();
        self.params.planner = in_force[0].clone();
        self.params.profiles = in_force[1..].to_vec();
        let mut put_back = Vec::new();
        if let Some(attempted) = attempted.filter(|tried| *tried != in_force) {
            let wanted = self.live.lock().ok().map(|mut live| {
                let (kept, undone) = live.undo(&attempted, &in_force);
                live.params = kept;
                self.out.parameter_events.changed(&undone);
                put_back = undone.into_iter().map(|(name, _)| name).collect();
                live.params.clone()
            });
            if let Some(wanted) = wanted {
                self.queue_configs_of(&wanted);
            }
        }
        let mut changed = false;
        let mut cause = Trigger::ParameterChange;
        for report in applied.reports {
            if report.copied {
                self.map_copies += 1;
            }
            match report.result {
                Ok(text) => {
                    r2r::log_info!(self.logger(), "{text}");
                    changed |= report.changed;
                    if report.changed && report.kind != Kind::Config {
                        cause = Trigger::MapChange;
                    }
                }
                Err(e) => self.refuse(report.kind, e),
            }
        }
        if !put_back.is_empty() {
            r2r::log_warn!(
                self.logger(),
                "parameters put back to the values in force, the rebuild having failed: {}",
                put_back.join(", ")
            );
        }
        if changed {
            self.map_version += 1;
            for slot in &mut self.slots {
                slot.mark_recheck(cause);
            }
            self.clearance_due = true;
            self.warm_tables();
        }
        if std::mem::take(&mut self.clearance_due) {
            self.publish_clearance();
        }
        #[cfg(ros_nav2_msgs)]
        for r in std::mem::take(&mut self.deferred_checks) {
            self.on_is_path_valid(r);
        }
        if std::mem::take(&mut self.configure_after_batch) {
            r2r::log_info!(
                self.logger(),
                "a batch of updates that ran during configure landed: configuring again on top of it"
            );
            if let Err(e) = self.configure() {
                let e =
                    PlanError::new(StatusCode::InvalidInput, format!("configuring again after that batch failed: {e}"));
                self.refuse(Kind::Config, e);
            }
        }
    }

    /// Refuses an update with a log line and a status (code and reason), keeping what is held.
    fn refuse(&mut self, kind: Kind, e: PlanError) {
        let what = kind.refused();
        r2r::log_error!(self.logger(), "{what}, keeping the previous one: {e}");
        let goal = geo::PoseStamped::default();
        let message = format!("{what}: {}", e.message);
        self.out.status(StatusEvent::InputRefused, "", &goal, &Err(PlanError::new(e.code, message)), "", None);
    }

    // --- Jobs --------------------------------------------------------------------------------

    /// The planner of profile `profile` (an index from [`NodeState::submit_for`]).
    fn profile_planner(&self, profile: usize) -> &Planner {
        self.fleet.profiles().nth(profile).map_or(self.fleet.default_planner(), |(_, p)| p)
    }

    /// The name of profile `profile` (its `planner_plugins` entry).
    fn profile_name(&self, profile: usize) -> String {
        self.fleet.names().get(profile).cloned().unwrap_or_default()
    }

    /// Every 100 ms: feedback for a running action goal, and periodic replanning.
    pub fn on_tick(&mut self) {
        for slot in &self.slots {
            if let Some(Running { work: Work::Goal(req, ..), .. }) = &slot.running {
                req.reply.feedback("planning", req.received.elapsed().as_secs_f64());
            }
        }
        self.schedule();
    }

    /// Publishes the diagnostics (only while active, as every output).
    pub fn on_diagnostics(&mut self) {
        if !self.updates.busy() {
            self.map_memory = self.fleet.memory();
        }
        let buffer = self.frames.buffer();
        let memory = self.map_memory.clone();
        let holdings = super::diagnostics::Holdings {
            tf_entries: buffer.len(),
            tf_frames: buffer.frames(),
            queued_updates: self.updates.len(),
            map_copies: self.map_copies,
            action_goals: self.out.action_goals.iter().map(|count| count()).sum(),
            map_bytes: memory.as_ref().map_or_else(Default::default, |(shared, _)| *shared),
            profile_bytes: match memory {
                Some((_, bytes)) => self.fleet.names().iter().cloned().zip(bytes).collect(),
                None => self.fleet.names().iter().map(|n| (n.clone(), Default::default())).collect(),
            },
        };
        self.out.diagnostics(&holdings);
    }

    /// A background job finished.
    pub fn on_done(&mut self, done: Done) {
        match done {
            Done::Goal { profile, result } => {
                let running = self.slots.get_mut(profile).and_then(|s| s.running.take());
                let Some(Running { work: Work::Goal(mut req, echo, goal), map_version, mut stop, .. }) = running else {
                    return r2r::log_error!(self.logger(), "a plan finished but none was running");
                };
                // A cancel the action server accepted while the plan finished, which this loop
                // has not read yet: the client is answered CANCELED, so the plan is neither
                // published nor followed, as for a cancel read in time.
                if !req.client_cancel && req.reply.is_canceling() {
                    req.client_cancel = true;
                    stop = Some(cancelled_by_client());
                }
                // A stopped plan is answered why it was stopped, whatever its result and whether
                // or not the search saw its cancel flag: what stopped it (a newer goal, the client,
                // deactivation) may be read before or after the plan lands, and the order must not
                // decide the answer.
                let result = match stop {
                    Some(why) => Err(why),
                    None => *result,
                };
                // Nav2's goals are one-off answers (its behaviour tree replans by asking again): only
                // a goal of the topic or the node's own action becomes the trajectory the node keeps
                // legal and replans, its profile's. A goal that fails changes nothing: the current
                // trajectory (the last success) is still the one published, so it stays checked
                // and replanned.
                let kept = matches!(req.reply, Reply::Topic | Reply::Own(..));
                if let (Ok(plan), true) = (&result, kept) {
                    self.adopt(profile, echo, goal, plan, map_version);
                }
                self.finish(*req, result);
            }
            Done::Replan { profile, outcome } => {
                let running = self.slots.get_mut(profile).and_then(|s| s.running.take());
                let Some(Running { work: Work::Replan(current, trigger), map_version, stop, .. }) = running else {
                    return r2r::log_error!(self.logger(), "a replan finished but none was running");
                };
                // Stopped, whether before or after it finished (as for a goal's plan).
                if stop.is_none() && self.active {
                    self.replanned(profile, current, trigger, outcome, map_version);
                } else {
                    r2r::log_info!(self.logger(), "{trigger:?} replan stopped by a newer goal or deactivation");
                    // A Nav2 goal is not followed, so the trajectory that was being checked still
                    // is: the change it was checked for must still be looked at.
                    if trigger != Trigger::Periodic {
                        self.slots[profile].mark_recheck(trigger);
                    }
                }
            }
            Done::Update(applied) => self.on_applied(applied),
        }
        self.schedule();
    }

    /// Makes `plan` `profile`'s current trajectory (planned on map `map_version`).
    fn adopt(&mut self, profile: usize, goal_msg: geo::PoseStamped, goal: Pose2, plan: &Plan, map_version: u64) {
        let (trajectory, start_overlap) = (plan.trajectory.clone(), plan.stats.start_overlap);
        let changed = map_version != self.map_version;
        let slot = &mut self.slots[profile];
        slot.current = Some(Current { goal_msg, goal, trajectory, start_overlap });
        slot.last_replan = Instant::now();
        // Planned on a map (or with parameters) that changed meanwhile: check it on the new one
        // (said as a map change: which came last is not kept).
        slot.recheck = changed.then_some(Trigger::MapChange);
    }

    /// Publishes what the check or replan of `profile`'s current trajectory (after `trigger`)
    /// found.
    fn replanned(&mut self, profile: usize, current: Current, trigger: Trigger, outcome: Outcome, map_version: u64) {
        let name = self.profile_name(profile);
        match outcome {
            Outcome::StillLegal => {
                let changed = if trigger == Trigger::ParameterChange { "the parameters" } else { "the map" };
                r2r::log_info!(
                    self.logger(),
                    "{changed} changed; the rest of {name}'s current trajectory is still legal"
                )
            }
            Outcome::Replanned { plan, reason } => {
                let prefix = format!("replanned: {reason}; ");
                let result = Ok(*plan);
                let what =
                    if profile == 0 { "replanned, goal".to_string() } else { format!("replanned, {name}'s goal") };
                self.out.log_answer(&current.goal_msg, &result, &what);
                let mut header = None;
                if let Ok(plan) = &result {
                    self.path_owners.insert(plan, profile);
                    header = Some(self.out.plan(profile, plan, &Outline::of(self.profile_planner(profile).config())));
                    self.adopt(profile, current.goal_msg.clone(), current.goal, plan, map_version);
                }
                self.out.status(StatusEvent::Replan, &name, &current.goal_msg, &result, &prefix, header);
            }
            // A check after a change is kept only when it died (whether the trajectory is legal
            // is then not known).
            Outcome::Kept { error } if trigger == Trigger::Periodic => r2r::log_info!(
                self.logger(),
                "periodic replan of {name}'s trajectory failed ({error}); the current trajectory is still legal"
            ),
            Outcome::Kept { error } => r2r::log_warn!(
                self.logger(),
                "the check of {name}'s trajectory after the change failed ({error}); the trajectory is kept"
            ),
            Outcome::Blocked { error, reason } => {
                let plan = if profile == 0 { "plan".to_string() } else { format!("~/{name}/plan") };
                let prefix = format!("no legal path any more ({reason}); published an empty {plan}: ");
                r2r::log_warn!(self.logger(), "{prefix}{error}");
                self.out.stop(profile);
                self.out.status(StatusEvent::Replan, &name, &current.goal_msg, &Err(error), &prefix, None);
                self.slots[profile].current = None;
            }
        }
    }
}

/// Makes the calling thread 10 nicer than it is (at most 19), so planning comes first; a thread
/// at 19 beside busy processes could starve for minutes, and an absolute value could raise a
/// node that runs nicer than it. Logs a failure (the thread then runs at the node's priority).
fn lower_this_threads_priority(logger: &str) {
    // SAFETY: getpriority and setpriority on this thread's own id read and change nothing else.
    unsafe {
        let tid = libc::gettid() as libc::id_t;
        *libc::__errno_location() = 0;
        let now = libc::getpriority(libc::PRIO_PROCESS, tid);
        let known = now != -1 || *libc::__errno_location() == 0;
        if !known || libc::setpriority(libc::PRIO_PROCESS, tid, (now + 10).min(19)) != 0 {
            let why = std::io::Error::last_os_error();
            r2r::log_warn!(logger, "the table filler runs at the node's priority (cannot lower it: {why})");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_that_panics_reports_instead_of_never_reporting() {
        assert_eq!(caught(|| 7), Ok(7));
        assert_eq!(caught(|| -> u8 { panic!("index {} out of range", 3) }), Err("index 3 out of range".into()));
        assert_eq!(caught(|| -> u8 { panic!("static text") }), Err("static text".into()));
        let e = internal_error("the planner", "boom");
        assert_eq!(e.code, StatusCode::NoValidPath);
        assert!(e.message.contains("internal error") && e.message.contains("boom"), "{e}");
    }

    #[test]
    fn remembered_warnings_stay_within_their_bounds() {
        let mut warned = Warned::default();
        assert!(warned.first_time("tf:a".into()));
        assert!(!warned.first_time("tf:a".into()));
        for i in 0..10 * MAX_WARNED {
            warned.first_time(format!("frame {i} {}", "é".repeat(400)));
            assert!(warned.0.len() <= MAX_WARNED);
            assert!(warned.0.iter().all(|k| k.len() <= MAX_WARNED_KEY_BYTES));
        }
    }
}
