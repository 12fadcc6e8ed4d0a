//! The ROS 2 side (cargo feature `ros`): the `planner_node` and the message conversions it uses.
//! Everything here needs a ROS 2 Jazzy environment at build time (see `scripts/setup.sh`).

pub mod convert;
pub mod node;
