//! The `planner_node` ROS 2 node: map, start and goal in; path, trajectory and one status per
//! goal out.
//!
//! Threads: rcl's executor (`spin_once`) runs on its own thread and only moves messages into
//! channels; one async loop owns the node's state; map preparation and planning run on blocking
//! worker threads with a clone of the [`Planner`] (its map is behind an `Arc`), so messages keep
//! arriving while a plan is computed. A newer goal raises the running plan's cancel flag (its
//! status says SUPERSEDED) and waits as the single pending goal (latest wins; bounded queues).

use super::convert::{
    goal_from_msg, map_from_msg, map_to_msg, path_to_msg, pose_from_msg, status_to_msg, trajectory_to_msg,
};
use crate::clearance::display::Annotation;
use crate::geometry::Pose2;
use crate::lddb::{Lddb, LoadOutcome};
use crate::map::OccupancyMap;
use crate::map_io::load_map_file;
use crate::params::{NodeParams, ParamValue};
use crate::planner::{Budget, Plan, PlanError, Planner, StatusCode, LDDB_BLOCK_SIDE};
use futures::StreamExt;
use r2r::blockstar_planner_msgs::msg as bs;
use r2r::geometry_msgs::msg as geo;
use r2r::nav_msgs::msg as nav;
use r2r::std_msgs::msg::Header;
use r2r::{QosProfile, WrappedTypesupport};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// The node's name (the key of its section in a parameters file).
pub const NODE_NAME: &str = "planner_node";

/// QoS of `/map`: as map_server publishes it (reliable, transient local, depth 1), so a map
/// published before the node started is still delivered.
pub fn map_qos() -> QosProfile {
    QosProfile::default().reliable().transient_local().keep_last(1)
}

/// QoS of the outputs: reliable and transient local, so a client that subscribes a little late
/// (or is still being discovered) still gets the latest answer.
fn latched_qos(depth: usize) -> QosProfile {
    QosProfile::default().reliable().transient_local().keep_last(depth)
}

/// Depth of the `/goal_pose` subscription's queue: a burst of goals up to this many (a client
/// catching up after a pause) is held by the middleware until the node takes it, so every goal
/// gets its status; the default depth of 10 dropped goals silently. Bounded, so memory is too.
pub const GOAL_QUEUE_DEPTH: usize = 1000;

/// QoS of `/goal_pose`: reliable (as RViz publishes), volatile, [`GOAL_QUEUE_DEPTH`] deep.
pub fn goal_qos() -> QosProfile {
    QosProfile::default().reliable().keep_last(GOAL_QUEUE_DEPTH)
}

/// Runs rcl's executor on the calling thread, one `spin_once` at a time, each followed by a
/// token on `spun` that the node's loop takes only when every message channel is empty (its
/// lowest-priority branch). The bounded token channel keeps this thread at most two spins ahead
/// of the loop, so r2r's per-subscription channels (10 deep, full ones drop messages silently)
/// never fill: a backlog waits in the middleware's queues instead, whose depth the QoS sets.
/// Returns when the loop is gone.
fn spin_with_backpressure(node: &mut r2r::Node, spun: mpsc::Sender<()>) {
    loop {
        node.spin_once(Duration::from_millis(20));
        if spun.blocking_send(()).is_err() {
            return;
        }
    }
}

/// A finished background job.
enum Done {
    /// A plan for `goal` finished; `cancelled` is true when a newer goal superseded it.
    Plan { goal: geo::PoseStamped, result: Result<Plan, PlanError>, cancelled: bool },
    /// A map was prepared: the planner holding it, or why it was refused.
    Map(Result<Planner, PlanError>),
}

/// Publishers and the clock.
struct Outputs {
    path: r2r::Publisher<nav::Path>,
    trajectory: r2r::Publisher<bs::Trajectory>,
    status: r2r::Publisher<bs::PlannerStatus>,
    /// `~/clearance`, when `publish_clearance` is set.
    clearance: Option<r2r::Publisher<nav::OccupancyGrid>>,
    clock: r2r::Clock,
    frame: String,
    logger: String,
}

impl Outputs {
    fn header(&mut self) -> Header {
        let stamp = self.clock.get_now().map(|d| r2r::Clock::to_builtin_time(&d)).unwrap_or_default();
        Header { stamp, frame_id: self.frame.clone() }
    }

