//! The node's state and its reactions to goals (topic and action), start poses, finished jobs
//! and the periodic tick. Map and parameter updates are in `updates.rs`.
//!
//! One job plans at a time (a goal, or a replan of the current goal) on a worker thread with a
//! clone of the planner; a newer goal raises its cancel flag (SUPERSEDED) and waits as the single
//! pending goal. Map updates run beside it on another worker thread (see `updates.rs`); a plan
//! finishing on a map older than the current one is re-checked at once.

use super::convert::{action_result, duration_msg, goal_from_msg, pose_from_msg, StatusEvent};
use super::live_params::LiveParams;
use super::outputs::Outputs;
use super::updates::UpdateQueue;
use crate::geometry::Pose2;
use crate::params::NodeParams;
use crate::planner::{Budget, Plan, PlanError, Planner, StatusCode};
use crate::replan::{check_and_replan, Outcome, Trigger};
use crate::trajectory::Trajectory;
use r2r::blockstar_planner_msgs::action::ComputePath;
use r2r::geometry_msgs::msg as geo;
use r2r::std_msgs::msg::Header;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::mpsc;

/// A goal of the `~/compute_path` action, accepted.
pub type ActionGoal = r2r::ActionServerGoal<ComputePath::Action>;

/// Where a goal came from, and how to answer it.
pub enum Source {
    /// `/goal_pose`: answered on `~/status` (and `/plan` on success).
    Topic,
    /// `~/compute_path`: answered on `~/status` and with the action's result.
    Action {
        /// The goal handle (boxed: it holds the whole goal message).
        handle: Box<ActionGoal>,
        /// The client asked to cancel it.
        client_cancel: bool,
    },
}

/// A goal to plan for.
pub struct Request {
    /// Who asked.
    pub source: Source,
    /// The goal as received (statuses echo it).
    pub msg: geo::PoseStamped,
    /// The goal in the planner's frame.
    pub goal: Pose2,
    /// A start pose given with the goal (the action's `use_start`); otherwise the latest pose.
    pub start: Option<Pose2>,
    /// When it arrived (the action's feedback reports the time since).
    pub received: Instant,
}

/// The trajectory the vehicle is following, and the goal it leads to.
#[derive(Clone)]
pub struct Current {
    goal_msg: geo::PoseStamped,
    goal: Pose2,
    trajectory: Trajectory,
}

/// What the running job does.
enum Work {
    Goal(Box<Request>),
    Replan(Current, Trigger),
}

struct Running {
    work: Work,
    cancel: Arc<AtomicBool>,
    /// Map version the job plans on.
    map_version: u64,
}

/// A finished background job.
pub enum Done {
    /// The running goal's plan.
    Goal {
        /// The plan, or why there is none.
        result: Result<Plan, PlanError>,
        /// The cancel flag was raised (a newer goal, or the action client).
        cancelled: bool,
    },
    /// The running replan's outcome.
    Replan {
        /// What the check and replan found.
        outcome: Outcome,
        /// A newer goal stopped it.
        cancelled: bool,
    },
    /// A batch of map and parameter updates was applied (see `updates.rs`).
    Update(super::updates::Applied),
}

/// The node's state, owned by the async loop.
pub struct NodeState {
    pub(super) params: NodeParams,
    pub(super) live: Arc<Mutex<LiveParams>>,
    pub(super) planner: Planner,
    /// The vehicle's latest pose (`/initialpose` or `/odom`).
    start: Option<Pose2>,
    running: Option<Running>,
    /// The newest goal waiting for the running job or map update to finish.
    pending: Option<Request>,
    pub(super) updates: UpdateQueue,
    /// Bumped whenever the map or the planner's parameters change.
    pub(super) map_version: u64,
    current: Option<Current>,
    /// The map changed since the current trajectory was last checked.
    pub(super) recheck: bool,
    /// When the current trajectory was last planned or replanned (for `replan_period`).
    last_replan: Instant,
    warned_frames: std::collections::HashSet<String>,
    last_odom_log: Option<Instant>,
    pub(super) out: Outputs,
    pub(super) done: mpsc::UnboundedSender<Done>,
    cancels: mpsc::UnboundedSender<r2r::uuid::Uuid>,
}

