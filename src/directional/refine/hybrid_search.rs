//! Beyond Pinter, after step 5: a hybrid A* (Dolgov, Thrun, Montemerlo and Diebel 2008; the
//! search of Navigation2's Smac Hybrid-A*) over continuous poses, for when every lattice search
//! failed.
//!
//! Directional A*'s lattice joins poses `spacing` cells apart in a few headings, so a manoeuvre
//! in a space little wider than the vehicle's turning circle (a three-point turn between pillars)
//! can fall between its poses, and the lattice is exhausted where a path exists. Here each
//! expansion drives short primitives from the exact pose it reached (full lock left, straight,
//! full lock right, in every gear the model allows, each swept with the footprint) and keeps the
//! pose it ends at; the poses are merged per coarse cell (one primitive long) and heading bin
//! (5 degrees), the cheapest keeping the bin. Every few expansions, and at every one near the
//! goal, the model's curve from the pose to the goal is tried (the analytic expansion): the
//! search ends with the first that is free, as Smac's does, and final smoothing then shortens
//! what it can. The heuristic is the larger of the model's free-space curve cost and the
//! obstacle-aware distance of the vehicle's inscribed disk to the goal (Dijkstra over the coarse
//! cells), so the search does not fill dead ends the 2-D distance already rules out.

use super::{Chain, RefineError, Refinement};
use crate::directional::footprint::SEARCH_MARGIN;
use crate::directional::motion::Gear;
use crate::geometry::{Point2, Pose2};
use crate::search::poll::StopPoll;
use crate::search::OrdF64;
use crate::stages::{SolvedBy, Stage};
use crate::trajectory::Segment;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::f64::consts::TAU;
use std::time::Instant;

/// Heading bins of the merged poses (5 degrees, Smac's default quantisation).
const HEADING_BINS: usize = 72;
/// Expansions between two analytic expansions while the goal is more than
/// [`ANALYTIC_NEAR`] turning radii away.
const ANALYTIC_PERIOD: usize = 16;
/// Within this many turning radii of the goal (straight distance) every expansion tries the
/// analytic expansion.
const ANALYTIC_NEAR: f64 = 4.0;
/// Most expansions before the search gives up (the budget usually ends it first): bounds the
/// time a request that has no path spends here after the lattice was exhausted.
pub(super) const MAX_EXPANSIONS: usize = 200_000;
/// Open-list entries taken (stale ones too) between two polls of the stop callback.
const STOP_POLL_PERIOD: u32 = 32;
/// Entries taken between two polls while the 2-D distance is computed.
const DISTANCE_POLL_PERIOD: u32 = 4096;
/// How far (turning radii) beyond the box of start and goal the search may go: a manoeuvre the
/// lattice missed is local, and the window bounds the 2-D distance's work and memory on a
/// site-scale map.
const WINDOW_MARGIN: f64 = 8.0;
/// Most coarse cells in the window (about 36 MB of distances and flags); beyond, start and goal
/// are too far apart for this search and it does not run.
const MAX_WINDOW_CELLS: usize = 4_000_000;
/// By how much an 8-connected grid path may exceed the straight line (1 / cos 22.5° less a
/// hair): the Dijkstra distance is divided by it so the heuristic stays a lower bound.
const OCTILE_EXCESS: f64 = 1.0824;

/// One reached pose: how it was reached (gear of its last primitive, `None` for the start) and
/// at what cost.
#[derive(Debug, Clone, Copy)]
struct Node {
    pose: Pose2,
    gear: Option<Gear>,
    g: f64,
    parent: u32,
}

/// What the search concluded.
pub(super) enum Hybrid {
    /// A chain from the start to the goal.
    Found(Chain),
    /// Nothing found: the open list ran dry or the expansion cap was reached (with the number of
    /// expansions made).
    Nothing(usize),
}

impl Refinement<'_, '_> {
    /// The hybrid A* from the exact start to the exact goal on the whole map, within the budget.
    pub(super) fn hybrid_search(&mut self) -> Result<Hybrid, RefineError> {
        let t = Instant::now();
        let found = self.hybrid_search_inner();
        let outcome = match &found {
            Ok(Hybrid::Found(c)) => format!("found, {} poses", c.poses.len()),
            Ok(Hybrid::Nothing(e)) => format!("nothing after {e} expansions"),
            Err(_) => "stopped".to_string(),
        };
        self.stats.record(Stage::HybridSearch, t, outcome);
        found
    }

