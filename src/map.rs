//! Occupancy maps in the ROS convention, and their conversion to search grids.
//!
//! An [`OccupancyMap`] mirrors `nav_msgs/OccupancyGrid`: row-major cells, row 0 at the map origin,
//! values `-1` (unknown) or `0..=100` (occupancy probability in percent). World coordinates are
//! metres in the map frame; [`MapInfo`] converts between them and cell units.

use crate::error::MapError;
use crate::geometry::{Point2, Pose2};
use crate::grid::Grid;

/// Default cap on the number of cells a map may have (100 million: a 10 km x 10 km map at 1 m,
/// or 500 m x 500 m at 5 cm). Configurable in the node with `max_map_cells`.
pub const DEFAULT_MAX_MAP_CELLS: usize = 100_000_000;

/// The unit of a map's world coordinates, for messages to the user: metres for ROS maps, cells
/// for Moving AI maps (loaded with one unit per cell and the origin at 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MapUnits {
    /// Metres in the map frame (map_server YAML maps, maps from ROS topics and bags).
    #[default]
    Metres,
    /// Cells (Moving AI `.map` files).
    Cells,
}

impl MapUnits {
    /// The symbol written after a value: `m` or `cells`.
    pub fn symbol(self) -> &'static str {
        match self {
            MapUnits::Metres => "m",
            MapUnits::Cells => "cells",
        }
    }
}

/// A resolution (m per cell) as a message shows it: a value that came from a ROS message's
/// `float32` (0.05 read as 0.05000000074505806) is written as that `float32` (`0.05`), any other
/// as it is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Resolution(pub f64);

impl std::fmt::Display for Resolution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let single = self.0 as f32;
        // Absurd values in exponent form, not as hundreds of digits, by the cut-offs of
        // `geometry::Number`, which writes the values that are not a float32's.
        if f64::from(single) != self.0 {
            write!(f, "{}", crate::geometry::Number(self.0))
        } else if (1e-4..1e9).contains(&self.0.abs()) {
            write!(f, "{single}")
        } else {
            write!(f, "{single:e}")
        }
    }
}

/// Geometry of a map: size, resolution and pose of cell (0, 0)'s low corner in the map frame.
#[derive(Debug, Clone, PartialEq)]
pub struct MapInfo {
    /// Columns.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// Metres per cell (> 0).
    pub resolution: f64,
    /// Pose of the low corner of cell (0, 0) in the map frame (metres, radians).
    pub origin: Pose2,
    /// The frame the map is expressed in (for example `map`).
    pub frame_id: String,
}

impl MapInfo {
    /// A map of `width` x `height` cells of `resolution` metres in frame `map`, the low corner of
    /// cell (0, 0) at the frame's origin, unrotated: cell units are metres over `resolution`.
    pub fn at_origin(width: usize, height: usize, resolution: f64) -> Self {
        Self { width, height, resolution, origin: Pose2::new(0.0, 0.0, 0.0), frame_id: "map".into() }
    }

    /// Converts a world point (metres, map frame) to continuous cell units.
    pub fn world_to_cell(&self, p: Point2) -> Point2 {
        let dx = p.x - self.origin.x;
        let dy = p.y - self.origin.y;
        let (s, c) = self.origin.yaw.sin_cos();
        Point2::new((c * dx + s * dy) / self.resolution, (-s * dx + c * dy) / self.resolution)
    }

    /// Converts continuous cell units to a world point (metres, map frame).
    pub fn cell_to_world(&self, p: Point2) -> Point2 {
        let (s, c) = self.origin.yaw.sin_cos();
        let lx = p.x * self.resolution;
        let ly = p.y * self.resolution;
        Point2::new(self.origin.x + c * lx - s * ly, self.origin.y + s * lx + c * ly)
    }

    /// Converts a world pose to cell units (heading relative to the grid axes).
    pub fn world_pose_to_cell(&self, p: Pose2) -> Pose2 {
        let q = self.world_to_cell(p.point());
        Pose2::new(q.x, q.y, crate::geometry::normalize_angle(p.yaw - self.origin.yaw))
    }

    /// Converts a pose in cell units to the world frame.
    pub fn cell_pose_to_world(&self, p: Pose2) -> Pose2 {
        let q = self.cell_to_world(p.point());
        Pose2::new(q.x, q.y, crate::geometry::normalize_angle(p.yaw + self.origin.yaw))
    }

    /// The cell containing continuous cell point `p`, or `None` when it lies outside the map.
    pub fn cell_of(&self, p: Point2) -> Option<(usize, usize)> {
        if !p.is_finite() || p.x < 0.0 || p.y < 0.0 {
            return None;
        }
        let (x, y) = (p.x.floor() as usize, p.y.floor() as usize);
        (x < self.width && y < self.height).then_some((x, y))
    }

