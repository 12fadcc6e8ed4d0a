//! Vehicle footprints and the rule deciding whether one fits at a cell.
//!
//! - [`Footprint::Circle`] of radius `r` cells, centred on a cell's centre, fits when the cell's
//!   obstacle distance (centre to nearest blocked centre, see [`super::distance`]) exceeds `r`:
//!   no blocked cell centre lies within the closed disc of radius `r`.
//! - [`Footprint::Square`] of side `k` cells, anchored at its low corner cell, fits when the cell's
//!   true clearance (see [`super::true_clearance`]) is at least `k`.

use super::classes::Capability;
use super::{ClearanceError, ClearanceLayer};

/// The shape of a vehicle in cell units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Footprint {
    /// A disc of this radius (cells, finite, `>= 0`) centred on the cell centre.
    Circle {
        /// Radius in cells.
        radius: f64,
    },
    /// A `side x side` square of cells anchored at the cell (covering `x..x+side`, `y..y+side`).
    Square {
        /// Side in cells (`>= 1`).
        side: u16,
    },
}

impl Footprint {
    /// A circle of `radius` cells; fails with [`ClearanceError::BadFootprint`] when the radius is
    /// negative or not finite.
    pub fn circle(radius: f64) -> Result<Self, ClearanceError> {
        if !(radius.is_finite() && radius >= 0.0) {
            return Err(ClearanceError::BadFootprint(format!("circle radius {radius} is not a finite number >= 0")));
        }
        Ok(Footprint::Circle { radius })
    }

    /// A square of `side` cells; fails with [`ClearanceError::BadFootprint`] when `side < 1` or
    /// `side > 65535`.
    pub fn square(side: i64) -> Result<Self, ClearanceError> {
        if !(1..=i64::from(u16::MAX)).contains(&side) {
            return Err(ClearanceError::BadFootprint(format!("square side {side} is not in 1..=65535 cells")));
        }
        Ok(Footprint::Square { side: side as u16 })
    }

    /// A circle of `radius_m` metres on a map of `resolution` metres per cell.
    pub fn circle_metres(radius_m: f64, resolution: f64) -> Result<Self, ClearanceError> {
        if !(resolution.is_finite() && resolution > 0.0) {
            return Err(ClearanceError::BadFootprint(format!("resolution {resolution} is not positive")));
        }
        Self::circle(radius_m / resolution)
    }

    /// The smallest square of whole cells whose side covers `side_m` metres at `resolution`.
    pub fn square_metres(side_m: f64, resolution: f64) -> Result<Self, ClearanceError> {
        if !(resolution.is_finite() && resolution > 0.0 && side_m.is_finite()) {
            return Err(ClearanceError::BadFootprint(format!("square side {side_m} m at {resolution} m/cell")));
        }
        let cells = (side_m / resolution - 1e-9).ceil();
        Self::square(if cells > 1e9 { i64::MAX } else { cells as i64 })
    }

    /// Checks the footprint is within what the annotations resolve exactly: a circle's radius must
    /// be below the distance cap, a square's side at most the clearance cap.
    pub fn check_caps(&self, distance_cap: u16, clearance_cap: u16) -> Result<(), ClearanceError> {
        match *self {
            Footprint::Circle { radius } if !(radius >= 0.0 && radius < f64::from(distance_cap)) => {
                Err(ClearanceError::BadFootprint(format!(
                    "circle radius {radius} cells is not below the distance cap {distance_cap}"
                )))
            }
            Footprint::Square { side } if side == 0 || side > clearance_cap => Err(ClearanceError::BadFootprint(
                format!("square side {side} cells exceeds the clearance cap {clearance_cap}"),
            )),
            _ => Ok(()),
        }
    }

    /// The largest squared distance that does *not* fit a circle (fits when `distance_sq` is
    /// greater): `floor(r²)`; for a square, 0.
    pub(crate) fn distance_sq_threshold(&self) -> u32 {
        match *self {
            Footprint::Circle { radius } => (radius * radius).floor() as u32,
            Footprint::Square { .. } => 0,
        }
    }

    /// True when the footprint fits at cell `(x, y)` of `layer`; false outside the map, and
    /// (conservatively) always false for a footprint beyond the caps (see
    /// [`Footprint::check_caps`]).
    #[inline]
    pub fn fits(&self, layer: &ClearanceLayer, x: usize, y: usize) -> bool {
        x < layer.width() && y < layer.height() && !self.misfit(layer)(y * layer.width() + x)
    }

    /// Where the footprint does not fit on `layer`, by row-major cell index (cells of the map
    /// only): [`Footprint::fits`]'s rule, read straight from the value arrays with the threshold
    /// taken once, for passes over many cells (the vehicle mask's build and updates).
    #[inline]
    pub(crate) fn misfit<'a>(&self, layer: &'a ClearanceLayer) -> impl Fn(usize) -> bool + 'a {
        let (distance, clearance) = (layer.distance().values(), layer.clearance().values());
        let threshold = self.distance_sq_threshold();
        let square_side = match *self {
            Footprint::Circle { .. } => None,
            Footprint::Square { side } => Some(side),
        };
        move |k| match square_side {
            None => u32::from(distance[k]) <= threshold,
            Some(side) => u16::from(clearance[k]) < side,
        }
    }
}

/// A vehicle: the cell classes it may enter and its footprint.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Vehicle {
    /// Which cell classes are traversable for it.
    pub capability: Capability,
    /// Its shape.
    pub footprint: Footprint,
}
