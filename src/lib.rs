//! # blockstar_planner
//!
//! A global path planner for wheeled vehicles on occupancy grids: clearance annotations kept
//! current as the map changes, any-angle search with Block A* over a Local Distance Database, and
//! refinement into turning-radius-legal arc-and-line trajectories with Directional A*.
//!
//! The library needs no ROS; the `ros` cargo feature adds the ROS 2 node. See `ARCHITECTURE.md`
//! for the data flow and which module owns what.
#![warn(missing_docs)]

pub mod bag;
pub mod block_astar;
pub mod clearance;
pub mod cli;
pub mod costs;
pub mod curves;
pub mod directional;
pub mod error;
pub mod geometry;
pub mod grid;
pub mod hierarchy;
mod labelling;
pub mod lddb;
pub mod lifecycle;
pub mod map;
pub mod map_diff;
pub mod map_io;
pub mod memory;
pub mod param_table;
pub mod params;
pub mod planner;
pub mod polygon;
pub mod render;
pub mod replan;
#[cfg(feature = "ros")]
pub mod ros;
pub mod search;
pub mod stages;
#[cfg(test)]
mod test_rng;
pub mod trajectory;
pub mod transform;
pub mod waypoints;
