//! `planner_node`: the ROS 2 global planner node. Usage:
//! `planner_node --ros-args --params-file config/planner.yaml [-r /map:=/other_map ...]`.
//!
//! The binary has no `required-features`: colcon (through cargo-ament-build) installs only the
//! binaries whose required features were named on its command line, and it never names the
//! default ones, so a node gated that way was silently left out of `colcon build`. A build without
//! the `ros` feature (the ROS-free library and CLI) gets a `planner_node` that says so and exits.

// Heap figures for the node's /diagnostics (blockstar_planner::memory).
blockstar_planner::install_counting_allocator!();

#[cfg(feature = "ros")]
fn main() {
    if let Err(e) = blockstar_planner::ros::node::run() {
        eprintln!("planner_node: {e}");
        std::process::exit(1);
    }
}

#[cfg(not(feature = "ros"))]
fn main() {
    eprintln!(
        "planner_node: this build has no ROS support (it was built with --no-default-features); \
         build with the default `ros` feature, for example with `colcon build` (see README.md)"
    );
    std::process::exit(2);
}
