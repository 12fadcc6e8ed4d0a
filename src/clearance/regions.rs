//! Regions: connected components of a traversability mask, kept current under local changes.
//!
//! Two traversable cells are in the same region when a path of 4-connected traversable cells joins
//! them. This is exactly reachability for 8-connected moves that may not cut a blocked corner
//! (a diagonal step needs both orthogonal neighbours traversable), the move rule of the planners
//! in this crate, so "different regions" answers "unreachable" without a search (Pinter's region
//! table).
//!
//! Representation: a label per cell (0 = not traversable) and a union-find forest over labels, so
//! joining two regions is a union and a query is a label lookup plus a short `find`. The labels
//! are kept by 8 x 8 tiles (`super::tiled_labels`): labelling writes each cell's root, so a
//! tile of open floor or of wall holds one label and only tiles along obstacle outlines keep a
//! label per cell (a fraction of the 4 bytes a cell a plain array takes).
//!
//! Update after the mask changed inside a rectangle: the rectangle grown by a margin is labelled
//! locally (`crate::labelling`). Cells that became traversable take the labels of their local
//! component (unions join regions that now touch). When cells were removed, a region can only
//! have split if it now appears in two or more local components (every piece of a split region
//! touches the removed cells); only then are those components relabelled by a search beyond the
//! window (`separate_pieces`). So a small patch costs a small window unless it really cuts (or
//! nearly cuts, beyond the margin) a region.

use super::distance::grow;
use super::tiled_labels::TiledLabels;
use crate::grid::{BlockedAt, CellRect};

/// Label count beyond which an update relabels from scratch: far enough below the tiles'
/// [`super::tiled_labels::VALUE_LIMIT`] (2^31) that one update's fresh labels stay below it.
const LABEL_RELABEL_AT: usize = 3 << 29;

/// Margin (cells) around a change inside which connectivity is checked locally before falling
/// back to a search beyond it.
const LOCAL_MARGIN: usize = 16;

/// Connected regions of a mask (see the module documentation).
#[derive(Debug, Clone)]
pub struct Regions {
    width: usize,
    height: usize,
    labels: TiledLabels,
    parent: Vec<u32>,
    rank: Vec<u8>,
    /// Margin of the local check (tests shrink it to exercise the split search).
    margin: usize,
}

impl Regions {
    /// The regions of `mask` (traversable = not blocked).
    pub fn new(mask: &impl BlockedAt) -> Self {
        Self::with_margin(mask, LOCAL_MARGIN)
    }

    /// As [`Regions::new`] with the margin of the local connectivity check set to `margin` cells
    /// (at least 1).
    pub(crate) fn with_margin(mask: &impl BlockedAt, margin: usize) -> Self {
        let mut r = Self {
            margin: margin.max(1),
            width: mask.width(),
            height: mask.height(),
            labels: TiledLabels::default(),
            parent: Vec::new(),
            rank: Vec::new(),
        };
        r.rebuild(mask);
        r
    }

