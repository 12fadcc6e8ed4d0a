//! An action server with bounded memory, on r2r's services and publishers.
//!
//! Why not r2r's own (`Node::create_action_server`): r2r 0.9.7 keeps every finished goal's result
//! message and its rcl goal handle for the node's life. Its goal-expiry handler loops
//! `while num_expired > 1` from `num_expired = 1`, so it never calls `rcl_action_expire_goals`,
//! and nothing else removes a result. Under Nav2, whose behaviour tree asks for a path every
//! second, that is one `nav_msgs/Path` per second kept forever (measured: the node's resident set
//! grew 53 MiB over 55 s of back-to-back `compute_path_to_pose` goals), and the goal status array
//! published on every change grows with it.
//!
//! This server speaks the same protocol as rcl_action's (what rclpy's and rclcpp's action clients,
//! Nav2 and `ros2 action` use): the services `<name>/_action/send_goal`, `.../cancel_goal` and
//! `.../get_result`, the topics `.../feedback` and `.../status` (reliable, transient local, depth
//! 1), rcl_action's goal state machine (a goal is accepted and executes at once, as rclcpp's
//! ACCEPT_AND_EXECUTE; EXECUTING or CANCELING → SUCCEEDED or ABORTED, CANCELING → CANCELED) and
//! its cancel policy (by id, by stamp, or all). A finished goal's result is kept for
//! [`RESULT_TIMEOUT`] once a client has asked for it (rcl_action's default; a client asks right
//! after it hears of the acceptance), and for [`UNCLAIMED_RESULT_TIMEOUT`] while none has: a
//! client that fell behind its responses (a loaded machine) hears of the acceptance late, and
//! under rcl_action's 10 s from the goal's end would find its result gone. Memory is bounded: at
//! most [`MAX_FINISHED`] finished goals and [`MAX_FINISHED_BYTES`] of their results (serialized)
//! are kept per server, the earliest finished forgotten first, plus the goals still running. Both
//! bounds are far above what the timeouts hold at the rates Nav2 asks (a few goals a second) and
//! at 50 goals a second of small results asked for, so a late `get_result` finds its result; one
//! that comes after its result was forgotten gets STATUS_UNKNOWN, as from rcl_action after the
//! timeout. Each status array lists the running goals
//! and only the last [`MAX_LISTED_FINISHED`] to finish: every client reads every array. Both
//! orders are by finishing, so a slow goal accepted early is listed when it finishes and kept
//! like the goals that finished beside it.

use super::clock::NodeClock;
use super::responder::Responder;
use super::spin_gate::SpinAck;
use futures::{Stream, StreamExt};
use r2r::action_msgs::msg::{GoalInfo, GoalStatus, GoalStatusArray};
use r2r::action_msgs::srv::CancelGoal;
use r2r::builtin_interfaces::msg::Time;
use r2r::unique_identifier_msgs::msg::UUID;
use r2r::uuid::Uuid;
use r2r::{QosProfile, ServiceRequest, WrappedActionTypeSupport, WrappedServiceTypeSupport};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// How long a finished goal's result stays available to `get_result` once a client has asked for
/// it (rcl_action's default, counted from the goal's end).
pub const RESULT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a finished goal's result stays available while no client has asked for it, from the
/// goal's end. Six times [`RESULT_TIMEOUT`]: measured, rclpy clients under a loaded test machine
/// heard of their goals' acceptance 10-14 s late, after the goals had ended and rcl_action's
/// timeout had forgotten their results (they got STATUS_UNKNOWN). Within [`MAX_FINISHED`] and
/// [`MAX_FINISHED_BYTES`], like every kept result.
pub const UNCLAIMED_RESULT_TIMEOUT: Duration = Duration::from_secs(60);
/// Most finished goals kept at once; past it the earliest finished is forgotten first. 3000 covers
/// [`UNCLAIMED_RESULT_TIMEOUT`] at 50 goals a second (and [`RESULT_TIMEOUT`] at 300); of results
/// larger than 11 kB [`MAX_FINISHED_BYTES`] keeps fewer.
pub const MAX_FINISHED: usize = 3000;
/// Most finished goals listed in a status array (the last to finish). The array goes to every
/// client on every change, and each client reads all of it: four clients of rclpy in one process
/// handle 50 goals a second with arrays of 100 finished goals on an idle machine (not always with
/// both cores busy beside them: README, "Fault soak"), and fall seconds behind with 500. A finished goal's
/// result stays available to `get_result` as long as it is kept, listed or not.
pub const MAX_LISTED_FINISHED: usize = 100;
/// Most bytes of finished goals' results (their serialized size) kept at once; past it the
/// earliest finished is forgotten first, but never the last in the table. 32 MiB: some 55 paths
/// of 400 m at 5 cm (8000 poses, 0.6 MB serialized; about 1.6 times that in memory).
pub const MAX_FINISHED_BYTES: usize = 32 << 20;

/// An action whose messages may cross threads, as every generated one's do (responses are sent
/// on the [`Responder`]'s threads).
pub trait Action:
    WrappedActionTypeSupport<
        Goal: Send,
        Result: Send,
        SendGoal: WrappedServiceTypeSupport<Response: Clone + Send>,
        GetResult: WrappedServiceTypeSupport<Response: Clone + Send>,
    > + 'static
{
}

