//! A* over an implicit graph, generic over closures (in the style of the `pathfinding` crate).

use super::poll::StopPoll;
use super::OrdF64;
use std::cmp::Reverse;
use std::collections::{hash_map::Entry, BinaryHeap, HashMap};
use std::hash::Hash;

/// Result of a successful search.
#[derive(Debug, Clone, PartialEq)]
pub struct AStarResult<N> {
    /// Nodes from start to goal, both included.
    pub path: Vec<N>,
    /// Sum of the edge costs along `path`.
    pub cost: f64,
    /// Nodes taken off the open list and expanded.
    pub expansions: usize,
}

/// A* from `start` until `is_goal` holds.
///
/// - `successors(n, out)` pushes `(neighbour, edge_cost)` pairs into `out` (cleared before each
///   call); costs must be non-negative and finite.
/// - `heuristic(n)` must be admissible (never above the true remaining cost) for the result to be
///   optimal, and consistent for every node to be expanded at most once.
/// - `should_stop()` is polled every 1024 open-list entries taken, stale ones included; when it
///   returns true the search gives up (a goal taken off the list on that step is still answered).
///
/// Returns `None` when no goal is reachable or the search was stopped.
pub fn astar<N, S, H, G, C>(
    start: N,
    mut successors: S,
    mut heuristic: H,
    mut is_goal: G,
    should_stop: C,
) -> Option<AStarResult<N>>
where
    N: Eq + Hash + Clone,
    S: FnMut(&N, &mut Vec<(N, f64)>),
    H: FnMut(&N) -> f64,
    G: FnMut(&N) -> bool,
    C: FnMut() -> bool,
{
    // Nodes are interned to indices so the parent links and g-values live in flat vectors.
    let mut index: HashMap<N, usize> = HashMap::new();
    let mut nodes: Vec<N> = Vec::new();
    let mut g: Vec<f64> = Vec::new();
    let mut parent: Vec<usize> = Vec::new();
    let mut closed: Vec<bool> = Vec::new();
    let mut open = BinaryHeap::new();
    let mut buf = Vec::new();

    index.insert(start.clone(), 0);
    nodes.push(start.clone());
    g.push(0.0);
    parent.push(usize::MAX);
    closed.push(false);
    open.push((Reverse(OrdF64::new(heuristic(&start))), Reverse(OrdF64::new(0.0)), 0usize));
    let mut expansions = 0usize;

    let mut poll = StopPoll::new(1024, should_stop);
    while let Some((_, Reverse(gv), i)) = open.pop() {
        // A goal taken off the list is answered even when the poll says stop: the path is in hand.
        if poll.stop() && !is_goal(&nodes[i]) {
            return None;
        }
        if closed[i] || gv.get() > g[i] {
            continue;
        }
        closed[i] = true;
        if is_goal(&nodes[i]) {
            let mut path = vec![nodes[i].clone()];
            let mut j = i;
            while parent[j] != usize::MAX {
                j = parent[j];
                path.push(nodes[j].clone());
            }
            path.reverse();
            return Some(AStarResult { path, cost: g[i], expansions });
        }
        expansions += 1;
        buf.clear();
        successors(&nodes[i], &mut buf);
        for (m, c) in buf.drain(..) {
            let ng = g[i] + c;
            let j = match index.entry(m) {
                Entry::Occupied(e) => *e.get(),
                Entry::Vacant(e) => {
                    let j = nodes.len();
                    nodes.push(e.key().clone());
                    e.insert(j);
                    g.push(f64::INFINITY);
                    parent.push(usize::MAX);
                    closed.push(false);
                    j
                }
            };
            if ng < g[j] {
                g[j] = ng;
                parent[j] = i;
                closed[j] = false;
                let h = heuristic(&nodes[j]);
                open.push((Reverse(OrdF64::new(ng + h)), Reverse(OrdF64::new(ng)), j));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_shortest_on_a_line_graph() {
        // 0 -1- 1 -1- 2, and a direct 0 -> 2 edge of cost 3.
        let r = astar(
            0u32,
            |&n, out| {
                if n < 2 {
                    out.push((n + 1, 1.0));
                }
                if n == 0 {
                    out.push((2, 3.0));
                }
            },
            |&n| f64::from(2 - n),
            |&n| n == 2,
            || false,
        )
        .unwrap();
        assert_eq!(r.path, vec![0, 1, 2]);
        assert_eq!(r.cost, 2.0);
    }

    #[test]
    fn unreachable_and_stopped() {
        assert!(astar(0u32, |_, _| {}, |_| 0.0, |&n| n == 1, || false).is_none());
        let r = astar(0u64, |&n, out| out.push((n + 1, 1.0)), |_| 0.0, |_| false, || true);
        assert!(r.is_none());
    }
}