    fn publish<T: WrappedTypesupport + 'static>(&self, publisher: &r2r::Publisher<T>, msg: &T, what: &str) {
        if let Err(e) = publisher.publish(msg) {
            r2r::log_error!(&self.logger, "could not publish {what}: {e}");
        }
    }

    /// Publishes the obstacle distance of the map `planner` holds on `~/clearance` (when enabled).
    fn clearance(&mut self, planner: &Planner) {
        if self.clearance.is_none() {
            return;
        }
        let stamp = self.header().stamp;
        let (Some(publisher), Some(m)) = (&self.clearance, planner.map()) else { return };
        match crate::clearance::display::to_occupancy(&m.clearance, m.vehicle.capability, Annotation::Distance) {
            Ok(mut grid) => {
                grid.info.frame_id = self.frame.clone();
                self.publish(publisher, &map_to_msg(&grid, stamp), "clearance");
            }
            Err(e) => r2r::log_error!(&self.logger, "cannot display the clearance: {e}"),
        }
    }

    /// Publishes the answer to `goal`: path and trajectory on success, the status always.
    fn answer(&mut self, goal: &geo::PoseStamped, result: &Result<Plan, PlanError>) {
        let header = self.header();
        let p = &goal.pose.position;
        match result {
            Ok(plan) => {
                self.publish(&self.path, &path_to_msg(plan, &header), "/plan");
                self.publish(&self.trajectory, &trajectory_to_msg(&plan.trajectory, &header), "trajectory");
                r2r::log_info!(
                    &self.logger,
                    "goal ({:.3}, {:.3}): SUCCESS, {:.3} m, {} poses, {:.1} ms",
                    p.x,
                    p.y,
                    plan.stats.trajectory_length,
                    plan.poses.len(),
                    plan.stats.planning_time * 1e3
                );
            }
            Err(e) => r2r::log_warn!(&self.logger, "goal ({:.3}, {:.3}): {e}", p.x, p.y),
        }
        self.publish(&self.status, &status_to_msg(result, goal, &header), "status");
    }
}

/// The node's state, owned by the async loop.
struct NodeState {
    params: NodeParams,
    planner: Planner,
    start: Option<Pose2>,
    /// Cancel flag of the plan in flight.
    running_plan: Option<Arc<AtomicBool>>,
    /// The newest goal waiting for the running plan or map preparation to finish.
    pending_goal: Option<(geo::PoseStamped, Pose2)>,
    map_job_running: bool,
    /// The newest map waiting for the running map preparation to finish.
    pending_map: Option<OccupancyMap>,
    warned_frames: std::collections::HashSet<String>,
    last_odom_log: Option<std::time::Instant>,
    out: Outputs,
    done: mpsc::UnboundedSender<Done>,
}

impl NodeState {
    fn logger(&self) -> &str {
        &self.out.logger
    }

    fn on_map(&mut self, msg: nav::OccupancyGrid) {
        match map_from_msg(&msg, &self.params.global_frame, self.params.planner.max_map_cells) {
            Err(e) => self.reject_map(e),
            Ok(map) if self.map_job_running => self.pending_map = Some(map),
            Ok(map) => self.prepare_map(map),
        }
    }

    fn reject_map(&mut self, e: PlanError) {
        r2r::log_error!(self.logger(), "map rejected, keeping the previous one: {e}");
        let goal = geo::PoseStamped::default();
        self.out.answer(&goal, &Err(PlanError::new(e.code, format!("map rejected: {}", e.message))));
    }

    fn prepare_map(&mut self, map: OccupancyMap) {
        self.map_job_running = true;
        let mut planner = self.planner.clone();
        let done = self.done.clone();
        tokio::task::spawn_blocking(move || {
            // Same geometry as the held map (SLAM republishing the whole grid): only the changed
            // area is re-derived; otherwise everything is built anew.
            let result = planner.update_map(map).map(|_| planner);
            let _ = done.send(Done::Map(result));
        });
    }

    fn on_goal(&mut self, msg: geo::PoseStamped) {
        let goal = match goal_from_msg(&msg, &self.params.global_frame) {
            Ok(g) => g,
            Err(e) => return self.out.answer(&msg, &Err(e)),
        };
        if let Some(cancel) = &self.running_plan {
            cancel.store(true, Ordering::Relaxed);
        }
        if self.running_plan.is_some() || self.map_job_running {
            if let Some((old, _)) = self.pending_goal.replace((msg, goal)) {
                self.out.answer(&old, &Err(PlanError::new(StatusCode::Superseded, "a newer goal replaced this one")));
            }
            return;
        }
        self.start_plan(msg, goal);
    }

