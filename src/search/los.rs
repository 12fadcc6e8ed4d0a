//! Line of sight between points of the cell grid, exact in integer arithmetic.
//!
//! Two rules are provided (see [`LosRule`]). Points are given in **half-cell units** ("doubled
//! coordinates"): vertex `(x, y)` is `(2x, 2y)` and the centre of cell `(x, y)` is `(2x+1, 2y+1)`,
//! so the same traversal serves any-angle searches on corners and smoothing of cell-centre paths.
//! [`CellMask`] is a padded byte copy of a [`Grid`] so every lookup near the border is branch-free.

use crate::grid::Grid;

/// Which segments count as unobstructed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum LosRule {
    /// Moving AI / Uras-Koenig rule, for benchmark comparability: a segment may not pass through
    /// the interior of a blocked cell, nor run along an edge whose two cells are both blocked; it
    /// may pass through a corner point between two diagonally touching blocked cells.
    #[default]
    MovingAi,
    /// Vehicle rule: the open segment may not touch any blocked cell at all (no running along a
    /// wall's face, no squeezing between diagonally touching blocked cells). Searches under this
    /// rule also never use a "pinch" vertex (exactly two diagonally opposite blocked cells around
    /// it) as an intermediate waypoint, since turning there would squeeze through the gap.
    Conservative,
}

impl LosRule {
    /// Both rules, in a fixed order (index 0 and 1 of per-rule tables).
    pub const ALL: [LosRule; 2] = [LosRule::MovingAi, LosRule::Conservative];

    /// Position of the rule in [`LosRule::ALL`].
    pub fn index(self) -> usize {
        match self {
            LosRule::MovingAi => 0,
            LosRule::Conservative => 1,
        }
    }
}

/// A padded copy of a grid's blocked flags: one byte per cell (1 = blocked) with a one-cell
/// blocked border, so cells `-1 ..= width` by `-1 ..= height` can be read without bounds checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellMask {
    width: usize,
    height: usize,
    stride: usize,
    cells: Vec<u8>,
}

impl CellMask {
    /// Copies `grid`.
    pub fn from_grid(grid: &Grid) -> Self {
        let mut m = Self::all_blocked(grid.width(), grid.height());
        for y in 0..grid.height() {
            for x in 0..grid.width() {
                if !grid.is_blocked(x as i64, y as i64) {
                    m.set(x, y, false);
                }
            }
        }
        m
    }

    /// The mask of a `width x height` grid whose cell of row-major index `k` is blocked when
    /// `blocked(k)` is true: one pass, row by row.
    pub fn from_fn(width: usize, height: usize, blocked: impl Fn(usize) -> bool) -> Self {
        let mut m = Self::all_blocked(width, height);
        for y in 0..height {
            let row = &mut m.cells[(y + 1) * m.stride + 1..][..width];
            for (x, c) in row.iter_mut().enumerate() {
                *c = u8::from(blocked(y * width + x));
            }
        }
        m
    }

    /// A `width x height` mask with every cell blocked.
    pub fn all_blocked(width: usize, height: usize) -> Self {
        let stride = width + 2;
        Self { width, height, stride, cells: vec![1; stride * (height + 2)] }
    }

    /// Columns.
    #[inline]
    pub fn width(&self) -> usize {
        self.width
    }

    /// Rows.
    #[inline]
    pub fn height(&self) -> usize {
        self.height
    }

    /// Sets cell `(x, y)`; coordinates outside the grid are ignored (the border stays blocked).
    pub fn set(&mut self, x: usize, y: usize, blocked: bool) {
        if x < self.width && y < self.height {
            self.cells[(y + 1) * self.stride + x + 1] = u8::from(blocked);
        }
    }

    /// The cells with their blocked border, row by row (`0` free), and the row stride: cell
    /// `(x, y)` is at `(y + 1) * stride + x + 1`. For inner loops that step by index offsets.
    #[inline]
    pub(crate) fn padded_cells(&self) -> (&[u8], usize) {
        (&self.cells, self.stride)
    }

    /// True when cell `(x, y)` is blocked or outside the grid (as [`Grid::is_blocked`]).
    #[inline]
    pub fn is_blocked(&self, x: i64, y: i64) -> bool {
        x < 0 || y < 0 || x >= self.width as i64 || y >= self.height as i64 || self.blocked(x, y)
    }