    fn hybrid_search_inner(&mut self) -> Result<Hybrid, RefineError> {
        let (ctx, map, request) = (self.ctx, self.map, self.request);
        let p = ctx.params();
        let (motion, shape) = (p.motion(), p.shape());
        let (start, goal, free) = (request.start, request.goal, request.goal_heading_free);
        let r = motion.radius;
        // One primitive turns by one heading bin at full lock, and leaves its cell.
        let step = (r * TAU / HEADING_BINS as f64).max(1.5);
        let Some(grid) =
            Coarse::around(start.point(), goal.point(), WINDOW_MARGIN * r, step, (map.width(), map.height()))
        else {
            return Ok(Hybrid::Nothing(0));
        };
        // 1. The inscribed disk's obstacle-aware distance to the goal, per coarse cell.
        let rho = (shape.inradius() - grid.half_diagonal()).max(0.0);
        // A coarse cell is open when some point of it may hold the reference point: then the
        // disk about its centre, smaller by half the cell's diagonal, is free.
        let distance = grid.distance_to(goal.point(), |c| map.disk_free(c, rho), &mut *self.should_stop)?;
        let Some(start_distance) = grid.at(&distance, start.point()) else {
            return Ok(Hybrid::Nothing(0));
        };
        if !start_distance.is_finite() {
            return Ok(Hybrid::Nothing(0));
        }
        let heuristic = |q: Pose2| {
            let curve = motion.price(q, goal, free).map_or(0.0, |c| c.cost);
            let d = grid.at(&distance, q.point()).unwrap_or(f64::INFINITY);
            curve.max(d / OCTILE_EXCESS - 2.0 * grid.half_diagonal())
        };
        let primitives: Vec<(f64, bool)> = motion
            .model
            .gears()
            .iter()
            .flat_map(|&gear| [-1.0 / r, 0.0, 1.0 / r].map(|k| (k, gear == Gear::Reverse)))
            .collect();
        // 2. The search.
        let mut nodes = vec![Node { pose: start, gear: None, g: 0.0, parent: u32::MAX }];
        // Per bin, the node holding it and whether it was expanded.
        let mut bins: HashMap<u64, (u32, bool)> = HashMap::new();
        bins.insert(grid.bin(start, None), (0, false));
        let mut open = BinaryHeap::new();
        open.push((Reverse(OrdF64::new(heuristic(start))), 0u32));
        let mut expansions = 0;
        let mut poll = StopPoll::new(STOP_POLL_PERIOD, &mut *self.should_stop);
        while let Some((_, id)) = open.pop() {
            if poll.stop() {
                return Err(RefineError::Stopped);
            }
            let node = nodes[id as usize];
            let key = grid.bin(node.pose, node.gear);
            match bins.get_mut(&key) {
                Some(entry) if entry.0 == id && !entry.1 => entry.1 = true,
                _ => continue,
            }
            expansions += 1;
            if expansions > MAX_EXPANSIONS {
                return Ok(Hybrid::Nothing(expansions - 1));
            }
            // 2a. The analytic expansion: the model's curve to the goal, when free, ends it.
            let near = node.pose.point().distance(goal.point()) <= ANALYTIC_NEAR * r;
            if near || expansions % ANALYTIC_PERIOD == 1 {
                if let Some(segs) = motion.link(node.pose, goal, free) {
                    if map.sweep_free(&segs, shape.clone(), SEARCH_MARGIN) {
                        let first = segs.iter().find(|s| s.length > 0.0).map(Gear::of);
                        let change = node.gear.map_or(0.0, |from| motion.change_to(from, first));
                        let cost = node.g + motion.cost(&segs) + change + map.extra_cost(&segs);
                        return Ok(Hybrid::Found(chain_to(&nodes, id, goal, cost)));
                    }
                }
            }
            // 2b. The primitives from the exact pose.
            for &(curvature, reverse) in &primitives {
                let seg = Segment { start: node.pose, length: step, curvature, reverse, rotation: 0.0 };
                let gear = if reverse { Gear::Reverse } else { Gear::Forward };
                let end = seg.end();
                if grid.cell(end.point()).is_none() {
                    continue;
                }
                let key = grid.bin(end, Some(gear));
                if bins.get(&key).is_some_and(|&(_, expanded)| expanded) {
                    continue;
                }
                // The chain rebuilds this link as the single-gear curve between its ends, which is
                // the primitive itself (the curve solvers' tests hold them to that for single
                // arcs and lines); a primitive it is not is skipped rather than trusted, so what is
                // checked is what the chain holds.
                let Some(segs) = motion.in_gear(node.pose, end, gear) else { continue };
                if (segs.iter().map(|s| s.length).sum::<f64>() - step).abs() > 1e-6 {
                    continue;
                }
                let g = node.g
                    + motion.cost(&segs)
                    + node.gear.map_or(0.0, |from| motion.change(from, gear))
                    + map.extra_cost(&segs);
                if bins.get(&key).is_some_and(|&(holder, _)| nodes[holder as usize].g <= g) {
                    continue;
                }
                if !map.sweep_free(&segs, shape.clone(), SEARCH_MARGIN) {
                    continue;
                }
                let h = heuristic(end);
                if !h.is_finite() {
                    continue;
                }
                let next = nodes.len() as u32;
                nodes.push(Node { pose: end, gear: Some(gear), g, parent: id });
                bins.insert(key, (next, false));
                open.push((Reverse(OrdF64::new(g + h)), next));
            }
        }
        Ok(Hybrid::Nothing(expansions))
    }
}

