//! The `planner_node` ROS 2 node: map and map updates, transforms, start poses and goals in
//! (topic, the node's `~/compute_path` action and Nav2's planner actions); path, trajectory,
//! display and one status per goal (and per replan) out; the lifecycle services.
//!
//! Threads: rcl's executor (`spin_once`) runs on its own thread and only moves messages into
//! channels; one async loop owns the node's state (`super::state::NodeState`); map updates and
//! planning run on blocking worker threads with clones of the
//! [`Planner`](crate::planner::Planner) (its map is behind an `Arc`, copied on write), so
//! messages keep arriving while a plan is computed.

use super::action_server;
use super::clock::NodeClock;
use super::live_params::{from_r2r, LiveParams};
use super::outputs::{Outputs, PlanTopics};
use super::responder::Responder;
use super::spin_gate::SpinGate;
use super::state::NodeState;
use crate::lddb::{Lddb, LoadOutcome};
use crate::params::NodeParams;
use crate::planner::{Fleet, PlanError, StatusCode, LDDB_BLOCK_SIDE};
use futures::StreamExt;
use r2r::blockstar_planner_msgs::action::ComputePath;
use r2r::geometry_msgs::msg as geo;
use r2r::nav_msgs::msg as nav;
use r2r::QosProfile;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// The node's name (the key of its section in a parameters file).
pub const NODE_NAME: &str = "planner_node";

/// QoS of the map topic (and `/tf_static`): as map_server publishes it (reliable, transient local, depth 1), so a map
/// published before the node started is still delivered.
pub fn map_qos() -> QosProfile {
    QosProfile::default().reliable().transient_local().keep_last(1)
}

/// QoS of `<map topic>_updates`: reliable (a lost update would leave the map wrong until the next full
/// map) and volatile (patches only make sense on top of the map they follow), [`PATCH_QUEUE_DEPTH`]
/// deep.
pub fn patch_qos() -> QosProfile {
    QosProfile::default().reliable().volatile().keep_last(PATCH_QUEUE_DEPTH)
}

/// Map updates the middleware keeps for the node while it has not taken them. r2r takes one
/// message per subscription per spin of the executor (`spin_gate`), so on a loaded machine the
/// node takes them at its spin rate (one every 20 ms or so in the run below, three test runs
/// sharing the 2 cores), and a reliable reader that keeps the last N drops the oldest unread: at
/// 10, a burst of 60 patches published at once lost 14 of them (a loaded clean-checkout run's
/// `test_site_scale`). 100 holds a burst of 100 patches; Nav2's costmap publishes one update a
/// cycle. The middleware holds each as it came (their cells also count towards `max_map_cells`
/// once the node has taken them into its own queue).
pub const PATCH_QUEUE_DEPTH: usize = 100;

/// QoS of the outputs: reliable and transient local, so a client that subscribes a little late
/// (or is still being discovered) still gets the latest answer.
fn latched_qos(depth: usize) -> QosProfile {
    QosProfile::default().reliable().transient_local().keep_last(depth)
}

/// Depth of the `/goal_pose` subscription's queue: a burst of goals up to this many (a client
/// catching up after a pause) is held by the middleware until the node takes it, so every goal
/// gets its status; the default depth of 10 dropped goals silently. Bounded, so memory is too.
pub const GOAL_QUEUE_DEPTH: usize = 1000;

/// History of `~/status`: as deep as the goal queue, so every answer to a burst the node
/// accepted can still be repaired for a reader that matched the writer late. At 20, a burst of
/// 500 goals sent the moment the client's status reader was being matched lost the first answer
/// (its repair asked for a sample 499 later ones had pushed out; a loaded clean-checkout run,
/// fc87). A subscriber that joins late is replayed at most this many answers, each stamped.
pub const STATUS_HISTORY_DEPTH: usize = GOAL_QUEUE_DEPTH;

/// QoS of `/goal_pose`: reliable (as RViz publishes), volatile, [`GOAL_QUEUE_DEPTH`] deep.
pub fn goal_qos() -> QosProfile {
    QosProfile::default().reliable().keep_last(GOAL_QUEUE_DEPTH)
}