impl<T> Action for T where
    T: WrappedActionTypeSupport<
            Goal: Send,
            Result: Send,
            SendGoal: WrappedServiceTypeSupport<Response: Clone + Send>,
            GetResult: WrappedServiceTypeSupport<Response: Clone + Send>,
        > + 'static
{
}

type SendGoalRequest<T> = ServiceRequest<<T as WrappedActionTypeSupport>::SendGoal>;
/// The goal table of a server for action `T`.
type Table<T> = GoalTable<<T as WrappedActionTypeSupport>::Result, GetResultRequest<T>>;
type GetResultRequest<T> = ServiceRequest<<T as WrappedActionTypeSupport>::GetResult>;

// The goal states of `action_msgs/msg/GoalStatus` (bindgen gives each constant its own type).
const UNKNOWN: i8 = GoalStatus::STATUS_UNKNOWN as i8;
const EXECUTING: i8 = GoalStatus::STATUS_EXECUTING as i8;
const CANCELING: i8 = GoalStatus::STATUS_CANCELING as i8;
const SUCCEEDED: i8 = GoalStatus::STATUS_SUCCEEDED as i8;
const CANCELED: i8 = GoalStatus::STATUS_CANCELED as i8;
const ABORTED: i8 = GoalStatus::STATUS_ABORTED as i8;

/// The cancel return codes of `action_msgs/srv/CancelGoal`.
const ERROR_NONE: i8 = 0;
const ERROR_UNKNOWN_GOAL_ID: i8 = 2;
const ERROR_GOAL_TERMINATED: i8 = 3;

/// One goal the server knows: running, or finished and kept for its result (`R`) for the
/// clients whose result requests (`W`) came before it.
struct Entry<R, W> {
    info: GoalInfo,
    status: i8,
    /// The result, once the goal reached a terminal state.
    result: Option<R>,
    /// `get_result` requests that came before the result.
    waiting: Vec<W>,
    finished: Option<Instant>,
    /// The result's size in bytes (serialized), once finished.
    bytes: usize,
    /// Whether a client has asked for the result (it is then kept [`RESULT_TIMEOUT`], else
    /// [`UNCLAIMED_RESULT_TIMEOUT`]).
    claimed: bool,
}

impl<R, W> Entry<R, W> {
    /// Whether the goal finished longer ago than its result is kept.
    fn expired(&self, now: Instant) -> bool {
        let kept = if self.claimed { RESULT_TIMEOUT } else { UNCLAIMED_RESULT_TIMEOUT };
        self.finished.is_some_and(|t| now.duration_since(t) >= kept)
    }
}

/// What `get_result` finds for a goal; the request comes back when it is to be answered now.
enum Lookup<R, W> {
    /// Finished: its status and result.
    Done(i8, R, W),
    /// Running: the request was parked and is answered when it finishes.
    Parked,
    /// Not known (never accepted, or expired).
    Unknown(W),
}

/// The goals a server knows: the protocol's bookkeeping, free of r2r's handles so that it tests
/// alone. Running goals are held in acceptance order, finished ones in the order they finished
/// (a slow goal accepted early and finished late counts as recent: it is listed and kept like
/// the goals that finished beside it). After an [`GoalTable::expire`] the finished ones are within
/// [`MAX_FINISHED`] and [`MAX_FINISHED_BYTES`], none kept past its timeout.
struct GoalTable<R, W> {
    running: Vec<(Uuid, Entry<R, W>)>,
    finished: VecDeque<(Uuid, Entry<R, W>)>,
    /// The sum of `finished`'s result sizes.
    finished_bytes: usize,
}

fn uuid_of(msg: &UUID) -> Uuid {
    Uuid::from_slice(&msg.uuid).unwrap_or_default()
}

fn uuid_msg(uuid: &Uuid) -> UUID {
    UUID { uuid: uuid.as_bytes().to_vec() }
}

fn nanos(t: &Time) -> i64 {
    i64::from(t.sec) * 1_000_000_000 + i64::from(t.nanosec)
}

impl<R: Clone, W> GoalTable<R, W> {
    fn new() -> Self {
        Self { running: Vec::new(), finished: VecDeque::new(), finished_bytes: 0 }
    }

    /// How many goals are held, running and finished.
    fn len(&self) -> usize {
        self.running.len() + self.finished.len()
    }

    fn goals(&self) -> impl Iterator<Item = &(Uuid, Entry<R, W>)> {
        self.running.iter().chain(self.finished.iter())
    }

    fn find(&mut self, uuid: &Uuid) -> Option<&mut Entry<R, W>> {
        self.running.iter_mut().chain(self.finished.iter_mut()).find(|(u, _)| u == uuid).map(|(_, g)| g)
    }

    /// Adds goal `uuid`, accepted at `stamp`, EXECUTING; false (nothing added) when a goal with
    /// that id is held already (rcl_action refuses it too).
    fn add(&mut self, uuid: Uuid, stamp: Time) -> bool {
        if self.goals().any(|(u, _)| *u == uuid) {
            return false;
        }
        let info = GoalInfo { goal_id: uuid_msg(&uuid), stamp };
        self.running.push((
            uuid,
            Entry {
                info,
                status: EXECUTING,
                result: None,
                waiting: Vec::new(),
                finished: None,
                bytes: 0,
                claimed: false,
            },
        ));
        true
    }