    /// Labels every component from scratch: two-pass connected-component labelling over rows.
    /// Pass 1 gives a free cell the label of its left or upper neighbour (a fresh one when both
    /// are blocked) and unites labels that meet; pass 2 makes the same choices again and writes
    /// each cell's root, a tile row at a time, so the labels stay by tiles throughout (two rows
    /// of `u32` and one tile row of roots are all the scratch it takes).
    fn rebuild(&mut self, mask: &impl BlockedAt) {
        let (w, h) = (self.width, self.height);
        self.labels = TiledLabels::filled(w, h, 0);
        self.parent = vec![0];
        self.rank = vec![0];
        // The raw label of every cell of row `y` (`label(left, up)` for a free cell), from the
        // row above (`up`, all 0 for row 0).
        fn label_row(
            mask: &impl BlockedAt,
            y: usize,
            up: &[u32],
            row: &mut [u32],
            mut label: impl FnMut(u32, u32) -> u32,
        ) {
            for x in 0..row.len() {
                row[x] = if mask.blocked_at(x, y) { 0 } else { label(if x > 0 { row[x - 1] } else { 0 }, up[x]) };
            }
        }
        let (mut up, mut row) = (vec![0u32; w], vec![0u32; w]);
        for y in 0..h {
            label_row(mask, y, &up, &mut row, |left, up| match (left, up) {
                (0, 0) => self.fresh_label(),
                (l, 0) | (0, l) => l,
                (l, u) if l == u => l,
                (l, u) => {
                    self.union(l, u);
                    l
                }
            });
            std::mem::swap(&mut up, &mut row);
        }
        // Point every label at its root so queries take one step.
        for l in 1..self.parent.len() as u32 {
            self.find_compress(l);
        }
        // Pass 2: the same labels in the same order (a counter in place of `fresh_label`), each
        // written as its root.
        let parent = &self.parent;
        let mut next = 1u32;
        up.fill(0);
        let mut roots: Vec<u32> = Vec::with_capacity(w * 8);
        for y in 0..h {
            label_row(mask, y, &up, &mut row, |left, up| match (left, up) {
                (0, 0) => {
                    next += 1;
                    next - 1
                }
                (l, 0) | (0, l) => l,
                (l, _) => l,
            });
            roots.extend(row.iter().map(|&l| parent[l as usize]));
            if (y + 1) % 8 == 0 || y + 1 == h {
                self.labels.set_tile_row(y / 8 * 8, &roots);
                roots.clear();
            }
            std::mem::swap(&mut up, &mut row);
        }
        debug_assert_eq!(next as usize, self.parent.len());
    }

    fn fresh_label(&mut self) -> u32 {
        let l = self.parent.len() as u32;
        self.parent.push(l);
        self.rank.push(0);
        l
    }

    #[inline]
    fn find(&self, mut l: u32) -> u32 {
        while self.parent[l as usize] != l {
            l = self.parent[l as usize];
        }
        l
    }

    fn find_compress(&mut self, l: u32) -> u32 {
        let root = self.find(l);
        let mut l = l;
        while self.parent[l as usize] != root {
            let next = self.parent[l as usize];
            self.parent[l as usize] = root;
            l = next;
        }
        root
    }

    fn union(&mut self, a: u32, b: u32) -> u32 {
        let (a, b) = (self.find_compress(a), self.find_compress(b));
        if a == b {
            return a;
        }
        let (hi, lo) = if self.rank[a as usize] >= self.rank[b as usize] { (a, b) } else { (b, a) };
        self.parent[lo as usize] = hi;
        if self.rank[hi as usize] == self.rank[lo as usize] {
            self.rank[hi as usize] += 1;
        }
        hi
    }

    /// The region of cell `(x, y)`: an id equal for exactly the cells of one region, or `None`
    /// when the cell is outside the map or not traversable. Ids are valid until the next update.
    #[inline]
    pub fn region_of(&self, x: usize, y: usize) -> Option<u32> {
        if x >= self.width || y >= self.height {
            return None;
        }
        match self.labels.get(x, y) {
            0 => None,
            l => Some(self.find(l)),
        }
    }

    /// True when both cells are traversable and in the same region (so a path joins them).
    #[inline]
    pub fn same_region(&self, a: (usize, usize), b: (usize, usize)) -> bool {
        match (self.region_of(a.0, a.1), self.region_of(b.0, b.1)) {
            (Some(p), Some(q)) => p == q,
            _ => false,
        }
    }

