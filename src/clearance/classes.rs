//! Cell classes and capabilities.
//!
//! Every occupancy value is sorted into one [`CellClass`]: unknown (`-1`), occupied (at or above
//! the occupied threshold, or any value outside `-1..=100`), free, or one of the optional cost
//! bands between them. A [`Capability`] is the set of classes a vehicle may enter; annotations
//! are kept per capability in use (for example `{free}`, and `{free, unknown}` for
//! `allow_unknown`).

use super::ClearanceError;

/// The class of one cell, as a small index (`0..=MAX_CLASSES-1`) so a [`Capability`] is a bitmask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CellClass(pub u8);

impl CellClass {
    /// Occupancy `-1`.
    pub const UNKNOWN: CellClass = CellClass(0);
    /// At or above the occupied threshold, or malformed (outside `-1..=100`).
    pub const OCCUPIED: CellClass = CellClass(1);
    /// Below the first cost band (or below the occupied threshold when there are no bands).
    pub const FREE: CellClass = CellClass(2);
    /// Largest number of classes: unknown, occupied, free and up to 29 cost bands.
    pub const MAX_CLASSES: usize = 32;

    /// The class of cost band `i` (0-based, see [`Classifier::cost_bands`]).
    pub fn band(i: usize) -> CellClass {
        CellClass(3 + i as u8)
    }
}

/// Turns occupancy values into classes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classifier {
    /// Values at or above this (`1..=100`) are [`CellClass::OCCUPIED`].
    pub occupied_threshold: i8,
    /// Strictly increasing lower bounds of cost bands, each in `1..occupied_threshold`. A value
    /// `v` with `cost_bands[i] <= v < cost_bands[i+1]` (or `< occupied_threshold` for the last)
    /// is class [`CellClass::band`]`(i)`; values below the first bound are free.
    pub cost_bands: Vec<i8>,
}

impl Default for Classifier {
    fn default() -> Self {
        Self { occupied_threshold: 65, cost_bands: Vec::new() }
    }
}

impl Classifier {
    /// Checks the thresholds; fails with [`ClearanceError::Config`] when they are out of range or
    /// not increasing.
    pub fn validate(&self) -> Result<(), ClearanceError> {
        // 0 is allowed: every known cell is an obstacle (as the planner's traversability reads
        // it), so the annotations stay the collision maps' obstacles.
        if !(0..=100).contains(&self.occupied_threshold) {
            return Err(ClearanceError::Config(format!(
                "occupied threshold {} is outside 0..=100",
                self.occupied_threshold
            )));
        }
        if self.cost_bands.len() > CellClass::MAX_CLASSES - 3 {
            return Err(ClearanceError::Config(format!("{} cost bands exceed the limit of 29", self.cost_bands.len())));
        }
        let mut previous = 0i8;
        for &b in &self.cost_bands {
            if b <= previous || b >= self.occupied_threshold {
                return Err(ClearanceError::Config(format!(
                    "cost band bounds {:?} must increase strictly within 1..{}",
                    self.cost_bands, self.occupied_threshold
                )));
            }
            previous = b;
        }
        Ok(())
    }

    /// The class of occupancy value `v`.
    #[inline]
    pub fn classify(&self, v: i8) -> CellClass {
        match v {
            -1 => CellClass::UNKNOWN,
            0..=100 if v >= self.occupied_threshold => CellClass::OCCUPIED,
            0..=100 => match self.cost_bands.iter().rposition(|&b| v >= b) {
                Some(i) => CellClass::band(i),
                None => CellClass::FREE,
            },
            _ => CellClass::OCCUPIED,
        }
    }

    /// A 256-entry table from `v as u8` to class index, so classifying a map is one lookup a cell.
    pub(crate) fn table(&self) -> [u8; 256] {
        let mut t = [0u8; 256];
        for (i, slot) in t.iter_mut().enumerate() {
            *slot = self.classify(i as u8 as i8).0;
        }
        t
    }
}

/// A set of cell classes a vehicle may enter (bit `c` set means class `c` is traversable).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Capability(pub u32);

impl Capability {
    /// Free cells only.
    pub const FREE: Capability = Capability(1 << 2);
    /// Free and unknown cells (the `allow_unknown` rule).
    pub const FREE_OR_UNKNOWN: Capability = Capability((1 << 2) | 1);

    /// This capability with class `c` added.
    pub fn with(self, c: CellClass) -> Capability {
        Capability(self.0 | (1u32 << c.0))
    }

    /// True when class `c` may be entered.
    #[inline]
    pub fn allows(self, c: CellClass) -> bool {
        self.0 & (1u32 << c.0) != 0
    }

    /// True when class index `c` may be entered (the hot-loop form).
    #[inline]
    pub(crate) fn allows_index(self, c: u8) -> bool {
        self.0 & (1u32 << c) != 0
    }

    /// The capability matching a [`crate::map::Traversability`] rule with no cost bands: free,
    /// plus unknown when `allow_unknown`.
    pub fn from_traversability(rule: crate::map::Traversability) -> Capability {
        if rule.allow_unknown {
            Capability::FREE_OR_UNKNOWN
        } else {
            Capability::FREE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_and_bands() {
        let c = Classifier { occupied_threshold: 65, cost_bands: vec![20, 40] };
        c.validate().unwrap();
        assert_eq!(c.classify(-1), CellClass::UNKNOWN);
        assert_eq!(c.classify(0), CellClass::FREE);
        assert_eq!(c.classify(19), CellClass::FREE);
        assert_eq!(c.classify(20), CellClass::band(0));
        assert_eq!(c.classify(39), CellClass::band(0));
        assert_eq!(c.classify(40), CellClass::band(1));
        assert_eq!(c.classify(64), CellClass::band(1));
        assert_eq!(c.classify(65), CellClass::OCCUPIED);
        assert_eq!(c.classify(101), CellClass::OCCUPIED);
        assert_eq!(c.classify(-5), CellClass::OCCUPIED);
        let t = c.table();
        for v in i8::MIN..=i8::MAX {
            assert_eq!(t[v as u8 as usize], c.classify(v).0);
        }
    }

    #[test]
    fn bad_classifiers_are_rejected() {
        assert!(Classifier { occupied_threshold: -1, cost_bands: vec![] }.validate().is_err());
        assert!(Classifier { occupied_threshold: 0, cost_bands: vec![] }.validate().is_ok());
        assert!(Classifier { occupied_threshold: 65, cost_bands: vec![30, 20] }.validate().is_err());
        assert!(Classifier { occupied_threshold: 65, cost_bands: vec![70] }.validate().is_err());
    }

    #[test]
    fn capabilities() {
        assert!(Capability::FREE.allows(CellClass::FREE));
        assert!(!Capability::FREE.allows(CellClass::UNKNOWN));
        assert!(Capability::FREE_OR_UNKNOWN.allows(CellClass::UNKNOWN));
        assert!(!Capability::FREE_OR_UNKNOWN.allows(CellClass::OCCUPIED));
        assert!(Capability::FREE.with(CellClass::band(0)).allows(CellClass::band(0)));
    }
}
