//! `blockstar clearance`: annotate a map and write the obstacle distance or true clearance as a
//! PNG heat map.

use super::CliResult;
use crate::clearance::display::{write_heat_map_png, Annotation};
use crate::clearance::{Capability, ClearanceConfig, ClearanceMap};
use crate::map::DEFAULT_MAX_MAP_CELLS;
use crate::map_io::load_map_file;
use std::path::PathBuf;

/// Arguments of `blockstar clearance`.
#[derive(Debug, clap::Args)]
pub struct ClearanceArgs {
    /// Map file: a map_server YAML or a Moving AI `.map`.
    #[arg(long)]
    pub map: PathBuf,
    /// Output PNG (north up; black = blocked, grey = unknown, red near obstacles to green at the cap).
    #[arg(long)]
    pub png: PathBuf,
    /// Which annotation to draw.
    #[arg(long, value_enum, default_value_t = Annotation::Distance)]
    pub annotation: Annotation,
    /// Treat unknown cells as traversable.
    #[arg(long)]
    pub allow_unknown: bool,
    /// Cap (cells) for obstacle distance and true clearance (1..=255).
    #[arg(long, allow_negative_numbers = true, default_value_t = crate::clearance::DEFAULT_CAP)]
    pub cap: u16,
}

/// Runs `blockstar clearance`.
pub fn run(args: &ClearanceArgs) -> CliResult {
    let occupancy = load_map_file(&args.map, "map", DEFAULT_MAX_MAP_CELLS)?;
    let config = ClearanceConfig { distance_cap: args.cap, clearance_cap: args.cap, ..ClearanceConfig::default() };
    let capability = if args.allow_unknown { Capability::FREE_OR_UNKNOWN } else { Capability::FREE };
    let map = ClearanceMap::new(&occupancy, config, &[capability])?;
    write_heat_map_png(&args.png, &map, capability, args.annotation)?;
    println!("wrote {} ({}x{})", args.png.display(), occupancy.info.width, occupancy.info.height);
    Ok(())
}
