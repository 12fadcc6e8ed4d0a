//! Optimistic reachability: a proof that no placement path of a disc joins two cells, which does
//! not depend on the vehicle mask's margin.
//!
//! The planner's vehicle mask keeps a margin (the footprint must fit at every point of a mask
//! cell, so any-angle paths through mask cells are collision-free), and its regions may therefore
//! split places that a vehicle can still drive between through a gap only a little wider than
//! itself. Before a request is refused, this module answers the opposite, optimistic question:
//! could any continuous path of centres of a disc of radius `r` join the two cells?
//!
//! A cell can hold the disc's centre only if its obstacle distance `d` (centre to the nearest
//! blocked centre, [`super::distance`]) plus half a cell diagonal reaches `r`: every point of the
//! cell lies within half a diagonal of its centre, and a point's clearance is at most its distance
//! to a blocked cell's centre. A continuous path of centres passes through cells that touch by an
//! edge or a corner, so an 8-connected search over the cells that pass this test finds every
//! possible route. When it finds none, no trajectory exists, whatever the turning radius; when it
//! finds one, a real search must still decide.

use super::layer::ClearanceLayer;
use crate::search::poll::StopPoll;

/// What [`may_connect`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Some chain of cells could hold the disc's centre from one cell to the other (necessary,
    /// not sufficient, for a path).
    Possible,
    /// No placement path exists: a proof.
    Impossible,
    /// `should_stop` asked to stop first.
    Stopped,
}

/// Half a cell diagonal: the farthest a point of a cell lies from its centre.
const HALF_DIAGONAL: f64 = std::f64::consts::FRAC_1_SQRT_2;