/// Depth of the middleware's queue of each of the node's services (an action's goal, cancel and
/// result services among them). rcl's default for services keeps the last 10: requests from more
/// clients than that, arriving while the node takes one per service per executor spin (the spin
/// is paced by the node's loop), overwrote the oldest silently, and their clients never heard
/// back. Bounded, and memory only while requests wait.
pub const SERVICE_QUEUE_DEPTH: usize = 1000;

/// QoS of the node's services: rcl's service defaults (reliable, volatile) [`SERVICE_QUEUE_DEPTH`]
/// deep.
pub fn service_qos() -> QosProfile {
    QosProfile::services_default().keep_last(SERVICE_QUEUE_DEPTH)
}

/// Runs rcl's executor on the calling thread, one `spin_once` at a time, each followed by the
/// acknowledgement of every consumer of r2r's channels (`gate`: the node's loop, which
/// acknowledges in its lowest-priority branch, when no message waits, and each action server's
/// task), so r2r's per-subscription and per-service channels (10 deep, full ones drop messages
/// silently) never fill: a backlog waits in the middleware's queues instead, whose depth the QoS
/// sets. Returns when the gate is stopped or its consumers are gone, dropping the node on this
/// thread (so DDS peers see it leave).
fn spin_with_backpressure(mut node: r2r::Node, gate: SpinGate) {
    loop {
        node.spin_once(Duration::from_millis(20));
        if !gate.after_spin() {
            return;
        }
    }
}

/// Blocking threads of the node's runtime: plans (one per vehicle profile at a time, replans
/// included) and batches of map updates (one at a time, between plans) run on them, at most this
/// many at once; more wait their turn. Capped, so the per-thread working memory of the planner
/// (the Dubins memo; the search scratch is pooled, `planner::search_pool`) is held by a bounded
/// number of threads. rcl's executor, the responders and the table filler have threads of their
/// own, outside this count.
pub const PLANNING_THREADS: usize = 3;

/// The node's tokio runtime: one worker for the select loop and the action servers' tasks (they
/// only move messages and answers), and [`PLANNING_THREADS`] blocking threads for the work.
fn node_runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .max_blocking_threads(PLANNING_THREADS)
        // And kept: by default an idle blocking thread exits after 10 s and the next busy moment
        // starts a new one, which builds its working memory again (a few MB on a small map).
        // The heap would then rise and fall with the load instead of settling once the threads
        // are in place.
        .thread_keep_alive(std::time::Duration::from_secs(24 * 3600))
        .enable_all()
        .build()
        .map_err(|err| format!("cannot start the async runtime: {err}"))
}

/// The environment variable of a fault injected for tests (unset in use): the loop holds each
/// finished plan, replan or batch this many milliseconds before it takes it in, while the action
/// servers and the parameter services go on serving (the loop, and so the lifecycle services,
/// wait), as on a loaded machine where a client's cancel is accepted between a plan's end and
/// the loop's turn. The ROS tests provoke such races with it (README, "Tests").
pub const FAULT_HOLD_FINISHED_MS: &str = "BLOCKSTAR_FAULT_HOLD_FINISHED_MS";

/// The environment variable of a fault injected for tests (unset in use): each goal's plan, once
/// it has ended, waits this many milliseconds on its worker thread before it is handed to the
/// loop, which goes on serving meanwhile (lifecycle transitions included), as a plan that
/// notices a stop late: a goal stopped by `deactivate` then returns after an `activate` sent
/// right behind it. The plan's answer is unchanged; only its moment is.
pub const FAULT_HOLD_PLAN_MS: &str = "BLOCKSTAR_FAULT_HOLD_PLAN_MS";

