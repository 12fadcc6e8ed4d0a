//! The ROS 2 side (cargo feature `ros`): the `planner_node`, the message conversions and the RViz
//! markers it uses. Everything here needs a ROS 2 Jazzy environment at build time (see
//! `scripts/setup.sh`).

pub mod convert;
pub mod live_params;
pub mod markers;
pub mod node;
mod outputs;
mod state;
mod updates;