    /// Brings the regions up to date after `mask` changed inside `changed` only.
    pub fn update(&mut self, mask: &impl BlockedAt, changed: CellRect) {
        if changed.is_empty() {
            return;
        }
        // Labels only grow; relabel from scratch once they outnumber the cells (amortised O(1)),
        // or near the largest label the tiles hold (a relabelled map of at most 2^31 cells, the
        // most a grid holds, needs at most 2^30 + 1: every other cell).
        let limit = (2 * self.width * self.height + 1024).min(LABEL_RELABEL_AT);
        if self.parent.len() > limit {
            self.rebuild(mask);
            return;
        }
        let w = self.width;
        let mut removed_any = false;
        for y in changed.y..changed.y + changed.height {
            for x in changed.x..changed.x + changed.width {
                if mask.blocked_at(x, y) && self.labels.get(x, y) != 0 {
                    self.labels.set(x, y, 0);
                    removed_any = true;
                }
            }
        }
        let window = grow(changed, self.margin, w, self.height);
        let mut local = vec![0u32; window.width * window.height];
        // Local components: (first cell, roots of the labelled cells in it).
        let free = |lx: usize, ly: usize| !mask.blocked_at(window.x + lx, window.y + ly);
        let mut components: Vec<(usize, Vec<u32>)> =
            crate::labelling::label_components(window.width, window.height, free, &mut local)
                .into_iter()
                .map(|(lx, ly)| ((window.y + ly) * w + window.x + lx, Vec::new()))
                .collect();
        for ly in 0..window.height {
            for lx in 0..window.width {
                let id = local[ly * window.width + lx];
                let l = self.labels.get(window.x + lx, window.y + ly);
                if id != 0 && l != 0 {
                    let root = self.find_compress(l);
                    let roots = &mut components[id as usize - 1].1;
                    if !roots.contains(&root) {
                        roots.push(root);
                    }
                }
            }
        }
        // Join the regions each local component touches, then label the new cells of every
        // component in one pass over the window (a pass per component was quadratic in a patch
        // of noise, whose free cells are many small components).
        let label_of: Vec<u32> = components
            .iter()
            .map(|(_, roots)| match roots.split_first() {
                None => self.fresh_label(),
                Some((&r0, rest)) => rest.iter().fold(r0, |acc, &r| self.union(acc, r)),
            })
            .collect();
        for ly in 0..window.height {
            let y = window.y + ly;
            for lx in 0..window.width {
                let (x, id) = (window.x + lx, local[ly * window.width + lx]);
                if id != 0 && self.labels.get(x, y) == 0 {
                    self.labels.set(x, y, label_of[id as usize - 1]);
                }
            }
        }
        if !removed_any {
            self.compact(window);
            return; // without removals nothing can split
        }
        // A region that now shows up in two or more local components may have split: search from
        // those components together and relabel the pieces that turn out to be closed.
        let mut by_root: Vec<(u32, Vec<usize>)> = Vec::new();
        for (first, _) in &components {
            let l = self.labels.get(first % w, first / w);
            let root = self.find_compress(l);
            match by_root.iter_mut().find(|(r, _)| *r == root) {
                Some((_, starts)) => starts.push(*first),
                None => by_root.push((root, vec![*first])),
            }
        }
        for (_, starts) in by_root {
            if starts.len() >= 2 {
                self.separate_pieces(mask, &starts);
            }
        }
        self.compact(window);
    }

    /// Folds the tiles of `window` whose cells came to hold one label back into one (pieces
    /// relabelled beyond the window stay expanded until the next rebuild, which the amortised
    /// relabelling bounds).
    fn compact(&mut self, window: CellRect) {
        self.labels.compact(window.x, window.y, window.x + window.width, window.y + window.height);
    }