    /// Checks the geometry: positive sizes within `max_cells`, a resolution within
    /// [`MapInfo::RESOLUTIONS`], an origin within [`MapInfo::MAX_ORIGIN_CELLS`] cells of the
    /// frame's origin.
    pub fn validate(&self, max_cells: usize) -> Result<(), MapError> {
        if self.width == 0 || self.height == 0 {
            return Err(MapError::Invalid(format!("size {}x{} has a zero side", self.width, self.height)));
        }
        let cells = self.width.saturating_mul(self.height);
        if cells > max_cells {
            return Err(MapError::TooLarge { cells, cap: max_cells });
        }
        if !(self.resolution.is_finite() && self.resolution > 0.0) {
            return Err(MapError::Invalid(format!("resolution {} is not a positive number", self.resolution)));
        }
        let (low, high) = Self::RESOLUTIONS;
        // Compared as the float32 a ROS map carries: 0.0001 in a message is 9.99999975e-5.
        if !(low as f32..=high as f32).contains(&(self.resolution as f32)) {
            return Err(MapError::Invalid(format!(
                "resolution {} m per cell is outside {low}..={high}",
                Resolution(self.resolution)
            )));
        }
        if !self.origin.is_finite() {
            return Err(MapError::Invalid("origin is not finite".into()));
        }
        let far = self.origin.x.abs().max(self.origin.y.abs()) / self.resolution;
        if far > Self::MAX_ORIGIN_CELLS {
            return Err(MapError::Invalid(format!(
                "origin ({:.3}, {:.3}) is {far:.3e} cells from the frame's origin, more than {:e}: positions that far \
                 lose the precision of a cell",
                crate::geometry::Coord(self.origin.x),
                crate::geometry::Coord(self.origin.y),
                Self::MAX_ORIGIN_CELLS
            )));
        }
        Ok(())
    }

    /// The resolutions a map may have (m per cell, or cells for a Moving AI map): 0.1 mm to 1 km.
    pub const RESOLUTIONS: (f64, f64) = (1e-4, 1e3);

    /// How far a map's origin may lie from its frame's origin, in cells (of its resolution):
    /// 10^9 cells keep a position's coordinates in cells exact to about 10^-7 of a cell (f64),
    /// and reach 50 000 km at 5 cm, UTM coordinates included.
    pub const MAX_ORIGIN_CELLS: f64 = 1e9;
}

/// How many of `values` lie outside `nav_msgs/OccupancyGrid`'s `-1..=100` (malformed: every
/// stage reads them as obstacles, the safe side; the node says how many a map or patch held).
pub fn values_out_of_range(values: &[i8]) -> usize {
    values.iter().filter(|&&v| !(-1..=100).contains(&v)).count()
}

/// An occupancy grid as ROS publishes it.
#[derive(Debug, Clone, PartialEq)]
pub struct OccupancyMap {
    /// Geometry.
    pub info: MapInfo,
    /// Row-major cells: `-1` unknown, `0..=100` occupancy percent.
    pub data: Vec<i8>,
}

/// How occupancy values become blocked / free cells.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Traversability {
    /// Cells with a value at or above this (0..=100) are blocked.
    pub occupied_threshold: i8,
    /// Whether unknown (-1) cells may be entered.
    pub allow_unknown: bool,
}

impl Default for Traversability {
    fn default() -> Self {
        Self { occupied_threshold: 65, allow_unknown: false }
    }
}

impl Traversability {
    /// True when a cell with occupancy value `v` is blocked under this rule. Values outside
    /// `-1..=100` are treated as blocked (a malformed cell is never driven through).
    #[inline]
    pub fn is_blocked(&self, v: i8) -> bool {
        match v {
            -1 => !self.allow_unknown,
            0..=100 => v >= self.occupied_threshold,
            _ => true,
        }
    }
}

impl OccupancyMap {
    /// Builds a map and validates it: the geometry (see [`MapInfo::validate`]) and
    /// `data.len() == width * height`.
    pub fn new(info: MapInfo, data: Vec<i8>, max_cells: usize) -> Result<Self, MapError> {
        info.validate(max_cells)?;
        if data.len() != info.width * info.height {
            return Err(MapError::Invalid(format!(
                "data has {} cells but the map is {}x{} = {}",
                data.len(),
                info.width,
                info.height,
                info.width * info.height
            )));
        }
        Ok(Self { info, data })
    }

    /// This map repeated from its origin to `width` x `height` cells (the last copies cut): cell
    /// `(x, y)` holds the value of `(x mod w, y mod h)`, same resolution, origin and frame. Big
    /// maps made reproducibly from the shared ones (`blockstar bench-nav --tile`). Fails with
    /// [`MapError::Invalid`] when the size is 0 or over `max_cells`.
    pub fn tiled(&self, width: usize, height: usize, max_cells: usize) -> Result<Self, MapError> {
        let info = MapInfo { width, height, ..self.info.clone() };
        info.validate(max_cells)?;
        let w = self.info.width;
        let mut data = Vec::with_capacity(width * height);
        for y in 0..height {
            let row = &self.data[(y % self.info.height) * w..][..w];
            data.extend(row.iter().cycle().take(width));
        }
        Self::new(info, data, max_cells)
    }

    /// The occupancy value of cell `(x, y)`, or `None` outside the map.
    pub fn value(&self, x: usize, y: usize) -> Option<i8> {
        (x < self.info.width && y < self.info.height).then(|| self.data[y * self.info.width + x])
    }