    /// Forgets goal `uuid`, running or finished (its acceptance could not be sent, which the
    /// [`Responder`] knows only after its resends, when a quick goal has finished); false when
    /// it was not held.
    fn remove(&mut self, uuid: &Uuid) -> bool {
        if let Some(i) = self.running.iter().position(|(u, _)| u == uuid) {
            self.running.remove(i);
            return true;
        }
        let Some(i) = self.finished.iter().position(|(u, _)| u == uuid) else { return false };
        if let Some((_, g)) = self.finished.remove(i) {
            self.finished_bytes -= g.bytes;
        }
        true
    }

    /// Whether goal `uuid` is CANCELING (a client's cancel request was accepted).
    fn is_canceling(&self, uuid: &Uuid) -> bool {
        self.running.iter().any(|(u, g)| u == uuid && g.status == CANCELING)
    }

    /// The goals' statuses: every running goal (in acceptance order), then the last
    /// [`MAX_LISTED_FINISHED`] to finish (in finishing order).
    fn status_array(&self) -> GoalStatusArray {
        let unlisted = self.finished.len().saturating_sub(MAX_LISTED_FINISHED);
        let listed = self.running.iter().chain(self.finished.iter().skip(unlisted));
        let status_list = listed.map(|(_, g)| GoalStatus { goal_info: g.info.clone(), status: g.status }).collect();
        GoalStatusArray { status_list }
    }

    /// Forgets finished goals past their timeout ([`RESULT_TIMEOUT`] or
    /// [`UNCLAIMED_RESULT_TIMEOUT`]), then the earliest finished while more than
    /// [`MAX_FINISHED`] goals or [`MAX_FINISHED_BYTES`] of results are kept (the last to finish
    /// stays, however large). True when one was forgotten.
    fn expire(&mut self, now: Instant) -> bool {
        let before = self.finished.len();
        // Timeouts differ by goal, so an expired goal may sit behind an unclaimed earlier one:
        // all are looked at (at most MAX_FINISHED + 1).
        let mut freed = 0;
        self.finished.retain(|(_, g)| {
            let expired = g.expired(now);
            freed += if expired { g.bytes } else { 0 };
            !expired
        });
        self.finished_bytes -= freed;
        let over = |t: &Self| t.finished.len() > MAX_FINISHED || t.finished_bytes > MAX_FINISHED_BYTES;
        while self.finished.len() > 1 && over(self) {
            if let Some((_, g)) = self.finished.pop_front() {
                self.finished_bytes -= g.bytes;
            }
        }
        self.finished.len() != before
    }

    /// The result of goal `uuid`, or `request` parked until there is one. Either way the result
    /// is claimed (kept [`RESULT_TIMEOUT`] from the goal's end).
    fn result(&mut self, uuid: &Uuid, request: W) -> Lookup<R, W> {
        let Some(goal) = self.find(uuid) else { return Lookup::Unknown(request) };
        goal.claimed = true;
        match &goal.result {
            Some(result) => Lookup::Done(goal.status, result.clone(), request),
            None => {
                goal.waiting.push(request);
                Lookup::Parked
            }
        }
    }

    /// rcl_action's cancel policy (`rcl_action_process_cancel_request`). An id with a zero stamp
    /// names one goal: it moves to CANCELING if it is running (ERROR_NONE), else the answer is
    /// ERROR_GOAL_TERMINATED (already canceling or finished) or ERROR_UNKNOWN_GOAL_ID. Otherwise
    /// every running goal that is named, or accepted at or before a non-zero stamp, or every goal
    /// when id and stamp are both zero, moves to CANCELING, and the answer is ERROR_NONE. Returns
    /// the code and the goals moved to CANCELING.
    fn cancel(&mut self, request: &GoalInfo) -> (i8, Vec<GoalInfo>) {
        let id = uuid_of(&request.goal_id);
        let stamp = nanos(&request.stamp);
        let cancelable = |status: i8| status == EXECUTING;
        if !id.is_nil() && stamp == 0 {
            return match self.find(&id) {
                None => (ERROR_UNKNOWN_GOAL_ID, Vec::new()),
                Some(goal) if !cancelable(goal.status) => (ERROR_GOAL_TERMINATED, Vec::new()),
                Some(goal) => {
                    goal.status = CANCELING;
                    (ERROR_NONE, vec![goal.info.clone()])
                }
            };
        }
        let mut canceling = Vec::new();
        for (uuid, goal) in self.running.iter_mut() {
            let chosen = (id.is_nil() && stamp == 0) || *uuid == id || (stamp != 0 && nanos(&goal.info.stamp) <= stamp);
            if chosen && cancelable(goal.status) {
                goal.status = CANCELING;
                canceling.push(goal.info.clone());
            }
        }
        (ERROR_NONE, canceling)
    }

