//! Nav2's planner interface (`nav2_msgs`, Jazzy): the error codes of `ComputePathToPose` and
//! `ComputePathThroughPoses` from the planner's [`StatusCode`], and the results of both actions.
//! Compiled only when r2r generated `nav2_msgs` (cfg `ros_nav2_msgs`, see `build.rs`).

use super::convert::{duration_msg, path_to_msg};
use crate::planner::{Plan, PlanError, StatusCode};
use r2r::nav2_msgs::action::{ComputePathThroughPoses, ComputePathToPose};
use r2r::std_msgs::msg::Header;

/// The `ComputePathToPose` error code (200-208) for `code`. Nav2 has no codes of its own for a
/// missing start (the robot's pose is a TF lookup there: TF_ERROR), a missing map, a malformed
/// request, a preempted goal or an inactive server: those are UNKNOWN, with the reason in
/// `error_msg`.
pub fn to_pose_code(code: StatusCode) -> u16 {
    use ComputePathToPose::Result as R;
    match code {
        StatusCode::Success => R::NONE as u16,
        StatusCode::InvalidPlanner => R::INVALID_PLANNER as u16,
        StatusCode::TfError | StatusCode::NoStart => R::TF_ERROR as u16,
        StatusCode::StartOutsideMap => R::START_OUTSIDE_MAP as u16,
        StatusCode::GoalOutsideMap => R::GOAL_OUTSIDE_MAP as u16,
        StatusCode::StartOccupied => R::START_OCCUPIED as u16,
        StatusCode::GoalOccupied => R::GOAL_OCCUPIED as u16,
        StatusCode::Timeout => R::TIMEOUT as u16,
        StatusCode::NoValidPath => R::NO_VALID_PATH as u16,
        StatusCode::NoMap | StatusCode::InvalidInput | StatusCode::Superseded | StatusCode::NotActive => {
            R::UNKNOWN as u16
        }
    }
}

/// The `ComputePathThroughPoses` error code (300-309) for `code`: those of
/// [`to_pose_code`] moved up by 100 (upstream numbers them so), and NO_VIAPOINTS_GIVEN when the
/// request named no pose (`no_goals`).
pub fn through_poses_code(code: StatusCode, no_goals: bool) -> u16 {
    use ComputePathThroughPoses::Result as R;
    match (to_pose_code(code), no_goals) {
        (0, _) => R::NONE as u16,
        (_, true) => R::NO_VIAPOINTS_GIVEN as u16,
        (c, false) => c + 100,
    }
}

/// The parts both results share: path, planning time, and the error message (empty on success).
fn parts(result: &Result<Plan, PlanError>, header: &Header) -> (r2r::nav_msgs::msg::Path, f64, String) {
    match result {
        // A plan that does not start or end exactly where asked says so (its note).
        Ok(plan) => (path_to_msg(plan, header), plan.stats.planning_time, plan.stats.note.clone().unwrap_or_default()),
        Err(e) => (
            r2r::nav_msgs::msg::Path { header: header.clone(), poses: Vec::new() },
            0.0,
            format!("{}: {}", e.code.name(), e.message),
        ),
    }
}

/// The `ComputePathToPose` result answering `result`.
pub fn to_pose_result(result: &Result<Plan, PlanError>, header: &Header) -> ComputePathToPose::Result {
    let (path, time, error_msg) = parts(result, header);
    let code = result.as_ref().map_or_else(|e| e.code, |_| StatusCode::Success);
    ComputePathToPose::Result { path, planning_time: duration_msg(time), error_code: to_pose_code(code), error_msg }
}

/// The `ComputePathThroughPoses` result answering `result`; `no_goals` as in
/// [`through_poses_code`].
pub fn through_poses_result(
    result: &Result<Plan, PlanError>,
    header: &Header,
    no_goals: bool,
) -> ComputePathThroughPoses::Result {
    let (path, time, error_msg) = parts(result, header);
    let code = result.as_ref().map_or_else(|e| e.code, |_| StatusCode::Success);
    ComputePathThroughPoses::Result {
        path,
        planning_time: duration_msg(time),
        error_code: through_poses_code(code, no_goals),
        error_msg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The codes against the constants generated from the upstream `.action` files.
    #[test]
    fn codes_follow_the_upstream_definitions() {
        use ComputePathThroughPoses::Result as T;
        use ComputePathToPose::Result as P;
        let cases = [
            (StatusCode::Success, 0, 0),
            (StatusCode::InvalidPlanner, 201, 301),
            (StatusCode::TfError, 202, 302),
            (StatusCode::NoStart, 202, 302),
            (StatusCode::StartOutsideMap, 203, 303),
            (StatusCode::GoalOutsideMap, 204, 304),
            (StatusCode::StartOccupied, 205, 305),
            (StatusCode::GoalOccupied, 206, 306),
            (StatusCode::Timeout, 207, 307),
            (StatusCode::NoValidPath, 208, 308),
            (StatusCode::NoMap, 200, 300),
            (StatusCode::Superseded, 200, 300),
        ];
        for (code, to_pose, through) in cases {
            assert_eq!(to_pose_code(code), to_pose, "{}", code.name());
            assert_eq!(through_poses_code(code, false), through, "{}", code.name());
        }
        // The generated constants (from the upstream .action files) name the same numbers.
        let upstream = [
            (P::NONE as u16, T::NONE as u16, 0),
            (P::UNKNOWN as u16, T::UNKNOWN as u16, 200),
            (P::INVALID_PLANNER as u16, T::INVALID_PLANNER as u16, 201),
            (P::TF_ERROR as u16, T::TF_ERROR as u16, 202),
            (P::START_OUTSIDE_MAP as u16, T::START_OUTSIDE_MAP as u16, 203),
            (P::GOAL_OUTSIDE_MAP as u16, T::GOAL_OUTSIDE_MAP as u16, 204),
            (P::START_OCCUPIED as u16, T::START_OCCUPIED as u16, 205),
            (P::GOAL_OCCUPIED as u16, T::GOAL_OCCUPIED as u16, 206),
            (P::TIMEOUT as u16, T::TIMEOUT as u16, 207),
            (P::NO_VALID_PATH as u16, T::NO_VALID_PATH as u16, 208),
        ];
        for (p, t, n) in upstream {
            assert_eq!((p, t), (n, if n == 0 { 0 } else { n + 100 }));
        }
        assert_eq!(T::NO_VIAPOINTS_GIVEN as u16, 309);
        assert_eq!(through_poses_code(StatusCode::InvalidInput, true), 309);
        let header = Header::default();
        let r = to_pose_result(&Err(PlanError::new(StatusCode::GoalOccupied, "wall")), &header);
        assert_eq!((r.error_code, r.path.poses.len()), (206, 0));
        assert!(r.error_msg.contains("GOAL_OCCUPIED: wall"));
    }
}
