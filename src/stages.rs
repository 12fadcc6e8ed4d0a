//! The names of the planning pipeline's stages and of how a plan was solved, as enums: what
//! [`crate::planner::PlanStats`] and [`crate::directional::RefineStats`] report, serialised as the
//! snake_case names that `blockstar plan --json`, `bench-nav` and the README use.

use serde::Serialize;

/// One timed stage of a plan, in pipeline order (ARCHITECTURE.md draws them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Region test on the vehicle mask: are start and goal connected there?
    Regions,
    /// The margin-free reachability proof, when the mask separates the pair.
    Reach,
    /// The trapped-start and trapped-goal proofs (`directional::escape`).
    Escape,
    /// The shortest curve itself, tried before any guide.
    Direct,
    /// The guide is the straight line (line of sight on the mask, no search).
    GuideLineOfSight,
    /// Block A* over the LDDB on the vehicle mask.
    BlockAstar,
    /// With costs, a long plan: the corridor from the cluster graph (`hierarchy`).
    Corridor,
    /// With costs: the cheapest 16-connected path on the vehicle mask (inside the corridor for a
    /// long pair), string-pulled where that costs no more (`search::cost_astar`).
    CostGuide,
    /// The guide walked into path points.
    PathPoints,
    /// Smoothing over coarse path points.
    SmoothingCoarse,
    /// Smoothing over the dense path points, forwards.
    SmoothingForward,
    /// Smoothing from the goal backwards (bounds the failure window).
    SmoothingBackward,
    /// Directional A* inside the failure window.
    WindowRepair,
    /// One Directional A* around a short guide whose smoothing loops.
    LoopRepair,
    /// Directional A* from the exact start to the exact goal.
    FullSearch,
    /// Hybrid A* over continuous poses, when every lattice search failed.
    HybridSearch,
    /// Dropping every pose whose neighbours join without it.
    FinalSmoothing,
    /// Turning radius 0: A* over cell centres on the exact collision map.
    ExactSearch,
    /// The independent trajectory check.
    Verify,
    /// Conversion of the result to the map frame and sampling of `/plan`.
    ToWorld,
}

impl Stage {
    /// The snake_case name (`block_astar`, `window_repair`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            Stage::Regions => "regions",
            Stage::Reach => "reach",
            Stage::Escape => "escape",
            Stage::Direct => "direct",
            Stage::GuideLineOfSight => "guide_line_of_sight",
            Stage::BlockAstar => "block_astar",
            Stage::Corridor => "corridor",
            Stage::CostGuide => "cost_guide",
            Stage::PathPoints => "path_points",
            Stage::SmoothingCoarse => "smoothing_coarse",
            Stage::SmoothingForward => "smoothing_forward",
            Stage::SmoothingBackward => "smoothing_backward",
            Stage::WindowRepair => "window_repair",
            Stage::LoopRepair => "loop_repair",
            Stage::FullSearch => "full_search",
            Stage::HybridSearch => "hybrid_search",
            Stage::FinalSmoothing => "final_smoothing",
            Stage::ExactSearch => "exact_search",
            Stage::Verify => "verify",
            Stage::ToWorld => "to_world",
        }
    }
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How a plan's trajectory was obtained: the stage that produced it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SolvedBy {
    /// Start and goal coincide: nothing to drive.
    #[default]
    AtGoal,
    /// Turning radius 0: the any-angle guide is the trajectory.
    AnyAngle,
    /// The shortest curve between start and goal was free.
    Direct,
    /// Smoothing over the guide's path points.
    Smoothing,
    /// Smoothing with a window repaired by Directional A*.
    WindowRepair,
    /// One Directional A* around a short guide.
    LoopRepair,
    /// The full Directional A*.
    FullSearch,
    /// Hybrid A* over continuous poses, after the lattice searches found nothing.
    HybridSearch,
    /// Turning radius 0: the search over cell centres on the exact collision map, where the
    /// vehicle mask gave no guide or its guide failed the exact sweep.
    ExactSearch,
}

impl SolvedBy {
    /// The snake_case name (`direct`, `window_repair`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            SolvedBy::AtGoal => "at_goal",
            SolvedBy::AnyAngle => "any_angle",
            SolvedBy::Direct => "direct",
            SolvedBy::Smoothing => "smoothing",
            SolvedBy::WindowRepair => "window_repair",
            SolvedBy::LoopRepair => "loop_repair",
            SolvedBy::FullSearch => "full_search",
            SolvedBy::HybridSearch => "hybrid_search",
            SolvedBy::ExactSearch => "exact_search",
        }
    }
}

impl std::fmt::Display for SolvedBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names printed (`name`, Display) and serialised (serde) are one spelling.
    #[test]
    fn names_and_serialisation_agree() {
        use Stage::*;
        for s in [
            Regions,
            Reach,
            Escape,
            Direct,
            GuideLineOfSight,
            BlockAstar,
            Corridor,
            CostGuide,
            PathPoints,
            SmoothingCoarse,
            SmoothingForward,
            SmoothingBackward,
            WindowRepair,
            LoopRepair,
            FullSearch,
            HybridSearch,
            FinalSmoothing,
            Verify,
            ToWorld,
        ] {
            assert_eq!(serde_json::to_value(s).unwrap(), s.name());
            assert_eq!(s.to_string(), s.name());
        }
        for s in [
            SolvedBy::AtGoal,
            SolvedBy::AnyAngle,
            SolvedBy::Direct,
            SolvedBy::Smoothing,
            SolvedBy::WindowRepair,
            SolvedBy::LoopRepair,
            SolvedBy::FullSearch,
            SolvedBy::HybridSearch,
            SolvedBy::ExactSearch,
        ] {
            assert_eq!(serde_json::to_value(s).unwrap(), s.name());
            assert_eq!(s.to_string(), s.name());
        }
    }
}