/// The hold a fault variable (`FAULT_*_MS`) asks for, logged as a warning when set (a value
/// that is not a number of milliseconds is ignored, and said so); `held` says what is held.
fn fault_hold(variable: &str, held: &str, logger: &str) -> Option<Duration> {
    let value = std::env::var(variable).ok()?;
    match value.trim().parse::<u64>() {
        Ok(ms) => {
            r2r::log_warn!(logger, "fault injection: {held} are held {ms} ms ({variable})");
            Some(Duration::from_millis(ms))
        }
        Err(_) => {
            r2r::log_warn!(logger, "{variable}={value:?} is not a number of milliseconds: ignored");
            None
        }
    }
}

/// The vehicle profiles of `params` (`planner_plugins`), sharing an LDDB that comes from the
/// cache (or is built), with what happened logged: a cache file that was corrupt and rebuilt is
/// a warning, so it is noticed.
fn fleet_with_logged_lddb(params: &NodeParams, logger: &str) -> Result<Fleet, String> {
    params.validate().map_err(|e| e.to_string())?;
    let (lddb, report) =
        Lddb::load_or_build(None, LDDB_BLOCK_SIDE, &|_, _| {}).map_err(|e| format!("local distance database: {e}"))?;
    match report.outcome() {
        LoadOutcome::Rebuilt => r2r::log_warn!(logger, "{}", report.summary()),
        LoadOutcome::Loaded | LoadOutcome::BuiltFresh => r2r::log_info!(logger, "{}", report.summary()),
    }
    Fleet::with_lddb(params.profile_configs(), Arc::new(lddb)).map_err(|e| e.to_string())
}

fn read_params(node: &r2r::Node) -> Result<NodeParams, PlanError> {
    let params = node.params.lock().map_err(|_| PlanError::new(StatusCode::InvalidInput, "parameter lock poisoned"))?;
    NodeParams::from_lookup(|name| params.get(name).and_then(|p| from_r2r(&p.value)))
}

/// Whether the node runs on simulated time (`use_sim_time`, ROS's standard parameter, read once
/// at start; rclcpp also follows a later change, this node refuses one: `live_params`).
fn use_sim_time(node: &r2r::Node) -> bool {
    let params = node.params.lock();
    params.is_ok_and(|p| matches!(p.get("use_sim_time").map(|p| &p.value), Some(r2r::ParameterValue::Bool(true))))
}

/// A stream that never yields: the select arm of an input this build does not have.
#[cfg(not(all(ros_tf2_msgs, ros_map_msgs, ros_nav2_msgs)))]
fn never<T>() -> futures::stream::Pending<T> {
    futures::stream::pending()
}

/// The ROS context, initialised from the command line's `--ros-args`. r2r panics where rcl
/// refuses them (a `--params-file` rcl cannot parse: `Couldn't parse params file`), which would
/// end the node with a backtrace; that panic is caught here and returned as the one-line error
/// every other refusal at start-up gives. No other thread runs yet, so the panic hook is
/// silenced for the call and restored after it.
fn create_context() -> Result<r2r::Context, String> {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let created = std::panic::catch_unwind(r2r::Context::create);
    std::panic::set_hook(hook);
    match created {
        Ok(ctx) => ctx.map_err(|e| format!("cannot initialise ROS: {e}")),
        Err(payload) => {
            let why = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "rcl_init failed".into());
            Err(format!("cannot initialise ROS (rcl_init; a --params-file or other --ros-args it refused?): {why}"))
        }
    }
}

