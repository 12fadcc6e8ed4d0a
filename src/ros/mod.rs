//! The ROS 2 side (cargo feature `ros`): the `planner_node` and what it is made of. Everything
//! here needs a ROS 2 Jazzy environment at build time (see `scripts/setup.sh`); the parts that
//! need `tf2_msgs`, `map_msgs` or `nav2_msgs` are compiled only when r2r generated them (cfgs set
//! by `build.rs`).
//!
//! One job each: `action_server` (the action protocol with bounded memory, in place of r2r's),
//! `clock` (the node's ROS time, simulated from `/clock` with `use_sim_time`), `dds_profile` (the Fast DDS profile that keeps service responses from being dropped), `node` (set-up and the select loop), `state` (the reactions to every input),
//! `frames` (TF and where the robot is), `reply` (answering a goal, whichever way it came),
//! `nav2` (Nav2's codes and results), `lifecycle` (the managed-node services), `responder`
//! (service responses off the runtime, resent while a client's reader matches), `spin_gate` (the
//! executor paced by every reader of r2r's channels), `updates` (the map
//! and parameter update queue), `outputs` (publishers), `diagnostics` (`/diagnostics`: memory), `live_params` (run-time parameters: the values in force and the rule for changing them),
//! `param_services` (the parameter services and `/parameter_events`, in place of r2r's),
//! `convert` (message conversion and validation), `markers` (RViz geometry), `rust_log` (the `log`
//! records of r2r in the ROS log).

mod action_server;
mod clock;
pub mod convert;
pub mod dds_profile;
pub mod diagnostics;
pub mod frames;
mod lifecycle;
pub mod live_params;
pub mod markers;
#[cfg(ros_nav2_msgs)]
pub mod nav2;
pub mod node;
mod outputs;
mod param_services;
mod reply;
mod responder;
mod rust_log;
mod spin_gate;
mod state;
pub mod updates;
