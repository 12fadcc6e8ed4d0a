//! The `blockstar` command-line tool: plan on map files and benchmark, with no ROS needed.

use clap::Parser;

// Heap figures for `bench-nav`'s memory report (blockstar_planner::memory).
blockstar_planner::install_counting_allocator!();

fn main() {
    let cli = blockstar_planner::cli::Cli::parse();
    if let Err(e) = blockstar_planner::cli::run(cli) {
        eprintln!("blockstar: {e}");
        std::process::exit(1);
    }
}