    /// Breadth-first searches from every cell of `starts` (all in one region before a change), one
    /// step each in turn. Searches that meet are joined; a joined group whose frontier runs out is
    /// a closed piece and gets a fresh label. Stops when at most one group is still open, so the
    /// cost is about the number of searches times the size of the smaller pieces (or of the detour
    /// joining them), not the size of the region.
    fn separate_pieces(&mut self, mask: &impl BlockedAt, starts: &[usize]) {
        let (w, h) = (self.width, self.height);
        let k = starts.len();
        let mut owner: rustc_hash::FxHashMap<u32, u32> = rustc_hash::FxHashMap::default();
        let mut queues: Vec<std::collections::VecDeque<u32>> = vec![std::collections::VecDeque::new(); k];
        let mut group: Vec<usize> = (0..k).collect();
        fn root(group: &mut [usize], mut i: usize) -> usize {
            while group[i] != i {
                group[i] = group[group[i]];
                i = group[i];
            }
            i
        }
        for (s, &c) in starts.iter().enumerate() {
            match owner.get(&(c as u32)) {
                Some(&o) => {
                    let (a, b) = (root(&mut group, s), root(&mut group, o as usize));
                    group[a] = b;
                }
                None => {
                    owner.insert(c as u32, s as u32);
                    queues[s].push_back(c as u32);
                }
            }
        }
        // Groups with a non-empty frontier in at least one member search.
        let open_groups = |group: &mut Vec<usize>, queues: &[std::collections::VecDeque<u32>]| {
            let mut open: Vec<usize> = Vec::new();
            for (s, q) in queues.iter().enumerate() {
                let r = root(group, s);
                if !q.is_empty() && !open.contains(&r) {
                    open.push(r);
                }
            }
            open
        };
        let mut steps = 0usize;
        loop {
            // Checking which groups are open costs O(k); do it every k steps.
            if steps % k == 0 && open_groups(&mut group, &queues).len() <= 1 {
                break;
            }
            steps += 1;
            let s = steps % k;
            let Some(c) = queues[s].pop_front() else { continue };
            let c = c as usize;
            let (x, y) = (c % w, c / w);
            let neighbours = [
                (x > 0).then(|| c - 1),
                (x + 1 < w).then(|| c + 1),
                (y > 0).then(|| c - w),
                (y + 1 < h).then(|| c + w),
            ];
            for n in neighbours.into_iter().flatten() {
                if mask.blocked_at(n % w, n / w) {
                    continue;
                }
                match owner.get(&(n as u32)) {
                    Some(&o) => {
                        let (a, b) = (root(&mut group, s), root(&mut group, o as usize));
                        if a != b {
                            group[a] = b;
                        }
                    }
                    None => {
                        owner.insert(n as u32, s as u32);
                        queues[s].push_back(n as u32);
                    }
                }
            }
        }
        // Closed groups (every member queue empty) are separate pieces; the open one (if any)
        // keeps the old label.
        let open_roots = open_groups(&mut group, &queues);
        let mut fresh: Vec<(usize, u32)> = Vec::new();
        for (&cell, &s) in &owner {
            let r = root(&mut group, s as usize);
            if open_roots.contains(&r) {
                continue;
            }
            let label = match fresh.iter().find(|(g, _)| *g == r) {
                Some(&(_, l)) => l,
                None => {
                    let l = self.fresh_label();
                    fresh.push((r, l));
                    l
                }
            };
            self.labels.set(cell as usize % w, cell as usize / w, label);
        }
    }
}

impl crate::memory::HeapSize for Regions {
    fn heap_bytes(&self) -> usize {
        self.labels.heap_bytes() + self.parent.heap_bytes() + self.rank.heap_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Grid;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    /// Breadth-first reachability with 8-connected moves that do not cut blocked corners.
    fn reachable(g: &Grid, a: (usize, usize), b: (usize, usize)) -> bool {
        if g.is_blocked(a.0 as i64, a.1 as i64) || g.is_blocked(b.0 as i64, b.1 as i64) {
            return false;
        }
        let mut seen = vec![false; g.width() * g.height()];
        let mut q = VecDeque::from([a]);
        seen[a.1 * g.width() + a.0] = true;
        while let Some((x, y)) = q.pop_front() {
            if (x, y) == b {
                return true;
            }
            for (dx, dy) in [(1i64, 0i64), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)] {
                let (nx, ny) = (x as i64 + dx, y as i64 + dy);
                if g.is_blocked(nx, ny)
                    || g.is_blocked(x as i64 + dx, y as i64)
                    || g.is_blocked(x as i64, y as i64 + dy)
                {
                    continue;
                }
                let j = ny as usize * g.width() + nx as usize;
                if !seen[j] {
                    seen[j] = true;
                    q.push_back((nx as usize, ny as usize));
                }
            }
        }
        false
    }

