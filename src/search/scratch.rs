//! Reusable search memory: generation-stamped node arrays and a min-heap on non-negative `f64`
//! keys, so a query touches only the nodes it reaches instead of clearing whole-map arrays.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Node value reported for a node not reached in the current query.
pub const NO_PARENT: u32 = u32::MAX;

/// Per-node g-values, parents and closed flags, valid only when stamped with the current
/// generation. [`NodeScratch::begin`] starts a new query in O(1) (amortised).
///
/// The three values of a node share one 16-byte record, so a node's test and update touch one
/// cache line, not three arrays.
///
/// The records are allocated zeroed (a stale record is stamp 0, whatever its other fields), so
/// the operating system maps a page of them only when a query first writes to it: the resident
/// memory grows with the area the thread's queries reached, not with the map.
#[derive(Debug, Default, Clone)]
pub struct NodeScratch {
    /// The records, `ALIGN_SLACK` more than asked for: node `i`'s is at `offset + i`.
    nodes: Vec<NodeRecord>,
    /// Where node 0's record is: the first record on a 4 KiB boundary, so that runs of 256
    /// nodes a caller lays out to start at multiples of 256 (`cost_astar`'s tiles) each fill one
    /// page instead of straddling two (a large allocation starts 16 bytes into its pages).
    offset: usize,
    /// Nodes asked for by the last `begin`.
    len: usize,
    /// Even; a record is current when its stamp is `generation` (open) or `generation + 1`
    /// (closed).
    generation: u32,
    heap: BinaryHeap<(Reverse<u64>, u32)>,
}

#[derive(Debug, Clone, Copy)]
struct NodeRecord {
    g: f64,
    parent: u32,
    stamp: u32,
}

const STALE: NodeRecord = NodeRecord { g: f64::INFINITY, parent: NO_PARENT, stamp: 0 };

/// The boundary node 0's record is placed on (bytes): the usual page.
const ALIGN_BYTES: usize = 4096;
/// Records allocated beyond those asked for, room to move node 0 to an `ALIGN_BYTES` boundary.
const ALIGN_SLACK: usize = ALIGN_BYTES / std::mem::size_of::<NodeRecord>() - 1;

// SAFETY: every field is a plain number, for which all-zero bytes are a valid value (a record of
// stamp 0 is stale, as `STALE`).
unsafe impl bytemuck::Zeroable for NodeRecord {}