/// Whether a disc of `radius` cells could move with its centre from cell `a` to cell `b` on the
/// cells of `layer` (see the module documentation). `radius` is the radius of the largest disc
/// the vehicle covers in every heading (its inradius); cells outside the map and blocked cells
/// never hold the centre. `should_stop()` is polled every 4096 cells. Cost: proportional to the
/// cells reached before `b`, at most the map.
///
/// Cells off the map give [`Reach::Impossible`].
pub fn may_connect(
    layer: &ClearanceLayer,
    radius: f64,
    a: (usize, usize),
    b: (usize, usize),
    should_stop: impl FnMut() -> bool,
) -> Reach {
    let (w, h) = (layer.width(), layer.height());
    // d + 1/sqrt(2) >= r, on exact integer squared distances: d^2 >= (r - 1/sqrt(2))^2.
    let need = radius - HALF_DIAGONAL;
    let may_hold = |x: usize, y: usize| {
        !layer.is_blocked(x, y)
            && (need <= 0.0 || layer.distance_sq(x, y).is_some_and(|d2| f64::from(d2) >= need * need))
    };
    if a.0 >= w || a.1 >= h || b.0 >= w || b.1 >= h || !may_hold(a.0, a.1) || !may_hold(b.0, b.1) {
        return Reach::Impossible;
    }
    if a == b {
        return Reach::Possible;
    }
    let mut seen = vec![0u64; (w * h).div_ceil(64)];
    let mark = |seen: &mut [u64], i: usize| {
        let fresh = seen[i / 64] >> (i % 64) & 1 == 0;
        seen[i / 64] |= 1 << (i % 64);
        fresh
    };
    let (start, target) = (a.1 * w + a.0, b.1 * w + b.0);
    mark(&mut seen, start);
    let mut queue = std::collections::VecDeque::from([start]);
    let mut poll = StopPoll::new(4096, should_stop);
    while let Some(i) = queue.pop_front() {
        if poll.stop() {
            return Reach::Stopped;
        }
        let (x, y) = (i % w, i / w);
        for (dx, dy) in [(1i64, 0i64), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)] {
            let (nx, ny) = (x as i64 + dx, y as i64 + dy);
            if nx < 0 || ny < 0 || nx >= w as i64 || ny >= h as i64 {
                continue;
            }
            let (nx, ny) = (nx as usize, ny as usize);
            let j = ny * w + nx;
            if !may_hold(nx, ny) || !mark(&mut seen, j) {
                continue;
            }
            if j == target {
                return Reach::Possible;
            }
            queue.push_back(j);
        }
    }
    Reach::Impossible
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clearance::{Capability, ClearanceConfig, ClearanceMap};
    use crate::grid::Grid;

    fn layer_of(rows: &[&str]) -> ClearanceMap {
        let g = Grid::from_rows(rows).expect("grid");
        ClearanceMap::from_grid(&g, ClearanceConfig::default()).expect("clearance")
    }

    /// Brute force over centres sampled every 1/8 cell: can a disc of `r` slide from `a` to `b`
    /// through sample points whose disc misses every blocked cell square? Adjacent samples are
    /// 1/8 apart, so this only ever finds real paths (up to the sampling).
    fn sampled_path_exists(rows: &[&str], r: f64, a: (usize, usize), b: (usize, usize)) -> bool {
        let (w, h) = (rows[0].len(), rows.len());
        let blocked = |x: i64, y: i64| {
            x < 0 || y < 0 || x >= w as i64 || y >= h as i64 || rows[y as usize].as_bytes()[x as usize] == b'#'
        };
        let k = 8usize;
        let (sw, sh) = (w * k + 1, h * k + 1);
        let free = |sx: usize, sy: usize| {
            let (px, py) = (sx as f64 / k as f64, sy as f64 / k as f64);
            let (x0, y0) = ((px - r).floor() as i64 - 1, (py - r).floor() as i64 - 1);
            for cy in y0..=(py + r).ceil() as i64 + 1 {
                for cx in x0..=(px + r).ceil() as i64 + 1 {
                    if blocked(cx, cy) {
                        let dx = (cx as f64 - px).max(0.0).max(px - (cx as f64 + 1.0));
                        let dy = (cy as f64 - py).max(0.0).max(py - (cy as f64 + 1.0));
                        if dx * dx + dy * dy < r * r {
                            return false;
                        }
                    }
                }
            }
            true
        };
        let centre = |c: (usize, usize)| (c.0 * k + k / 2, c.1 * k + k / 2);
        let (s, t) = (centre(a), centre(b));
        if !free(s.0, s.1) || !free(t.0, t.1) {
            return false;
        }
        let mut seen = vec![false; sw * sh];
        let mut stack = vec![s];
        seen[s.1 * sw + s.0] = true;
        while let Some((x, y)) = stack.pop() {
            if (x, y) == t {
                return true;
            }
            for (dx, dy) in [(1i64, 0i64), (-1, 0), (0, 1), (0, -1)] {
                let (nx, ny) = (x as i64 + dx, y as i64 + dy);
                if nx < 0 || ny < 0 || nx >= sw as i64 || ny >= sh as i64 {
                    continue;
                }
                let (nx, ny) = (nx as usize, ny as usize);
                if !seen[ny * sw + nx] && free(nx, ny) {
                    seen[ny * sw + nx] = true;
                    stack.push((nx, ny));
                }
            }
        }
        false
    }

    const DOOR: [&str; 9] = [
        "##########", //
        "#....#...#",
        "#....#...#",
        "#........#",
        "#........#",
        "#....#...#",
        "#....#...#",
        "#....#...#",
        "##########",
    ];

    #[test]
    fn a_door_is_passable_below_its_half_width_and_provably_closed_above() {
        let m = layer_of(&DOOR);
        let layer = m.layer(Capability::FREE).expect("layer");
        // The door is two cells wide: a disc of radius just under 1 passes, one over 1 cannot.
        assert_eq!(may_connect(layer, 0.95, (2, 3), (7, 3), || false), Reach::Possible);
        assert!(sampled_path_exists(&DOOR, 0.95, (2, 3), (7, 3)));
        assert_eq!(may_connect(layer, 1.8, (2, 3), (7, 3), || false), Reach::Impossible);
        assert_eq!(may_connect(layer, 0.5, (2, 3), (0, 0), || false), Reach::Impossible, "a blocked cell");
        assert_eq!(may_connect(layer, 0.5, (2, 3), (20, 0), || false), Reach::Impossible, "off the map");
        assert_eq!(may_connect(layer, 0.5, (2, 3), (2, 3), || false), Reach::Possible);
        // A long search is stopped when asked.
        let open = ClearanceMap::from_grid(&Grid::new_free(120, 120).expect("grid"), ClearanceConfig::default())
            .expect("clearance");
        let layer = open.layer(Capability::FREE).expect("layer");
        assert_eq!(may_connect(layer, 0.5, (1, 1), (118, 118), || false), Reach::Possible);
        assert_eq!(may_connect(layer, 0.5, (1, 1), (118, 118), || true), Reach::Stopped);
    }

    /// Never a false proof: wherever a sampled disc path exists, `may_connect` allows it, on random
    /// maps and radii.
    #[test]
    fn never_refuses_a_pair_a_sampled_disc_can_join() {
        let mut seed = 0x1234_5678_9abc_def1u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let (mut possible, mut impossible) = (0, 0);
        for _ in 0..40 {
            let (w, h) = (14usize, 10usize);
            let rows: Vec<String> =
                (0..h).map(|_| (0..w).map(|_| if next() % 100 < 22 { '#' } else { '.' }).collect()).collect();
            let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
            let m = layer_of(&rows);
            let layer = m.layer(Capability::FREE).expect("layer");
            for _ in 0..6 {
                let r = [0.3, 0.5, 0.8, 1.1][(next() % 4) as usize];
                let a = ((next() % w as u64) as usize, (next() % h as u64) as usize);
                let b = ((next() % w as u64) as usize, (next() % h as u64) as usize);
                let reach = may_connect(layer, r, a, b, || false);
                if sampled_path_exists(&rows, r, a, b) {
                    assert_eq!(reach, Reach::Possible, "{rows:?} r {r} {a:?} -> {b:?}");
                    possible += 1;
                } else if reach == Reach::Impossible {
                    impossible += 1;
                }
            }
        }
        // Both answers occur, so the test exercises both.
        assert!(possible > 20 && impossible > 20, "{possible} possible, {impossible} impossible");
    }
}
