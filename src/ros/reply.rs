//! The answering end of a goal. Every way a goal reaches the node (the `/goal_pose` topic, the
//! node's own `~/compute_path` action, Nav2's `compute_path_to_pose` and
//! `compute_path_through_poses`) becomes a [`Reply`], so the node plans them all one way and only
//! the answer differs.

use super::convert::{action_result, duration_msg};
use crate::planner::{Plan, PlanError};
use futures::{Stream, StreamExt};
use r2r::blockstar_planner_msgs::action::ComputePath;
use r2r::std_msgs::msg::Header;
use r2r::uuid::Uuid;
use tokio::sync::{mpsc, oneshot};

/// A goal of the node's own action.
pub type OwnGoal = r2r::ActionServerGoal<ComputePath::Action>;
/// A goal of Nav2's `compute_path_to_pose`.
#[cfg(ros_nav2_msgs)]
pub type ToPoseGoal = r2r::ActionServerGoal<r2r::nav2_msgs::action::ComputePathToPose::Action>;
/// A goal of Nav2's `compute_path_through_poses`.
#[cfg(ros_nav2_msgs)]
pub type ThroughPosesGoal = r2r::ActionServerGoal<r2r::nav2_msgs::action::ComputePathThroughPoses::Action>;

/// Who asked, and how to answer (action handles are boxed: they hold the whole goal message).
/// The [`CancelGuard`] of an action goal is held only to be dropped with the reply.
#[allow(dead_code)]
pub enum Reply {
    /// `/goal_pose`: answered on `~/status` (and `/plan` on success) only.
    Topic,
    /// `~/compute_path`: its result carries the exact trajectory.
    Own(Box<OwnGoal>, CancelGuard),
    /// Nav2's `compute_path_to_pose`.
    #[cfg(ros_nav2_msgs)]
    ToPose(Box<ToPoseGoal>, CancelGuard),
    /// Nav2's `compute_path_through_poses`.
    #[cfg(ros_nav2_msgs)]
    ThroughPoses(Box<ThroughPosesGoal>, CancelGuard),
}

/// Ends the task forwarding a goal's cancel requests when the goal is answered (dropped with
/// the reply). r2r's cancel stream of a goal never ends by itself, so without this every goal
/// would leave one task and channel behind for the node's life.
pub struct CancelGuard {
    _answered: oneshot::Sender<()>,
}

/// Forwards the cancel requests of goal `uuid` (accepting them) to `cancels` until the returned
/// guard is dropped. Needs a Tokio runtime.
pub fn forward_cancels(
    mut requests: impl Stream<Item = r2r::ActionServerCancelRequest> + Unpin + Send + 'static,
    uuid: Uuid,
    cancels: mpsc::UnboundedSender<Uuid>,
) -> CancelGuard {
    let (guard, mut answered) = oneshot::channel::<()>();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = &mut answered => return,
                request = requests.next() => match request {
                    Some(c) => {
                        c.accept();
                        let _ = cancels.send(uuid);
                    }
                    None => return,
                },
            }
        }
    });
    CancelGuard { _answered: guard }
}

impl Reply {
    /// The action goal's id (None for a topic goal).
    pub fn uuid(&self) -> Option<Uuid> {
        match self {
            Reply::Topic => None,
            Reply::Own(h, _) => Some(h.uuid),
            #[cfg(ros_nav2_msgs)]
            Reply::ToPose(h, _) => Some(h.uuid),
            #[cfg(ros_nav2_msgs)]
            Reply::ThroughPoses(h, _) => Some(h.uuid),
        }
    }

    /// What the answer is called in logs.
    pub fn name(&self) -> &'static str {
        match self {
            Reply::Topic => "goal",
            Reply::Own(..) => "compute_path goal",
            #[cfg(ros_nav2_msgs)]
            Reply::ToPose(..) => "compute_path_to_pose goal",
            #[cfg(ros_nav2_msgs)]
            Reply::ThroughPoses(..) => "compute_path_through_poses goal",
        }
    }

    /// Publishes the stage (`queued`, `planning`) and the time since the goal arrived as action
    /// feedback; only the node's own action has feedback fields (Nav2's are empty).
    pub fn feedback(&self, stage: &str, elapsed: f64) {
        if let Reply::Own(h, _) = self {
            let _ =
                h.publish_feedback(ComputePath::Feedback { stage: stage.into(), elapsed_time: duration_msg(elapsed) });
        }
    }

    /// Sends the action's result for `result`: CANCELED when the client cancelled, SUCCEEDED on
    /// success, ABORTED otherwise. A topic goal has nothing to send.
    pub fn send(self, result: &Result<Plan, PlanError>, header: &Header, client_cancel: bool) -> r2r::Result<()> {
        fn finish<T: r2r::WrappedActionTypeSupport + 'static>(
            handle: &mut r2r::ActionServerGoal<T>,
            answer: T::Result,
            ok: bool,
            client_cancel: bool,
        ) -> r2r::Result<()> {
            let sent = match (ok, client_cancel) {
                (_, true) => return handle.cancel(answer),
                (true, false) => handle.succeed(answer.clone()),
                (false, false) => handle.abort(answer.clone()),
            };
            // A cancel the client sent as the plan finished: r2r accepted it (and moved the goal
            // to CANCELING) before the node saw it, so only a CANCELED result is accepted now.
            sent.or_else(|_| handle.cancel(answer))
        }
        let ok = result.is_ok();
        match self {
            Reply::Topic => Ok(()),
            Reply::Own(mut h, _) => finish(&mut h, action_result(result, header), ok, client_cancel),
            #[cfg(ros_nav2_msgs)]
            Reply::ToPose(mut h, _) => finish(&mut h, super::nav2::to_pose_result(result, header), ok, client_cancel),
            #[cfg(ros_nav2_msgs)]
            Reply::ThroughPoses(mut h, _) => {
                let no_goals = h.goal.goals.is_empty();
                finish(&mut h, super::nav2::through_poses_result(result, header, no_goals), ok, client_cancel)
            }
        }
    }
}
