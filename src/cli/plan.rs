//! `blockstar plan`: one plan on a map file, printed as text or JSON.

use super::{non_negative, CliError, CliResult};
use crate::geometry::Pose2;
use crate::map_io::{load_map_file, map_file_units};
use crate::params::{param_spec, NodeParams, ParamValue};
use crate::planner::{Budget, Leeway, Planner};
use crate::render::scene::{render_scene, Mark, Scene};
use crate::render::{known_window, picture_scale};
use crate::trajectory::{Segment, SegmentKind};
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `blockstar plan`.
#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    /// Map file: a map_server YAML (metres) or a Moving AI `.map` (cells).
    #[arg(long)]
    pub map: PathBuf,
    /// Start pose `X,Y,YAW` (map units, radians).
    #[arg(long, value_parser = parse_pose, allow_hyphen_values = true)]
    pub start: Pose2,
    /// Goal `X,Y` or `X,Y,YAW`; without YAW the final heading is free.
    #[arg(long, value_parser = parse_goal, allow_hyphen_values = true)]
    pub goal: (Pose2, bool),
    /// A ROS 2 parameters file (`config/planner.yaml`); the flags below override it.
    #[arg(long)]
    pub params: Option<PathBuf>,
    // Numeric options take negative numbers as values, so `--robot-radius -1` reaches the same
    // range check (and message) as `--robot-radius=-1` instead of being read as a flag.
    /// Robot radius (map units).
    #[arg(long, allow_negative_numbers = true)]
    pub robot_radius: Option<f64>,
    /// Side of a square footprint turning with the vehicle (map units; 0 = the circle of the
    /// robot radius).
    #[arg(long, allow_negative_numbers = true)]
    pub robot_side: Option<f64>,
    /// The vehicle's polygon in its own frame (map units; origin at base_link, x forward), Nav2's
    /// form: `"[[0.7, 0.25], [0.7, -0.25], [-0.2, -0.25], [-0.2, 0.25]]"` (`footprint`; wins
    /// over the radius and the side; `"[]"`: none).
    #[arg(long, allow_hyphen_values = true)]
    pub footprint: Option<String>,
    /// Padding added outwards to every vertex of the footprint (map units, >= 0;
    /// `footprint_padding`).
    #[arg(long, allow_negative_numbers = true)]
    pub footprint_padding: Option<f64>,
    /// Minimum turning radius (map units).
    #[arg(long, allow_negative_numbers = true)]
    pub min_turning_radius: Option<f64>,
    /// Gears: `forward` (forwards only) or `reeds_shepp` (forwards and backwards); as the
    /// parameter `motion_model`.
    #[arg(long)]
    pub motion_model: Option<String>,
    /// With `reeds_shepp`: factor (>= 1) on the length driven backwards (`reverse_penalty`).
    #[arg(long, allow_negative_numbers = true)]
    pub reverse_penalty: Option<f64>,
    /// With `reeds_shepp`: cost (map units, >= 0) per change of gear (`change_penalty`).
    #[arg(long, allow_negative_numbers = true)]
    pub change_penalty: Option<f64>,
    /// Weight of the traversal cost along the path (`cost_penalty`, 0..=1000; 0 = the shortest).
    #[arg(long, allow_negative_numbers = true)]
    pub cost_penalty: Option<f64>,
    /// Gap to obstacles (map units, >= 0) below which a cell's cost rises (`preferred_clearance`).
    #[arg(long, allow_negative_numbers = true)]
    pub preferred_clearance: Option<f64>,
    /// Nav2's goal tolerance (map units, >= 0; default 0: the goal itself): when the goal is
    /// occupied or cannot be reached, plan to the reachable place nearest to it within this
    /// distance instead, and say so (`note`).
    /// Default: the parameters' `tolerance` (0 unless `--params` or `--set` say otherwise).
    #[arg(long, allow_negative_numbers = true)]
    pub tolerance: Option<f64>,
    /// How deep (map units, >= 0) obstacles may reach into the footprint at the start for the
    /// plan to drive out of them first, never deeper (`start_overlap`; 0 refuses any overlap).
    /// Default: the parameters' `start_overlap` (0.05 unless `--params` or `--set` say otherwise).
    #[arg(long, allow_negative_numbers = true)]
    pub start_overlap: Option<f64>,
    /// Any parameter of the node as `NAME=VALUE` (repeatable; `config/planner.yaml` lists them),
    /// checked as `ros2 param set` checks it, applied after `--params` and before the flags above:
    /// `--set heading_bins=16 --set turn_penalty=0.2`. Those that do not shape a plan (frames,
    /// topics) are accepted and have no effect here.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Fill Directional A*'s hit-check tables before the plan's clock starts, as the node does
    /// when a map or new parameters arrive (on a background thread there), so the plan's time is
    /// planning alone. Without it a plan that needs a window repair, a full search or the hybrid
    /// search fills the entries it looks up (seconds for a polygon on a 2-core computer): that
    /// time is in the plan's time, said apart, and not counted against `max_planning_time`.
    /// With the flag, how long filling ahead took is printed.
    #[arg(long)]
    pub warm_tables: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Write a PNG of the plan (the same picture as `blockstar render`): the known part of the
    /// map, the footprint's reach, the any-angle guide (dashed), the trajectory (its stretches
    /// driven backwards in teal), start and goal with the footprint and heading, a legend and a
    /// scale bar.
    #[arg(long)]
    pub png: Option<PathBuf>,
}

