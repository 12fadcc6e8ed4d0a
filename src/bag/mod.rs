//! Reading rosbag2 bags without ROS: the MCAP and sqlite3 storage formats, and CDR decoding of
//! the messages the planner needs (`nav_msgs/msg/OccupancyGrid`). Used by `blockstar replay`.
//!
//! A bag is a rosbag2 directory (holding `metadata.yaml` and one or more `.mcap` / `.db3`
//! files) or a single `.mcap` / `.db3` file. Malformed files and messages give a [`BagError`];
//! nothing here panics on bad bytes.

pub mod cdr;
pub mod occupancy;
mod storage;

pub use occupancy::decode_occupancy_grid;
pub use storage::{read_topic, BagMessage};

/// Why a bag or a message in it could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BagError {
    /// The file system refused (missing file, permissions).
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// Not a bag this reader understands (no storage file, unknown extension).
    #[error("{0}")]
    Layout(String),
    /// The MCAP container is malformed.
    #[error("MCAP: {0}")]
    Mcap(String),
    /// The sqlite3 database is malformed or not a rosbag2 database.
    #[error("sqlite3: {0}")]
    Sqlite(String),
    /// A message's CDR bytes are malformed.
    #[error("CDR: {0}")]
    Cdr(String),
    /// A message decoded but does not describe a valid map.
    #[error("map: {0}")]
    Map(String),
}
