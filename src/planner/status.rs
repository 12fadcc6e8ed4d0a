//! Outcome codes of a plan request and the error that carries one.

use crate::error::MapError;
use serde::Serialize;

/// Outcome codes, equal to the constants of `blockstar_planner_msgs/PlannerStatus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[repr(u8)]
pub enum StatusCode {
    /// A plan was found and verified.
    Success = 0,
    /// No map has been received or loaded.
    NoMap = 1,
    /// The start pose lies outside the map.
    StartOutsideMap = 2,
    /// The goal pose lies outside the map.
    GoalOutsideMap = 3,
    /// The vehicle does not fit at the start pose.
    StartOccupied = 4,
    /// The vehicle does not fit at the goal pose.
    GoalOccupied = 5,
    /// No start pose has been received.
    NoStart = 6,
    /// No legal path exists (or none was found that passes verification).
    NoValidPath = 7,
    /// The time budget ran out.
    Timeout = 8,
    /// The request itself is malformed (NaN, wrong frame, bad quaternion, bad map).
    InvalidInput = 9,
    /// A newer request replaced this one.
    Superseded = 10,
    /// A pose's frame cannot be transformed into the planner's frame (unknown frame, frames not
    /// connected, or a transform too old), or the robot's pose is not known through TF.
    TfError = 11,
    /// The node is not active (lifecycle): goals are refused until it is activated.
    NotActive = 12,
    /// The request names a planner this node does not serve (Nav2's `planner_id`).
    InvalidPlanner = 13,
}

impl StatusCode {
    /// The upper-case name used in messages and JSON (`SUCCESS`, `NO_MAP`, ...).
    pub fn name(self) -> &'static str {
        match self {
            StatusCode::Success => "SUCCESS",
            StatusCode::NoMap => "NO_MAP",
            StatusCode::StartOutsideMap => "START_OUTSIDE_MAP",
            StatusCode::GoalOutsideMap => "GOAL_OUTSIDE_MAP",
            StatusCode::StartOccupied => "START_OCCUPIED",
            StatusCode::GoalOccupied => "GOAL_OCCUPIED",
            StatusCode::NoStart => "NO_START",
            StatusCode::NoValidPath => "NO_VALID_PATH",
            StatusCode::Timeout => "TIMEOUT",
            StatusCode::InvalidInput => "INVALID_INPUT",
            StatusCode::Superseded => "SUPERSEDED",
            StatusCode::TfError => "TF_ERROR",
            StatusCode::NotActive => "NOT_ACTIVE",
            StatusCode::InvalidPlanner => "INVALID_PLANNER",
        }
    }
}

/// A failed request: a code and a human-readable reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {message}", code.name())]
pub struct PlanError {
    /// What went wrong.
    pub code: StatusCode,
    /// Why, for a person.
    pub message: String,
}

impl PlanError {
    /// Builds an error.
    pub fn new(code: StatusCode, message: impl Into<String>) -> Self {
        Self { code, message: message.into() }
    }
}

impl From<MapError> for PlanError {
    fn from(e: MapError) -> Self {
        PlanError::new(StatusCode::InvalidInput, e.to_string())
    }
}
