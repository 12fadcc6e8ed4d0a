//! `blockstar replay BAG --start X,Y,YAW --goal X,Y[,YAW]`: plans on every map message of a
//! rosbag2 bag (MCAP or sqlite3, no ROS needed) and prints one result per map.

use super::plan::{parse_goal, parse_pose};
use super::{CliError, CliResult};
use crate::bag::{decode_occupancy_grid, read_topic};
use crate::geometry::Pose2;
use crate::planner::{Budget, PlanError, Planner, PlannerConfig};
use std::path::PathBuf;

/// Arguments of `blockstar replay`.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// The bag: a rosbag2 directory, or one `.mcap` / `.db3` file.
    pub bag: PathBuf,
    /// Start pose `X,Y,YAW` (metres, radians, map frame).
    #[arg(long, value_parser = parse_pose, allow_hyphen_values = true)]
    pub start: Pose2,
    /// Goal `X,Y` or `X,Y,YAW`; without YAW the final heading is free.
    #[arg(long, value_parser = parse_goal, allow_hyphen_values = true)]
    pub goal: (Pose2, bool),
    /// The map topic.
    #[arg(long, default_value = "/map")]
    pub topic: String,
    /// Robot radius (m).
    #[arg(long, allow_negative_numbers = true)]
    pub robot_radius: Option<f64>,
    /// Print one JSON object per map instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs `blockstar replay`. A map message that cannot be decoded or is invalid is reported on its
/// line and the previous map stays in use, as in the node. Fails when the bag cannot be read or
/// holds no message on the topic.
pub fn run(args: &ReplayArgs) -> CliResult {
    let mut config = PlannerConfig::default();
    if let Some(r) = args.robot_radius {
        // Bags hold ROS maps: metres.
        config.robot_radius = super::non_negative("--robot-radius", r, crate::map::MapUnits::Metres)?;
    }
    let mut planner = Planner::new(config)?;
    let messages = read_topic(&args.bag, &args.topic)?;
    if messages.is_empty() {
        return Err(CliError(format!("{}: no message on {}", args.bag.display(), args.topic)));
    }
    let t0 = messages[0].time_ns;
    let (goal, free) = args.goal;
    for (i, m) in messages.iter().enumerate() {
        let t = (m.time_ns - t0) as f64 * 1e-9;
        let result = if m.type_name != "nav_msgs/msg/OccupancyGrid" {
            Err(PlanError::new(
                crate::planner::StatusCode::InvalidInput,
                format!("{} is a {}, not a nav_msgs/msg/OccupancyGrid", args.topic, m.type_name),
            ))
        } else {
            decode_occupancy_grid(&m.data, planner.config().max_map_cells)
                .map_err(|e| PlanError::new(crate::planner::StatusCode::InvalidInput, e.to_string()))
                .and_then(|map| planner.set_map(map))
                .and_then(|()| {
                    let budget = Budget::new(planner.config().max_planning_time, None);
                    planner.plan(args.start, goal, free, &budget)
                })
        };
        let size = planner.map().map(|p| (p.site.map().info.width, p.site.map().info.height)).unwrap_or((0, 0));
        if args.json {
            let line = match &result {
                Ok(plan) => serde_json::json!({
                    "index": i, "time": t, "map_size": [size.0, size.1], "status": "SUCCESS",
                    "length": plan.stats.trajectory_length,
                    "waypoints": plan.any_angle.iter().map(|p| [p.x, p.y]).collect::<Vec<_>>(),
                }),
                Err(e) => serde_json::json!({
                    "index": i, "time": t, "map_size": [size.0, size.1], "status": e.code.name(), "message": e.message,
                }),
            };
            println!("{line}");
        } else {
            match &result {
                Ok(plan) => println!(
                    "map {i} at {t:.3} s ({}x{}): SUCCESS, length {:.3} m, {} waypoints",
                    size.0,
                    size.1,
                    plan.stats.trajectory_length,
                    plan.any_angle.len()
                ),
                Err(e) => println!("map {i} at {t:.3} s ({}x{}): {e}", size.0, size.1),
            }
        }
    }
    Ok(())
}
