//! `planner_node`: the ROS 2 global planner node. Usage:
//! `planner_node --ros-args --params-file config/planner.yaml [-r /map:=/other_map ...]`.

fn main() {
    if let Err(e) = blockstar_planner::ros::node::run() {
        eprintln!("planner_node: {e}");
        std::process::exit(1);
    }
}
