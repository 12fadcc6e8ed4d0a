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

/// The unit of the world coordinates of the map file at `path`, by its extension (as
/// [`load_map_file`] reads it): cells for a Moving AI `.map`, metres for anything else.
pub fn map_file_units(path: &std::path::Path) -> crate::map::MapUnits {
    if extension(path) == "map" {
        crate::map::MapUnits::Cells
    } else {
        crate::map::MapUnits::Metres
    }
}

/// The lower-case extension of `path` (empty without one): what picks a map file's reader.
fn extension(path: &std::path::Path) -> String {
    path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase()
}

/// Loads a map file by its extension: `.yaml`/`.yml` as a `map_server` map (metres), `.map` as a
/// Moving AI map (one cell = 1 unit, origin at 0, row `y` of the file is row `y`; blocked cells
/// are 100, free cells 0).
///
/// Fails with [`crate::error::MapError`] on unreadable, malformed or oversized files.
pub fn load_map_file(
    path: &std::path::Path,
    frame_id: &str,
    max_cells: usize,
) -> Result<crate::map::OccupancyMap, crate::error::MapError> {
    let ext = extension(path);
    match ext.as_str() {
        "yaml" | "yml" => load_map_server_yaml(path, frame_id, max_cells),
        "map" => {
            let grid = load_movingai_map(path)?;
            let info = crate::map::MapInfo {
                width: grid.width(),
                height: grid.height(),
                resolution: 1.0,
                origin: crate::geometry::Pose2::default(),
                frame_id: frame_id.to_string(),
            };
            let data = grid.blocked_cells().iter().map(|&b| if b { 100 } else { 0 }).collect();
            crate::map::OccupancyMap::new(info, data, max_cells)
        }
        _ => Err(crate::error::MapError::Format(format!(
            "{}: unknown map type (expected .yaml, .yml or .map)",
            path.display()
        ))),
    }
}