    fn start_plan(&mut self, msg: geo::PoseStamped, goal: Pose2) {
        if self.planner.map().is_none() {
            let e = PlanError::new(StatusCode::NoMap, "no map has been received or loaded");
            return self.out.answer(&msg, &Err(e));
        }
        let Some(start) = self.start else {
            let e = PlanError::new(StatusCode::NoStart, "no start pose yet (publish /initialpose or /odom)");
            return self.out.answer(&msg, &Err(e));
        };
        let cancel = Arc::new(AtomicBool::new(false));
        self.running_plan = Some(cancel.clone());
        let planner = self.planner.clone();
        let done = self.done.clone();
        tokio::task::spawn_blocking(move || {
            let budget = Budget::new(planner.config().max_planning_time, Some(cancel.clone()));
            let result = planner.plan(start, goal, false, &budget);
            let cancelled = cancel.load(Ordering::Relaxed);
            let _ = done.send(Done::Plan { goal: msg, result, cancelled });
        });
    }

    fn on_start(&mut self, source: &str, header: &Header, pose: &geo::Pose) {
        if header.frame_id != self.params.global_frame {
            // No tf here: a start pose must already be in the planner's frame.
            if self.warned_frames.insert(format!("{source}:{}", header.frame_id)) {
                r2r::log_warn!(
                    self.logger(),
                    "ignoring {source} in frame {:?}: start poses must be in {:?}",
                    header.frame_id,
                    self.params.global_frame
                );
            }
            return;
        }
        match pose_from_msg(pose) {
            Ok(p) => {
                self.start = Some(p);
                // Odometry streams at tens of Hz: log its start poses at most once a second.
                let now = std::time::Instant::now();
                if source != "/odom" || self.last_odom_log.is_none_or(|t| now.duration_since(t).as_secs_f64() >= 1.0) {
                    if source == "/odom" {
                        self.last_odom_log = Some(now);
                    }
                    r2r::log_info!(self.logger(), "start pose ({:.3}, {:.3}, {:.3}) from {source}", p.x, p.y, p.yaw);
                }
            }
            Err(e) => r2r::log_warn!(self.logger(), "ignoring {source}: {e}"),
        }
    }

    fn on_done(&mut self, done: Done) {
        match done {
            Done::Plan { goal, result, cancelled } => {
                self.running_plan = None;
                // A plan that finished after a newer goal arrived is stale whatever its result.
                let result = if cancelled {
                    Err(PlanError::new(StatusCode::Superseded, "a newer goal replaced this one"))
                } else {
                    result
                };
                self.out.answer(&goal, &result);
            }
            Done::Map(Ok(planner)) => {
                self.map_job_running = false;
                if let Some(m) = planner.map() {
                    let i = &m.map.info;
                    r2r::log_info!(self.logger(), "map {}x{} at {} m/cell in use", i.width, i.height, i.resolution);
                }
                self.out.clearance(&planner);
                self.planner = planner;
            }
            Done::Map(Err(e)) => {
                self.map_job_running = false;
                self.reject_map(e);
            }
        }
        if let Some(map) = self.pending_map.take() {
            self.prepare_map(map);
        } else if self.running_plan.is_none() && !self.map_job_running {
            if let Some((msg, goal)) = self.pending_goal.take() {
                self.start_plan(msg, goal);
            }
        }
    }
}

fn read_params(node: &r2r::Node) -> Result<NodeParams, PlanError> {
    let params = node.params.lock().map_err(|_| PlanError::new(StatusCode::InvalidInput, "parameter lock poisoned"))?;
    NodeParams::from_lookup(|name| {
        params.get(name).and_then(|p| match &p.value {
            r2r::ParameterValue::NotSet => None,
            r2r::ParameterValue::Bool(b) => Some(ParamValue::Bool(*b)),
            r2r::ParameterValue::Integer(i) => Some(ParamValue::Integer(*i)),
            r2r::ParameterValue::Double(d) => Some(ParamValue::Double(*d)),
            r2r::ParameterValue::String(s) => Some(ParamValue::String(s.clone())),
            _ => Some(ParamValue::Other("an array")),
        })
    })
}