fn superseded() -> PlanError {
    PlanError::new(StatusCode::Superseded, "a newer goal replaced this one")
}

fn cancelled_by_client() -> PlanError {
    // PlannerStatus has no code of its own for this; the action's goal status says CANCELED.
    PlanError::new(StatusCode::Superseded, "cancelled by the action client")
}

impl NodeState {
    /// A node state holding `planner` configured by `params`.
    pub fn new(
        params: NodeParams,
        live: Arc<Mutex<LiveParams>>,
        planner: Planner,
        out: Outputs,
        done: mpsc::UnboundedSender<Done>,
        cancels: mpsc::UnboundedSender<r2r::uuid::Uuid>,
    ) -> Self {
        Self {
            params,
            live,
            planner,
            start: None,
            running: None,
            pending: None,
            updates: UpdateQueue::default(),
            map_version: 0,
            current: None,
            recheck: false,
            last_replan: Instant::now(),
            warned_frames: Default::default(),
            last_odom_log: None,
            out,
            done,
            cancels,
        }
    }

    pub(super) fn logger(&self) -> &str {
        &self.out.logger
    }

    /// A goal on `/goal_pose`.
    pub fn on_goal(&mut self, msg: geo::PoseStamped) {
        match goal_from_msg(&msg, &self.params.global_frame) {
            Ok(goal) => {
                self.submit(Request { source: Source::Topic, msg, goal, start: None, received: Instant::now() })
            }
            Err(e) => self.finish(
                Request { source: Source::Topic, msg, goal: Pose2::default(), start: None, received: Instant::now() },
                Err(e),
            ),
        }
    }

    /// A goal of the `~/compute_path` action: accepted, then planned like a topic goal (a bad
    /// goal is aborted with its code).
    pub fn on_action_goal(&mut self, request: r2r::ActionServerGoalRequest<ComputePath::Action>) {
        let (handle, mut cancel_requests) = match request.accept() {
            Ok(x) => x,
            Err(e) => return r2r::log_error!(self.logger(), "could not accept an action goal: {e}"),
        };
        // Cancel requests of this goal reach the loop as its uuid.
        let (uuid, cancels) = (handle.uuid, self.cancels.clone());
        tokio::spawn(async move {
            use futures::StreamExt;
            while let Some(c) = cancel_requests.next().await {
                c.accept();
                let _ = cancels.send(uuid);
            }
        });
        let msg = handle.goal.goal.clone();
        let frame = self.params.global_frame.clone();
        let start = match handle.goal.use_start {
            false => Ok(None),
            true => super::convert::check_frame("the start", &handle.goal.start.header.frame_id, &frame)
                .and_then(|_| pose_from_msg(&handle.goal.start.pose))
                .map(Some),
        };
        let parsed = goal_from_msg(&msg, &frame).and_then(|g| start.map(|s| (g, s)));
        let source = Source::Action { handle: Box::new(handle), client_cancel: false };
        match parsed {
            Ok((goal, start)) => self.submit(Request { source, msg, goal, start, received: Instant::now() }),
            Err(e) => self
                .finish(Request { source, msg, goal: Pose2::default(), start: None, received: Instant::now() }, Err(e)),
        }
    }

    /// The action client asked to cancel goal `uuid`.
    pub fn on_cancel(&mut self, uuid: r2r::uuid::Uuid) {
        let is = |r: &Request| matches!(&r.source, Source::Action { handle, .. } if handle.uuid == uuid);
        if self.pending.as_ref().is_some_and(is) {
            let mut req = self.pending.take().expect("checked");
            if let Source::Action { client_cancel, .. } = &mut req.source {
                *client_cancel = true;
            }
            return self.finish(req, Err(cancelled_by_client()));
        }
        if let Some(Running { work: Work::Goal(req), cancel, .. }) = &mut self.running {
            if is(req) {
                if let Source::Action { client_cancel, .. } = &mut req.source {
                    *client_cancel = true;
                }
                cancel.store(true, Ordering::Relaxed);
            }
        }
    }