    /// Ends goal `uuid` with `status` and `result` (of `bytes` serialized) under rcl_action's
    /// state machine (SUCCEEDED and ABORTED from EXECUTING or CANCELING, CANCELED from CANCELING
    /// only); returns the parked result requests to answer.
    fn finish(&mut self, uuid: &Uuid, status: i8, result: R, bytes: usize, now: Instant) -> Result<Vec<W>, String> {
        let Some(i) = self.running.iter().position(|(u, _)| u == uuid) else {
            return match self.finished.iter().find(|(u, _)| u == uuid) {
                Some((_, goal)) => Err(format!("goal {uuid} cannot go from status {} to {status}", goal.status)),
                None => Err(format!("goal {uuid} is not known (it expired)")),
            };
        };
        let allowed = match status {
            CANCELED => self.running[i].1.status == CANCELING,
            _ => true, // every running goal is EXECUTING or CANCELING
        };
        if !allowed {
            return Err(format!("goal {uuid} cannot go from status {} to {status}", self.running[i].1.status));
        }
        let (uuid, mut goal) = self.running.remove(i);
        goal.status = status;
        // In finishing order, so by time too: the server takes `now` under the table's lock.
        goal.finished = Some(now);
        goal.result = Some(result);
        goal.bytes = bytes;
        let waiting = std::mem::take(&mut goal.waiting);
        self.finished_bytes += bytes;
        self.finished.push_back((uuid, goal));
        self.expire(now);
        Ok(waiting)
    }
}

/// A server's state, shared by its service task and the goal handles. Lock order: `status`
/// before `table`; nothing is published while `table` is held. Responses go through the
/// [`Responder`] (an rmw may block one up to its writer's blocking time when a client's reader is
/// not matched yet, and refuse it after).
struct Server<T: Action> {
    table: Mutex<Table<T>>,
    status: Mutex<r2r::Publisher<GoalStatusArray>>,
    feedback: Mutex<r2r::Publisher<T::FeedbackMessage>>,
    clock: NodeClock,
    responder: Responder,
    /// The action's name, for the log.
    name: String,
}

const POISONED: &str = "the action server's state is poisoned";

impl<T: Action> Server<T> {
    fn table(&self) -> Result<std::sync::MutexGuard<'_, Table<T>>, String> {
        self.table.lock().map_err(|_| POISONED.to_string())
    }

    /// Publishes the goals' statuses (holding the publisher, so arrays go out in order).
    fn publish_status(&self) {
        let Ok(publisher) = self.status.lock() else { return };
        let Ok(array) = self.table().map(|t| t.status_array()) else { return };
        // A failed publish (rcl shutting down) has nobody to tell.
        let _ = publisher.publish(&array);
    }

    /// Sends `response` to the client of `request`, a request to this action's service `what`.
    fn respond<S>(&self, what: &str, request: ServiceRequest<S>, response: S::Response)
    where
        S: r2r::WrappedServiceTypeSupport + 'static,
        S::Response: Clone + Send,
    {
        self.responder.respond(format!("a {what} request of {}", self.name), request, response);
    }

    fn get_result(&self, request: GetResultRequest<T>) {
        let uuid = uuid_of(&T::destructure_result_request_msg(request.message.clone()));
        let Ok(lookup) = self.table().map(|mut t| t.result(&uuid, request)) else { return };
        let (request, status, result) = match lookup {
            Lookup::Done(status, result, request) => (request, status, result),
            Lookup::Unknown(request) => (request, UNKNOWN, T::Result::default()),
            Lookup::Parked => return,
        };
        self.respond("get_result", request, T::make_result_response_msg(status, result));
    }

    fn cancel(&self, request: ServiceRequest<CancelGoal::Service>, cancels: &mpsc::UnboundedSender<Uuid>) {
        let Ok((return_code, goals_canceling)) = self.table().map(|mut t| t.cancel(&request.message.goal_info)) else {
            return;
        };
        let response = CancelGoal::Response { return_code, goals_canceling: goals_canceling.clone() };
        self.respond("cancel_goal", request, response);
        if !goals_canceling.is_empty() {
            self.publish_status();
        }
        for info in &goals_canceling {
            let _ = cancels.send(uuid_of(&info.goal_id));
        }
    }

    /// Ends goal `uuid` and answers the clients waiting for its result.
    fn finish(&self, uuid: &Uuid, status: i8, result: T::Result) -> Result<(), String> {
        use r2r::WrappedTypesupport;
        // Its size as sent; a result the rmw cannot serialize could not be sent either: it is
        // weighed as its struct alone.
        let bytes = result.to_serialized_bytes().map_or(std::mem::size_of::<T::Result>(), |b| b.len());
        // The clock is read under the lock, so finished goals are in the order of their times.
        let waiting = {
            let mut table = self.table()?;
            table.finish(uuid, status, result.clone(), bytes, Instant::now())?
        };
        for request in waiting {
            self.respond("get_result", request, T::make_result_response_msg(status, result.clone()));
        }
        self.publish_status();
        Ok(())
    }
}

/// A goal request. The node accepts every goal and answers an unplannable one with its result
/// (Nav2's error codes), as planner_server does; dropped unaccepted, the client never hears back.
pub struct GoalRequest<T: Action> {
    /// The goal's id.
    pub uuid: Uuid,
    /// What the client asks for.
    pub goal: T::Goal,
    request: SendGoalRequest<T>,
    server: Arc<Server<T>>,
}

