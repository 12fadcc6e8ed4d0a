//! Fuzzes the rosbag2 reader (MCAP or sqlite3, recognised by content) on arbitrary file bytes.
#![no_main]

use blockstar_planner::bag::read_topic;
use libfuzzer_sys::fuzz_target;
use std::io::Write;

fuzz_target!(|data: &[u8]| {
    // The reader opens files by path; each fuzz process writes to its own scratch file.
    let dir = std::env::temp_dir().join(format!("blockstar-fuzz-bag-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(if data.first().is_some_and(|b| b & 1 == 1) { "bag.mcap" } else { "bag.db3" });
    if let Ok(mut f) = std::fs::File::create(&path) {
        let _ = f.write_all(data);
    }
    let _ = read_topic(&path, "/map");
});
