//! The corridor of a long query: A* over the cluster graph from the start's piece to the goal's,
//! the clusters of the path found widened by a ring, and the graph's cost to the goal from each
//! of them (a guide for the fine search's heuristic).

use super::cluster::SHIFT;
use super::graph::{ClusterGraph, NodeId};
use crate::search::los::CellMask;
use crate::search::poll::StopPoll;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// The clusters a fine search may enter, and in each the graph's cost to the goal from its
/// cheapest piece's centroid.
#[derive(Debug, Clone, PartialEq)]
pub struct Corridor {
    across: usize,
    goal: (f64, f64),
    /// Per cluster of the map: `None` outside the corridor.
    to_goal: Vec<Option<ToGoal>>,
    clusters: usize,
}

/// The graph's cost to the goal from a point (cell units) and the cost weight around it.
#[derive(Debug, Clone, Copy, PartialEq)]
struct ToGoal {
    cost: f32,
    x: f32,
    y: f32,
    weight: f32,
}

impl Corridor {
    /// True when map cell `(x, y)` (inside the map) lies in a cluster of the corridor.
    #[inline(always)]
    pub fn contains(&self, x: i64, y: i64) -> bool {
        self.to_goal[self.cluster_of(x, y)].is_some()
    }

    /// For cell `(x, y)` inside the map: `None` outside the corridor, else an estimate of the
    /// cost from the cell's centre to the goal read from the graph: the cost from its cluster's
    /// cheapest piece's centroid, less how much nearer the goal (straight-line) the cell is than
    /// that centroid, at the piece's weight. An estimate, not a bound: the graph's costs run
    /// between centroids.
    #[inline(always)]
    pub fn estimate(&self, x: i64, y: i64) -> Option<f64> {
        let t = self.to_goal[self.cluster_of(x, y)]?;
        let (px, py) = (x as f64 + 0.5, y as f64 + 0.5);
        let closer = (f64::from(t.x) - self.goal.0).hypot(f64::from(t.y) - self.goal.1)
            - (px - self.goal.0).hypot(py - self.goal.1);
        Some((f64::from(t.cost) - closer * f64::from(t.weight)).max(0.0))
    }

    #[inline(always)]
    fn cluster_of(&self, x: i64, y: i64) -> usize {
        (y as usize >> SHIFT) * self.across + (x as usize >> SHIFT)
    }

    /// Clusters in the corridor.
    pub fn clusters(&self) -> usize {
        self.clusters
    }
}

/// What [`ClusterGraph::corridor`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct CorridorSearch {
    /// The clusters of the cheapest graph path, widened by one ring (the 8 clusters around each).
    pub corridor: Corridor,
    /// Graph nodes expanded (the path's search and the costs to the goal).
    pub expansions: usize,
}

/// Why [`ClusterGraph::corridor`] gave no corridor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CorridorFailure {
    /// The start or the goal cell is blocked on the mask (or off it).
    #[error("the start or the goal cell is blocked")]
    BlockedEndpoint,
    /// The start's piece and the goal's are not connected: no path exists on the mask.
    #[error("the cluster graph joins no path between them")]
    NoPath,
    /// `should_stop` returned true.
    #[error("stopped")]
    Stopped,
}

/// An open-list entry: `f` and `g` as ordered bits (finite, non-negative), the node. The heap
/// pops the smallest `f` and, among equal `f`, the largest `g` (the deepest first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Open(Reverse<u64>, u64, u32, u16);

/// A node reached: its cost from the search's source, its parent, closed or not.
type Reached = HashMap<NodeId, (f64, NodeId, bool)>;

