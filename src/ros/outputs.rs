//! The node's publishers and what it publishes on them: plans (`/plan`, `~/trajectory`,
//! `~/any_angle_plan`, `~/markers` for the default vehicle profile; `~/<profile>/plan` and so on
//! for each other profile), the stop signal (all of them empty), statuses and the clearance
//! display. Nothing is published while the node is not active (lifecycle).

use super::convert::{any_angle_to_msg, map_to_msg, path_to_msg, status_to_msg, trajectory_to_msg, StatusEvent};
use super::markers::{plan_markers, Outline};
use crate::clearance::display::Annotation;
use crate::geometry::Coord;
use crate::planner::{Plan, PlanError, Planner};
use r2r::blockstar_planner_msgs::msg as bs;
use r2r::geometry_msgs::msg as geo;
use r2r::nav_msgs::msg as nav;
use r2r::std_msgs::msg::Header;
use r2r::visualization_msgs::msg::MarkerArray;
use r2r::WrappedTypesupport;

/// Footprint circles on `~/markers` are drawn this far apart along the trajectory (m).
const FOOTPRINT_SPACING: f64 = 0.5;

/// One vehicle profile's plan topics: the default profile's are `plan` (as Nav2's planner
/// server), `~/trajectory`, `~/any_angle_plan` and `~/markers`; another profile's are the same
/// names under `~/<profile>/`, so each vehicle's controller follows its own.
pub struct PlanTopics {
    /// The trajectory sampled every `path_spacing`.
    pub path: r2r::Publisher<nav::Path>,
    /// The exact segments.
    pub trajectory: r2r::Publisher<bs::Trajectory>,
    /// The Block A* waypoints.
    pub any_angle: r2r::Publisher<nav::Path>,
    /// RViz display of the plan.
    pub markers: r2r::Publisher<MarkerArray>,
}

impl PlanTopics {
    /// The topic names of profile `profile` (its index in `planner_plugins`, named `name`):
    /// path, trajectory, any-angle path, markers.
    pub fn names(profile: usize, name: &str) -> [String; 4] {
        let prefix = if profile == 0 { "~/".to_string() } else { format!("~/{name}/") };
        let path = if profile == 0 { "plan".to_string() } else { format!("{prefix}plan") };
        [path, format!("{prefix}trajectory"), format!("{prefix}any_angle_plan"), format!("{prefix}markers")]
    }
}

/// Publishers and the clock.
pub struct Outputs {
    /// Each profile's plan topics, in the fleet's order (see [`PlanTopics`]).
    pub plans: Vec<PlanTopics>,
    /// `~/status`: one per goal, plus one per replan, of every profile (`planner_id` says whose).
    pub status: r2r::Publisher<bs::PlannerStatus>,
    /// `~/clearance`, when `publish_clearance` is set.
    pub clearance: Option<r2r::Publisher<nav::OccupancyGrid>>,
    /// `/diagnostics` (see [`super::diagnostics`]).
    pub diagnostics: r2r::Publisher<r2r::diagnostic_msgs::msg::DiagnosticArray>,
    /// The node's name (the diagnostics' status names start with it).
    pub node_name: String,
    /// The goals each action server holds (diagnostics).
    pub action_goals: Vec<super::action_server::GoalCount>,
    /// The node's ROS clock for the headers (simulated time with `use_sim_time`).
    pub clock: super::clock::NodeClock,
    /// The planner's frame (`global_frame`).
    pub frame: String,
    /// The node's logger name.
    pub logger: String,
    /// `/parameter_events` (published in every lifecycle state, as rclcpp's nodes do).
    pub parameter_events: super::param_services::Announcer,
    /// Publishing allowed (lifecycle state ACTIVE); while false nothing is published.
    pub enabled: bool,
}

impl Outputs {
    /// A header stamped now in the planner's frame.
    pub fn header(&mut self) -> Header {
        Header { stamp: self.clock.now(), frame_id: self.frame.clone() }
    }

