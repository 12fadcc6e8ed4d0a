//! The guide searches' scratch memory, shared by every planning thread.
//!
//! Block A* and the cost-weighted A* each keep scratch sized to the map (about 17 and 16 bytes
//! per cell of address space; the pages become resident only where a query writes:
//! [`BlockAStar::scratch_bytes`]). One searcher per thread would hold a copy per thread that
//! ever planned, each resident wherever that thread's queries reached. A pool holds them instead:
//! a plan takes the searcher returned last (on maps whose scratch stays resident between plans,
//! its pages are the ones already mapped) and gives it back when done, so there are only as many
//! searchers as plans ever ran at once (at most the node's `PLANNING_THREADS`, three), and plans
//! that follow each other reuse one. Above [`RELEASE_ABOVE`] a searcher hands its pages back to
//! the operating system after each plan.

use crate::block_astar::BlockAStar;
use crate::search::cost_astar::CostAStar;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;

/// Scratch address space above which a searcher gives its pages back after each plan (see
/// [`Pooled::release_pages`]): maps of about 15 million cells and more. Below it the pages stay,
/// so plans on smaller maps pay no page faults; above it what a long search touched does not stay
/// resident between plans, for the few page faults per touched page the next plan pays.
const RELEASE_ABOVE: usize = 256 << 20;

/// What the pool needs of a searcher.
trait Pooled: Default {
    /// Scratch bytes held (address space).
    fn scratch_bytes(&self) -> usize;
    /// Hands the scratch's pages back to the operating system, contents reading as untouched.
    fn release_pages(&mut self);
}

impl Pooled for BlockAStar {
    fn scratch_bytes(&self) -> usize {
        BlockAStar::scratch_bytes(self)
    }
    fn release_pages(&mut self) {
        self.release_scratch_pages();
    }
}

impl Pooled for CostAStar {
    fn scratch_bytes(&self) -> usize {
        CostAStar::scratch_bytes(self)
    }
    fn release_pages(&mut self) {
        self.release_scratch_pages();
    }
}

/// Idle searchers of one kind, and the scratch bytes held by all of them, idle or in use.
struct Pool<T> {
    idle: Mutex<Vec<T>>,
    bytes: AtomicUsize,
}

static BLOCK: Pool<BlockAStar> = Pool { idle: Mutex::new(Vec::new()), bytes: AtomicUsize::new(0) };
static COST: Pool<CostAStar> = Pool { idle: Mutex::new(Vec::new()), bytes: AtomicUsize::new(0) };

impl<T: Pooled> Pool<T> {
    /// Runs `f` with the searcher returned last (a new one when none is idle), then gives it
    /// back, counting what its scratch grew or shrank by, its pages released when the scratch
    /// is larger than [`RELEASE_ABOVE`]. A panic in `f` drops the searcher and takes its bytes
    /// off the count.
    fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        // A poisoned lock only means a panic elsewhere while pushing or popping: the list is
        // still a list of whole searchers.
        let taken = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut searcher = taken.unwrap_or_default();
        let lent = Lent { bytes: &self.bytes, counted: searcher.scratch_bytes() };
        let result = f(&mut searcher);
        let after = searcher.scratch_bytes();
        if after >= lent.counted {
            self.bytes.fetch_add(after - lent.counted, Relaxed);
        } else {
            self.bytes.fetch_sub(lent.counted - after, Relaxed);
        }
        if after > RELEASE_ABOVE {
            searcher.release_pages();
            // What the plan's other stages freed (repair windows, path lists) goes back too.
            crate::memory::trim_heap();
        }
        self.idle.lock().unwrap_or_else(|e| e.into_inner()).push(searcher);
        result
    }
}

/// A searcher's count while it is lent out: taken off the pool's bytes if the borrower panics
/// (the searcher is then dropped with the unwinding stack).
struct Lent<'a> {
    bytes: &'a AtomicUsize,
    counted: usize,
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.bytes.fetch_sub(self.counted, Relaxed);
        }
    }
}

/// Runs `f` with a Block A* searcher from the pool.
pub(super) fn with_block_search<R>(f: impl FnOnce(&mut BlockAStar) -> R) -> R {
    BLOCK.with(f)
}

/// Runs `f` with a cost-weighted A* searcher from the pool.
pub(super) fn with_cost_search<R>(f: impl FnOnce(&mut CostAStar) -> R) -> R {
    COST.with(f)
}

/// The scratch bytes every pooled searcher holds, idle or in use (address space: see the module
/// documentation for what is resident).
pub(super) fn pooled_bytes() -> usize {
    BLOCK.bytes.load(Relaxed) + COST.bytes.load(Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Barrier};

    impl Pooled for Vec<u8> {
        fn scratch_bytes(&self) -> usize {
            self.capacity()
        }
        fn release_pages(&mut self) {
            // SAFETY: a Vec's heap memory; u8 is Zeroable.
            unsafe { crate::memory::release_zeroed(self) };
        }
    }

    fn pool() -> Arc<Pool<Vec<u8>>> {
        Arc::new(Pool { idle: Mutex::new(Vec::new()), bytes: AtomicUsize::new(0) })
    }

    #[test]
    fn plans_one_after_another_on_many_threads_share_one_searcher() {
        let pool = pool();
        for _ in 0..5 {
            let p = pool.clone();
            std::thread::spawn(move || p.with(|v| v.reserve_exact(1000))).join().unwrap();
        }
        let idle = pool.idle.lock().unwrap();
        assert_eq!(idle.len(), 1);
        assert_eq!(pool.bytes.load(Relaxed), idle[0].capacity());
    }

    #[test]
    fn plans_at_once_take_a_searcher_each_and_a_panic_leaves_the_count_right() {
        let pool = pool();
        let both_in = Arc::new(Barrier::new(2));
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let (p, b) = (pool.clone(), both_in.clone());
                std::thread::spawn(move || {
                    p.with(|v| {
                        v.reserve_exact(100);
                        b.wait();
                    })
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(pool.idle.lock().unwrap().len(), 2);
        let p = pool.clone();
        let panicked = std::thread::spawn(move || {
            p.with(|v| {
                v.reserve_exact(10_000);
                panic!("a plan panics with the searcher in hand")
            })
        });
        assert!(panicked.join().is_err());
        let idle = pool.idle.lock().unwrap();
        assert_eq!(idle.len(), 1, "the searcher lent to the panicking plan is gone");
        assert_eq!(pool.bytes.load(Relaxed), idle.iter().map(Vec::capacity).sum::<usize>());
    }
}
