//! Fuzzes the Moving AI map and scenario readers.
#![no_main]

use blockstar_planner::map_io::{parse_movingai_map, parse_scenarios};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = parse_movingai_map(text);
        let _ = parse_scenarios(text);
    }
});