    /// The binary grid under `rule`.
    pub fn to_grid(&self, rule: Traversability) -> Grid {
        let blocked = self.data.iter().map(|&v| rule.is_blocked(v)).collect();
        // Sizes were validated when the map was built.
        Grid::from_blocked(self.info.width, self.info.height, blocked).expect("validated map size")
    }
}

impl crate::memory::HeapSize for OccupancyMap {
    fn heap_bytes(&self) -> usize {
        self.data.heap_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(yaw: f64) -> MapInfo {
        MapInfo { width: 10, height: 5, resolution: 0.05, origin: Pose2::new(-1.0, 2.0, yaw), frame_id: "map".into() }
    }

    #[test]
    fn absurd_geometry_is_refused_in_the_users_units() {
        let ok = |i: MapInfo| i.validate(1000).is_ok();
        let refused = |i: MapInfo| match i.validate(1000) {
            Err(MapError::Invalid(m)) => m,
            other => panic!("{other:?}"),
        };
        assert!(ok(MapInfo { resolution: 1e-4, ..info(0.0) }) && ok(MapInfo { resolution: 1e3, ..info(0.0) }));
        let m = refused(MapInfo { resolution: 1e30, ..info(0.0) });
        assert_eq!(m, "resolution 1e30 m per cell is outside 0.0001..=1000");
        // A float32 resolution, as a ROS message carries it, is written as such.
        let m = refused(MapInfo { resolution: f64::from(2e-5f32), ..info(0.0) });
        assert!(m.starts_with("resolution 2e-5 m per cell"), "{m}");
        assert!(ok(MapInfo { origin: Pose2::new(-4.0e7, 4.9e7, 0.0), ..info(0.0) }), "50 000 km at 5 cm");
        let m = refused(MapInfo { origin: Pose2::new(1e300, 0.0, 0.0), ..info(0.0) });
        assert!(
            m.starts_with("origin (1.000e300, 0.000) is 2.000e301 cells from the frame's origin, more than 1e9"),
            "{m}"
        );
        // 0.1 mm as a ROS message's float32 carries it is in range.
        assert!(ok(MapInfo { resolution: f64::from(1e-4f32), ..info(0.0) }));
        assert_eq!(format!("{}", Resolution(f64::from(0.05f32))), "0.05");
        assert_eq!(format!("{}", Resolution(0.1234567890123)), "0.1234567890123");
    }

    #[test]
    fn a_tiled_map_repeats_the_map_from_its_origin() {
        let data: Vec<i8> = (0..50).map(|k| (k % 101) as i8).collect();
        let map = OccupancyMap::new(info(0.0), data, 1000).unwrap();
        let big = map.tiled(23, 12, 1000).unwrap();
        assert_eq!((big.info.width, big.info.height, big.info.origin), (23, 12, map.info.origin));
        for y in 0..12 {
            for x in 0..23 {
                assert_eq!(big.value(x, y), map.value(x % 10, y % 5), "({x}, {y})");
            }
        }
        assert_eq!(map.tiled(10, 5, 1000).unwrap(), map);
        assert!(map.tiled(0, 5, 1000).is_err());
        assert!(map.tiled(40, 30, 1000).is_err(), "over max_cells");
    }

    #[test]
    fn world_cell_round_trip_with_rotated_origin() {
        for yaw in [0.0, 0.3, -2.0] {
            let i = info(yaw);
            let w = Point2::new(0.37, 1.2);
            let back = i.cell_to_world(i.world_to_cell(w));
            assert!(w.distance(back) < 1e-12);
        }
        let i = info(0.0);
        let c = i.world_to_cell(Point2::new(-1.0 + 0.075, 2.0 + 0.025));
        assert!((c.x - 1.5).abs() < 1e-9 && (c.y - 0.5).abs() < 1e-9);
        assert_eq!(i.cell_of(c), Some((1, 0)));
        assert_eq!(i.cell_of(Point2::new(10.0, 0.0)), None);
        assert_eq!(i.cell_of(Point2::new(f64::NAN, 0.0)), None);
    }

    #[test]
    fn validation_rejects_bad_maps() {
        let mut i = info(0.0);
        assert!(OccupancyMap::new(i.clone(), vec![0; 49], 1000).is_err());
        assert!(matches!(OccupancyMap::new(i.clone(), vec![0; 50], 10), Err(MapError::TooLarge { .. })));
        i.resolution = f64::NAN;
        assert!(OccupancyMap::new(i.clone(), vec![0; 50], 1000).is_err());
        i.resolution = -0.1;
        assert!(OccupancyMap::new(i, vec![0; 50], 1000).is_err());
    }

    #[test]
    fn traversability_classes() {
        let t = Traversability { occupied_threshold: 65, allow_unknown: false };
        assert!(t.is_blocked(-1) && t.is_blocked(65) && t.is_blocked(100) && t.is_blocked(101));
        assert!(!t.is_blocked(0) && !t.is_blocked(64));
        let u = Traversability { allow_unknown: true, ..t };
        assert!(!u.is_blocked(-1));
    }
}
