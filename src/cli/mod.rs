//! The `blockstar` command-line tool. One file per subcommand: each defines its `clap::Args`
//! struct and a `run` function; this module only dispatches.

use clap::{Parser, Subcommand};

pub mod plan;
pub mod render;
pub mod replay;

/// An error reported to the user by a subcommand (printed as `blockstar: <message>`, exit 1).
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
    /// Plan on every map message of a rosbag2 bag (MCAP or sqlite3).
    Replay(replay::ReplayArgs),
    /// Draw a map file with a path as a PNG.
    Render(render::RenderArgs),
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> CliResult {
    match cli.command {
        Command::Plan(a) => plan::run(&a),
        Command::Replay(a) => replay::run(&a),
        Command::Render(a) => render::run(&a),
    }
}
