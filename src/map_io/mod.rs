//! Readers for map files: the ROS `map_server` format (YAML + PGM/PNG) and Moving AI benchmark
//! maps and scenarios. Every reader validates its input and returns a [`crate::error::MapError`]
//! on anything malformed; none panics.

pub mod map_server;
pub mod movingai;
mod pnm;

pub use map_server::{load_map_server_yaml, MapMode, MapServerParams};
pub use movingai::{load_movingai_map, load_scenarios, parse_movingai_map, parse_scenarios, Scenario};

/// Largest image side (pixels) a map file may declare; larger files are rejected before any
/// allocation (a corrupted header must not allocate without bound).
pub const MAX_IMAGE_SIDE: usize = 100_000;