    /// True when cell `(x, y)` is inside the grid and free.
    #[inline]
    pub fn is_free(&self, x: i64, y: i64) -> bool {
        !self.is_blocked(x, y)
    }

    /// True when cell `(x, y)` is blocked. Valid for `-1 <= x <= width`, `-1 <= y <= height`
    /// (the border is blocked); panics further out, which no caller in this crate does.
    #[inline(always)]
    pub fn blocked(&self, x: i64, y: i64) -> bool {
        self.cells[((y + 1) as usize) * self.stride + (x + 1) as usize] != 0
    }

    /// True when vertex `(x, y)` (`0 <= x <= width`, `0 <= y <= height`) has exactly two
    /// diagonally opposite blocked cells around it: turning there squeezes through a gap.
    #[inline]
    pub fn is_pinch(&self, x: i64, y: i64) -> bool {
        let tl = self.blocked(x - 1, y - 1);
        let tr = self.blocked(x, y - 1);
        let bl = self.blocked(x - 1, y);
        let br = self.blocked(x, y);
        (tl && br && !tr && !bl) || (tr && bl && !tl && !br)
    }

    /// True when vertex `(x, y)` can be an intermediate waypoint of an any-angle path under `rule`:
    /// at least one surrounding cell is free, and under [`LosRule::Conservative`] it is no pinch.
    #[inline]
    pub fn vertex_passable(&self, rule: LosRule, x: i64, y: i64) -> bool {
        let any_free =
            !(self.blocked(x - 1, y - 1) && self.blocked(x, y - 1) && self.blocked(x - 1, y) && self.blocked(x, y));
        any_free && (rule == LosRule::MovingAi || !self.is_pinch(x, y))
    }

    /// True when the unit move from vertex `(x, y)` to `(x + dx, y + dy)` (`dx, dy` in `-1..=1`,
    /// not both 0) is unobstructed under `rule`; a fast special case of [`CellMask::los_vertices`].
    #[inline(always)]
    pub fn unit_move_ok(&self, rule: LosRule, x: i64, y: i64, dx: i64, dy: i64) -> bool {
        if dx != 0 && dy != 0 {
            return !self.blocked(x + dx.min(0), y + dy.min(0));
        }
        let (a, b) = if dx != 0 {
            (self.blocked(x + dx.min(0), y - 1), self.blocked(x + dx.min(0), y))
        } else {
            (self.blocked(x - 1, y + dy.min(0)), self.blocked(x, y + dy.min(0)))
        };
        match rule {
            LosRule::MovingAi => !(a && b),
            LosRule::Conservative => !a && !b,
        }
    }

    /// Checks that vertex `v` lies in `[0, width] x [0, height]` and can start or end a path
    /// under `rule` (some surrounding cell is free).
    pub fn check_vertex_endpoint(&self, v: (u32, u32)) -> Result<(), super::path::SearchFailure> {
        if v.0 as usize > self.width || v.1 as usize > self.height {
            return Err(super::path::SearchFailure::OutOfBounds);
        }
        if !self.vertex_passable(LosRule::MovingAi, i64::from(v.0), i64::from(v.1)) {
            return Err(super::path::SearchFailure::BlockedEndpoint);
        }
        Ok(())
    }

    /// True when the segment between vertices `a` and `b` (cell-corner coordinates, inside
    /// `[0, width] x [0, height]`) is unobstructed under `rule`.
    #[inline]
    pub fn los_vertices(&self, rule: LosRule, a: (i64, i64), b: (i64, i64)) -> bool {
        self.los_doubled(rule, (2 * a.0, 2 * a.1), (2 * b.0, 2 * b.1))
    }