fn parse_numbers(s: &str) -> Result<Vec<f64>, String> {
    s.split(',')
        .map(|t| t.trim().parse::<f64>().map_err(|_| format!("{t:?} is not a number")))
        .map(|r| r.and_then(|v| if v.is_finite() { Ok(v) } else { Err(format!("{v} is not finite")) }))
        .collect()
}

/// Parses `X,Y,YAW`.
pub fn parse_pose(s: &str) -> Result<Pose2, String> {
    match parse_numbers(s)?.as_slice() {
        [x, y, yaw] => Ok(Pose2::new(*x, *y, *yaw)),
        _ => Err(format!("expected X,Y,YAW, got {s:?}")),
    }
}

/// Parses `X,Y` (heading free) or `X,Y,YAW`; the flag is true when the heading is free.
pub fn parse_goal(s: &str) -> Result<(Pose2, bool), String> {
    match parse_numbers(s)?.as_slice() {
        [x, y] => Ok((Pose2::new(*x, *y, 0.0), true)),
        [x, y, yaw] => Ok((Pose2::new(*x, *y, *yaw), false)),
        _ => Err(format!("expected X,Y or X,Y,YAW, got {s:?}")),
    }
}

/// One segment as `blockstar plan --json` and `blockstar curve --json` print it: `kind`, `start`
/// `[x, y, yaw]`, `length` (>= 0 whatever the gear), `radius` (null for a line), `center` (null for
/// a line), `direction` (left, right, straight as seen when driving forwards) and `reverse`; a turn
/// on the spot is `{"kind": "rotate", "start", "length": 0.0, "angle"}` (signed radians).
pub fn segment_json(s: &Segment) -> serde_json::Value {
    if s.kind() == SegmentKind::Rotate {
        return serde_json::json!({
            "kind": s.kind(),
            "start": [s.start.x, s.start.y, s.start.yaw],
            "length": 0.0,
            "angle": s.rotation,
        });
    }
    serde_json::json!({
        "kind": s.kind(),
        "start": [s.start.x, s.start.y, s.start.yaw],
        "length": s.length,
        "radius": if s.radius().is_finite() { serde_json::json!(s.radius()) } else { serde_json::Value::Null },
        "center": s.center().map(|c| [c.x, c.y]),
        "direction": s.turn(),
        "reverse": s.reverse,
    })
}

