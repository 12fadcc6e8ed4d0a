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

/// Minor page faults of the whole process so far (`getrusage`): pages the kernel had to map in
/// on first touch. A step that faults has allocated (or first written) memory; 0 where the
/// system does not report it.
pub fn minor_faults() -> u64 {
    // SAFETY: an all-zero rusage is a valid value of the plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable rusage for the duration of the call.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    if rc == 0 {
        usage.ru_minflt as u64
    } else {
        0
    }
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

/// Hands the whole pages of `values` back to the operating system, which maps them again,
/// zero-filled, when they are next touched: the slice then reads as all zeros there, which a
/// [`bytemuck::Zeroable`] type allows, and it stops counting in the resident set. For scratch
/// memory whose zero value means "untouched" (the searches' generation-stamped records): a
/// search that reached far leaves nothing resident behind it. Only pages (of the running
/// system's size) wholly inside `values` are released; the partial pages at either end keep
/// their contents. Linux only (elsewhere nothing happens, which is also correct: the contents
/// stay as they were).
///
/// # Safety
/// `values` must lie in private anonymous memory, as the global allocator's heap is (a file
/// mapping would read back the file's bytes, not zeros), and all-zero bytes must be a valid `T`
/// (`Zeroable` says so).
pub(crate) unsafe fn release_zeroed<T: bytemuck::Zeroable>(values: &mut [T]) {
    #[cfg(target_os = "linux")]
    {
        let Some(page) = page_size() else { return };
        let start = values.as_mut_ptr() as usize;
        let end = start + std::mem::size_of_val(values);
        let (first, last) = (start.div_ceil(page) * page, end / page * page);
        if last > first {
            // SAFETY: [first, last) is a whole number of pages inside `values`, which we borrow
            // exclusively, and private anonymous memory (the caller's promise), which
            // MADV_DONTNEED zero-fills on the next touch; all-zero bytes are a valid `T`. On
            // failure (never expected) nothing changed.
            unsafe {
                libc::madvise(first as *mut libc::c_void, last - first, libc::MADV_DONTNEED);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = values;
}

/// The running system's page size in bytes, or `None` where it cannot be read (not Unix).
pub(crate) fn page_size() -> Option<usize> {
    #[cfg(unix)]
    {
        // SAFETY: sysconf has no preconditions.
        usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).ok().filter(|&p| p > 0)
    }
    #[cfg(not(unix))]
    None
}

/// Bytes of the pages overlapping `values` that are resident now (`mincore`), or `None` where
/// that cannot be asked (not Linux, or the call failed). Pages only partly inside `values` count
/// whole. For tests of what a search leaves resident.
#[cfg(test)]
pub(crate) fn resident_bytes<T>(values: &[T]) -> Option<usize> {
    #[cfg(target_os = "linux")]
    {
        let page = page_size()?;
        let start = values.as_ptr() as usize;
        let end = start + std::mem::size_of_val(values);
        let first = start / page * page;
        let pages = (end - first).div_ceil(page);
        let mut flags = vec![0u8; pages];
        // SAFETY: [first, first + pages * page) covers the pages of `values`, which are mapped
        // (a live allocation); `flags` has one byte per page, as mincore writes.
        let r = unsafe { libc::mincore(first as *mut libc::c_void, pages * page, flags.as_mut_ptr()) };
        (r == 0).then(|| flags.iter().filter(|&&f| f & 1 != 0).count() * page)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = values;
        None
    }
}

/// Asks the C allocator to hand the free memory it keeps for reuse back to the operating system
/// (glibc's `malloc_trim`; nothing elsewhere). Costs a walk over the allocator's free lists: for
/// after a large piece of work, not for a hot loop.
///
/// Called after a large plan (the search pool) and after a map's structures were replaced
/// wholesale, once the old ones are dropped (a map prepared, a cluster graph remade on all
/// cores). Those structures are millions of small allocations made on rayon's threads; glibc
/// keeps each freed one in its thread's arena unmerged and merges the whole arena the first time
/// a later free there coalesces into a large chunk, which would be a patch's repair freeing one
/// of those clusters. Measured on 10^8 cells: the first patches after a map was prepared took
/// 2.5-4 ms instead of 0.3 (one free, in relinking two clusters); with the lists merged first
/// (7-24 ms, at preparation) the largest of 600 was 0.62-0.70 ms, idle.
pub fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only reads and releases the allocator's own free memory.
    unsafe {
        libc::malloc_trim(0);
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

    #[test]
    fn released_pages_read_as_zeros_and_the_partial_ends_keep_their_values() {
        let mut v: Vec<u64> = vec![7; 3 * 65536];
        // A slice starting and ending inside pages.
        let (a, b) = (5, v.len() - 9);
        // SAFETY: a Vec's heap memory; u64 is Zeroable.
        unsafe { super::release_zeroed(&mut v[a..b]) };
        let zeros = v.iter().filter(|&&x| x == 0).count();
        assert!(zeros > 0 || cfg!(not(target_os = "linux")));
        // Every value is either as it was or zero; nothing outside the slice changed.
        assert!(v.iter().all(|&x| x == 7 || x == 0));
        assert!(v[..a].iter().chain(&v[b..]).all(|&x| x == 7));
        // Only whole pages were released: the values before the first page boundary keep theirs.
        let page = super::page_size().unwrap_or(4096);
        let first = (v[a..].as_ptr() as usize).div_ceil(page) * page;
        let kept = (first - v[a..].as_ptr() as usize) / 8;
        assert!(v[a..a + kept].iter().all(|&x| x == 7));
    }
}
