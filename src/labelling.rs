//! Connected-component labelling of a rectangle of cells, by runs.
//!
//! The one labeller behind the cluster graph's pieces ([`crate::hierarchy`]) and the local
//! connectivity check of a map update ([`crate::clearance::regions`]): both ask for the
//! 4-connected components of the free cells of a small rectangle, numbered in the order their
//! first cell comes row by row (so a rectangle labelled twice gets the same numbers).
//!
//! Each row is cut into runs of free cells; a run is joined (union-find over runs) to every run
//! of the row below that shares a column with it, which is exactly 4-connectivity. The cells are
//! then written run by run. A flood fill visits each free cell with four neighbour tests and a
//! stack push; here a cell costs one free test and one store, and the union-find works on runs,
//! of which a rectangle of obstacle outlines has far fewer than cells.

/// Labels the 4-connected components of the free cells of a `width x height` rectangle.
///
/// `free(x, y)` (local coordinates, `x < width`, `y < height`) tells whether a cell is free.
/// `out` (at least `width * height` values, row-major with stride `width`) receives 0 for a
/// blocked cell and `1..=n` for the cells of the `n` components, numbered by their first cell in
/// row-major order. Returns each component's first cell `(x, y)`, in that order.
///
/// ```ignore
/// // Two pieces: the left column and the right column of a 3 x 2 rectangle.
/// let mut out = [0u32; 6];
/// let firsts = label_components(3, 2, |x, _| x != 1, &mut out);
/// assert_eq!(out, [1, 0, 2, 1, 0, 2]);
/// assert_eq!(firsts, vec![(0, 0), (2, 0)]);
/// ```
pub(crate) fn label_components(
    width: usize,
    height: usize,
    free: impl Fn(usize, usize) -> bool,
    out: &mut [u32],
) -> Vec<(usize, usize)> {
    let out = &mut out[..width * height];
    out.fill(0);
    // 1. The runs of free cells, row by row, and where each row's runs begin.
    let mut runs: Vec<Run> = Vec::new();
    let mut row_start: Vec<usize> = Vec::with_capacity(height + 1);
    for y in 0..height {
        row_start.push(runs.len());
        let mut x = 0;
        while x < width {
            if !free(x, y) {
                x += 1;
                continue;
            }
            let x0 = x;
            while x < width && free(x, y) {
                x += 1;
            }
            runs.push(Run { y, x0, x1: x });
        }
    }
    row_start.push(runs.len());
    // 2. Each run joined to the runs below it that share a column (both rows are sorted by x).
    let mut parent: Vec<u32> = (0..runs.len() as u32).collect();
    for y in 1..height {
        let (below, here) = (row_start[y - 1]..row_start[y], row_start[y]..row_start[y + 1]);
        let (mut i, mut j) = (below.start, here.start);
        while i < below.end && j < here.end {
            let (a, b) = (runs[i], runs[j]);
            if a.x0 < b.x1 && b.x0 < a.x1 {
                union(&mut parent, i, j);
            }
            // Step past whichever run ends first; the other may still meet the next one.
            if a.x1 <= b.x1 {
                i += 1;
            } else {
                j += 1;
            }
        }
    }
    // 3. Numbers in the order of the components' first runs (runs are in row-major order), and
    //    the cells written run by run.
    let mut number = vec![0u32; runs.len()];
    let mut firsts = Vec::new();
    for (r, run) in runs.iter().enumerate() {
        let root = find(&mut parent, r);
        if number[root] == 0 {
            firsts.push((run.x0, run.y));
            number[root] = firsts.len() as u32;
        }
        out[run.y * width + run.x0..run.y * width + run.x1].fill(number[root]);
    }
    firsts
}

/// Free cells `x0..x1` of row `y`.
#[derive(Debug, Clone, Copy)]
struct Run {
    y: usize,
    x0: usize,
    x1: usize,
}

fn find(parent: &mut [u32], mut r: usize) -> usize {
    while parent[r] as usize != r {
        // Path halving: every other node on the way points to its grandparent.
        parent[r] = parent[parent[r] as usize];
        r = parent[r] as usize;
    }
    r
}

fn union(parent: &mut [u32], a: usize, b: usize) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    // The earlier run stays the root (any choice is correct; `find` halves the paths).
    match ra.cmp(&rb) {
        std::cmp::Ordering::Less => parent[rb] = ra as u32,
        std::cmp::Ordering::Greater => parent[ra] = rb as u32,
        std::cmp::Ordering::Equal => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::splitmix;

    /// The oracle: a plain flood fill from every unlabelled free cell in row-major order.
    fn flood_labels(width: usize, height: usize, free: &[bool]) -> (Vec<u32>, Vec<(usize, usize)>) {
        let mut out = vec![0u32; width * height];
        let mut firsts = Vec::new();
        for start in 0..width * height {
            if !free[start] || out[start] != 0 {
                continue;
            }
            firsts.push((start % width, start / width));
            let label = firsts.len() as u32;
            out[start] = label;
            let mut stack = vec![start];
            while let Some(i) = stack.pop() {
                let (x, y) = (i % width, i / width);
                let mut near = Vec::new();
                if x > 0 {
                    near.push(i - 1);
                }
                if x + 1 < width {
                    near.push(i + 1);
                }
                if y > 0 {
                    near.push(i - width);
                }
                if y + 1 < height {
                    near.push(i + width);
                }
                for j in near {
                    if free[j] && out[j] == 0 {
                        out[j] = label;
                        stack.push(j);
                    }
                }
            }
        }
        (out, firsts)
    }

    #[test]
    fn the_doc_example() {
        let mut out = [0u32; 6];
        let firsts = label_components(3, 2, |x, _| x != 1, &mut out);
        assert_eq!(out, [1, 0, 2, 1, 0, 2]);
        assert_eq!(firsts, vec![(0, 0), (2, 0)]);
    }

    #[test]
    fn labels_equal_a_flood_fill_on_random_rectangles() {
        let mut seed = 0x1abe1u64;
        let mut below = |n: usize| (splitmix(&mut seed) * n as f64) as usize;
        for case in 0..3000 {
            let (width, height) = (1 + below(40), 1 + below(40));
            // Densities from empty to full, around the percolation threshold most of the time,
            // where components are many and wind (U shapes join late, spirals, combs).
            let density = [0, 20, 35, 40, 45, 50, 60, 80, 100][case % 9];
            let free: Vec<bool> = (0..width * height).map(|_| below(100) >= density).collect();
            let mut out = vec![7u32; width * height + 3];
            let firsts = label_components(width, height, |x, y| free[y * width + x], &mut out);
            let (want, want_firsts) = flood_labels(width, height, &free);
            assert_eq!(&out[..width * height], &want[..], "case {case}: {width}x{height} at {density}%");
            assert_eq!(firsts, want_firsts, "case {case}");
            assert_eq!(&out[width * height..], &[7, 7, 7], "nothing written past the rectangle");
        }
    }

    #[test]
    fn a_comb_joined_only_at_its_last_row_is_one_component() {
        // Teeth in every other column, joined by the top row: each tooth's runs stay apart until
        // the last row, where one run meets them all.
        let (width, height) = (9, 6);
        let free = |x: usize, y: usize| x % 2 == 0 || y == height - 1;
        let mut out = vec![0u32; width * height];
        let firsts = label_components(width, height, free, &mut out);
        assert_eq!(firsts, vec![(0, 0)]);
        assert!((0..width * height).all(|k| (out[k] == 1) == free(k % width, k / width)));
    }
}
