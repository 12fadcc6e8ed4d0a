//! The annotations of one capability: obstacle distance (whose zeros are its blocked cells) and true clearance.

use super::blocked_rows::ClassRows;
use super::classes::Capability;
use super::distance::DistanceField;
use super::true_clearance::TrueClearance;
use super::{union_rect, ClearanceConfig};
use crate::grid::CellRect;
use std::sync::Arc;

/// Annotations for one [`Capability`] (cells of classes outside it count as blocked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClearanceLayer {
    capability: Capability,
    width: usize,
    height: usize,
    /// Behind an `Arc` because the planner's collision maps and costs read it too
    /// ([`ClearanceLayer::shared_distance`]); an update copies it only while a plan in flight
    /// still holds the old one.
    distance: Arc<DistanceField>,
    clearance: TrueClearance,
}

impl ClearanceLayer {
    /// Annotates the row-major cell classes `classes` of a `width x height` map for `capability`.
    /// The caps come from `config`, which the caller has validated.
    pub fn new(width: usize, height: usize, classes: &[u8], capability: Capability, config: &ClearanceConfig) -> Self {
        // The blocked cells are read from the classes a row at a time; afterwards they are the
        // cells of obstacle distance 0, so no flag per cell is kept.
        let mut rows = ClassRows::new(classes, width, capability);
        let distance = Arc::new(DistanceField::from_rows(width, height, &mut rows, config.distance_cap));
        let clearance = TrueClearance::from_rows(width, height, &mut rows, config.clearance_cap);
        Self { capability, width, height, distance, clearance }
    }

    /// The capability these annotations are for.
    pub fn capability(&self) -> Capability {
        self.capability
    }

    /// Columns of the map.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Rows of the map.
    pub fn height(&self) -> usize {
        self.height
    }

    /// True when cell `(x, y)` is not traversable under the capability (or outside the map).
    #[inline]
    pub fn is_blocked(&self, x: usize, y: usize) -> bool {
        // Blocked cells, and only they, are at distance 0 (a free cell is at least a cell from
        // the nearest blocked one, or from the border).
        x >= self.width || y >= self.height || self.distance.values()[y * self.width + x] == 0
    }

    /// Capped squared obstacle distance of cell `(x, y)` in cell units² (see
    /// [`super::distance`]); `None` outside the map.
    #[inline]
    pub fn distance_sq(&self, x: usize, y: usize) -> Option<u32> {
        self.distance.distance_sq(x, y)
    }

    /// Obstacle distance of cell `(x, y)` in cells (centre to nearest blocked centre, the map
    /// border counting as blocked), exact below the distance cap and equal to the cap beyond it;
    /// `None` outside the map.
    pub fn obstacle_distance(&self, x: usize, y: usize) -> Option<f64> {
        self.distance_sq(x, y).map(|d| f64::from(d).sqrt())
    }

    /// Capped true clearance of cell `(x, y)` in cells (see [`super::true_clearance`]); `None`
    /// outside the map.
    #[inline]
    pub fn true_clearance(&self, x: usize, y: usize) -> Option<u8> {
        self.clearance.clearance(x, y)
    }

    /// True when a disc of `radius` cells centred on cell `(x, y)` holds no blocked cell centre
    /// (obstacle distance > radius). Exact for radii below the distance cap; false outside the
    /// map or for a radius at or above the cap.
    pub fn fits_circle(&self, x: usize, y: usize, radius: f64) -> bool {
        radius >= 0.0
            && radius < f64::from(self.distance.cap())
            && self.distance_sq(x, y).is_some_and(|d| f64::from(d) > radius * radius)
    }

    /// True when the `side x side` square anchored at `(x, y)` is inside the map and traversable;
    /// false for `side` above the clearance cap.
    pub fn fits_square(&self, x: usize, y: usize, side: u16) -> bool {
        side <= self.clearance.cap() && self.true_clearance(x, y).is_some_and(|c| u16::from(c) >= side)
    }

    /// The distance field.
    pub fn distance(&self) -> &DistanceField {
        &self.distance
    }

    /// The distance field as a shared handle, for readers that keep it beside their own
    /// structures (the planner's collision maps and costs): valid until the next update, which
    /// leaves the handle's copy as it was.
    pub fn shared_distance(&self) -> Arc<DistanceField> {
        self.distance.clone()
    }

    /// The true clearance.
    pub fn clearance(&self) -> &TrueClearance {
        &self.clearance
    }

    /// Re-reads the classes inside `rect`; when any blocked flag changed, updates the annotations
    /// locally and returns the rectangle whose values were recomputed, else `None`.
    pub(crate) fn update(&mut self, classes: &[u8], rect: CellRect) -> Option<CellRect> {
        let mut changed: Option<CellRect> = None;
        for y in rect.y..rect.y + rect.height {
            for x in rect.x..rect.x + rect.width {
                let b = !self.capability.allows_index(classes[y * self.width + x]);
                if b != self.is_blocked(x, y) {
                    changed = Some(union_rect(changed, CellRect { x, y, width: 1, height: 1 }));
                }
            }
        }
        let changed = changed?;
        let mut rows = ClassRows::new(classes, self.width, self.capability);
        let a = Arc::make_mut(&mut self.distance).update_rows(&mut rows, changed);
        let b = self.clearance.update_rows(&mut rows, changed);
        Some(union_rect(Some(a), b))
    }
}

impl crate::memory::HeapSize for ClearanceLayer {
    fn heap_bytes(&self) -> usize {
        self.distance.heap_bytes() + self.clearance.heap_bytes()
    }
}