/// `params` with one `NAME=VALUE` of `--set` applied, by the node's parameter table.
pub fn with_assignment(params: &NodeParams, assignment: &str) -> Result<NodeParams, CliError> {
    let (name, value) =
        assignment.split_once('=').ok_or_else(|| CliError(format!("--set takes NAME=VALUE, got {assignment:?}")))?;
    let spec = param_spec(name.trim()).ok_or_else(|| CliError(format!("--set: there is no parameter {name:?}")))?;
    let value = spec.parse(value).map_err(|e| CliError(format!("--set: {}", e.message)))?;
    params.with_value(spec.name(), &value).map_err(|e| CliError(format!("--set: {}", e.message)))
}

/// Runs `blockstar plan`. On success the plan goes to stdout; a failed plan is returned (and so
/// printed once, on stderr), after its JSON record on stdout with `--json`.
pub fn run(args: &PlanArgs) -> CliResult {
    let units = map_file_units(&args.map);
    let mut params = match &args.params {
        Some(path) => NodeParams::from_yaml_file(path, "planner_node")?,
        None => NodeParams::default(),
    };
    for assignment in &args.set {
        params = with_assignment(&params, assignment)?;
    }
    // Flags named after parameters go through the same table, checks and messages.
    let flags = [
        ("footprint", args.footprint.clone().map(ParamValue::String)),
        ("footprint_padding", args.footprint_padding.map(ParamValue::Double)),
        ("motion_model", args.motion_model.clone().map(ParamValue::String)),
        ("reverse_penalty", args.reverse_penalty.map(ParamValue::Double)),
        ("change_penalty", args.change_penalty.map(ParamValue::Double)),
        ("cost_penalty", args.cost_penalty.map(ParamValue::Double)),
        ("preferred_clearance", args.preferred_clearance.map(ParamValue::Double)),
    ];
    for (name, value) in flags {
        if let Some(value) = value {
            params = params
                .with_value(name, &value)
                .map_err(|e| CliError(format!("--{}: {}", name.replace('_', "-"), e.message)))?;
        }
    }
    let mut config = params.planner;
    if let Some(r) = args.robot_radius {
        config.robot_radius = non_negative("--robot-radius", r, units)?;
    }
    if let Some(a) = args.robot_side {
        config.robot_side = non_negative("--robot-side", a, units)?;
    }
    if let Some(r) = args.min_turning_radius {
        config.min_turning_radius = non_negative("--min-turning-radius", r, units)?;
    }
    let map = load_map_file(&args.map, "map", config.max_map_cells)?;
    let mut planner = Planner::new(config)?;
    planner.set_units(units);
    planner.set_map(map.clone())?;
    let warmed = args.warm_tables.then(|| warm_tables(&planner));
    let budget = Budget::new(planner.config().max_planning_time, None);
    let (goal, free) = args.goal;
    let leeway = Leeway {
        tolerance: match args.tolerance {
            Some(t) => non_negative("--tolerance", t, units)?,
            None => params.tolerance,
        },
        start_overlap: match args.start_overlap {
            Some(d) => non_negative("--start-overlap", d, units)?,
            None => params.start_overlap,
        },
    };
    let result = planner.plan_near(args.start, goal, free, leeway, &budget);
    let out = match &result {
        Ok(plan) => serde_json::json!({
            "status": "SUCCESS",
            "any_angle": {
                "length": plan.stats.any_angle_length,
                "waypoints": plan.any_angle.iter().map(|p| [p.x, p.y]).collect::<Vec<_>>(),
            },
            "trajectory": {
                "length": plan.trajectory.length(),
                "min_turning_radius": plan.trajectory.min_turning_radius,
                "segments": plan.trajectory.segments.iter().map(segment_json).collect::<Vec<_>>(),
                "cusps": plan.trajectory.cusps(),
                "reverse_length": plan.trajectory.reverse_length(),
                "poses": plan.poses.iter().map(|p| [p.x, p.y, p.yaw]).collect::<Vec<_>>(),
            },
            "solved_by": plan.stats.solved_by_label(),
            "note": plan.stats.note,
            "start_overlap": plan.stats.start_overlap,
            "figures": plan.stats.figures,
            "planning_time_ms": plan.stats.planning_time * 1e3,
            "table_filling_ms": plan.stats.table_filling_time * 1e3,
            "tables_warmed": warmed.map(|w| w.json()),
            "timing_ms": plan.stats.stage_ms.iter().map(|t| (t.label(), serde_json::json!(t.ms))).collect::<serde_json::Map<String, serde_json::Value>>(),
        }),
        Err(e) => serde_json::json!({
            "status": e.code.name(),
            "message": e.message,
            "tables_warmed": warmed.map(|w| w.json()),
        }),
    };
    // With --json every outcome is one record on stdout (scripts read the status there), the
    // plan's even when its picture cannot be written after it; in text mode a failure is only
    // the returned error, which `main` prints on stderr.
    if args.json {
        println!("{out}");
    }
    if let (Some(path), Ok(plan)) = (&args.png, &result) {
        let traj: Vec<_> = plan.poses.iter().map(|p| p.point()).collect();
        // Only the known part of the map (and the paths), so the route is large enough to see.
        let window = known_window(&map, &[plan.any_angle.clone(), traj.clone()], 10);
        let title = super::render::map_title(&args.map, &map);
        // The poses the trajectory starts and ends in (the goal's heading when it was free).
        let (start, goal) =
            (plan.poses.first().copied().unwrap_or(args.start), plan.poses.last().copied().unwrap_or(goal));
        let scene = Scene {
            map: &map,
            window,
            robot: planner.config(),
            guide: &plan.any_angle,
            trajectory: &traj,
            backwards: &crate::render::scene::steps_driven_backwards(&plan.poses),
            start: Some(Mark::from(start)),
            goal: Some(Mark::from(goal)),
            title: &title,
        };
        let img = render_scene(&scene, picture_scale(&map, window)).image;
        std::fs::write(path, img.to_png()?).map_err(|e| CliError(format!("{}: {e}", path.display())))?;
    }
    if let (false, Ok(plan)) = (args.json, &result) {
        println!(
            "SUCCESS: any-angle length {:.3}, trajectory length {:.3} in {} segments, {:.2} ms{}",
            plan.stats.any_angle_length,
            plan.trajectory.length(),
            plan.trajectory.segments.len(),
            plan.stats.planning_time * 1e3,
            plan.stats.table_filling_note()
        );
        let f = &plan.stats.figures;
        let nearest = f.min_clearance.map_or_else(|| "beyond 32 cells".to_string(), |d| format!("{d:.3}"));
        println!(
            "cost {:.3} (mean traversal cost {:.3}, max {:.3}); nearest obstacle {nearest}",
            f.cost, f.mean_cost, f.max_cost
        );
        if let Some(note) = &plan.stats.note {
            println!("note: {note}");
        }
    }
    if let (false, Some(w)) = (args.json, warmed) {
        eprintln!("tables: {} edges filled in {:.2} s before the plan", w.edges, w.seconds);
    }
    result.map(|_| ()).map_err(|e| CliError(e.to_string()))
}

/// What `--warm-tables` did: the edges it computed and how long it took.
#[derive(Debug, Clone, Copy)]
struct Warmed {
    edges: usize,
    seconds: f64,
}

impl Warmed {
    fn json(self) -> serde_json::Value {
        serde_json::json!({ "edges": self.edges, "seconds": self.seconds })
    }
}

/// Fills the prepared map's Directional A* tables (none at turning radius 0).
fn warm_tables(planner: &Planner) -> Warmed {
    let t = Instant::now();
    let warmer = planner.map().and_then(|m| m.directional()).and_then(|d| d.warmer());
    let edges = warmer.and_then(|w| w.run()).unwrap_or(0);
    Warmed { edges, seconds: t.elapsed().as_secs_f64() }
}
