//! Memory readings: the heap a program holds and the process's resident set.
//!
//! The heap figures come from [`stats_alloc`]'s counting wrapper of the system allocator, which a
//! binary installs as its global allocator with [`install_counting_allocator!`](crate::install_counting_allocator) (`blockstar`,
//! `planner_node` and the memory tests do). A library does not choose its users' allocator, so
//! this crate never installs one itself: in a program that did not install it, [`heap`] returns
//! `None`. The resident set is read from `/proc/self/status` (Linux; `None` elsewhere).
//!
//! Heap bytes held are the figure to bound (they are exact and repeatable: what the program still
//! owns); the resident set also holds memory the C allocator keeps for reuse after it was freed,
//! and pages of the binary and its libraries, so it is reported beside the heap, not instead.

use stats_alloc::{StatsAlloc, INSTRUMENTED_SYSTEM};
use std::alloc::System;

/// The type of [`COUNTING_ALLOCATOR`]: the system allocator, counted.
pub type CountingAllocator = StatsAlloc<System>;

/// The counting allocator a binary installs (see [`install_counting_allocator!`](crate::install_counting_allocator)).
pub static COUNTING_ALLOCATOR: &CountingAllocator = &INSTRUMENTED_SYSTEM;

/// Installs [`COUNTING_ALLOCATOR`] as the calling crate's global allocator (once per program):
/// `blockstar_planner::install_counting_allocator!();` at the top level of a binary's main file.
#[macro_export]
macro_rules! install_counting_allocator {
    () => {
        #[global_allocator]
        static GLOBAL_ALLOCATOR: &$crate::memory::CountingAllocator = $crate::memory::COUNTING_ALLOCATOR;
    };
}

/// The heap a program holds now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeapUse {
    /// Bytes allocated and not yet freed.
    pub bytes: u64,
    /// Allocations not yet freed.
    pub blocks: u64,
    /// Allocations made since the program started (freed or not).
    pub allocations: u64,
}

/// The heap held now, or `None` when the program did not install [`COUNTING_ALLOCATOR`] (it then
/// counts nothing). The counters are updated by every thread without locking; a reading taken
/// while other threads allocate is exact to within their allocations in flight.
pub fn heap() -> Option<HeapUse> {
    let s = INSTRUMENTED_SYSTEM.stats();
    if s.allocations == 0 {
        return None;
    }
    // A reallocation adds its growth to `bytes_allocated` (or its shrinkage to
    // `bytes_deallocated`) already; `bytes_reallocated` is the same change again, net.
    Some(HeapUse {
        bytes: s.bytes_allocated.saturating_sub(s.bytes_deallocated) as u64,
        blocks: s.allocations.saturating_sub(s.deallocations) as u64,
        allocations: s.allocations as u64,
    })
}

/// The process's resident memory, in KiB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resident {
    /// Resident now (`VmRSS`).
    pub kib: u64,
    /// The most resident so far (`VmHWM`, the high-water mark).
    pub peak_kib: u64,
}

/// The resident memory of this process, or `None` where `/proc/self/status` cannot be read or
/// lacks the two fields (not Linux).
pub fn resident() -> Option<Resident> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    resident_from_status(&status)
}

/// `VmRSS` and `VmHWM` of a `/proc/<pid>/status` text.
fn resident_from_status(status: &str) -> Option<Resident> {
    let field = |name: &str| {
        status.lines().find_map(|l| l.strip_prefix(name)?.trim().strip_suffix("kB")?.trim().parse::<u64>().ok())
    };
    Some(Resident { kib: field("VmRSS:")?, peak_kib: field("VmHWM:")? })
}

/// Bytes as MiB, for reports.
pub fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// What a value holds on the heap (bytes of the buffers it owns, by their capacity): the figure
/// `/diagnostics` and `blockstar bench-fleet` report per component of the map's structures. It
/// does not depend on an allocator being installed; allocator overhead is not counted.
pub trait HeapSize {
    /// Bytes of heap this value owns.
    fn heap_bytes(&self) -> usize;
}

impl<T: Copy> HeapSize for Vec<T> {
    fn heap_bytes(&self) -> usize {
        self.capacity() * std::mem::size_of::<T>()
    }
}

impl<T: HeapSize> HeapSize for Option<T> {
    fn heap_bytes(&self) -> usize {
        self.as_ref().map_or(0, HeapSize::heap_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_fields_are_read_in_kib() {
        let status = "Name:\tx\nVmHWM:\t  20480 kB\nVmRSS:\t   10240 kB\nThreads:\t3\n";
        assert_eq!(resident_from_status(status), Some(Resident { kib: 10240, peak_kib: 20480 }));
        assert_eq!(resident_from_status("VmRSS:\t1 kB\n"), None);
        assert_eq!(resident_from_status("VmRSS:\tlots\nVmHWM:\t1 kB\n"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_is_resident() {
        let r = resident().expect("Linux has /proc/self/status");
        assert!(r.kib > 0 && r.peak_kib >= r.kib, "{r:?}");
    }

    #[test]
    fn no_heap_figures_without_the_counting_allocator() {
        // The library's own test binary does not install it.
        assert_eq!(heap(), None);
    }
}