impl<T: Action> GoalRequest<T> {
    /// Accepts the goal: it is EXECUTING and the client is told so. Fails when a goal with its
    /// id is held already (the client is told it was not accepted). An acceptance the rmw never
    /// delivers (the [`Responder`] gave it up) forgets the goal: its result finds no goal.
    pub fn accept(self) -> Result<GoalHandle<T>, String> {
        let stamp = self.server.clock.now();
        if !self.server.table()?.add(self.uuid, stamp.clone()) {
            self.server.respond("send_goal", self.request, T::make_goal_response_msg(false, stamp));
            return Err(format!("a goal with id {} is held already: refused", self.uuid));
        }
        let (server, uuid) = (self.server.clone(), self.uuid);
        let forget = move || {
            if server.table().is_ok_and(|mut t| t.remove(&uuid)) {
                server.publish_status();
            }
        };
        let what = format!("a send_goal request of {}", self.server.name);
        self.server.responder.respond_or(what, self.request, T::make_goal_response_msg(true, stamp), forget);
        self.server.publish_status();
        Ok(GoalHandle { uuid: self.uuid, goal: self.goal, server: self.server, answered: false })
    }
}

/// A running goal. Answer it once with [`GoalHandle::succeed`], [`GoalHandle::abort`] or
/// [`GoalHandle::cancel`]; dropped unanswered, it is aborted with a default result.
pub struct GoalHandle<T: Action> {
    /// The goal's id.
    pub uuid: Uuid,
    /// What the client asked for.
    pub goal: T::Goal,
    server: Arc<Server<T>>,
    answered: bool,
}

impl<T: Action> GoalHandle<T> {
    fn finish(&mut self, status: i8, result: T::Result) -> Result<(), String> {
        self.server.finish(&self.uuid, status, result)?;
        self.answered = true;
        Ok(())
    }

    /// Whether a client's cancel request for this goal was accepted (it is CANCELING).
    pub fn is_canceling(&self) -> bool {
        self.server.table().is_ok_and(|t| t.is_canceling(&self.uuid))
    }

    /// Ends the goal SUCCEEDED (fails once it has ended).
    pub fn succeed(&mut self, result: T::Result) -> Result<(), String> {
        self.finish(SUCCEEDED, result)
    }

    /// Ends the goal ABORTED (fails once it has ended).
    pub fn abort(&mut self, result: T::Result) -> Result<(), String> {
        self.finish(ABORTED, result)
    }

    /// Ends the goal CANCELED (fails unless a cancel request was accepted: it is CANCELING).
    pub fn cancel(&mut self, result: T::Result) -> Result<(), String> {
        self.finish(CANCELED, result)
    }

    /// Publishes feedback for the goal.
    pub fn publish_feedback(&self, feedback: T::Feedback) -> Result<(), String> {
        let publisher = self.server.feedback.lock().map_err(|_| POISONED.to_string())?;
        publisher.publish(&T::make_feedback_msg(uuid_msg(&self.uuid), feedback)).map_err(|e| e.to_string())
    }
}

impl<T: Action> Drop for GoalHandle<T> {
    fn drop(&mut self) {
        if !self.answered {
            let _ = self.finish(ABORTED, T::Result::default());
        }
    }
}

/// How many goals a server holds now (running, and finished ones kept for their results).
pub type GoalCount = Box<dyn Fn() -> usize + Send>;

/// Creates action server `name` (relative names resolve in the node's namespace, `~/` in its
/// own) on `node`. Returns the goal requests, the task that answers the cancel and result
/// requests and forgets expired goals (spawn it on the node's runtime), and a count of the goals
/// held (for diagnostics); every accepted cancel sends the goal's id on `cancels`.
fn create<T>(
    node: &mut r2r::Node,
    name: &str,
    clock: NodeClock,
    cancels: mpsc::UnboundedSender<Uuid>,
    responder: Responder,
    mut gate: SpinAck,
) -> r2r::Result<(impl Stream<Item = GoalRequest<T>> + Unpin, impl std::future::Future<Output = ()> + Send, GoalCount)>
where
    T: Action,
{
    let services = super::node::service_qos();
    let mut send_goal = node.create_service::<T::SendGoal>(&format!("{name}/_action/send_goal"), services.clone())?;
    let mut cancel_goal =
        node.create_service::<CancelGoal::Service>(&format!("{name}/_action/cancel_goal"), services.clone())?;
    let mut get_result = node.create_service::<T::GetResult>(&format!("{name}/_action/get_result"), services)?;
    let status_qos = QosProfile::default().reliable().transient_local().keep_last(1);
    let status = node.create_publisher::<GoalStatusArray>(&format!("{name}/_action/status"), status_qos)?;
    let feedback =
        node.create_publisher::<T::FeedbackMessage>(&format!("{name}/_action/feedback"), QosProfile::default())?;
    let server = Arc::new(Server {
        table: Mutex::new(GoalTable::new()),
        status: Mutex::new(status),
        feedback: Mutex::new(feedback),
        clock,
        responder,
        name: name.to_string(),
    });
    let (goals_tx, goals_rx) = mpsc::unbounded_channel();
    let counted = server.clone();
    let count: GoalCount = Box::new(move || counted.table().map(|t| t.len()).unwrap_or(0));
    let task = async move {
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        loop {
            // Biased: the spin is acknowledged (last) only when no request waits, so the
            // executor never fills r2r's 10-deep request channels (`spin_gate`).
            tokio::select! {
                biased;
                request = send_goal.next() => {
                    let Some(request) = request else { return };
                    let (uuid, goal) = T::destructure_goal_request_msg(request.message.clone());
                    let incoming = GoalRequest { uuid: uuid_of(&uuid), goal, request, server: server.clone() };
                    if goals_tx.send(incoming).is_err() {
                        return;
                    }
                }
                request = cancel_goal.next() => {
                    let Some(request) = request else { return };
                    server.cancel(request, &cancels);
                }
                request = get_result.next() => {
                    let Some(request) = request else { return };
                    server.get_result(request);
                }
                _ = tick.tick() => {
                    if server.table().is_ok_and(|mut t| t.expire(Instant::now())) {
                        server.publish_status();
                    }
                }
                Some(spun) = gate.spun() => spun.ack(),
            }
        }
    };
    Ok((tokio_stream(goals_rx), task, count))
}

