//! A plan and its figures, and the clock that times its stages.

use super::figures::PathFigures;
use crate::directional;
use crate::geometry::{Point2, Pose2};
use crate::stages::{SolvedBy, Stage};
use crate::trajectory::Trajectory;
use serde::Serialize;
use std::time::Instant;

/// Figures about one plan.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PlanStats {
    /// Wall-clock planning time (s).
    pub planning_time: f64,
    /// Of `planning_time`, what went into filling Directional A*'s hit-check tables for
    /// parameters this plan was the first to use (s; not counted against the budget, see
    /// [`super::Budget`]); 0 once the tables are filled.
    pub table_filling_time: f64,
    /// Search expansions, all stages.
    pub expansions: usize,
    /// Length of the any-angle path (m).
    pub any_angle_length: f64,
    /// Length of the trajectory (m).
    pub trajectory_length: f64,
    /// Time per stage, in pipeline order.
    pub stage_ms: Vec<StageTime>,
    /// How the trajectory was obtained (`any_angle` when the turning radius is 0, else the
    /// refinement stage that solved it): one entry, or one per leg that moved for a plan through
    /// several poses ([`crate::waypoints::plan_through`]). [`PlanStats::solved_by_label`] joins
    /// them with `+`.
    pub solved_by: Vec<SolvedBy>,
    /// When the start or goal cell could not hold the vehicle and a covering cell was used
    /// instead (the "subsumed by a clearance square" rule): a note with the offsets, in metres.
    pub note: Option<String>,
    /// When the start overlapped obstacles and the plan drives out of them first
    /// ([`crate::planner::Planner::plan_near`]): how deep, and which stretch.
    pub start_overlap: Option<StartOverlap>,
    /// The trajectory's cost and clearance on the map it was planned on.
    pub figures: PathFigures,
    /// Corners (map frame, metres, counter-clockwise) of each window the Directional A* window
    /// repair searched, in order; empty when the repair did not run. For display.
    pub repair_windows: Vec<[Point2; 4]>,
}

impl PlanStats {
    /// How the plan was solved, as printed: `smoothing`, or per leg `direct+smoothing`.
    pub fn solved_by_label(&self) -> String {
        let names: Vec<&str> = self.solved_by.iter().map(|s| s.name()).collect();
        names.join("+")
    }

    /// `" (of it 812.40 ms filling Directional A*'s tables)"` when the plan filled table entries
    /// ([`PlanStats::table_filling_time`] > 0), else nothing: for the line that gives the
    /// planning time.
    pub fn table_filling_note(&self) -> String {
        if self.table_filling_time > 0.0 {
            format!(" (of it {:.2} ms filling Directional A*'s tables)", self.table_filling_time * 1e3)
        } else {
            String::new()
        }
    }
}

/// The stretch at a plan's start that drives out of obstacles overlapping the footprint: along
/// it the footprint overlaps obstacles, never deeper than at the start (it is checked pose by
/// pose for that, not swept as the rest of the trajectory is).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StartOverlap {
    /// How far obstacles reached into the footprint at the start (map units, m).
    pub depth: f64,
    /// The number of leading trajectory segments that make the stretch.
    pub segments: usize,
    /// Their length (map units, m).
    pub length: f64,
}

/// The time one stage of a plan took.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StageTime {
    /// The leg (from 1) of a plan through several poses; `None` for a single goal.
    pub leg: Option<usize>,
    /// Which stage.
    pub stage: Stage,
    /// Wall-clock time (ms).
    pub ms: f64,
}

impl StageTime {
    /// The stage's name, prefixed with its leg when there is one: `block_astar`, `leg2/verify`.
    pub fn label(&self) -> String {
        match self.leg {
            Some(leg) => format!("leg{leg}/{}", self.stage),
            None => self.stage.name().to_string(),
        }
    }
}

/// A successful plan, in the map frame (metres, radians).
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Waypoints of the any-angle guide, start and goal included. Just `[start, goal]` when the
    /// shortest curve between them was already collision-free (no guide was searched), and just
    /// `[start]` when the vehicle is already at the goal.
    pub any_angle: Vec<Point2>,
    /// The drivable trajectory, verified on the map it was planned on.
    pub trajectory: Trajectory,
    /// The trajectory sampled every `path_spacing`, with headings along the curve.
    pub poses: Vec<Pose2>,
    /// Figures.
    pub stats: PlanStats,
}

/// Stage timings of one plan: each stage's time since the previous mark.
pub(super) struct StageClock {
    lap: Instant,
    pub(super) stages: Vec<StageTime>,
}

impl StageClock {
    pub(super) fn new() -> Self {
        Self { lap: Instant::now(), stages: Vec::new() }
    }

    /// Records the time since the last mark under `name`.
    pub(super) fn mark(&mut self, stage: Stage) {
        self.stages.push(StageTime { leg: None, stage, ms: self.lap.elapsed().as_secs_f64() * 1e3 });
        self.lap = Instant::now();
    }

    /// Records stages timed elsewhere, in place of the time since the last mark.
    pub(super) fn extend(&mut self, stages: &[directional::refine::StageStat]) {
        self.stages.extend(stages.iter().map(|st| StageTime { leg: None, stage: st.name, ms: st.ms }));
        self.lap = Instant::now();
    }
}
