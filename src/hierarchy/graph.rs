//! The graph over the whole mask: one [`Cluster`] per square of [`SIDE`] cells, built in
//! parallel and repaired cluster by cluster.

use super::cluster::{self, Cluster, Labels, Link, Piece, Sides, SHIFT, SIDE};
use crate::grid::CellRect;
use crate::search::los::CellMask;
use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// The pieces of a vehicle mask cluster by cluster and how they join: a graph of a few nodes per
/// `SIDE x SIDE` cells in which two nodes are linked exactly when their cells touch across a
/// cluster side. Two free mask cells are 4-connected on the mask if and only if their pieces are
/// connected in the graph, so a path in the graph always has a path on the mask inside its
/// clusters.
///
/// Every cluster is derived from the mask (and the weights) inside it and its east and north
/// neighbours alone, so a change is repaired by remaking the clusters it touches and relinking
/// those west and south of them, or only weighing a cluster's pieces again where only the
/// weights changed ([`ClusterGraph::repair`]), and a repaired graph equals one built from
/// scratch.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterGraph {
    width: usize,
    height: usize,
    across: usize,
    up: usize,
    clusters: Vec<Cluster>,
}

/// A node of the graph: a piece of a cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct NodeId {
    pub cluster: u32,
    pub piece: u16,
}

impl ClusterGraph {
    /// The graph of `mask`, each piece weighted by the mean of `extra(k)` (the caller's weight
    /// above 1 per cell unit of the cell of row-major index `k`; 0 everywhere for the shortest
    /// paths) over its cells. Clusters are made in parallel.
    pub fn build(mask: &CellMask, extra: impl Fn(usize) -> f64 + Sync) -> Self {
        let (width, height) = (mask.width(), mask.height());
        let (across, up) = (width.div_ceil(SIDE), height.div_ceil(SIDE));
        // Each cluster labelled once: its pieces and sides first, then the links from the sides.
        let labelled: Vec<(Box<[Piece]>, Option<Sides>)> = (0..across * up)
            .into_par_iter()
            .with_min_len(64)
            .map(|i| {
                let l = Labels::of(mask, i % across, i / across);
                if l.count() == 0 {
                    (Box::default(), None)
                } else {
                    (l.pieces(width, &extra), Some(l.sides()))
                }
            })
            .collect();
        let sides = |i: usize| labelled[i].1.as_ref();
        let links: Vec<Box<[Link]>> = (0..across * up)
            .into_par_iter()
            .with_min_len(64)
            .map(|i| {
                let Some(here) = sides(i) else { return Box::default() };
                let east = (i % across + 1 < across).then(|| sides(i + 1)).flatten();
                let north = (i / across + 1 < up).then(|| sides(i + across)).flatten();
                cluster::links(here, east, north)
            })
            .collect();
        // Not collected in place: that would keep `labelled`'s far larger allocation.
        let mut clusters = Vec::with_capacity(across * up);
        clusters.extend(labelled.into_iter().zip(links).map(|((pieces, _), links)| Cluster { pieces, links }));
        Self { width, height, across, up, clusters }
    }

