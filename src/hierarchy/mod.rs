//! Corridors for long plans: a graph over the vehicle mask's pieces, cluster by cluster, that
//! answers a long query by searching a few thousand nodes instead of millions of cells, so the
//! guide's search runs only inside the corridor it returns.
//!
//! - [`ClusterGraph::build`]: the graph of a mask (in parallel), each node weighted by the mean
//!   traversal cost of its cells.
//! - [`ClusterGraph::repair`]: after the mask changed inside some rectangles, the clusters they
//!   touch are made anew and the links of those west and south of them made again; where only
//!   the costs changed, the clusters' pieces are weighed again; the result equals a graph built
//!   from scratch.
//! - [`ClusterGraph::corridor`]: the clusters a long query's fine search may enter
//!   ([`Corridor`]).
//!
//! The graph is exact about connectivity (a corridor always holds a path when one exists) and
//! approximate about costs: the cheapest path on the mask may leave the corridor, so a plan
//! through it may cost more than the optimum. The planner builds it only with costs and uses it
//! only beyond `hierarchy_min_distance`; shorter queries are searched whole, exactly as before.

mod cluster;
mod corridor;
mod graph;

pub use corridor::{Corridor, CorridorFailure, CorridorSearch};
pub use graph::ClusterGraph;

#[cfg(test)]
mod tests;