    /// A new goal supersedes the running one and any pending one.
    fn submit(&mut self, req: Request) {
        if let Some(r) = &self.running {
            r.cancel.store(true, Ordering::Relaxed);
        }
        if let Some(old) = self.pending.take() {
            self.finish(old, Err(superseded()));
        }
        if let Source::Action { handle, .. } = &req.source {
            let feedback = ComputePath::Feedback { stage: "queued".into(), elapsed_time: duration_msg(0.0) };
            let _ = handle.publish_feedback(feedback);
        }
        self.pending = Some(req);
        self.schedule();
    }

    /// Starts what can start: the pending goal, else a check of the current trajectory after a
    /// map change, else a periodic replan.
    pub(super) fn schedule(&mut self) {
        self.kick_updates();
        if self.running.is_some() || self.updates.busy() {
            return;
        }
        if let Some(req) = self.pending.take() {
            return self.start_goal(req);
        }
        let Some(current) = self.current.clone() else { return };
        let period = self.params.replan_period;
        if self.recheck {
            self.recheck = false;
            self.start_replan(current, Trigger::MapChange);
        } else if period > 0.0 && self.last_replan.elapsed().as_secs_f64() >= period {
            self.start_replan(current, Trigger::Periodic);
        }
    }

    fn start_goal(&mut self, req: Request) {
        if self.planner.map().is_none() {
            let e = PlanError::new(StatusCode::NoMap, "no map has been received or loaded");
            return self.finish(req, Err(e));
        }
        let Some(start) = req.start.or(self.start) else {
            let e = PlanError::new(StatusCode::NoStart, "no start pose yet (publish /initialpose or /odom)");
            return self.finish(req, Err(e));
        };
        if let Source::Action { handle, .. } = &req.source {
            let elapsed = duration_msg(req.received.elapsed().as_secs_f64());
            let _ = handle.publish_feedback(ComputePath::Feedback { stage: "planning".into(), elapsed_time: elapsed });
        }
        let cancel = Arc::new(AtomicBool::new(false));
        let (planner, done, flag, goal) = (self.planner.clone(), self.done.clone(), cancel.clone(), req.goal);
        self.running = Some(Running { work: Work::Goal(Box::new(req)), cancel, map_version: self.map_version });
        tokio::task::spawn_blocking(move || {
            let budget = Budget::new(planner.config().max_planning_time, Some(flag.clone()));
            let result = planner.plan(start, goal, false, &budget);
            let _ = done.send(Done::Goal { result, cancelled: flag.load(Ordering::Relaxed) });
        });
    }

    fn start_replan(&mut self, current: Current, trigger: Trigger) {
        // The vehicle's latest pose; with none yet, where the trajectory starts.
        let Some(pose) = self.start.or_else(|| current.trajectory.pose_at(0.0)) else { return };
        self.last_replan = Instant::now();
        let cancel = Arc::new(AtomicBool::new(false));
        let (planner, done, flag) = (self.planner.clone(), self.done.clone(), cancel.clone());
        let (trajectory, goal) = (current.trajectory.clone(), current.goal);
        self.running = Some(Running { work: Work::Replan(current, trigger), cancel, map_version: self.map_version });
        tokio::task::spawn_blocking(move || {
            let budget = Budget::new(planner.config().max_planning_time, Some(flag.clone()));
            let outcome = check_and_replan(&planner, &trajectory, pose, goal, trigger, &budget);
            let _ = done.send(Done::Replan { outcome, cancelled: flag.load(Ordering::Relaxed) });
        });
    }

    /// Answers `req`: outputs on success, the status always, the action's result for an action.
    fn finish(&mut self, req: Request, result: Result<Plan, PlanError>) {
        self.out.log_answer(&req.msg, &result, "goal");
        let header = match &result {
            Ok(plan) => Some(self.out.plan(plan, self.planner.config().robot_radius)),
            Err(_) => None,
        };
        self.out.status(StatusEvent::Goal, &req.msg, &result, "", header);
        if let Source::Action { mut handle, client_cancel } = req.source {
            let header: Header = self.out.header();
            let answer = action_result(&result, &header);
            let sent = match (&result, client_cancel) {
                (_, true) => handle.cancel(answer),
                (Ok(_), false) => handle.succeed(answer),
                (Err(_), false) => handle.abort(answer),
            };
            if let Err(e) = sent {
                r2r::log_warn!(self.logger(), "could not send the action result: {e}");
            }
        }
    }

