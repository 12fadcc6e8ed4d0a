//! Fuzzes the map_server reader: the YAML text and the image bytes (PGM or PNG). Any input must
//! give a map or an error, never a panic or an unbounded allocation.
#![no_main]

use blockstar_planner::map_io::map_server::{map_from_image_bytes, MapServerParams};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    // First byte chooses how the input splits into YAML and image.
    let Some((&split, rest)) = data.split_first() else { return };
    let cut = (split as usize * rest.len()) / 256;
    let (yaml, image) = rest.split_at(cut);
    if let Ok(text) = std::str::from_utf8(yaml) {
        let _ = MapServerParams::parse(text, Path::new("/nonexistent"));
    }
    let params = MapServerParams {
        image: "fuzz.pgm".into(),
        image_name: "fuzz.pgm".into(),
        resolution: 0.05,
        origin: Default::default(),
        negate: split & 1 == 1,
        occupied_thresh: 0.65,
        free_thresh: 0.196,
        mode: blockstar_planner::map_io::MapMode::Trinary,
    };
    let _ = map_from_image_bytes(&params, image, "map", 4_000_000);
});