/// Runs the node until the process is stopped. Reads `--ros-args` (parameters file, remappings,
/// namespace) from the command line. Every name is relative to the node's namespace, as
/// planner_server's are, except `/tf` and `/tf_static`.
///
/// Call it first in `main`, before any other thread starts: it chooses the Fast DDS profile
/// (`dds_profile`) through the environment before ROS is initialised.
///
/// Fails with a message when ROS cannot be initialised or a parameter is invalid.
pub fn run() -> Result<(), String> {
    let profile = super::dds_profile::choose();
    let ctx = create_context()?;
    let mut node = r2r::Node::create(ctx, NODE_NAME, "").map_err(|e| format!("cannot create the node: {e}"))?;
    let logger = node.logger().to_string();
    super::rust_log::install(&logger);
    match profile.message() {
        (true, line) => r2r::log_info!(&logger, "{line}"),
        (false, line) => r2r::log_warn!(&logger, "{line}"),
    }
    let missing = env!("BLOCKSTAR_MISSING_INTERFACES");
    if !missing.is_empty() {
        r2r::log_warn!(
            &logger,
            "built without {missing}: no {} (README, \"Interfaces the wheels lack\")",
            [("tf2_msgs", "TF"), ("map_msgs", "map updates"), ("nav2_msgs", "Nav2 planner actions and is_path_valid")]
                .iter()
                .filter(|(p, _)| missing.split(',').any(|m| m == *p))
                .map(|(_, what)| *what)
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let params = read_params(&node).map_err(|e| e.to_string())?;
    let fleet = fleet_with_logged_lddb(&params, &logger)?;
    let e = |what: &str, err: r2r::Error| format!("cannot create {what}: {err}");
    let map_topic = params.map_topic.clone();
    let mut maps = node.subscribe::<nav::OccupancyGrid>(&map_topic, map_qos()).map_err(|x| e(&map_topic, x))?;
    #[cfg(ros_map_msgs)]
    let mut map_updates = {
        let updates_topic = format!("{map_topic}_updates");
        node.subscribe::<r2r::map_msgs::msg::OccupancyGridUpdate>(&updates_topic, patch_qos())
            .map_err(|x| e(&updates_topic, x))?
    };
    #[cfg(not(ros_map_msgs))]
    let mut map_updates = never::<()>();
    let mut goals = node.subscribe::<geo::PoseStamped>("goal_pose", goal_qos()).map_err(|x| e("goal_pose", x))?;
    let mut initial = node
        .subscribe::<geo::PoseWithCovarianceStamped>("initialpose", QosProfile::default())
        .map_err(|x| e("initialpose", x))?;
    // Best effort matches both reliable and best-effort odometry publishers.
    let mut odom = node
        .subscribe::<nav::Odometry>("odom", QosProfile::default().best_effort().keep_last(5))
        .map_err(|x| e("odom", x))?;
    #[cfg(ros_tf2_msgs)]
    let (mut tf, mut tf_static) = (
        node.subscribe::<r2r::tf2_msgs::msg::TFMessage>("/tf", QosProfile::default().keep_last(100))
            .map_err(|x| e("/tf", x))?,
        node.subscribe::<r2r::tf2_msgs::msg::TFMessage>("/tf_static", map_qos().keep_last(100))
            .map_err(|x| e("/tf_static", x))?,
    );
    #[cfg(not(ros_tf2_msgs))]
    let (mut tf, mut tf_static) = (never::<()>(), never::<()>());
    // The node's clock: with use_sim_time, the time on /clock (read here, not by r2r: see
    // clock), so TF stamps of a simulation or a bag and the node's "now" agree.
    let clock = NodeClock::new(&node, use_sim_time(&node));
    let mut clock_msgs = match clock.is_simulated() {
        true => node
            .subscribe::<r2r::rosgraph_msgs::msg::Clock>("/clock", QosProfile::default().best_effort().keep_last(1))
            .map_err(|x| e("/clock", x))?
            .boxed(),
        false => futures::stream::pending().boxed(),
    };
    // The action servers (the project's own, with bounded memory: see action_server) send every
    // accepted cancel request's goal id here; their tasks run on the runtime below.
    let (cancels, mut cancel_rx) = mpsc::unbounded_channel();
    // Every task reading r2r's channels acknowledges each spin (see spin_with_backpressure).
    let mut gate = SpinGate::new();
    // Every service response goes out on the responder threads (see responder).
    let (responder, responder_threads) =
        Responder::start(&logger).map_err(|err| format!("cannot start the responder threads: {err}"))?;
    let mut servers = action_server::Servers::new(clock.clone(), cancels, responder.clone());
    let mut own_goals = servers.add::<ComputePath::Action>(&mut node, "~/compute_path", gate.consumer())?;
    #[cfg(ros_nav2_msgs)]
    let (mut to_pose_goals, mut through_goals, mut path_checks) = {
        use r2r::nav2_msgs::{action, srv};
        let to_pose =
            servers.add::<action::ComputePathToPose::Action>(&mut node, "compute_path_to_pose", gate.consumer())?;
        let through = servers.add::<action::ComputePathThroughPoses::Action>(
            &mut node,
            "compute_path_through_poses",
            gate.consumer(),
        )?;
        let checks = node
            .create_service::<srv::IsPathValid::Service>("is_path_valid", service_qos())
            .map_err(|x| e("is_path_valid", x))?;
        (to_pose, through, checks)
    };
    #[cfg(not(ros_nav2_msgs))]
    let (mut to_pose_goals, mut through_goals, mut path_checks) = (never::<()>(), never::<()>(), never::<()>());
    let (mut lifecycle, mut lc) =
        super::lifecycle::create(&mut node, &logger, responder.clone()).map_err(|x| e("the lifecycle services", x))?;
    let live = Arc::new(Mutex::new(LiveParams { params: params.clone(), use_sim_time: clock.is_simulated() }));
    let (param_task, parameter_events, mut params_changed) = super::param_services::create(
        &mut node,
        live.clone(),
        clock.clone(),
        responder.clone(),
        &logger,
        gate.consumer(),
    )
    .map_err(|x| e("the parameter services", x))?;
    let mut plans = Vec::new();
    for (profile, name) in params.profile_names().iter().enumerate() {
        let [path, trajectory, any_angle, markers] = PlanTopics::names(profile, name);
        plans.push(PlanTopics {
            path: node.create_publisher(&path, latched_qos(1)).map_err(|x| e(&path, x))?,
            trajectory: node.create_publisher(&trajectory, latched_qos(1)).map_err(|x| e(&trajectory, x))?,
            any_angle: node.create_publisher(&any_angle, latched_qos(1)).map_err(|x| e(&any_angle, x))?,
            markers: node.create_publisher(&markers, latched_qos(1)).map_err(|x| e(&markers, x))?,
        });
    }
    let out = Outputs {
        plans,
        status: node.create_publisher("~/status", latched_qos(STATUS_HISTORY_DEPTH)).map_err(|x| e("~/status", x))?,
        // The topic diagnostic_updater publishes on: absolute, so an aggregator finds every node's.
        diagnostics: node
            .create_publisher("/diagnostics", QosProfile::default().keep_last(10))
            .map_err(|x| e("/diagnostics", x))?,
        node_name: node.name().map_err(|x| e("the node's name", x))?,
        action_goals: servers.counts,
        clearance: match params.publish_clearance {
            true => Some(node.create_publisher("~/clearance", latched_qos(1)).map_err(|x| e("~/clearance", x))?),
            false => None,
        },
        clock: clock.clone(),
        frame: params.global_frame.clone(),
        logger: logger.clone(),
        parameter_events,
        enabled: false,
    };
    let runtime = node_runtime()?;
    let (done, mut done_rx) = mpsc::unbounded_channel();
    let autostart = params.autostart;
    let hold_finished = fault_hold(FAULT_HOLD_FINISHED_MS, "finished jobs", &logger);
    let hold_plan = fault_hold(FAULT_HOLD_PLAN_MS, "goals' plans, once ended,", &logger);
    let stop_executor = gate.stopper();
    let stop_logger = logger.clone();
    let executor = runtime.block_on(async move {
        let mut state = NodeState::new(params, live, fleet, out, done, responder.clone());
        state.hold_plans(hold_plan);
        for task in servers.tasks {
            tokio::spawn(task);
        }
        tokio::spawn(param_task);
        if autostart {
            use crate::lifecycle::{Transition, TransitionRequest};
            let configured = lifecycle.change(TransitionRequest::Id(Transition::Configure.id()), &mut state);
            if configured {
                lifecycle.change(TransitionRequest::Id(Transition::Activate.id()), &mut state);
            }
            r2r::log_info!(&logger, "ready ({})", lifecycle.state().label());
        } else {
            r2r::log_info!(&logger, "ready (unconfigured: autostart is false, waiting for a lifecycle manager)");
        }
        // rcl's executor on its own thread: it only hands messages to the channels above, paced
        // by the loop below (see spin_with_backpressure).
        let mut spun = gate.consumer();
        let executor = std::thread::Builder::new()
            .name("rcl-executor".into())
            .spawn(move || spin_with_backpressure(node, gate))
            .map_err(|err| format!("cannot start the executor thread: {err}"))?;
        // Action feedback and periodic replanning.
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let mut diagnostics = tokio::time::interval(Duration::from_secs_f64(super::diagnostics::PERIOD_S));
        diagnostics.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        // SIGINT (Ctrl-C, `ros2 launch` stopping, a test's teardown) ends the node cleanly.
        let interrupted = tokio::signal::ctrl_c();
        tokio::pin!(interrupted);
        // Finished jobs and inputs take turns: after a finished job, every message handed over
        // is read before the next finished job. Taking in a finished job can start the next (a
        // batch lands, the updates waiting start another), and under load that one can land
        // before the loop polls again: were finished jobs always first, a stream of updates would
        // keep a goal, a cancel or a start pose unread for as long as it lasts. The inputs' turn
        // ends, bounded, once the messages are all read, those handed over during it too: rcl's
        // executor hands over at most one message per reader per spin, and it spins only when
        // the loop acknowledges (the last branch, not reached during the turn) or after the
        // gate's timeout (1 s).
        let mut inputs_turn = false;
        loop {
            // Biased: finished jobs first, unless it is the inputs' turn; the spin token last,
            // only when no message waits.
            tokio::select! {
                biased;
                _ = &mut interrupted => {
                    r2r::log_info!(&logger, "interrupted, shutting down");
                    break;
                }
                Some(d) = done_rx.recv(), if !inputs_turn => {
                    if let Some(hold) = hold_finished {
                        tokio::time::sleep(hold).await;
                    }
                    state.on_done(d);
                    inputs_turn = true;
                }
                Some(r) = lc.change_state.next() => lifecycle.on_change_state(r, &mut state),
                Some(r) = lc.get_state.next() => lifecycle.on_get_state(r),
                Some(r) = lc.get_available_states.next() => lifecycle.on_get_available_states(r),
                Some(r) = lc.get_available_transitions.next() => lifecycle.on_get_transitions(r, false),
                Some(r) = lc.get_transition_graph.next() => lifecycle.on_get_transitions(r, true),
                // Time first: the transforms and requests after it are judged on it.
                Some(c) = clock_msgs.next() => {
                    clock.on_clock(&c.clock);
                }
                // Then parameters: a set is answered before the loop reads it, and a goal or a
                // check its client sends after the answer is to find it in force.
                Some(()) = params_changed.recv() => state.on_params_changed(),
                Some(m) = tf_static.next() => on_tf(&mut state, m, true),
                Some(m) = tf.next() => on_tf(&mut state, m, false),
                // The subscriptions end when rcl shuts down: the node exits too.
                m = maps.next() => match m {
                    Some(m) => state.on_map(m),
                    None => break,
                },
                Some(u) = map_updates.next() => on_map_update(&mut state, u),
                Some(g) = goals.next() => state.on_goal(g),
                Some(g) = own_goals.next() => state.on_own_goal(g),
                Some(g) = to_pose_goals.next() => on_to_pose_goal(&mut state, g),
                Some(g) = through_goals.next() => on_through_poses_goal(&mut state, g),
                Some(r) = path_checks.next() => on_is_path_valid(&mut state, r),
                Some(uuid) = cancel_rx.recv() => state.on_cancel(uuid),
                Some(p) = initial.next() => state.on_start("/initialpose", &p.header, &p.pose.pose),
                Some(o) = odom.next() => state.on_start("/odom", &o.header, &o.pose.pose),
                // Reached only when every message above is empty: the inputs' turn is over (the
                // timers below wait for no finished job).
                _ = std::future::ready(()), if inputs_turn => inputs_turn = false,
                _ = tick.tick() => state.on_tick(),
                _ = diagnostics.tick() => state.on_diagnostics(),
                Some(spun) = spun.spun() => spun.ack(),
            }
        }
        Ok::<_, String>(executor)
    })?;
    // The tasks go first, plans still running are abandoned; then the responses still being
    // retried; then the executor stops within one spin and drops the node on its thread, which is
    // joined: no thread is inside rcl when the process exits.
    runtime.shutdown_timeout(Duration::from_secs(1));
    responder_threads.stop(&stop_logger);
    stop_executor.stop();
    executor.join().map_err(|_| "the executor thread panicked".to_string())
}

// The inputs that need optional interface packages: with the package, the node state's handler;
// without it, the arm's stream never yields and these are never called.

#[cfg(ros_tf2_msgs)]
fn on_tf(state: &mut NodeState, m: r2r::tf2_msgs::msg::TFMessage, is_static: bool) {
    state.on_transforms(&m.transforms, is_static);
}
#[cfg(not(ros_tf2_msgs))]
fn on_tf(_: &mut NodeState, _: (), _: bool) {}

#[cfg(ros_map_msgs)]
fn on_map_update(state: &mut NodeState, m: r2r::map_msgs::msg::OccupancyGridUpdate) {
    let patch = super::convert::patch_from_msg(&m, &state.params().global_frame);
    state.on_map_update(patch);
}
#[cfg(not(ros_map_msgs))]
fn on_map_update(_: &mut NodeState, _: ()) {}

#[cfg(ros_nav2_msgs)]
fn on_to_pose_goal(
    state: &mut NodeState,
    g: super::action_server::GoalRequest<r2r::nav2_msgs::action::ComputePathToPose::Action>,
) {
    state.on_to_pose_goal(g);
}
#[cfg(not(ros_nav2_msgs))]
fn on_to_pose_goal(_: &mut NodeState, _: ()) {}

#[cfg(ros_nav2_msgs)]
fn on_through_poses_goal(
    state: &mut NodeState,
    g: super::action_server::GoalRequest<r2r::nav2_msgs::action::ComputePathThroughPoses::Action>,
) {
    state.on_through_poses_goal(g);
}
#[cfg(not(ros_nav2_msgs))]
fn on_through_poses_goal(_: &mut NodeState, _: ()) {}

#[cfg(ros_nav2_msgs)]
fn on_is_path_valid(state: &mut NodeState, r: r2r::ServiceRequest<r2r::nav2_msgs::srv::IsPathValid::Service>) {
    state.on_is_path_valid(r);
}
#[cfg(not(ros_nav2_msgs))]
fn on_is_path_valid(_: &mut NodeState, _: ()) {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use std::sync::Condvar;

    /// Blocking work beyond the cap waits for a thread instead of running beside the rest (the
    /// executor once ran on this pool, and leaving the cap as it was when the executor moved to a
    /// thread of its own let four plans run at once). Jobs hold their thread until released, so
    /// the count cannot pass for a job that merely finished early; a fourth thread slow to start
    /// could hide a wrong cap, never fail a right one.
    #[test]
    fn at_most_planning_threads_blocking_jobs_run_at_once() {
        let runtime = node_runtime().unwrap();
        let running = Arc::new(AtomicUsize::new(0));
        let release = Arc::new((Mutex::new(false), Condvar::new()));
        let jobs: Vec<_> = (0..PLANNING_THREADS + 3)
            .map(|_| {
                let (running, release) = (running.clone(), release.clone());
                runtime.spawn_blocking(move || {
                    running.fetch_add(1, SeqCst);
                    let (released, wake) = &*release;
                    let mut released = released.lock().unwrap();
                    while !*released {
                        released = wake.wait(released).unwrap();
                    }
                })
            })
            .collect();
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while running.load(SeqCst) < PLANNING_THREADS && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        // Time for a thread beyond the cap to start, were there one.
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(running.load(SeqCst), PLANNING_THREADS);
        *release.0.lock().unwrap() = true;
        release.1.notify_all();
        runtime.block_on(async {
            for job in jobs {
                job.await.unwrap();
            }
        });
        assert_eq!(running.load(SeqCst), PLANNING_THREADS + 3);
    }
}
