//! The answering end of a goal. Every way a goal reaches the node (the `/goal_pose` topic, the
//! node's own `~/compute_path` action, Nav2's `compute_path_to_pose` and
//! `compute_path_through_poses`) becomes a [`Reply`], so the node plans them all one way and only
//! the answer differs.

use super::action_server::GoalHandle;
use super::convert::{action_result, duration_msg};
use crate::planner::{Plan, PlanError};
use r2r::blockstar_planner_msgs::action::ComputePath;
use r2r::std_msgs::msg::Header;
use r2r::uuid::Uuid;

/// A goal of the node's own action.
pub type OwnGoal = GoalHandle<ComputePath::Action>;
/// A goal of Nav2's `compute_path_to_pose`.
#[cfg(ros_nav2_msgs)]
pub type ToPoseGoal = GoalHandle<r2r::nav2_msgs::action::ComputePathToPose::Action>;
/// A goal of Nav2's `compute_path_through_poses`.
#[cfg(ros_nav2_msgs)]
pub type ThroughPosesGoal = GoalHandle<r2r::nav2_msgs::action::ComputePathThroughPoses::Action>;

/// Who asked, and how to answer (action handles are boxed: they hold the whole goal message).
pub enum Reply {
    /// `/goal_pose`: answered on `~/status` (and `/plan` on success) only.
    Topic,
    /// `~/compute_path`: its result carries the exact trajectory.
    Own(Box<OwnGoal>),
    /// Nav2's `compute_path_to_pose`.
    #[cfg(ros_nav2_msgs)]
    ToPose(Box<ToPoseGoal>),
    /// Nav2's `compute_path_through_poses`.
    #[cfg(ros_nav2_msgs)]
    ThroughPoses(Box<ThroughPosesGoal>),
}

impl Reply {
    /// The action goal's id (None for a topic goal).
    pub fn uuid(&self) -> Option<Uuid> {
        match self {
            Reply::Topic => None,
            Reply::Own(h) => Some(h.uuid),
            #[cfg(ros_nav2_msgs)]
            Reply::ToPose(h) => Some(h.uuid),
            #[cfg(ros_nav2_msgs)]
            Reply::ThroughPoses(h) => Some(h.uuid),
        }
    }

    /// Whether the action server accepted a cancel of this goal (it is CANCELING), which the
    /// node's loop may not have read yet; false for a topic goal.
    pub fn is_canceling(&self) -> bool {
        match self {
            Reply::Topic => false,
            Reply::Own(h) => h.is_canceling(),
            #[cfg(ros_nav2_msgs)]
            Reply::ToPose(h) => h.is_canceling(),
            #[cfg(ros_nav2_msgs)]
            Reply::ThroughPoses(h) => h.is_canceling(),
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
        if let Reply::Own(h) = self {
            let _ =
                h.publish_feedback(ComputePath::Feedback { stage: stage.into(), elapsed_time: duration_msg(elapsed) });
        }
    }

    /// Sends the action's result for `result`: CANCELED when the client cancelled, SUCCEEDED on
    /// success, ABORTED otherwise. A topic goal has nothing to send.
    pub fn send(self, result: &Result<Plan, PlanError>, header: &Header, client_cancel: bool) -> Result<(), String> {
        fn finish<T: super::action_server::Action>(
            handle: &mut GoalHandle<T>,
            answer: T::Result,
            ok: bool,
            client_cancel: bool,
        ) -> Result<(), String> {
            // A cancel the client sent as the plan finished: the server accepted it (the goal is
            // CANCELING) before the node saw it; the client asked to cancel, so it is CANCELED.
            if client_cancel || handle.is_canceling() {
                handle.cancel(answer)
            } else if ok {
                handle.succeed(answer)
            } else {
                handle.abort(answer)
            }
        }
        let ok = result.is_ok();
        match self {
            Reply::Topic => Ok(()),
            Reply::Own(mut h) => finish(&mut h, action_result(result, header), ok, client_cancel),
            #[cfg(ros_nav2_msgs)]
            Reply::ToPose(mut h) => finish(&mut h, super::nav2::to_pose_result(result, header), ok, client_cancel),
            #[cfg(ros_nav2_msgs)]
            Reply::ThroughPoses(mut h) => {
                let no_goals = h.goal.goals.is_empty();
                finish(&mut h, super::nav2::through_poses_result(result, header, no_goals), ok, client_cancel)
            }
        }
    }
}