/// A planner for `params` whose LDDB comes from the cache (or is built), with what happened
/// logged: a cache file that was corrupt and rebuilt is a warning, so it is noticed.
fn planner_with_logged_lddb(params: &NodeParams, logger: &str) -> Result<Planner, String> {
    params.planner.validate().map_err(|e| e.to_string())?;
    let (lddb, report) =
        Lddb::load_or_build(None, LDDB_BLOCK_SIDE, &|_, _| {}).map_err(|e| format!("local distance database: {e}"))?;
    match report.outcome() {
        LoadOutcome::Rebuilt => r2r::log_warn!(logger, "{}", report.summary()),
        LoadOutcome::Loaded | LoadOutcome::BuiltFresh => r2r::log_info!(logger, "{}", report.summary()),
    }
    Planner::with_lddb(params.planner.clone(), Arc::new(lddb)).map_err(|e| e.to_string())
}

/// Runs the node until the process is stopped. Reads `--ros-args` (parameters file, remappings)
/// from the command line.
///
/// Fails with a message when ROS cannot be initialised or a parameter is invalid.
pub fn run() -> Result<(), String> {
    let ctx = r2r::Context::create().map_err(|e| format!("cannot initialise ROS: {e}"))?;
    let mut node = r2r::Node::create(ctx, NODE_NAME, "").map_err(|e| format!("cannot create the node: {e}"))?;
    let logger = node.logger().to_string();
    let params = read_params(&node).map_err(|e| e.to_string())?;
    let mut planner = planner_with_logged_lddb(&params, &logger)?;
    if !params.map_file.is_empty() {
        let path = std::path::Path::new(&params.map_file);
        match load_map_file(path, &params.global_frame, params.planner.max_map_cells)
            .map_err(PlanError::from)
            .and_then(|m| planner.set_map(m))
        {
            Ok(()) => r2r::log_info!(&logger, "loaded map_file {}", path.display()),
            Err(e) => r2r::log_error!(&logger, "cannot use map_file {}: {e}", path.display()),
        }
    }
    let e = |what: &str, err: r2r::Error| format!("cannot create {what}: {err}");
    let mut maps = node.subscribe::<nav::OccupancyGrid>("/map", map_qos()).map_err(|x| e("/map", x))?;
    let mut goals = node.subscribe::<geo::PoseStamped>("/goal_pose", goal_qos()).map_err(|x| e("/goal_pose", x))?;
    let mut initial = node
        .subscribe::<geo::PoseWithCovarianceStamped>("/initialpose", QosProfile::default())
        .map_err(|x| e("/initialpose", x))?;
    // Best effort matches both reliable and best-effort odometry publishers.
    let mut odom = node
        .subscribe::<nav::Odometry>("/odom", QosProfile::default().best_effort().keep_last(5))
        .map_err(|x| e("/odom", x))?;
    let out = Outputs {
        path: node.create_publisher("/plan", latched_qos(1)).map_err(|x| e("/plan", x))?,
        trajectory: node.create_publisher("~/trajectory", latched_qos(1)).map_err(|x| e("~/trajectory", x))?,
        status: node.create_publisher("~/status", latched_qos(20)).map_err(|x| e("~/status", x))?,
        clearance: match params.publish_clearance {
            true => Some(node.create_publisher("~/clearance", latched_qos(1)).map_err(|x| e("~/clearance", x))?),
            false => None,
        },
        clock: r2r::Clock::create(r2r::ClockType::RosTime).map_err(|x| e("the clock", x))?,
        frame: params.global_frame.clone(),
        logger: logger.clone(),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|err| format!("cannot start the async runtime: {err}"))?;
    let (done, mut done_rx) = mpsc::unbounded_channel();
    let mut state = NodeState {
        params,
        planner,
        start: None,
        running_plan: None,
        pending_goal: None,
        map_job_running: false,
        pending_map: None,
        warned_frames: Default::default(),
        last_odom_log: None,
        out,
        done,
    };
    state.out.clearance(&state.planner);
    r2r::log_info!(&logger, "ready");
    runtime.block_on(async move {
        // rcl's executor on its own thread: it only hands messages to the channels above.
        let (spun, mut spun_rx) = mpsc::channel(1);
        tokio::task::spawn_blocking(move || spin_with_backpressure(&mut node, spun));
        loop {
            // Biased: the spin token (last) is taken only when no message is waiting.
            tokio::select! {
                biased;
                Some(d) = done_rx.recv() => state.on_done(d),
                Some(m) = maps.next() => state.on_map(m),
                Some(g) = goals.next() => state.on_goal(g),
                Some(p) = initial.next() => state.on_start("/initialpose", &p.header, &p.pose.pose),
                Some(o) = odom.next() => state.on_start("/odom", &o.header, &o.pose.pose),
                Some(()) = spun_rx.recv() => {}
                else => break,
            }
        }
    });
    Ok(())
}
