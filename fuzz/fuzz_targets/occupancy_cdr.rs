//! Fuzzes the message-to-grid conversion: CDR bytes of a `nav_msgs/OccupancyGrid` (as recorded
//! in a bag or received on the wire) to a validated map. Any input must give a map or an error.
#![no_main]

use blockstar_planner::bag::decode_occupancy_grid;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(map) = decode_occupancy_grid(data, 1 << 22) {
        assert_eq!(map.data.len(), map.info.width * map.info.height);
    }
});
