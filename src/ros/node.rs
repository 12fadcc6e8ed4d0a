//! The `planner_node` ROS 2 node: map, patches, start and goals in (topics and the
//! `~/compute_path` action); path, trajectory, display and one status per goal (and per replan)
//! out.
//!
//! Threads: rcl's executor (`spin_once`) runs on its own thread and only moves messages into
//! channels; one async loop owns the node's state ([`super::state::NodeState`]); map updates and
//! planning run on blocking worker threads with clones of the [`Planner`] (its map is behind an
//! `Arc`, copied on write), so messages keep arriving while a plan is computed.

use super::live_params::{from_r2r, LiveParams};
use super::outputs::Outputs;
use super::state::NodeState;
use crate::lddb::{Lddb, LoadOutcome};
use crate::map_io::load_map_file;
use crate::params::NodeParams;
use crate::planner::{PlanError, Planner, StatusCode, LDDB_BLOCK_SIDE};
use futures::StreamExt;
use r2r::blockstar_planner_msgs::action::ComputePath;
use r2r::blockstar_planner_msgs::msg as bs;
use r2r::geometry_msgs::msg as geo;
use r2r::nav_msgs::msg as nav;
use r2r::QosProfile;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// The node's name (the key of its section in a parameters file).
pub const NODE_NAME: &str = "planner_node";

/// QoS of `/map`: as map_server publishes it (reliable, transient local, depth 1), so a map
/// published before the node started is still delivered.
pub fn map_qos() -> QosProfile {
    QosProfile::default().reliable().transient_local().keep_last(1)
}

/// QoS of `/map_updates`: reliable (a lost patch would leave the map wrong until the next full
/// map) and volatile (patches only make sense on top of the map they follow), with room for a
/// burst of 10 patches while the executor thread is busy.
pub fn patch_qos() -> QosProfile {
    QosProfile::default().reliable().volatile().keep_last(10)
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
/// Returns when `spinning` is cleared or the loop is gone (dropping the node, so DDS peers see
/// it leave).
fn spin_with_backpressure(mut node: r2r::Node, spun: mpsc::Sender<()>, spinning: Arc<AtomicBool>) {
    while spinning.load(Ordering::Relaxed) {
        node.spin_once(Duration::from_millis(20));
        if spun.blocking_send(()).is_err() {
            return;
        }
    }
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

fn read_params(node: &r2r::Node) -> Result<NodeParams, PlanError> {
    let params = node.params.lock().map_err(|_| PlanError::new(StatusCode::InvalidInput, "parameter lock poisoned"))?;
    NodeParams::from_lookup(|name| params.get(name).and_then(|p| from_r2r(&p.value)))
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
    let mut patches = node.subscribe::<bs::GridPatch>("/map_updates", patch_qos()).map_err(|x| e("/map_updates", x))?;
    let mut goals = node.subscribe::<geo::PoseStamped>("/goal_pose", goal_qos()).map_err(|x| e("/goal_pose", x))?;
    let mut initial = node
        .subscribe::<geo::PoseWithCovarianceStamped>("/initialpose", QosProfile::default())
        .map_err(|x| e("/initialpose", x))?;
    // Best effort matches both reliable and best-effort odometry publishers.
    let mut odom = node
        .subscribe::<nav::Odometry>("/odom", QosProfile::default().best_effort().keep_last(5))
        .map_err(|x| e("/odom", x))?;
    let mut action_goals =
        node.create_action_server::<ComputePath::Action>("~/compute_path").map_err(|x| e("~/compute_path", x))?;
    let live = Arc::new(Mutex::new(LiveParams { params: params.clone() }));
    let (param_services, mut param_events) =
        node.make_derived_parameter_handler(live.clone()).map_err(|x| e("the parameter services", x))?;
    let out = Outputs {
        path: node.create_publisher("/plan", latched_qos(1)).map_err(|x| e("/plan", x))?,
        trajectory: node.create_publisher("~/trajectory", latched_qos(1)).map_err(|x| e("~/trajectory", x))?,
        status: node.create_publisher("~/status", latched_qos(20)).map_err(|x| e("~/status", x))?,
        any_angle: node.create_publisher("~/any_angle_plan", latched_qos(1)).map_err(|x| e("~/any_angle_plan", x))?,
        markers: node.create_publisher("~/markers", latched_qos(1)).map_err(|x| e("~/markers", x))?,
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
    let (cancels, mut cancel_rx) = mpsc::unbounded_channel();
    let mut state = NodeState::new(params, live, planner, out, done, cancels);
    let planner = state.planner.clone();
    state.out.clearance(&planner);
    r2r::log_info!(&logger, "ready");
    let spinning = Arc::new(AtomicBool::new(true));
    let spin_flag = spinning.clone();
    runtime.block_on(async move {
        // rcl's executor on its own thread: it only hands messages to the channels above, paced
        // by the loop below (see spin_with_backpressure).
        let (spun, mut spun_rx) = mpsc::channel(1);
        tokio::task::spawn_blocking(move || spin_with_backpressure(node, spun, spin_flag));
        tokio::spawn(param_services);
        // Action feedback and periodic replanning.
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        // SIGINT (Ctrl-C, `ros2 launch` stopping, a test's teardown) ends the node cleanly.
        let interrupted = tokio::signal::ctrl_c();
        tokio::pin!(interrupted);
        loop {
            // Biased: finished jobs first, the spin token (last) only when no message waits.
            tokio::select! {
                biased;
                _ = &mut interrupted => {
                    r2r::log_info!(&logger, "interrupted, shutting down");
                    break;
                }
                Some(d) = done_rx.recv() => state.on_done(d),
                // The subscriptions end when rcl shuts down: the node exits too.
                m = maps.next() => match m {
                    Some(m) => state.on_map(m),
                    None => break,
                },
                Some(p) = patches.next() => state.on_patch(p),
                Some(g) = goals.next() => state.on_goal(g),
                Some(g) = action_goals.next() => state.on_action_goal(g),
                Some(uuid) = cancel_rx.recv() => state.on_cancel(uuid),
                Some(p) = initial.next() => state.on_start("/initialpose", &p.header, &p.pose.pose),
                Some(o) = odom.next() => state.on_start("/odom", &o.header, &o.pose.pose),
                Some((name, value)) = param_events.next() => state.on_param_event(&name, &value),
                _ = tick.tick() => state.on_tick(),
                Some(()) = spun_rx.recv() => {}
            }
        }
    });
    spinning.store(false, Ordering::Relaxed);
    // Plans still running are abandoned; the executor thread ends within one spin.
    runtime.shutdown_timeout(Duration::from_secs(1));
    Ok(())
}
