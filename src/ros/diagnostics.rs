//! `/diagnostics` (`diagnostic_msgs/DiagnosticArray`, as `diagnostic_updater` publishes it): once
//! a second while the node is active, one status with the memory the node holds, so a robot's
//! diagnostics aggregator, `ros2 topic echo /diagnostics` or a soak test can watch it for days.

use crate::memory::{heap, mib, resident};
use crate::planner::{ProfileBytes, SiteBytes};
use r2r::diagnostic_msgs::msg::{DiagnosticArray, DiagnosticStatus, KeyValue};
use r2r::std_msgs::msg::Header;

/// Seconds between two diagnostics.
pub const PERIOD_S: f64 = 1.0;

/// Sizes of the node's bounded stores, reported beside the memory.
pub struct Holdings {
    /// Transforms held by the TF buffer (a static edge counts one).
    pub tf_entries: usize,
    /// Frames known to the TF buffer.
    pub tf_frames: usize,
    /// Map updates waiting to be applied.
    pub queued_updates: usize,
    /// Updates that changed a copy of the map because something else still held it (0 expected:
    /// updates wait for the plans in flight).
    pub map_copies: u64,
    /// Goals the action servers hold (running, and finished ones kept for their results).
    pub action_goals: usize,
    /// Heap bytes of the map and its annotations that every vehicle profile shares, by
    /// component (all 0 without a map).
    pub map_bytes: SiteBytes,
    /// Per vehicle profile (`planner_plugins` order), the heap bytes of its own map structures,
    /// by component.
    pub profile_bytes: Vec<(String, ProfileBytes)>,
}

/// The diagnostics of node `node_name` now: one status named `<node_name>: memory`, level OK, with
/// the heap held (`heap_bytes`, `heap_blocks`, `allocations`: present only when the binary
/// installed the counting allocator), the resident set (`resident_kib`, `peak_resident_kib`: Linux)
/// and `holdings` (the map's shared bytes as `map_shared_bytes`, by component as
/// `map_bytes.<component>`; each profile's own as `profile_bytes.<name>`, by component as
/// `profile_bytes.<name>.<component>`), each value a decimal integer.
pub fn memory_diagnostics(node_name: &str, header: Header, holdings: &Holdings) -> DiagnosticArray {
    let mut values = Vec::new();
    let mut message = Vec::new();
    let mut add = |key: &str, value: u64| values.push(KeyValue { key: key.to_owned(), value: value.to_string() });
    if let Some(h) = heap() {
        add("heap_bytes", h.bytes);
        add("heap_blocks", h.blocks);
        add("allocations", h.allocations);
        message.push(format!("heap {:.1} MiB in {} blocks", mib(h.bytes), h.blocks));
    }
    if let Some(r) = resident() {
        add("resident_kib", r.kib);
        add("peak_resident_kib", r.peak_kib);
        message.push(format!("resident {:.1} MiB", r.kib as f64 / 1024.0));
    }
    // Bounded, but allocated at once by a planning thread's first plan: a soak reads heap growth
    // less this.
    add("thread_stores_bytes", crate::planner::thread_stores_bytes() as u64);
    add("tf_entries", holdings.tf_entries as u64);
    add("tf_frames", holdings.tf_frames as u64);
    add("queued_map_updates", holdings.queued_updates as u64);
    add("map_copies", holdings.map_copies);
    add("action_goals", holdings.action_goals as u64);
    add("map_shared_bytes", holdings.map_bytes.total() as u64);
    for (component, bytes) in holdings.map_bytes.components() {
        add(&format!("map_bytes.{component}"), bytes as u64);
    }
    for (name, bytes) in &holdings.profile_bytes {
        add(&format!("profile_bytes.{name}"), bytes.total() as u64);
        for (component, b) in bytes.components() {
            add(&format!("profile_bytes.{name}.{component}"), b as u64);
        }
    }
    let status = DiagnosticStatus {
        level: DiagnosticStatus::OK as u8,
        name: format!("{node_name}: memory"),
        message: if message.is_empty() { "no memory readings on this platform".into() } else { message.join(", ") },
        hardware_id: String::new(),
        values,
    };
    DiagnosticArray { header, status: vec![status] }
}