    /// Brings the graph up to date after the mask (and perhaps the weights) changed inside
    /// `mask_rects` and only the weights inside `weight_rects`: the clusters the mask changed in
    /// are made anew, with the links of those west and south of them (which reach into them;
    /// their pieces did not change); where only the weights changed, a cluster's pieces are
    /// weighed again and its links, which depend on the mask alone, are kept. Many clusters at
    /// once (a map replaced whole) are remade in parallel. `mask` and `extra` must be the ones
    /// the graph was built on, as they are now.
    pub fn repair(
        &mut self,
        mask: &CellMask,
        mask_rects: &[CellRect],
        weight_rects: &[CellRect],
        extra: impl Fn(usize) -> f64 + Sync,
    ) {
        debug_assert_eq!((mask.width(), mask.height()), (self.width, self.height));
        let changed = self.clusters_in(mask_rects);
        let mut reweighed = self.clusters_in(weight_rects);
        reweighed.retain(|i| changed.binary_search(i).is_err());
        if changed.len() + reweighed.len() > 256 {
            // Most of the map: every cluster a change reaches, remade whole on all cores.
            let mut remade: Vec<usize> =
                changed.iter().flat_map(|&i| [Some(i), self.west(i), self.south(i)]).flatten().collect();
            remade.extend(&reweighed);
            remade.sort_unstable();
            remade.dedup();
            let across = self.across;
            let make = |&i: &usize| cluster::build(mask, (i % across, i / across), &extra);
            let clusters: Vec<Cluster> = remade.par_iter().with_min_len(64).map(make).collect();
            for (i, c) in remade.into_iter().zip(clusters) {
                self.clusters[i] = c;
            }
            // The old clusters are gone: see `memory::trim_heap`.
            crate::memory::trim_heap();
            return;
        }
        // A few clusters: each labelled once, the changed ones remade, the links of their west
        // and south neighbours made again (those neighbours' pieces are as they were), the pieces
        // of those where only weights changed weighed again.
        let mut relinked: Vec<usize> = changed.iter().flat_map(|&i| [self.west(i), self.south(i)]).flatten().collect();
        relinked.sort_unstable();
        relinked.dedup();
        relinked.retain(|i| changed.binary_search(i).is_err());
        let mut cache = LabelCache { mask, across: self.across, labels: FxHashMap::default() };
        for &i in &changed {
            let pieces = cache.get(i).pieces(mask.width(), &extra);
            self.clusters[i] = Cluster { pieces, links: self.links_of(&mut cache, i, Across::BOTH, &[]) };
        }
        for &i in &relinked {
            // Only the sides facing a remade cluster: the links across the other side join two
            // clusters that did not change, so they are kept and those neighbours not labelled.
            let is_changed = |j: Option<usize>| j.is_some_and(|j| changed.binary_search(&j).is_ok());
            let redo = Across { east: is_changed(self.east(i)), north: is_changed(self.north(i)) };
            let kept = std::mem::take(&mut self.clusters[i].links);
            self.clusters[i].links = self.links_of(&mut cache, i, redo, &kept);
        }
        for &i in &reweighed {
            self.clusters[i].pieces = cache.get(i).pieces(mask.width(), &extra);
        }
    }

    /// The clusters `rects` touch, sorted, each once.
    fn clusters_in(&self, rects: &[CellRect]) -> Vec<usize> {
        let (across, up) = (self.across, self.up);
        let mut clusters: Vec<usize> = Vec::new();
        for r in rects.iter().filter(|r| r.width > 0 && r.height > 0) {
            let (cx0, cy0) = (r.x >> SHIFT, r.y >> SHIFT);
            let cx1 = ((r.x + r.width - 1) >> SHIFT).min(across - 1);
            let cy1 = ((r.y + r.height - 1) >> SHIFT).min(up - 1);
            if cx0 > cx1 || cy0 > cy1 {
                continue;
            }
            clusters.extend((cy0..=cy1).flat_map(|cy| (cx0..=cx1).map(move |cx| cy * across + cx)));
        }
        clusters.sort_unstable();
        clusters.dedup();
        clusters
    }

    /// Cluster `i`'s links across the sides `redo` names, from the labels in `cache`, with the
    /// links of `kept` across the other sides (an empty cluster has none), sorted.
    fn links_of(&self, cache: &mut LabelCache, i: usize, redo: Across, kept: &[Link]) -> Box<[Link]> {
        if cache.get(i).count() == 0 {
            return Box::default();
        }
        let east = self.east(i).filter(|_| redo.east);
        let north = self.north(i).filter(|_| redo.north);
        for j in [east, north].into_iter().flatten() {
            cache.get(j);
        }
        let get = |j: Option<usize>| j.map(|j| cache.labels[&j].sides());
        let made = cluster::links(&cache.labels[&i].sides(), get(east).as_ref(), get(north).as_ref());
        let mut links: Vec<Link> = kept.iter().filter(|l| !redo.crosses(l)).copied().collect();
        if links.is_empty() {
            return made;
        }
        links.extend_from_slice(&made);
        links.sort_unstable();
        links.into_boxed_slice()
    }