/// A server's task (answering cancel and result requests, forgetting expired goals).
pub type ServerTask = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// The action servers of a node, made one by one with [`Servers::add`]: their tasks, to spawn on
/// the node's runtime, and their goal counts, for diagnostics.
pub struct Servers {
    clock: NodeClock,
    cancels: mpsc::UnboundedSender<Uuid>,
    responder: Responder,
    /// The servers' tasks.
    pub tasks: Vec<ServerTask>,
    /// The servers' goal counts.
    pub counts: Vec<GoalCount>,
}

impl Servers {
    /// No servers yet; theirs will stamp goals on `clock`, send accepted cancels on `cancels` and
    /// their responses through `responder`.
    pub fn new(clock: NodeClock, cancels: mpsc::UnboundedSender<Uuid>, responder: Responder) -> Self {
        Self { clock, cancels, responder, tasks: Vec::new(), counts: Vec::new() }
    }

    /// Creates action server `name` on `node` (see [`create`]), its task acknowledging the
    /// executor's spins on `gate`, and returns its goal requests; fails with a message naming
    /// the action.
    pub fn add<T>(
        &mut self,
        node: &mut r2r::Node,
        name: &str,
        gate: SpinAck,
    ) -> Result<impl Stream<Item = GoalRequest<T>> + Unpin, String>
    where
        T: Action,
    {
        let (goals, task, count) =
            create::<T>(node, name, self.clock.clone(), self.cancels.clone(), self.responder.clone(), gate)
                .map_err(|err| format!("cannot create {name}: {err}"))?;
        self.tasks.push(Box::pin(task));
        self.counts.push(count);
        Ok(goals)
    }
}