    /// The vehicle's pose from `/initialpose` or `/odom` (poses in other frames are ignored).
    pub fn on_start(&mut self, source: &str, header: &Header, pose: &geo::Pose) {
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
                let now = Instant::now();
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

    /// Every 100 ms: feedback for a running action goal, and periodic replanning.
    pub fn on_tick(&mut self) {
        if let Some(Running { work: Work::Goal(req), .. }) = &self.running {
            if let Source::Action { handle, .. } = &req.source {
                let elapsed = duration_msg(req.received.elapsed().as_secs_f64());
                let _ =
                    handle.publish_feedback(ComputePath::Feedback { stage: "planning".into(), elapsed_time: elapsed });
            }
        }
        self.schedule();
    }

    /// A background job finished.
    pub fn on_done(&mut self, done: Done) {
        match done {
            Done::Goal { result, cancelled } => {
                let Some(Running { work: Work::Goal(req), map_version, .. }) = self.running.take() else {
                    return r2r::log_error!(self.logger(), "a plan finished but none was running");
                };
                let client_cancel = matches!(req.source, Source::Action { client_cancel: true, .. });
                // A plan that finished after a newer goal arrived is stale whatever its result.
                let result = match (cancelled, client_cancel) {
                    (true, true) => Err(cancelled_by_client()),
                    (true, false) => Err(superseded()),
                    _ => result,
                };
                if let Ok(plan) = &result {
                    self.adopt(req.msg.clone(), req.goal, plan, map_version);
                } else if !cancelled {
                    // A goal that cannot be reached replaces the intent: nothing to follow.
                    self.current = None;
                }
                self.finish(*req, result);
            }
            Done::Replan { outcome, cancelled } => {
                let Some(Running { work: Work::Replan(current, trigger), map_version, .. }) = self.running.take()
                else {
                    return r2r::log_error!(self.logger(), "a replan finished but none was running");
                };
                if !cancelled {
                    self.replanned(current, outcome, map_version);
                } else {
                    r2r::log_info!(self.logger(), "{trigger:?} replan stopped by a newer goal");
                }
            }
            Done::Update(applied) => self.on_applied(applied),
        }
        self.schedule();
    }

    /// Makes `plan` the current trajectory (planned on map `map_version`).
    fn adopt(&mut self, goal_msg: geo::PoseStamped, goal: Pose2, plan: &Plan, map_version: u64) {
        self.current = Some(Current { goal_msg, goal, trajectory: plan.trajectory.clone() });
        self.last_replan = Instant::now();
        // Planned on a map that changed meanwhile: check it on the new one.
        self.recheck = map_version != self.map_version;
    }

    fn replanned(&mut self, current: Current, outcome: Outcome, map_version: u64) {
        match outcome {
            Outcome::StillLegal => {
                r2r::log_info!(self.logger(), "the map changed; the rest of the current trajectory is still legal")
            }
            Outcome::Replanned { plan, reason } => {
                let prefix = format!("replanned: {reason}; ");
                let result = Ok(plan);
                self.out.log_answer(&current.goal_msg, &result, "replanned, goal");
                let mut header = None;
                if let Ok(plan) = &result {
                    header = Some(self.out.plan(plan, self.planner.config().robot_radius));
                    self.adopt(current.goal_msg.clone(), current.goal, plan, map_version);
                }
                self.out.status(StatusEvent::Replan, &current.goal_msg, &result, &prefix, header);
            }
            Outcome::Kept { error } => {
                r2r::log_info!(self.logger(), "periodic replan failed ({error}); the current trajectory is still legal")
            }
            Outcome::Blocked { error, reason } => {
                let prefix = format!("no legal path any more ({reason}); published an empty /plan: ");
                r2r::log_warn!(self.logger(), "{prefix}{error}");
                self.out.stop();
                self.out.status(StatusEvent::Replan, &current.goal_msg, &Err(error), &prefix, None);
                self.current = None;
            }
        }
    }
}