impl ClusterGraph {
    /// The corridor between free mask cells `start` and `goal` (cells of `mask`, the mask the graph
    /// was built on): the clusters of the cheapest path through the graph, widened by a ring.
    ///
    /// The graph's step from piece `a` to piece `b` costs the distance between their centroids
    /// times `1 +` the mean of their weights; the heuristic is the straight-line distance to the
    /// goal cell's centre (consistent: no step costs less than its length). The corridor always
    /// holds a 4-connected path of free cells from `start` to `goal`, as the graph's links are
    /// exact; the cheapest path on the mask may leave it (the graph's costs estimate the
    /// mask's), which is where this gives up optimality.
    ///
    /// `should_stop` is polled every 256 entries taken off either search's open list, stale ones
    /// included ([`StopPoll`]).
    pub fn corridor(
        &self,
        mask: &CellMask,
        start: (usize, usize),
        goal: (usize, usize),
        should_stop: impl FnMut() -> bool,
    ) -> Result<CorridorSearch, CorridorFailure> {
        let mut poll = StopPoll::new(256, should_stop);
        let s = self.node_of(mask, start).ok_or(CorridorFailure::BlockedEndpoint)?;
        let g = self.node_of(mask, goal).ok_or(CorridorFailure::BlockedEndpoint)?;
        let (gx, gy) = (goal.0 as f64 + 0.5, goal.1 as f64 + 0.5);
        // 1. The cheapest graph path from the start's piece to the goal's.
        let to_goal = |n: NodeId| {
            let p = self.piece(n);
            (f64::from(p.x) - gx).hypot(f64::from(p.y) - gy)
        };
        let (reached, forward) = self.search(s, Some(g), to_goal, |_| true, &mut poll)?;
        if !reached.get(&g).is_some_and(|r| r.2) {
            return Err(CorridorFailure::NoPath);
        }
        // 2. Its clusters and the ring around each.
        let (across, up) = self.clusters_across();
        let mut inside = vec![false; across * up];
        let mut n = g;
        loop {
            let c = n.cluster as usize;
            let (cx, cy) = (c % across, c / across);
            for y in cy.saturating_sub(1)..=(cy + 1).min(up - 1) {
                for x in cx.saturating_sub(1)..=(cx + 1).min(across - 1) {
                    inside[y * across + x] = true;
                }
            }
            if n == s {
                break;
            }
            n = reached[&n].1;
        }
        // 3. The graph's cost to the goal from every piece in them (the graph is undirected).
        let (costs, backward) = self.search(g, None, |_| 0.0, |n| inside[n.cluster as usize], &mut poll)?;
        let mut corridor = Corridor { across, goal: (gx, gy), to_goal: vec![None; across * up], clusters: 0 };
        for (n, &(cost, _, _)) in &costs {
            let p = self.piece(*n);
            let slot = &mut corridor.to_goal[n.cluster as usize];
            if slot.is_none_or(|t| f64::from(t.cost) > cost) {
                *slot = Some(ToGoal { cost: cost as f32, x: p.x, y: p.y, weight: 1.0 + p.extra });
            }
        }
        // A cluster of the ring whose pieces the path's cannot reach inside the corridor is still
        // open to the fine search, at an estimate of 0 (the distance alone): the corridor is the
        // clusters, not the pieces. The fine search can only enter such a piece by a diagonal or
        // knight's move across a corner, and nothing there leads on to the goal.
        for (c, _) in inside.iter().enumerate().filter(|(_, &i)| i) {
            let slot = &mut corridor.to_goal[c];
            if slot.is_none() {
                *slot = Some(ToGoal { cost: 0.0, x: 0.0, y: 0.0, weight: 0.0 });
            }
        }
        corridor.clusters = inside.iter().filter(|&&i| i).count();
        Ok(CorridorSearch { corridor, expansions: forward + backward })
    }

    /// The core of both searches: A* (Dijkstra with `h` 0) from `from` over the nodes `allowed`
    /// admits, until `to` is closed (or every node reached is, without `to`). Returns the nodes
    /// reached with their costs and parents, and the expansions.
    fn search(
        &self,
        from: NodeId,
        to: Option<NodeId>,
        h: impl Fn(NodeId) -> f64,
        allowed: impl Fn(NodeId) -> bool,
        poll: &mut StopPoll<impl FnMut() -> bool>,
    ) -> Result<(Reached, usize), CorridorFailure> {
        let at = |n: NodeId| {
            let p = self.piece(n);
            (f64::from(p.x), f64::from(p.y), f64::from(p.extra))
        };
        let mut reached: Reached = HashMap::new();
        let mut open: BinaryHeap<Open> = BinaryHeap::new();
        reached.insert(from, (0.0, from, false));
        open.push(Open(Reverse(h(from).to_bits()), 0, from.cluster, from.piece));
        let mut expansions = 0usize;
        let mut next: Vec<NodeId> = Vec::new();
        while let Some(Open(_, _, cluster, piece)) = open.pop() {
            let n = NodeId { cluster, piece };
            // A goal taken off the list is answered even when the poll says stop.
            if poll.stop() && Some(n) != to {
                return Err(CorridorFailure::Stopped);
            }
            let entry = reached.get_mut(&n).expect("every open node was reached");
            if entry.2 {
                continue;
            }
            entry.2 = true;
            let gn = entry.0;
            if Some(n) == to {
                break;
            }
            expansions += 1;
            let here = at(n);
            self.successors(n, &mut next);
            for &m in next.iter().filter(|&&m| allowed(m)) {
                let there = at(m);
                let step = (here.0 - there.0).hypot(here.1 - there.1) * (1.0 + 0.5 * (here.2 + there.2));
                let ng = gn + step;
                let better = match reached.get(&m) {
                    Some(&(gm, _, closed)) => !closed && ng < gm,
                    None => true,
                };
                if better {
                    reached.insert(m, (ng, n, false));
                    open.push(Open(Reverse((ng + h(m)).to_bits()), ng.to_bits(), m.cluster, m.piece));
                }
            }
        }
        Ok((reached, expansions))
    }

    /// The nodes one step from `n` (into `next`, sorted): the linked pieces, and those two links
    /// away in a diagonal cluster. The way through the orthogonal cluster between stays inside
    /// a corridor's ring, and the diagonal step keeps the graph's distances near the straight
    /// line's (with side steps alone a diagonal costs up to 41% more, and a search widens to
    /// match).
    fn successors(&self, n: NodeId, next: &mut Vec<NodeId>) {
        next.clear();
        self.neighbours(n, |m| next.push(m));
        let direct = next.len();
        for k in 0..direct {
            let m = next[k];
            self.neighbours(m, |d| {
                if self.diagonal(n.cluster, d.cluster) {
                    next.push(d);
                }
            });
        }
        next.sort_unstable_by_key(|m| (m.cluster, m.piece));
        next.dedup();
    }

    /// True when clusters `a` and `b` touch at a corner only.
    fn diagonal(&self, a: u32, b: u32) -> bool {
        let (across, _) = self.clusters_across();
        let (a, b) = (a as usize, b as usize);
        let (ax, ay, bx, by) = (a % across, a / across, b % across, b / across);
        ax.abs_diff(bx) == 1 && ay.abs_diff(by) == 1
    }
}
