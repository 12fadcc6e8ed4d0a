//! The `blockstar` command-line tool. One file per subcommand: each defines its `clap::Args`
//! struct and a `run` function; this module only dispatches.

use clap::{Parser, Subcommand};

pub mod bench;
pub mod bench_budget;
pub mod bench_clearance;
pub mod bench_fleet;
pub mod bench_nav;
pub mod clearance;
pub mod curve;
pub mod lddb;
pub mod nav2_cost;
pub mod plan;
pub mod render;
pub mod replay;

/// An error reported to the user by a subcommand: printed once, on stderr, as
/// `blockstar: <message>` with exit code 1 (subcommands print nothing of it themselves).
#[derive(Debug)]
pub struct CliError(pub String);

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl<E: std::error::Error> From<E> for CliError {
    fn from(e: E) -> Self {
        CliError(e.to_string())
    }
}

/// Result type of every subcommand.
pub type CliResult = Result<(), CliError>;

/// Bytes per cell of each of `components` (name, bytes), and their `total`, as one JSON object
/// (the memory reports of `bench-nav` and `bench-fleet`).
pub fn bytes_per_cell(components: &[(&str, usize)], cells: f64) -> serde_json::Value {
    let mut o = serde_json::Map::new();
    for &(name, bytes) in components {
        o.insert(name.to_owned(), serde_json::json!(bytes as f64 / cells));
    }
    let total: usize = components.iter().map(|c| c.1).sum();
    o.insert("total".to_owned(), serde_json::json!(total as f64 / cells));
    serde_json::Value::Object(o)
}

/// The polygon of a `--footprint` option in Nav2's string form (`None` without the option), or
/// an error naming the option; `"[]"`, which names no polygon, is refused.
pub fn footprint_option(text: Option<&str>) -> Result<Option<crate::polygon::Polygon>, CliError> {
    let Some(text) = text else { return Ok(None) };
    crate::polygon::Polygon::parse_nav2(text)
        .map_err(|e| CliError(format!("--footprint: {e}")))?
        .ok_or_else(|| CliError("--footprint \"[]\" names no polygon".into()))
        .map(Some)
}

/// `value` of a length option when it is finite and >= 0, else an error naming the option and
/// the value as the user gave it, in `units` (`--robot-radius must be >= 0 m, got -1 m`).
pub fn non_negative(option: &str, value: f64, units: crate::map::MapUnits) -> Result<f64, CliError> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        let u = units.symbol();
        Err(CliError(format!("{option} must be >= 0 {u}, got {} {u}", crate::geometry::Number(value))))
    }
}

/// Plans on map files and benchmarks planners, with no ROS needed.
#[derive(Debug, Parser)]
#[command(name = "blockstar", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Plan one path on a map file.
    Plan(plan::PlanArgs),
    /// Benchmark the turning-radius-legal planners on random pose pairs of one map.
    BenchNav(bench_nav::BenchNavArgs),
    /// How late a plan stops after its time budget runs out or its request is cancelled.
    BenchBudget(bench_budget::BenchBudgetArgs),
    /// Time full clearance annotation against random patch updates.
    BenchClearance(bench_clearance::BenchClearanceArgs),
    /// What each vehicle profile beyond the first costs on one map: heap per cell, patch time.
    BenchFleet(bench_fleet::BenchFleetArgs),
    /// The shortest curve between two poses with a minimum turning radius (no map): Dubins or
    /// Reeds-Shepp.
    Curve(curve::CurveArgs),
    /// Write a map's obstacle distance or true clearance as a PNG heat map.
    Clearance(clearance::ClearanceArgs),
    /// Benchmark search algorithms side by side on Moving AI scenarios.
    Bench(bench::BenchArgs),
    /// Build or inspect the Local Distance Database cache.
    Lddb(lddb::LddbArgs),
    /// Plan on every map message of a rosbag2 bag (MCAP or sqlite3).
    Replay(replay::ReplayArgs),
    /// Draw a map file with a trajectory (and guide, start, goal, footprint, legend, scale) as a PNG.
    Render(render::RenderArgs),
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> CliResult {
    match cli.command {
        Command::Plan(a) => plan::run(&a),
        Command::BenchNav(a) => bench_nav::run(&a),
        Command::BenchBudget(a) => bench_budget::run(&a),
        Command::BenchClearance(a) => bench_clearance::run(&a),
        Command::BenchFleet(a) => bench_fleet::run(&a),
        Command::Clearance(a) => clearance::run(&a),
        Command::Curve(a) => curve::run(&a),
        Command::Bench(a) => bench::run(&a),
        Command::Lddb(a) => lddb::run(&a),
        Command::Replay(a) => replay::run(&a),
        Command::Render(a) => render::run(&a),
    }
}