    /// The cluster east of `i`, if any.
    fn east(&self, i: usize) -> Option<usize> {
        (i % self.across + 1 < self.across).then_some(i + 1)
    }

    /// The cluster north of `i`, if any.
    fn north(&self, i: usize) -> Option<usize> {
        (i / self.across + 1 < self.up).then_some(i + self.across)
    }

    /// The cluster west of `i`, if any.
    fn west(&self, i: usize) -> Option<usize> {
        (i % self.across > 0).then(|| i - 1)
    }

    /// The cluster south of `i`, if any.
    fn south(&self, i: usize) -> Option<usize> {
        (i >= self.across).then(|| i - self.across)
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.clusters.capacity() * std::mem::size_of::<Cluster>()
            + self.clusters.iter().map(Cluster::heap_bytes).sum::<usize>()
    }

    /// Pieces in the whole graph (its nodes).
    pub fn nodes(&self) -> usize {
        self.clusters.iter().map(|c| c.pieces.len()).sum()
    }

    /// Clusters across and up.
    pub(super) fn clusters_across(&self) -> (usize, usize) {
        (self.across, self.up)
    }

    /// The node of free mask cell `(x, y)`; `None` when it is blocked or off the mask.
    pub(super) fn node_of(&self, mask: &CellMask, (x, y): (usize, usize)) -> Option<NodeId> {
        if x >= self.width || y >= self.height {
            return None;
        }
        let (cx, cy) = (x >> SHIFT, y >> SHIFT);
        let piece = Labels::of(mask, cx, cy).piece_of(x, y)?;
        let cluster = cy * self.across + cx;
        // A graph behind its mask (a repair that never ran) has no such piece: no node.
        (usize::from(piece) < self.clusters[cluster].pieces.len()).then_some(NodeId { cluster: cluster as u32, piece })
    }

    /// The piece of node `n`.
    pub(super) fn piece(&self, n: NodeId) -> Piece {
        self.clusters[n.cluster as usize].pieces[usize::from(n.piece)]
    }

    /// Calls `visit` with every node linked to `n`.
    pub(super) fn neighbours(&self, n: NodeId, mut visit: impl FnMut(NodeId)) {
        let c = n.cluster as usize;
        let (cx, cy) = (c % self.across, c / self.across);
        let (east, north) = (c + 1, c + self.across);
        for l in self.clusters[c].links.iter().filter(|l| l.from == n.piece) {
            visit(NodeId { cluster: if l.north { north } else { east } as u32, piece: l.to });
        }
        let mut back = |from_cluster: usize, north: bool| {
            let links: &[Link] = &self.clusters[from_cluster].links;
            for l in links.iter().filter(|l| l.north == north && l.to == n.piece) {
                visit(NodeId { cluster: from_cluster as u32, piece: l.from });
            }
        };
        if cx > 0 {
            back(c - 1, false);
        }
        if cy > 0 {
            back(c - self.across, true);
        }
    }
}

/// Which of a cluster's sides to link across: east, north.
#[derive(Clone, Copy)]
struct Across {
    east: bool,
    north: bool,
}

impl Across {
    const BOTH: Across = Across { east: true, north: true };

    /// True when `link` runs across one of these sides.
    fn crosses(self, link: &Link) -> bool {
        if link.north {
            self.north
        } else {
            self.east
        }
    }
}

/// Cluster labels made during one repair, each once.
struct LabelCache<'a> {
    mask: &'a CellMask,
    across: usize,
    labels: FxHashMap<usize, Labels>,
}

impl LabelCache<'_> {
    fn get(&mut self, i: usize) -> &Labels {
        let (mask, across) = (self.mask, self.across);
        self.labels.entry(i).or_insert_with(|| Labels::of(mask, i % across, i / across))
    }
}