    fn publish<T: WrappedTypesupport + 'static>(&self, publisher: &r2r::Publisher<T>, msg: &T, what: &str) {
        if !self.enabled {
            return;
        }
        if let Err(e) = publisher.publish(msg) {
            r2r::log_error!(&self.logger, "could not publish {what}: {e}");
        }
    }

    /// Publishes the obstacle distance of the map `planner` holds on `~/clearance` (when enabled).
    pub fn clearance(&mut self, planner: &Planner) {
        if self.clearance.is_none() {
            return;
        }
        let stamp = self.header().stamp;
        let (Some(publisher), Some(m)) = (&self.clearance, planner.map()) else { return };
        match crate::clearance::display::to_occupancy(&m.site.clearance, m.vehicle.capability, Annotation::Distance) {
            Ok(mut grid) => {
                grid.info.frame_id = self.frame.clone();
                self.publish(publisher, &map_to_msg(&grid, stamp), "clearance");
            }
            Err(e) => r2r::log_error!(&self.logger, "cannot display the clearance: {e}"),
        }
    }

    /// Publishes a plan of profile `profile` on its [`PlanTopics`], all with one header, which
    /// it returns: the status answering the plan carries the same stamp (see
    /// [`Outputs::status`]), so a client can pair a status with its plan.
    pub fn plan(&mut self, profile: usize, plan: &Plan, outline: &Outline) -> Header {
        let header = self.header();
        let Some(topics) = self.plans.get(profile) else { return header };
        self.publish(&topics.path, &path_to_msg(plan, &header), "plan");
        self.publish(
            &topics.trajectory,
            &trajectory_to_msg(&plan.trajectory, plan.stats.start_overlap.as_ref(), &header),
            "trajectory",
        );
        self.publish(&topics.any_angle, &any_angle_to_msg(&plan.any_angle, &header), "any_angle_plan");
        let markers = plan_markers(Some(plan), outline, FOOTPRINT_SPACING, &header);
        self.publish(&topics.markers, &markers, "markers");
        header
    }

    /// Publishes an empty plan, trajectory and any-angle plan and clears the markers on
    /// profile `profile`'s [`PlanTopics`]: its vehicle's controller must stop (no legal path any
    /// more).
    pub fn stop(&mut self, profile: usize) {
        let header = self.header();
        let Some(topics) = self.plans.get(profile) else { return };
        let empty = nav::Path { header: header.clone(), poses: Vec::new() };
        self.publish(&topics.path, &empty, "plan");
        self.publish(&topics.any_angle, &empty, "any_angle_plan");
        let traj = bs::Trajectory { header: header.clone(), ..Default::default() };
        self.publish(&topics.trajectory, &traj, "trajectory");
        let markers = plan_markers(None, &Outline::Disk(0.0), FOOTPRINT_SPACING, &header);
        self.publish(&topics.markers, &markers, "markers");
    }

    /// Publishes the status for `event` about `goal` of vehicle profile `planner_id` (empty for
    /// a refused input); `prefix` (when not empty) starts its message. `header` is the one
    /// [`Outputs::plan`] returned for the plan this status answers (None: stamped now).
    pub fn status(
        &mut self,
        event: StatusEvent,
        planner_id: &str,
        goal: &geo::PoseStamped,
        result: &Result<Plan, PlanError>,
        prefix: &str,
        header: Option<Header>,
    ) {
        let header = header.unwrap_or_else(|| self.header());
        let mut msg = status_to_msg(event, result, goal, &header);
        msg.planner_id = planner_id.to_string();
        if !prefix.is_empty() {
            msg.message = format!("{prefix}{}", msg.message);
        }
        self.publish(&self.status, &msg, "status");
    }

    /// Publishes the node's memory and its bounded stores' sizes on `/diagnostics`.
    pub fn diagnostics(&self, holdings: &super::diagnostics::Holdings) {
        let header = Header { stamp: self.clock.now(), frame_id: String::new() };
        let msg = super::diagnostics::memory_diagnostics(&self.node_name, header, holdings);
        self.publish(&self.diagnostics, &msg, "diagnostics");
    }

    /// Logs the answer to `goal`.
    pub fn log_answer(&self, goal: &geo::PoseStamped, result: &Result<Plan, PlanError>, what: &str) {
        let p = &goal.pose.position;
        match result {
            Ok(plan) => r2r::log_info!(
                &self.logger,
                "{what} ({:.3}, {:.3}): SUCCESS, {:.3} m, {} poses, {:.1} ms{}{}",
                Coord(p.x),
                Coord(p.y),
                plan.stats.trajectory_length,
                plan.poses.len(),
                plan.stats.planning_time * 1e3,
                plan.stats.table_filling_note(),
                plan.stats.note.as_ref().map(|n| format!("; {n}")).unwrap_or_default()
            ),
            Err(e) => r2r::log_warn!(&self.logger, "{what} ({:.3}, {:.3}): {e}", Coord(p.x), Coord(p.y)),
        }
    }
}