impl NodeScratch {
    /// Bytes held (records and open list), at their capacity.
    pub fn bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<NodeRecord>()
            + self.heap.capacity() * std::mem::size_of::<(Reverse<u64>, u32)>()
    }

    /// Hands the records' pages back to the operating system (see
    /// `crate::memory::release_zeroed`): they read as stale records (stamp 0) afterwards.
    pub fn release_pages(&mut self) {
        // SAFETY: the global allocator's heap memory (a Vec), and NodeRecord is Zeroable.
        unsafe { crate::memory::release_zeroed(&mut self.nodes) };
    }

    /// Bytes of the records' pages resident now (see [`crate::memory::resident_bytes`]).
    #[cfg(test)]
    pub(crate) fn resident_record_bytes(&self) -> Option<usize> {
        crate::memory::resident_bytes(&self.nodes)
    }

    /// Prepares for a query over `nodes` nodes: forgets every value of the previous query.
    pub fn begin(&mut self, nodes: usize) {
        if self.len != nodes || self.nodes.is_empty() {
            self.allocate(nodes);
        }
        self.generation = self.generation.wrapping_add(2);
        if self.generation == 0 {
            // After 2^31 queries the stamps wrap: clear them once (a fresh zeroed allocation,
            // so the pages no query reached since stay unmapped).
            self.allocate(nodes);
            self.generation = 2;
        }
        self.heap.clear();
    }

    /// Fresh zeroed records for `nodes` nodes, node 0's on a 4 KiB boundary.
    fn allocate(&mut self, nodes: usize) {
        self.nodes = Vec::new(); // the old pages go before the new ones come
        self.nodes = bytemuck::zeroed_vec(nodes + ALIGN_SLACK);
        let misalignment = self.nodes.as_ptr() as usize % ALIGN_BYTES;
        let size = std::mem::size_of::<NodeRecord>();
        // A record boundary on a 4 KiB boundary exists when the records start on one of their
        // own size's multiples (the allocator's 16-byte alignment); otherwise none is, and node
        // 0 stays first.
        self.offset = if misalignment % size == 0 { ((ALIGN_BYTES - misalignment) % ALIGN_BYTES) / size } else { 0 };
        self.len = nodes;
    }

    #[inline(always)]
    fn current(&self, i: usize) -> Option<&NodeRecord> {
        let n = &self.nodes[self.offset + i];
        (n.stamp & !1 == self.generation).then_some(n)
    }

    #[inline(always)]
    fn touch(&mut self, i: usize) -> &mut NodeRecord {
        let generation = self.generation;
        let n = &mut self.nodes[self.offset + i];
        if n.stamp & !1 != generation {
            *n = NodeRecord { stamp: generation, ..STALE };
        }
        n
    }

    /// g-value of node `i` (`+inf` when not reached).
    #[inline(always)]
    pub fn g(&self, i: usize) -> f64 {
        self.current(i).map_or(f64::INFINITY, |n| n.g)
    }

    /// Parent of node `i` ([`NO_PARENT`] when none).
    #[inline(always)]
    pub fn parent(&self, i: usize) -> u32 {
        self.current(i).map_or(NO_PARENT, |n| n.parent)
    }

    /// True when node `i` was closed in this query.
    #[inline(always)]
    pub fn is_closed(&self, i: usize) -> bool {
        self.nodes[self.offset + i].stamp == self.generation + 1
    }

    /// Sets g and parent of node `i`.
    #[inline(always)]
    pub fn set(&mut self, i: usize, g: f64, parent: u32) {
        let n = self.touch(i);
        n.g = g;
        n.parent = parent;
    }

    /// Marks node `i` closed.
    #[inline(always)]
    pub fn close(&mut self, i: usize) {
        let n = self.touch(i);
        n.stamp |= 1;
    }

    /// Gives back the open list's memory beyond `entries` entries (12 bytes each), so what a
    /// searcher holds between queries does not grow with the largest query it served.
    pub fn trim_open_list(&mut self, entries: usize) {
        self.heap.clear();
        self.heap.shrink_to(entries);
    }

    /// Pushes node `i` with priority `f` (negative values are treated as 0).
    #[inline(always)]
    pub fn push(&mut self, i: usize, f: f64) {
        self.heap.push((Reverse(f.max(0.0).to_bits()), i as u32));
    }

    /// Pops the node with the smallest priority, with that priority.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(usize, f64)> {
        self.heap.pop().map(|(Reverse(k), i)| (i as usize, f64::from_bits(k)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_zero_sits_on_a_4_kib_boundary() {
        let mut s = NodeScratch::default();
        for nodes in [1, 300, 100_000, 3_000_000] {
            s.begin(nodes);
            assert_eq!((s.nodes[s.offset..].as_ptr() as usize) % ALIGN_BYTES, 0, "{nodes} nodes");
            assert!(s.nodes.len() - s.offset >= nodes);
            s.set(nodes - 1, 1.0, 0);
            assert_eq!(s.g(nodes - 1), 1.0);
        }
    }

    #[test]
    fn generations_forget_old_values() {
        let mut s = NodeScratch::default();
        s.begin(4);
        s.set(2, 1.5, 0);
        s.close(2);
        s.push(2, 3.0);
        s.push(1, 1.0);
        assert_eq!(s.pop(), Some((1, 1.0)));
        s.begin(4);
        assert_eq!(s.g(2), f64::INFINITY);
        assert!(!s.is_closed(2));
        assert_eq!(s.parent(2), NO_PARENT);
        assert_eq!(s.pop(), None);
    }
}