/// The chain from the start to node `last`, then to `goal` by the model's curve, at `cost`.
fn chain_to(nodes: &[Node], last: u32, goal: Pose2, cost: f64) -> Chain {
    let (mut poses, mut gears) = (vec![goal], vec![None]);
    let mut id = last;
    loop {
        let node = nodes[id as usize];
        poses.push(node.pose);
        if node.parent == u32::MAX {
            break;
        }
        gears.push(node.gear);
        id = node.parent;
    }
    poses.reverse();
    gears.reverse();
    Chain { poses, gears, by: SolvedBy::HybridSearch, cost }
}

/// The coarse cells the merged poses and the 2-D distance use: squares of `side` map cells over
/// a window of the map from `origin` (map cells); nothing outside it is searched.
struct Coarse {
    origin: Point2,
    side: f64,
    cols: usize,
    rows: usize,
}

impl Coarse {
    /// The window holding `a` and `b` with `margin` (map cells) around them, within the map
    /// (`width` x `height` cells); `None` when it would hold more than [`MAX_WINDOW_CELLS`].
    fn around(a: Point2, b: Point2, margin: f64, side: f64, (width, height): (usize, usize)) -> Option<Self> {
        let x0 = (a.x.min(b.x) - margin).max(0.0);
        let y0 = (a.y.min(b.y) - margin).max(0.0);
        let x1 = (a.x.max(b.x) + margin).min(width as f64);
        let y1 = (a.y.max(b.y) + margin).min(height as f64);
        let (cols, rows) = (((x1 - x0) / side).ceil().max(1.0) as usize, ((y1 - y0) / side).ceil().max(1.0) as usize);
        (cols.saturating_mul(rows) <= MAX_WINDOW_CELLS).then(|| Self { origin: Point2::new(x0, y0), side, cols, rows })
    }

    fn half_diagonal(&self) -> f64 {
        self.side * std::f64::consts::FRAC_1_SQRT_2
    }

    /// The coarse cell of `p`, `None` outside the window.
    fn cell(&self, p: Point2) -> Option<usize> {
        let (cx, cy) = (((p.x - self.origin.x) / self.side).floor(), ((p.y - self.origin.y) / self.side).floor());
        (cx >= 0.0 && cy >= 0.0 && (cx as usize) < self.cols && (cy as usize) < self.rows)
            .then(|| cy as usize * self.cols + cx as usize)
    }

    fn centre(&self, k: usize) -> Point2 {
        Point2::new(
            self.origin.x + ((k % self.cols) as f64 + 0.5) * self.side,
            self.origin.y + ((k / self.cols) as f64 + 0.5) * self.side,
        )
    }

    /// `values`' entry for the coarse cell of `p`.
    fn at(&self, values: &[f64], p: Point2) -> Option<f64> {
        self.cell(p).map(|k| values[k])
    }

    /// The key of the merged pose bin of `pose` (inside the window) reached in `gear`.
    fn bin(&self, pose: Pose2, gear: Option<Gear>) -> u64 {
        let k = self.cell(pose.point()).unwrap_or(0) as u64;
        let h = ((pose.yaw.rem_euclid(TAU) / TAU * HEADING_BINS as f64) as u64).min(HEADING_BINS as u64 - 1);
        let g = match gear {
            None => 0,
            Some(Gear::Forward) => 1,
            Some(Gear::Reverse) => 2,
        };
        (k * HEADING_BINS as u64 + h) * 3 + g
    }

    /// 8-connected Dijkstra distances (map cells) from the coarse cell of `goal` over the cells
    /// `open` accepts (by centre); infinity where none leads. Polls `should_stop` as it goes.
    fn distance_to(
        &self,
        goal: Point2,
        open: impl Fn(Point2) -> bool,
        should_stop: &mut dyn FnMut() -> bool,
    ) -> Result<Vec<f64>, RefineError> {
        let n = self.cols * self.rows;
        let mut distance = vec![f64::INFINITY; n];
        let Some(g) = self.cell(goal) else { return Ok(distance) };
        // Whether each cell is open, asked once, when the search first reaches it.
        let mut passable: Vec<Option<bool>> = vec![None; n];
        distance[g] = 0.0;
        let mut heap = BinaryHeap::new();
        heap.push((Reverse(OrdF64::new(0.0)), g));
        let diagonal = self.side * std::f64::consts::SQRT_2;
        let mut poll = StopPoll::new(DISTANCE_POLL_PERIOD, should_stop);
        while let Some((Reverse(d), k)) = heap.pop() {
            if poll.stop() {
                return Err(RefineError::Stopped);
            }
            if d.get() > distance[k] {
                continue;
            }
            let (x, y) = ((k % self.cols) as i64, (k / self.cols) as i64);
            for (dx, dy) in [(-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1)] {
                let (nx, ny) = (x + dx, y + dy);
                if nx < 0 || ny < 0 || nx >= self.cols as i64 || ny >= self.rows as i64 {
                    continue;
                }
                let m = ny as usize * self.cols + nx as usize;
                if !*passable[m].get_or_insert_with(|| open(self.centre(m))) {
                    continue;
                }
                let nd = d.get() + if dx != 0 && dy != 0 { diagonal } else { self.side };
                if nd < distance[m] {
                    distance[m] = nd;
                    heap.push((Reverse(OrdF64::new(nd)), m));
                }
            }
        }
        Ok(distance)
    }
}
