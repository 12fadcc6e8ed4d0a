//! Finding what changed between two versions of a map.
//!
//! SLAM nodes republish the whole grid on every update; replanning and incremental annotation
//! need only the changed area. [`changed_rects`] compares two maps of the same geometry and returns
//! a few rectangles that together cover every changed cell.

use crate::grid::CellRect;
use crate::map::OccupancyMap;

/// Side (cells) of the tiles the comparison groups changes into. Smaller tiles give tighter
/// rectangles but more of them; 32 keeps the list short on real SLAM updates.
const TILE: usize = 32;

/// The result of comparing a new map against the held one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MapChange {
    /// Same geometry and same cells.
    Unchanged,
    /// Same geometry; these rectangles cover every changed cell (each is tight around the changes
    /// it covers and they do not overlap).
    Cells(Vec<CellRect>),
    /// Size, resolution, origin or frame differ: everything must be rebuilt.
    Geometry,
}

/// Compares `new` against `old`.
pub fn changed_rects(old: &OccupancyMap, new: &OccupancyMap) -> MapChange {
    if old.info != new.info || old.data.len() != new.data.len() {
        return MapChange::Geometry;
    }
    let (w, h) = (old.info.width, old.info.height);
    let (tw, th) = (w.div_ceil(TILE), h.div_ceil(TILE));
    // Per tile: bounding box of its changed cells (x0, y0, x1, y1 inclusive).
    let mut boxes: Vec<Option<(usize, usize, usize, usize)>> = vec![None; tw * th];
    for y in 0..h {
        let row = y * w;
        let (a, b) = (&old.data[row..row + w], &new.data[row..row + w]);
        if a == b {
            continue;
        }
        for x in (0..w).filter(|&x| a[x] != b[x]) {
            let t = &mut boxes[(y / TILE) * tw + x / TILE];
            *t = Some(match *t {
                None => (x, y, x, y),
                Some((x0, y0, x1, y1)) => (x0.min(x), y0.min(y), x1.max(x), y1.max(y)),
            });
        }
    }
    // Group 8-connected changed tiles and take each group's bounding box of changed cells.
    let mut seen = vec![false; tw * th];
    let mut rects = Vec::new();
    for t0 in 0..tw * th {
        if seen[t0] || boxes[t0].is_none() {
            continue;
        }
        seen[t0] = true;
        let mut stack = vec![t0];
        let mut bb = boxes[t0].expect("checked above");
        while let Some(t) = stack.pop() {
            let (tx, ty) = ((t % tw) as i64, (t / tw) as i64);
            for dy in -1..=1 {
                for dx in -1..=1 {
                    let (nx, ny) = (tx + dx, ty + dy);
                    if nx < 0 || ny < 0 || nx >= tw as i64 || ny >= th as i64 {
                        continue;
                    }
                    let n = ny as usize * tw + nx as usize;
                    if let (false, Some(b)) = (seen[n], boxes[n]) {
                        seen[n] = true;
                        bb = (bb.0.min(b.0), bb.1.min(b.1), bb.2.max(b.2), bb.3.max(b.3));
                        stack.push(n);
                    }
                }
            }
        }
        rects.push(CellRect { x: bb.0, y: bb.1, width: bb.2 - bb.0 + 1, height: bb.3 - bb.1 + 1 });
    }
    merge_overlapping(&mut rects);
    if rects.is_empty() {
        MapChange::Unchanged
    } else {
        MapChange::Cells(rects)
    }
}

fn overlaps(a: &CellRect, b: &CellRect) -> bool {
    a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height
}

/// Bounding boxes of separate tile groups can still overlap; merge until none does.
fn merge_overlapping(rects: &mut Vec<CellRect>) {
    let mut merged = true;
    while merged {
        merged = false;
        'outer: for i in 0..rects.len() {
            for j in i + 1..rects.len() {
                if overlaps(&rects[i], &rects[j]) {
                    let (a, b) = (rects[i], rects[j]);
                    let (x0, y0) = (a.x.min(b.x), a.y.min(b.y));
                    let (x1, y1) = ((a.x + a.width).max(b.x + b.width), (a.y + a.height).max(b.y + b.height));
                    rects[i] = CellRect { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
                    rects.swap_remove(j);
                    merged = true;
                    break 'outer;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Pose2;
    use crate::map::MapInfo;
    use proptest::prelude::*;

    fn map(w: usize, h: usize, data: Vec<i8>) -> OccupancyMap {
        let info = MapInfo { width: w, height: h, resolution: 0.1, origin: Pose2::default(), frame_id: "map".into() };
        OccupancyMap::new(info, data, usize::MAX).unwrap()
    }

    #[test]
    fn unchanged_and_geometry() {
        let a = map(4, 3, vec![0; 12]);
        assert_eq!(changed_rects(&a, &a.clone()), MapChange::Unchanged);
        let mut b = a.clone();
        b.info.resolution = 0.2;
        assert_eq!(changed_rects(&a, &b), MapChange::Geometry);
        assert_eq!(changed_rects(&a, &map(3, 4, vec![0; 12])), MapChange::Geometry);
    }

    #[test]
    fn a_closed_door_is_one_tight_rect() {
        let a = map(100, 80, vec![0; 8000]);
        let mut b = a.clone();
        for y in 40..43 {
            for x in 30..36 {
                b.data[y * 100 + x] = 100;
            }
        }
        assert_eq!(changed_rects(&a, &b), MapChange::Cells(vec![CellRect { x: 30, y: 40, width: 6, height: 3 }]));
    }

    proptest! {
        #[test]
        fn rects_cover_every_change_and_do_not_overlap(
            w in 1usize..150, h in 1usize..150,
            edits in proptest::collection::vec((0usize..150, 0usize..150, -1i8..=100), 0..40)
        ) {
            let a = map(w, h, vec![0; w * h]);
            let mut b = a.clone();
            for (x, y, v) in edits {
                if x < w && y < h { b.data[y * w + x] = v; }
            }
            match changed_rects(&a, &b) {
                MapChange::Unchanged => prop_assert_eq!(&a.data, &b.data),
                MapChange::Geometry => prop_assert!(false, "same geometry"),
                MapChange::Cells(rects) => {
                    for y in 0..h { for x in 0..w {
                        if a.data[y * w + x] != b.data[y * w + x] {
                            prop_assert!(rects.iter().any(|r| x >= r.x && x < r.x + r.width && y >= r.y && y < r.y + r.height));
                        }
                    }}
                    for (i, r) in rects.iter().enumerate() {
                        prop_assert!(r.x + r.width <= w && r.y + r.height <= h);
                        for s in &rects[i + 1..] { prop_assert!(!overlaps(r, s)); }
                    }
                }
            }
        }
    }
}
