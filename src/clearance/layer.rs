//! The annotations of one capability: its blocked flags, obstacle distance and true clearance.

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
    blocked: Vec<bool>,
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
        let blocked: Vec<bool> = classes.iter().map(|&c| !capability.allows_index(c)).collect();
        let distance = Arc::new(DistanceField::new(width, height, &blocked, config.distance_cap));
        let clearance = TrueClearance::new(width, height, &blocked, config.clearance_cap);
        Self { capability, width, height, blocked, distance, clearance }
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
        x >= self.width || y >= self.height || self.blocked[y * self.width + x]
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
                let i = y * self.width + x;
                let b = !self.capability.allows_index(classes[i]);
                if b != self.blocked[i] {
                    self.blocked[i] = b;
                    changed = Some(union_rect(changed, CellRect { x, y, width: 1, height: 1 }));
                }
            }
        }
        let changed = changed?;
        let a = Arc::make_mut(&mut self.distance).update(&self.blocked, changed);
        let b = self.clearance.update(&self.blocked, changed);
        Some(union_rect(Some(a), b))
    }
}

impl crate::memory::HeapSize for ClearanceLayer {
    fn heap_bytes(&self) -> usize {
        self.blocked.heap_bytes() + self.distance.heap_bytes() + self.clearance.heap_bytes()
    }
}