    /// True when two region maps induce the same partition of the cells.
    fn same_partition(a: &Regions, b: &Regions) -> bool {
        let mut ab = std::collections::HashMap::new();
        let mut ba = std::collections::HashMap::new();
        for y in 0..a.height {
            for x in 0..a.width {
                let (p, q) = (a.region_of(x, y), b.region_of(x, y));
                if p.is_some() != q.is_some() {
                    return false;
                }
                if let (Some(p), Some(q)) = (p, q) {
                    if *ab.entry(p).or_insert(q) != q || *ba.entry(q).or_insert(p) != p {
                        return false;
                    }
                }
            }
        }
        true
    }

    fn grid_from(w: usize, h: usize, cells: &[u8], density: u8) -> Grid {
        Grid::from_blocked(w, h, cells[..w * h].iter().map(|&v| v < density).collect()).unwrap()
    }

    proptest! {
        #[test]
        fn region_answers_equal_search_answers(w in 1usize..16, h in 1usize..16, cells in proptest::collection::vec(0u8..100, 256), density in 0u8..60,
                                               pairs in proptest::collection::vec((0usize..16, 0usize..16, 0usize..16, 0usize..16), 20)) {
            let g = grid_from(w, h, &cells, density);
            let r = Regions::new(&g);
            for (ax, ay, bx, by) in pairs {
                let (a, b) = ((ax % w, ay % h), (bx % w, by % h));
                prop_assert_eq!(r.same_region(a, b), reachable(&g, a, b));
            }
        }

        #[test]
        fn updates_equal_full_recomputation(w in 1usize..48, h in 1usize..48, density in 0u8..60, margin in 1usize..20,
                                            patches in proptest::collection::vec((0usize..48, 0usize..48, 1usize..6, 1usize..40, 0u8..100, any::<u64>()), 1..30)) {
            let start: Vec<bool> = (0..w * h).map(|i| (i * 7919 + i / w * 13) % 100 < density as usize).collect();
            let mut g = Grid::from_blocked(w, h, start).unwrap();
            let mut r = Regions::with_margin(&g, margin);
            prop_assert!(same_partition(&r, &Regions::new(&g)));
            for (px, py, pw, ph, d, seed) in patches {
                let rect = CellRect { x: px % w, y: py % h, width: pw.min(w - px % w), height: ph.min(h - py % h) };
                let mut s = seed | 1;
                for y in rect.y..rect.y + rect.height {
                    for x in rect.x..rect.x + rect.width {
                        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
                        g.set_blocked(x, y, (s % 100) < d as u64).unwrap();
                    }
                }
                r.update(&g, rect);
                prop_assert!(same_partition(&r, &Regions::new(&g)), "after patch {:?} density {}", rect, density);
            }
        }
    }

    #[test]
    fn a_wall_splits_and_a_gap_joins() {
        let mut g = Grid::new_free(60, 60).unwrap();
        let mut r = Regions::new(&g);
        assert!(r.same_region((0, 0), (59, 59)));
        for y in 0..60 {
            g.set_blocked(30, y, true).unwrap();
        }
        r.update(&g, CellRect { x: 30, y: 0, width: 1, height: 60 });
        assert!(!r.same_region((0, 0), (59, 59)));
        assert!(r.same_region((0, 0), (29, 59)));
        g.set_blocked(30, 45, false).unwrap();
        r.update(&g, CellRect { x: 30, y: 45, width: 1, height: 1 });
        assert!(r.same_region((0, 0), (59, 59)));
    }
}