    /// True when the segment between two points in half-cell units (see the module doc; both
    /// inside `[0, 2 width] x [0, 2 height]`) is unobstructed under `rule`.
    pub fn los_doubled(&self, rule: LosRule, a: (i64, i64), b: (i64, i64)) -> bool {
        let (x0, y0) = a;
        let (x1, y1) = b;
        let (dx, dy) = (x1 - x0, y1 - y0);
        if dx == 0 && dy == 0 {
            return true;
        }
        if dx == 0 {
            return self.los_axis(rule, x0, y0.min(y1), y0.max(y1), true);
        }
        if dy == 0 {
            return self.los_axis(rule, y0, x0.min(x1), x0.max(x1), false);
        }
        let (sx, sy) = (dx.signum(), dy.signum());
        let (adx, ady) = (dx.abs(), dy.abs());
        // The cell the segment enters first: on a grid line, the side it moves towards.
        let first = |p: i64, s: i64| if p & 1 == 0 { (p >> 1) - i64::from(s < 0) } else { p >> 1 };
        let (mut cx, mut cy) = (first(x0, sx), first(y0, sy));
        // Distance (half units, along each axis) from the start to the next grid line crossed.
        let mut nx = if sx > 0 { 2 * (cx + 1) - x0 } else { x0 - 2 * cx };
        let mut ny = if sy > 0 { 2 * (cy + 1) - y0 } else { y0 - 2 * cy };
        loop {
            if self.blocked(cx, cy) {
                return false;
            }
            // Crossing parameters t = nx / adx and ny / ady, compared by cross-multiplication.
            let ord = (nx * ady).cmp(&(ny * adx));
            match ord {
                std::cmp::Ordering::Less => {
                    if nx >= adx {
                        return true;
                    }
                    cx += sx;
                    nx += 2;
                }
                std::cmp::Ordering::Greater => {
                    if ny >= ady {
                        return true;
                    }
                    cy += sy;
                    ny += 2;
                }
                std::cmp::Ordering::Equal => {
                    if nx >= adx {
                        return true;
                    }
                    // Through a grid vertex: the two cells touched only at that point matter
                    // for the conservative rule alone.
                    if rule == LosRule::Conservative && (self.blocked(cx + sx, cy) || self.blocked(cx, cy + sy)) {
                        return false;
                    }
                    cx += sx;
                    cy += sy;
                    nx += 2;
                    ny += 2;
                }
            }
        }
    }

    /// Axis-parallel segment at `line` (half units) from `lo` to `hi` along the other axis.
    /// `vertical` means the segment runs along y at x = `line`.
    fn los_axis(&self, rule: LosRule, line: i64, lo: i64, hi: i64, vertical: bool) -> bool {
        let cell =
            |along: i64, across: i64| if vertical { self.blocked(across, along) } else { self.blocked(along, across) };
        // Cells along the run overlapped with positive length: floor(lo/2) ..= ceil(hi/2) - 1.
        let (first, last) = (lo >> 1, ((hi + 1) >> 1) - 1);
        if line & 1 == 1 {
            let across = line >> 1;
            return (first..=last).all(|r| !cell(r, across));
        }
        let across = line >> 1;
        (first..=last).all(|r| {
            let (a, b) = (cell(r, across - 1), cell(r, across));
            match rule {
                LosRule::MovingAi => !(a && b),
                LosRule::Conservative => !a && !b,
            }
        })
    }
}

impl crate::grid::BlockedAt for CellMask {
    fn width(&self) -> usize {
        self.width
    }

    fn height(&self) -> usize {
        self.height
    }

    #[inline]
    fn blocked_at(&self, x: usize, y: usize) -> bool {
        self.cells[(y + 1) * self.stride + x + 1] != 0
    }
}

