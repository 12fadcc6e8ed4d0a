//! Step 1: the guide from start to goal walked into path points, with what the later steps
//! decide by.

use super::{Refinement, Request, SHORT_PATH_RADII};
use crate::directional::lattice::Lattice;
use crate::directional::params::Directional;
use crate::directional::smoothing::{path_points, PathPoint};
use crate::geometry::{floor_i64, Point2};
use crate::stages::Stage;
use std::f64::consts::PI;
use std::time::Instant;

/// The guide from start to goal, its dense path points, and what the later steps decide by
/// (the lattice, whether the guide is short, the cost above which a chain loops).
pub(super) struct GuideInfo {
    /// Start, waypoints, goal.
    pub(super) points: Vec<Point2>,
    /// Path points every lattice spacing (Pinter's path cells), the start's and goal's cells
    /// left out (they are linked exactly).
    pub(super) path_points: Vec<PathPoint>,
    pub(super) lattice: Lattice,
    /// At most [`SHORT_PATH_RADII`] turning radii long: its repairs search one window around
    /// the whole of it.
    pub(super) short: bool,
    /// A chain dearer than this holds a loop.
    pub(super) loop_bound: f64,
}

impl Refinement<'_, '_> {
    /// Step 1.
    pub(super) fn guide(&mut self) -> GuideInfo {
        let (ctx, map) = (self.ctx, self.map);
        let p = ctx.params();
        let Request { waypoints, start, goal, goal_heading_free, .. } = *self.request;
        let t = Instant::now();
        let lattice = Lattice::new(map.width(), map.height(), p.spacing());
        let mut points = Vec::with_capacity(waypoints.len() + 2);
        points.push(start.point());
        points.extend_from_slice(waypoints);
        points.push(goal.point());
        let path_points = spaced_path_points(ctx, self.request, &points, p.spacing() as f64);
        self.stats.path_points = path_points.len();
        self.stats.record(Stage::PathPoints, t, format!("{} points", path_points.len()));
        let length: f64 = points.windows(2).map(|w| w[0].distance(w[1])).sum();
        // A cost well above the guide's length means the chain holds a loop, usually because a
        // start or goal heading fights the guide's direction. On a short path a windowed search
        // from start to goal may then find a better way (for example, swinging out first). The
        // bound is the larger of the guide's length and the obstacle-free Dubins length, both
        // lower bounds.
        let free_space = p.motion_model.shortest_length(start, goal, p.turning_radius).unwrap_or(0.0);
        // With costs, chains are priced with them: so is the guide.
        let extra: f64 = map.costs().map_or(0.0, |c| points.windows(2).map(|w| c.extra_line(w[0], w[1])).sum());
        let loop_bound = (length + extra).max(if goal_heading_free { 0.0 } else { free_space }) + PI * p.turning_radius;
        GuideInfo { points, path_points, lattice, short: length <= SHORT_PATH_RADII * p.turning_radius, loop_bound }
    }
}

/// Path points of the polyline `guide`, `near` apart near its vertices, without the start's
/// and goal's cells.
pub(super) fn spaced_path_points(ctx: &Directional, request: &Request, guide: &[Point2], near: f64) -> Vec<PathPoint> {
    let p = ctx.params();
    let far = (2.0 * p.turning_radius).min(4.0 * p.spacing() as f64).max(near);
    let mut points = path_points(guide, near, far, 2.5 * p.turning_radius);
    let cell = |q: crate::geometry::Pose2| (floor_i64(q.x), floor_i64(q.y));
    points.retain(|q| q.cell != cell(request.start) && q.cell != cell(request.goal));
    points
}