/// The receiving end of an unbounded channel as a stream.
fn tokio_stream<I>(mut rx: mpsc::UnboundedReceiver<I>) -> impl Stream<Item = I> + Unpin {
    Box::pin(futures::stream::poll_fn(move |cx| rx.poll_recv(cx)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> Uuid {
        Uuid::from_bytes([n; 16])
    }

    fn at(sec: i32) -> Time {
        Time { sec, nanosec: 0 }
    }

    fn cancel_request(goal: Option<u8>, sec: i32) -> GoalInfo {
        GoalInfo { goal_id: uuid_msg(&goal.map_or(Uuid::nil(), id)), stamp: at(sec) }
    }

    #[test]
    fn results_are_kept_for_waiting_and_later_requests_then_forgotten() {
        let mut table: GoalTable<&str, u32> = GoalTable::new();
        let t0 = Instant::now();
        assert!(table.add(id(1), at(1)));
        assert!(matches!(table.result(&id(1), 7), Lookup::Parked));
        assert_eq!(table.finish(&id(1), SUCCEEDED, "path", 0, t0).unwrap(), vec![7]);
        assert!(matches!(table.result(&id(1), 8), Lookup::Done(SUCCEEDED, "path", 8)));
        // Ended once only.
        assert!(table.finish(&id(1), CANCELED, "again", 0, t0).is_err());
        assert!(!table.expire(t0 + RESULT_TIMEOUT - Duration::from_millis(1)));
        assert!(table.expire(t0 + RESULT_TIMEOUT));
        assert!(matches!(table.result(&id(1), 9), Lookup::Unknown(9)));
        assert_eq!(table.len(), 0);
    }

    /// Goal `n` of a stream, accepted and finished at once with a result of `bytes`.
    fn finish_goal(table: &mut GoalTable<u32, u32>, n: u32, bytes: usize, now: Instant) -> Uuid {
        let uuid = Uuid::from_u128(u128::from(n) + 1000);
        assert!(table.add(uuid, at(n as i32)));
        table.finish(&uuid, SUCCEEDED, n, bytes, now).unwrap();
        uuid
    }

    #[test]
    fn finished_goals_stay_within_their_count_however_many_come() {
        let mut table: GoalTable<u32, u32> = GoalTable::new();
        let now = Instant::now();
        assert!(table.add(id(0), at(0))); // one that keeps running
        let last = 3 * MAX_FINISHED as u32;
        for n in 1..=last {
            finish_goal(&mut table, n, 100, now);
            assert!(table.len() <= MAX_FINISHED + 1);
        }
        // The running goal is never forgotten; the newest finished ones are kept.
        assert_eq!(table.running[0].0, id(0));
        assert_eq!(table.finished.back().unwrap().0, Uuid::from_u128(u128::from(last) + 1000));
        // The running goal and the newest finished ones are listed.
        let listed = table.status_array().status_list;
        assert_eq!(listed.len(), MAX_LISTED_FINISHED + 1);
        assert_eq!(uuid_of(&listed[0].goal_info.goal_id), id(0));
        assert_eq!(uuid_of(&listed[1].goal_info.goal_id), Uuid::from_u128(u128::from(last) + 1000 - 99));
    }

    #[test]
    fn finished_goals_stay_within_their_bytes_and_the_newest_is_kept_however_large() {
        let mut table: GoalTable<u32, u32> = GoalTable::new();
        let now = Instant::now();
        let large = MAX_FINISHED_BYTES / 10 + 1;
        for n in 1..=30 {
            finish_goal(&mut table, n, large, now);
            let bytes: usize = table.finished.iter().map(|(_, g)| g.bytes).sum();
            assert_eq!(bytes, table.finished_bytes);
            assert!(bytes <= MAX_FINISHED_BYTES, "{bytes} bytes kept after {n} goals");
        }
        // Nine fit, the tenth would not.
        assert_eq!(table.len(), 9);
        let huge = finish_goal(&mut table, 31, 2 * MAX_FINISHED_BYTES, now);
        assert_eq!(table.len(), 1);
        assert!(matches!(table.result(&huge, 1), Lookup::Done(SUCCEEDED, 31, 1)));
    }

    #[test]
    fn a_result_asked_late_within_the_timeout_at_fifty_goals_a_second_is_there() {
        // 50 goals a second of 20 kB paths (Nav2 paths of some 300 poses), one asked for 9.9 s
        // after it finished: everything finished within the timeout is still kept.
        let mut table: GoalTable<u32, u32> = GoalTable::new();
        let t0 = Instant::now();
        let late = finish_goal(&mut table, 1, 20_000, t0);
        for n in 2..=495 {
            let now = t0 + Duration::from_millis(u64::from(n) * 20);
            finish_goal(&mut table, n, 20_000, now);
        }
        assert!(!table.expire(t0 + RESULT_TIMEOUT - Duration::from_millis(100)));
        assert!(matches!(table.result(&late, 7), Lookup::Done(SUCCEEDED, 1, 7)));
    }

    #[test]
    fn a_goal_accepted_first_and_finished_last_counts_as_recent() {
        // A slow goal accepted before a stream of quick ones that finishes after all of them: it
        // is listed in the status array it finishes in, and it is not the first forgotten.
        let mut table: GoalTable<u32, u32> = GoalTable::new();
        let now = Instant::now();
        let slow = id(0);
        assert!(table.add(slow, at(0)));
        let quick = MAX_FINISHED as u32;
        for n in 1..=quick {
            finish_goal(&mut table, n, 100, now);
        }
        table.finish(&slow, SUCCEEDED, 0, 100, now).unwrap();
        assert_eq!(table.len(), MAX_FINISHED);
        let listed = table.status_array().status_list;
        assert_eq!(listed.len(), MAX_LISTED_FINISHED);
        assert_eq!(uuid_of(&listed.last().unwrap().goal_info.goal_id), slow);
        assert_eq!(listed.last().unwrap().status, SUCCEEDED);
        // More quick goals: the earliest quick ones go before the slow one.
        for n in quick + 1..=quick + 10 {
            finish_goal(&mut table, n, 100, now);
        }
        assert!(matches!(table.result(&slow, 1), Lookup::Done(SUCCEEDED, 0, 1)));
        // Quick goal 1 went when the slow one finished, 2 to 11 with the ten after it.
        assert!(matches!(table.result(&Uuid::from_u128(1000 + 11), 2), Lookup::Unknown(2)));
        assert!(matches!(table.result(&Uuid::from_u128(1000 + 12), 3), Lookup::Done(SUCCEEDED, 12, 3)));
        // And by time: each is kept its full timeout from when it finished, the slow one (asked
        // for) RESULT_TIMEOUT, the quick ones nobody asked for UNCLAIMED_RESULT_TIMEOUT.
        let later = now + RESULT_TIMEOUT / 2;
        let last = finish_goal(&mut table, quick + 11, 100, later);
        assert!(table.expire(now + RESULT_TIMEOUT));
        assert!(matches!(table.result(&slow, 4), Lookup::Unknown(4)));
        // Quick goal 12 went by the count when the last came, the slow one (asked for) by time.
        assert_eq!(table.len(), MAX_FINISHED - 1);
        assert!(table.expire(now + UNCLAIMED_RESULT_TIMEOUT));
        assert_eq!(table.len(), 1);
        assert_eq!(table.finished[0].0, last);
    }

    #[test]
    fn a_result_nobody_asked_for_is_kept_longer_and_goes_once_asked_for() {
        let mut table: GoalTable<u32, u32> = GoalTable::new();
        let t0 = Instant::now();
        let [asked, late, never] = [1, 2, 3].map(|n| finish_goal(&mut table, n, 10 * n as usize, t0));
        assert!(matches!(table.result(&asked, 1), Lookup::Done(SUCCEEDED, 1, 1)));
        // The one asked for goes at the protocol's timeout, though it sits behind nothing.
        assert!(!table.expire(t0 + RESULT_TIMEOUT - Duration::from_millis(1)));
        assert!(table.expire(t0 + RESULT_TIMEOUT));
        assert!(matches!(table.result(&asked, 2), Lookup::Unknown(2)));
        // A client that fell behind asks 30 s after the goal ended: the result is there, and
        // then goes like any other asked for.
        let t = t0 + Duration::from_secs(30);
        assert!(matches!(table.result(&late, 3), Lookup::Done(SUCCEEDED, 2, 3)));
        assert!(table.expire(t));
        assert!(matches!(table.result(&late, 4), Lookup::Unknown(4)));
        // Never asked for: kept until its own timeout, behind none of the others.
        assert_eq!((table.len(), table.finished_bytes), (1, 30));
        assert!(!table.expire(t0 + UNCLAIMED_RESULT_TIMEOUT - Duration::from_millis(1)));
        assert!(table.expire(t0 + UNCLAIMED_RESULT_TIMEOUT));
        assert_eq!((table.len(), table.finished_bytes), (0, 0));
        assert!(matches!(table.result(&never, 5), Lookup::Unknown(5)));
    }

    #[test]
    fn a_parked_request_claims_the_result() {
        let mut table: GoalTable<u32, u32> = GoalTable::new();
        let t0 = Instant::now();
        assert!(table.add(id(1), at(1)));
        assert!(matches!(table.result(&id(1), 7), Lookup::Parked));
        assert_eq!(table.finish(&id(1), SUCCEEDED, 5, 0, t0).unwrap(), vec![7]);
        assert!(table.expire(t0 + RESULT_TIMEOUT));
    }

    #[test]
    fn a_goal_whose_acceptance_was_lost_is_forgotten_running_or_finished() {
        let mut table: GoalTable<u32, u32> = GoalTable::new();
        let now = Instant::now();
        assert!(table.add(id(1), at(1)));
        assert!(table.remove(&id(1)));
        let finished = finish_goal(&mut table, 2, 500, now);
        let kept = finish_goal(&mut table, 3, 700, now);
        // The responder gives the acceptance up after the quick goal finished.
        assert!(table.remove(&finished));
        assert!(!table.remove(&finished));
        assert_eq!((table.len(), table.finished_bytes), (1, 700));
        assert!(matches!(table.result(&finished, 1), Lookup::Unknown(1)));
        assert!(matches!(table.result(&kept, 2), Lookup::Done(SUCCEEDED, 3, 2)));
        assert!(table.status_array().status_list.iter().all(|s| uuid_of(&s.goal_info.goal_id) == kept));
    }

    #[test]
    fn cancel_follows_rcl_actions_policy() {
        let mut table: GoalTable<&str, u32> = GoalTable::new();
        for n in 1..=3 {
            assert!(table.add(id(n), at(i32::from(n) * 10)));
        }
        assert!(!table.add(id(3), at(99)), "a second goal with a held id");
        table.finish(&id(1), SUCCEEDED, "done", 0, Instant::now()).unwrap();
        // By id alone: a finished goal is terminated, an unknown id unknown.
        assert_eq!(table.cancel(&cancel_request(Some(1), 0)), (ERROR_GOAL_TERMINATED, vec![]));
        assert_eq!(table.cancel(&cancel_request(Some(9), 0)).0, ERROR_UNKNOWN_GOAL_ID);
        // By stamp: running goals accepted at or before it.
        let (code, canceling) = table.cancel(&cancel_request(None, 20));
        assert_eq!((code, canceling.len()), (ERROR_NONE, 1));
        assert_eq!(uuid_of(&canceling[0].goal_id), id(2));
        assert!(table.is_canceling(&id(2)) && !table.is_canceling(&id(3)));
        // A canceling goal named again is not cancelable: terminated, nothing new.
        assert_eq!(table.cancel(&cancel_request(Some(2), 0)), (ERROR_GOAL_TERMINATED, vec![]));
        // An id with a stamp is always answered ERROR_NONE.
        assert_eq!(table.cancel(&cancel_request(Some(9), 5)), (ERROR_NONE, vec![]));
        // CANCELED only from CANCELING; SUCCEEDED and ABORTED from EXECUTING or CANCELING.
        assert!(table.finish(&id(3), CANCELED, "not asked", 0, Instant::now()).is_err());
        assert!(table.finish(&id(2), CANCELED, "stopped", 0, Instant::now()).is_ok());
        assert!(table.finish(&id(2), ABORTED, "again", 0, Instant::now()).is_err());
        // Zero id and stamp: everything still running.
        let (code, canceling) = table.cancel(&cancel_request(None, 0));
        assert_eq!(
            (code, canceling.iter().map(|i| uuid_of(&i.goal_id)).collect::<Vec<_>>()),
            (ERROR_NONE, vec![id(3)])
        );
        assert!(table.finish(&id(3), SUCCEEDED, "finished anyway", 0, Instant::now()).is_ok());
    }
}