impl crate::memory::HeapSize for CellMask {
    fn heap_bytes(&self) -> usize {
        self.cells.heap_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Geometric reference: does the open segment a-b (doubled coordinates) intersect the open
    /// (or, for `closed`, the closed) square of cell (cx, cy)? Liang-Barsky clipping in f64 is
    /// exact here since all inputs are small integers and halves.
    fn hits_cell(a: (i64, i64), b: (i64, i64), cx: i64, cy: i64, closed: bool) -> Option<(f64, f64)> {
        let (x0, y0) = (a.0 as f64 / 2.0, a.1 as f64 / 2.0);
        let (dx, dy) = ((b.0 - a.0) as f64 / 2.0, (b.1 - a.1) as f64 / 2.0);
        let (mut t0, mut t1) = (0.0f64, 1.0f64);
        for (p, q) in
            [(-dx, x0 - cx as f64), (dx, cx as f64 + 1.0 - x0), (-dy, y0 - cy as f64), (dy, cy as f64 + 1.0 - y0)]
        {
            if p == 0.0 {
                if q < 0.0 || (!closed && q == 0.0) {
                    return None;
                }
            } else {
                let r = q / p;
                if p < 0.0 {
                    t0 = t0.max(r);
                } else {
                    t1 = t1.min(r);
                }
            }
        }
        if closed {
            // The open segment (0,1) must meet the closed square.
            let (lo, hi) = (t0.max(0.0), t1.min(1.0));
            if lo < hi || (lo == hi && lo > 0.0 && lo < 1.0) {
                return Some((lo, hi));
            }
            None
        } else if t0 < t1 {
            Some((t0, t1))
        } else {
            None
        }
    }

    fn reference(g: &Grid, rule: LosRule, a: (i64, i64), b: (i64, i64)) -> bool {
        for cy in -1..=g.height() as i64 {
            for cx in -1..=g.width() as i64 {
                if !g.is_blocked(cx, cy) {
                    continue;
                }
                match rule {
                    LosRule::Conservative => {
                        if hits_cell(a, b, cx, cy, true).is_some() {
                            return false;
                        }
                    }
                    LosRule::MovingAi => {
                        if hits_cell(a, b, cx, cy, false).is_some() {
                            return false;
                        }
                    }
                }
            }
        }
        if rule == LosRule::MovingAi && (a.0 == b.0 && a.0 % 2 == 0 || a.1 == b.1 && a.1 % 2 == 0) {
            // Along a grid line: every unit piece needs a free cell on one side.
            let vertical = a.0 == b.0;
            let (lo, hi) = if vertical { (a.1.min(b.1), a.1.max(b.1)) } else { (a.0.min(b.0), a.0.max(b.0)) };
            let line = if vertical { a.0 / 2 } else { a.1 / 2 };
            for r in (lo >> 1)..((hi + 1) >> 1) {
                let (c1, c2) = if vertical {
                    (g.is_blocked(line - 1, r), g.is_blocked(line, r))
                } else {
                    (g.is_blocked(r, line - 1), g.is_blocked(r, line))
                };
                if c1 && c2 {
                    return false;
                }
            }
        }
        true
    }

    #[test]
    fn matches_geometric_reference_on_random_grids() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for _ in 0..60 {
            let (w, h) = (1 + rnd(7) as usize, 1 + rnd(7) as usize);
            let blocked: Vec<bool> = (0..w * h).map(|_| rnd(100) < 35).collect();
            let g = Grid::from_blocked(w, h, blocked).unwrap();
            let m = CellMask::from_grid(&g);
            for _ in 0..200 {
                let p = |r: &mut dyn FnMut(u64) -> u64| (r(2 * w as u64 + 1) as i64, r(2 * h as u64 + 1) as i64);
                let (a, b) = (p(&mut rnd), p(&mut rnd));
                if a == b {
                    continue;
                }
                for rule in LosRule::ALL {
                    assert_eq!(m.los_doubled(rule, a, b), reference(&g, rule, a, b), "{rule:?} {a:?}->{b:?}\n{g:?}");
                }
            }
        }
    }

    #[test]
    fn squeeze_and_wall_face() {
        let g = Grid::from_rows(&["@.", ".@"]).unwrap();
        let m = CellMask::from_grid(&g);
        // Anti-diagonal through the pinch vertex (1,1).
        assert!(m.los_vertices(LosRule::MovingAi, (2, 0), (0, 2)));
        assert!(!m.los_vertices(LosRule::Conservative, (2, 0), (0, 2)));
        assert!(m.is_pinch(1, 1));
        // Along the top face of the free cell (1,0): fine for Moving AI, not for the vehicle.
        assert!(m.los_vertices(LosRule::MovingAi, (1, 0), (2, 0)));
        assert!(!m.los_vertices(LosRule::Conservative, (1, 0), (2, 0)));
        // Between two blocked cells along an edge: never.
        let w = Grid::from_rows(&["@@", ".."]).unwrap();
        assert!(CellMask::from_grid(&w).los_vertices(LosRule::MovingAi, (0, 1), (2, 1)));
        assert!(!CellMask::from_grid(&w).los_vertices(LosRule::MovingAi, (1, 0), (1, 1)));
    }

    #[test]
    fn unit_moves_agree_with_general_los() {
        let g = Grid::from_rows(&["@..@", ".@..", "..@@", "@..."]).unwrap();
        let m = CellMask::from_grid(&g);
        for y in 0..=4i64 {
            for x in 0..=4i64 {
                for (dx, dy) in [(1i64, 0i64), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)] {
                    let (nx, ny) = (x + dx, y + dy);
                    if !(0..=4).contains(&nx) || !(0..=4).contains(&ny) {
                        continue;
                    }
                    for rule in LosRule::ALL {
                        assert_eq!(m.unit_move_ok(rule, x, y, dx, dy), m.los_vertices(rule, (x, y), (nx, ny)));
                    }
                }
            }
        }
    }
}
