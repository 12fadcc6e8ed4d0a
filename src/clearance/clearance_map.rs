//! [`ClearanceMap`]: the annotations of a map for every capability and vehicle in use, kept
//! current under patches and whole-map replacements.

use super::classes::Capability;
use super::footprint::{Footprint, Vehicle};
use super::layer::ClearanceLayer;
use super::regions::Regions;
use super::{union_rect, ClearanceConfig, ClearanceError};
use crate::grid::{CellRect, Grid};
use crate::map::{MapInfo, OccupancyMap};
use crate::map_diff::{changed_rects, MapChange};
use crate::search::los::CellMask;
use std::sync::Arc;

/// A rectangle of cells given with signed sizes, as map updates arrive (checked before use).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PatchRect {
    /// First column.
    pub x: i64,
    /// First row.
    pub y: i64,
    /// Columns.
    pub width: i64,
    /// Rows.
    pub height: i64,
}

impl From<CellRect> for PatchRect {
    fn from(r: CellRect) -> Self {
        Self { x: r.x as i64, y: r.y as i64, width: r.width as i64, height: r.height as i64 }
    }
}

/// Where a vehicle's traversability mask changed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MaskChange {
    /// The vehicle.
    pub vehicle: Vehicle,
    /// Bounding box of the cells whose mask value flipped.
    pub rect: CellRect,
}

/// What an update changed, for callers that derive data of their own (for example Block A*
/// per-block pattern codes from a vehicle mask).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChangedRegion {
    /// Bounding box of the cells whose class changed (`None`: no cell changed class).
    pub cells: Option<CellRect>,
    /// Bounding box of the cells whose annotations were recomputed, over all capabilities.
    pub annotations: Option<CellRect>,
    /// One entry per tracked vehicle whose mask changed.
    pub masks: Vec<MaskChange>,
    /// True when everything was rebuilt (the map's geometry changed, or the change was too
    /// widespread for local updates to pay); the rectangles then cover the whole map.
    pub rebuilt: bool,
}

/// Where to plan for a start or goal whose own cell cannot hold the vehicle (the "subsumed by a
/// clearance square" rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Subsumed {
    /// The cell to plan to or from: the vehicle fits there and its footprint placed there covers
    /// the requested cell.
    pub cell: (usize, usize),
    /// Requested cell minus `cell`, in cells.
    pub offset: (i64, i64),
}

#[derive(Debug, Clone)]
struct TrackedVehicle {
    vehicle: Vehicle,
    layer: usize,
    /// Behind an `Arc` because the vehicle's Block A* grids read it too (one copy, not two);
    /// an update copies it only while a plan in flight still holds the old one.
    mask: Arc<CellMask>,
    regions: Regions,
}

/// Clearance annotations of one map (see the module documentation of [`super`]).
#[derive(Clone)]
pub struct ClearanceMap {
    config: ClearanceConfig,
    /// The occupancy map the annotations describe (its values are written by every patch; the
    /// planner's site reads the map from here rather than holding a second copy; its traversal
    /// costs read the values through [`ClearanceMap::shared_map`]).
    map: Arc<OccupancyMap>,
    class_table: [u8; 256],
    classes: Vec<u8>,
    layers: Vec<ClearanceLayer>,
    vehicles: Vec<TrackedVehicle>,
}

impl std::fmt::Debug for ClearanceMap {
    /// A summary (the per-cell arrays of a large map would flood a log).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClearanceMap")
            .field("width", &self.map.info.width)
            .field("height", &self.map.info.height)
            .field("config", &self.config)
            .field("capabilities", &self.layers.iter().map(|l| l.capability()).collect::<Vec<_>>())
            .field("vehicles", &self.vehicles.iter().map(|v| v.vehicle).collect::<Vec<_>>())
            .finish()
    }
}

impl ClearanceMap {
    /// Annotates `map` for each capability in `capabilities` (more can be added later).
    ///
    /// Fails with [`ClearanceError::Config`] on an invalid configuration and
    /// [`ClearanceError::BadMap`] when the data length does not match the geometry.
    pub fn new(
        map: &OccupancyMap,
        config: ClearanceConfig,
        capabilities: &[Capability],
    ) -> Result<Self, ClearanceError> {
        check_map(map)?;
        Self::holding(map.clone(), config, capabilities)
    }

    /// [`ClearanceMap::new`] taking `map` itself to hold, so the caller keeps no second copy.
    pub fn holding(
        map: OccupancyMap,
        config: ClearanceConfig,
        capabilities: &[Capability],
    ) -> Result<Self, ClearanceError> {
        config.validate()?;
        check_map(&map)?;
        let class_table = config.classifier.table();
        let classes = map.data.iter().map(|&v| class_table[v as u8 as usize]).collect();
        let mut m = Self { config, map: Arc::new(map), class_table, classes, layers: Vec::new(), vehicles: Vec::new() };
        for &c in capabilities {
            m.add_capability(c);
        }
        Ok(m)
    }

    /// Annotates a binary grid (blocked cells occupied, the others free) with one cell per unit and
    /// the origin at 0, for capability [`Capability::FREE`].
    pub fn from_grid(grid: &Grid, config: ClearanceConfig) -> Result<Self, ClearanceError> {
        let info = MapInfo {
            width: grid.width(),
            height: grid.height(),
            resolution: 1.0,
            origin: crate::geometry::Pose2::default(),
            frame_id: "map".into(),
        };
        let data = grid.blocked_cells().iter().map(|&b| if b { 100 } else { 0 }).collect();
        Self::new(&OccupancyMap { info, data }, config, &[Capability::FREE])
    }

    /// The configuration.
    pub fn config(&self) -> &ClearanceConfig {
        &self.config
    }

    /// The held map: its geometry and its values as last patched or replaced.
    pub fn map(&self) -> &OccupancyMap {
        &self.map
    }

    /// The held map as a shared handle, for a reader that must outlive a borrow of the
    /// annotations (the planner's traversal costs). Holding it while the map is patched makes
    /// the patch copy the values first: a holder that follows the edits releases it before them
    /// and takes it again after.
    pub fn shared_map(&self) -> Arc<OccupancyMap> {
        self.map.clone()
    }

    /// The geometry of the held map.
    pub fn info(&self) -> &MapInfo {
        &self.map.info
    }

    /// The cell holding world point `p` (metres, map frame), or `None` outside the map.
    pub fn cell_of_world(&self, p: crate::geometry::Point2) -> Option<(usize, usize)> {
        self.map.info.cell_of(self.map.info.world_to_cell(p))
    }

    /// The held occupancy values (row-major, ROS convention).
    pub fn data(&self) -> &[i8] {
        &self.map.data
    }

    /// Adds annotations for `capability` (no-op when present) and returns them.
    pub fn add_capability(&mut self, capability: Capability) -> &ClearanceLayer {
        let i = self.layer_index(capability);
        &self.layers[i]
    }

    fn layer_index(&mut self, capability: Capability) -> usize {
        if let Some(i) = self.layers.iter().position(|l| l.capability() == capability) {
            return i;
        }
        let (w, h) = (self.map.info.width, self.map.info.height);
        self.layers.push(ClearanceLayer::new(w, h, &self.classes, capability, &self.config));
        self.layers.len() - 1
    }

    /// The annotations of `capability`, or `None` when it was never added.
    pub fn layer(&self, capability: Capability) -> Option<&ClearanceLayer> {
        self.layers.iter().find(|l| l.capability() == capability)
    }

    /// Heap bytes of the annotations every vehicle shares: the cell classes and every
    /// capability's obstacle distance and true clearance (the held map is apart:
    /// [`ClearanceMap::map`]).
    pub fn annotation_bytes(&self) -> usize {
        use crate::memory::HeapSize;
        self.classes.heap_bytes() + self.layers.iter().map(HeapSize::heap_bytes).sum::<usize>()
    }

    /// Heap bytes of `vehicle`'s own mask and regions (None: not tracked).
    pub fn vehicle_bytes(&self, vehicle: &Vehicle) -> Option<usize> {
        use crate::memory::HeapSize;
        self.tracked(vehicle).ok().map(|v| v.mask.heap_bytes() + v.regions.heap_bytes())
    }

    /// The capabilities annotated, in the order they were added.
    pub fn capabilities(&self) -> Vec<Capability> {
        self.layers.iter().map(|l| l.capability()).collect()
    }

    /// The vehicles tracked, in the order they were added.
    pub fn tracked_vehicles(&self) -> Vec<Vehicle> {
        self.vehicles.iter().map(|v| v.vehicle).collect()
    }

    /// Starts keeping a traversability mask and regions for `vehicle` (no-op when tracked).
    ///
    /// Fails with [`ClearanceError::BadFootprint`] when the footprint exceeds the caps (a circle
    /// radius must be below `distance_cap`, a square side at most `clearance_cap`); nothing changes
    /// then.
    pub fn track_vehicle(&mut self, vehicle: Vehicle) -> Result<(), ClearanceError> {
        vehicle.footprint.check_caps(self.config.distance_cap, self.config.clearance_cap)?;
        if self.vehicles.iter().any(|v| v.vehicle == vehicle) {
            return Ok(());
        }
        let layer = self.layer_index(vehicle.capability);
        let mask = build_mask(&self.layers[layer], vehicle.footprint, self.map.info.width, self.map.info.height);
        let regions = Regions::new(&mask);
        self.vehicles.push(TrackedVehicle { vehicle, layer, mask: Arc::new(mask), regions });
        Ok(())
    }

    /// Stops tracking `vehicle`; returns whether it was tracked.
    pub fn untrack_vehicle(&mut self, vehicle: &Vehicle) -> bool {
        let n = self.vehicles.len();
        self.vehicles.retain(|v| v.vehicle != *vehicle);
        n != self.vehicles.len()
    }

    fn tracked(&self, vehicle: &Vehicle) -> Result<&TrackedVehicle, ClearanceError> {
        self.vehicles.iter().find(|v| v.vehicle == *vehicle).ok_or(ClearanceError::NotTracked)
    }

    /// The traversability mask of `vehicle`: cell `(x, y)` is free exactly when the footprint fits
    /// there. Kept current by every update. Fails with [`ClearanceError::NotTracked`].
    pub fn vehicle_mask(&self, vehicle: &Vehicle) -> Result<&CellMask, ClearanceError> {
        Ok(&self.tracked(vehicle)?.mask)
    }

    /// [`ClearanceMap::vehicle_mask`] as a shared handle, for a reader that keeps it beside its
    /// own structures (the vehicle's Block A* grid): valid until the next update, which leaves
    /// the handle's copy as it was. Fails with [`ClearanceError::NotTracked`].
    pub fn shared_vehicle_mask(&self, vehicle: &Vehicle) -> Result<Arc<CellMask>, ClearanceError> {
        Ok(self.tracked(vehicle)?.mask.clone())
    }

    /// The region of cell `(x, y)` for `vehicle` (equal ids: connected; valid until the next
    /// update), or `None` when the vehicle does not fit there or the cell is outside the map.
    /// Fails with [`ClearanceError::NotTracked`].
    pub fn region_of(&self, vehicle: &Vehicle, x: usize, y: usize) -> Result<Option<u32>, ClearanceError> {
        Ok(self.tracked(vehicle)?.regions.region_of(x, y))
    }

    /// True when the vehicle fits at both cells and a path of placements joins them (8-connected
    /// moves not cutting corners). Fails with [`ClearanceError::NotTracked`].
    pub fn same_region(&self, vehicle: &Vehicle, a: (usize, usize), b: (usize, usize)) -> Result<bool, ClearanceError> {
        Ok(self.tracked(vehicle)?.regions.same_region(a, b))
    }

    /// The cell to plan to for a start or goal at `(x, y)`: the cell itself when the vehicle fits
    /// there, else the nearest cell (by offset length, then row-major order) where the vehicle
    /// fits and whose footprint covers `(x, y)` (for a square, an anchor within `side - 1` cells
    /// toward -x and -y; for a circle, a centre within the radius). `Ok(None)` when no such cell
    /// exists. Fails with [`ClearanceError::NotTracked`] or [`ClearanceError::OutOfMap`].
    pub fn subsuming_cell(&self, vehicle: &Vehicle, x: usize, y: usize) -> Result<Option<Subsumed>, ClearanceError> {
        let t = self.tracked(vehicle)?;
        if x >= self.map.info.width || y >= self.map.info.height {
            return Err(ClearanceError::OutOfMap { x: x as i64, y: y as i64 });
        }
        let (lo_x, lo_y, hi_x, hi_y, radius_sq) = match vehicle.footprint {
            Footprint::Square { side } => {
                let s = i64::from(side) - 1;
                (-s, -s, 0, 0, None)
            }
            Footprint::Circle { radius } => {
                let r = radius.floor() as i64;
                (-r, -r, r, r, Some(radius * radius))
            }
        };
        let mut best: Option<(i64, Subsumed)> = None;
        for dy in lo_y..=hi_y {
            for dx in lo_x..=hi_x {
                let (cx, cy) = (x as i64 + dx, y as i64 + dy);
                let d2 = dx * dx + dy * dy;
                if radius_sq.is_some_and(|r2| d2 as f64 > r2) || t.mask.is_blocked(cx, cy) {
                    continue;
                }
                if best.as_ref().is_none_or(|(b, _)| d2 < *b) {
                    best = Some((d2, Subsumed { cell: (cx as usize, cy as usize), offset: (-dx, -dy) }));
                }
            }
        }
        Ok(best.map(|(_, s)| s))
    }

    /// Writes the occupancy values `data` (row-major, `width * height` values) into `rect` and
    /// updates every annotation, mask and region set locally.
    ///
    /// Fails, changing nothing, with [`ClearanceError::BadPatch`] when the rectangle has a negative
    /// or zero size or leaves the map, or when `data` has the wrong length.
    pub fn apply_patch(&mut self, rect: PatchRect, data: &[i8]) -> Result<ChangedRegion, ClearanceError> {
        let r = self.check_patch(rect, data.len())?;
        Ok(self.write_and_update(r, data))
    }

    fn check_patch(&self, p: PatchRect, len: usize) -> Result<CellRect, ClearanceError> {
        let (w, h) = (self.map.info.width as i64, self.map.info.height as i64);
        if p.width <= 0 || p.height <= 0 {
            return Err(ClearanceError::BadPatch(format!("size {}x{} is not positive", p.width, p.height)));
        }
        if p.x < 0 || p.y < 0 || p.x.saturating_add(p.width) > w || p.y.saturating_add(p.height) > h {
            return Err(ClearanceError::BadPatch(format!(
                "rectangle at ({}, {}) of {}x{} leaves the {}x{} map",
                p.x, p.y, p.width, p.height, w, h
            )));
        }
        let expected = (p.width * p.height) as usize;
        if len != expected {
            return Err(ClearanceError::BadPatch(format!(
                "{len} values for a {}x{} rectangle (expected {expected})",
                p.width, p.height
            )));
        }
        Ok(CellRect { x: p.x as usize, y: p.y as usize, width: p.width as usize, height: p.height as usize })
    }

    /// Writes a checked patch and updates everything derived from it.
    fn write_and_update(&mut self, r: CellRect, data: &[i8]) -> ChangedRegion {
        let w = self.map.info.width;
        let mut cells: Option<CellRect> = None;
        for (row, chunk) in data.chunks_exact(r.width).enumerate() {
            let y = r.y + row;
            let start = y * w + r.x;
            Arc::make_mut(&mut self.map).data[start..start + r.width].copy_from_slice(chunk);
            for (dx, &v) in chunk.iter().enumerate() {
                let c = self.class_table[v as u8 as usize];
                if c != self.classes[start + dx] {
                    self.classes[start + dx] = c;
                    cells = Some(union_rect(cells, CellRect { x: r.x + dx, y, width: 1, height: 1 }));
                }
            }
        }
        let mut out = ChangedRegion { cells, ..ChangedRegion::default() };
        let Some(cells) = cells else { return out };
        for (li, layer) in self.layers.iter_mut().enumerate() {
            let Some(affected) = layer.update(&self.classes, cells) else { continue };
            out.annotations = Some(union_rect(out.annotations, affected));
            for v in self.vehicles.iter_mut().filter(|v| v.layer == li) {
                if let Some(rect) = update_mask(layer, v.vehicle.footprint, Arc::make_mut(&mut v.mask), affected) {
                    v.regions.update(v.mask.as_ref(), rect);
                    out.masks.push(MaskChange { vehicle: v.vehicle, rect });
                }
            }
        }
        out
    }

    /// Replaces the held map with `map`. With the same geometry, only the changed parts are
    /// updated: [`crate::map_diff::changed_rects`] finds rectangles covering every changed cell
    /// and each is applied as a patch. When they cover more than an eighth of the map, everything
    /// is rebuilt instead, which is then cheaper. A different geometry rebuilds everything for the
    /// same capabilities and vehicles.
    ///
    /// Fails, changing nothing, with [`ClearanceError::BadMap`] when the data length does not
    /// match the geometry.
    pub fn replace_map(&mut self, map: &OccupancyMap) -> Result<ChangedRegion, ClearanceError> {
        check_map(map)?;
        let (w, h) = (map.info.width, map.info.height);
        let whole = CellRect { x: 0, y: 0, width: w, height: h };
        let change = changed_rects(&self.map, map);
        let rects = match change {
            MapChange::Unchanged => return Ok(ChangedRegion::default()),
            MapChange::Geometry => return Ok(self.rebuild(map, whole)),
            MapChange::Cells(rects) => rects,
        };
        if rects.iter().map(|r| r.width * r.height).sum::<usize>() * 8 > w * h {
            return Ok(self.rebuild(map, whole));
        }
        let mut out = ChangedRegion::default();
        let mut buf = Vec::new();
        for t in rects {
            buf.clear();
            for y in t.y..t.y + t.height {
                buf.extend_from_slice(&map.data[y * w + t.x..y * w + t.x + t.width]);
            }
            let c = self.write_and_update(t, &buf);
            out.cells = c.cells.map(|r| union_rect(out.cells, r)).or(out.cells);
            out.annotations = c.annotations.map(|r| union_rect(out.annotations, r)).or(out.annotations);
            for m in c.masks {
                match out.masks.iter_mut().find(|o| o.vehicle == m.vehicle) {
                    Some(o) => o.rect = union_rect(Some(o.rect), m.rect),
                    None => out.masks.push(m),
                }
            }
        }
        Ok(out)
    }

    /// Rebuilds every annotation, mask and region set for `map`.
    fn rebuild(&mut self, map: &OccupancyMap, whole: CellRect) -> ChangedRegion {
        let capabilities: Vec<Capability> = self.layers.iter().map(|l| l.capability()).collect();
        let vehicles: Vec<Vehicle> = self.vehicles.iter().map(|v| v.vehicle).collect();
        // The configuration and map were validated, so these cannot fail.
        let mut fresh = Self::new(map, self.config.clone(), &capabilities).expect("validated map and configuration");
        for v in &vehicles {
            fresh.track_vehicle(*v).expect("vehicle was accepted before");
        }
        *self = fresh;
        ChangedRegion {
            cells: Some(whole),
            annotations: Some(whole),
            masks: vehicles.into_iter().map(|vehicle| MaskChange { vehicle, rect: whole }).collect(),
            rebuilt: true,
        }
    }
}

fn check_map(map: &OccupancyMap) -> Result<(), ClearanceError> {
    let (w, h) = (map.info.width, map.info.height);
    if w == 0 || h == 0 || w.checked_mul(h).is_none_or(|n| n != map.data.len() || n > Grid::MAX_CELLS) {
        return Err(ClearanceError::BadMap(format!("{}x{} map with {} values", w, h, map.data.len())));
    }
    Ok(())
}

fn build_mask(layer: &ClearanceLayer, footprint: Footprint, width: usize, height: usize) -> CellMask {
    CellMask::from_fn(width, height, footprint.misfit(layer))
}

/// Re-evaluates the mask inside `rect`; returns the bounding box of the cells that flipped.
fn update_mask(layer: &ClearanceLayer, footprint: Footprint, mask: &mut CellMask, rect: CellRect) -> Option<CellRect> {
    let misfit = footprint.misfit(layer);
    let width = layer.width();
    let mut changed = None;
    for y in rect.y..rect.y + rect.height {
        for x in rect.x..rect.x + rect.width {
            let blocked = misfit(y * width + x);
            if blocked != mask.blocked(x as i64, y as i64) {
                mask.set(x, y, blocked);
                changed = Some(union_rect(changed, CellRect { x, y, width: 1, height: 1 }));
            }
        }
    }
    changed
}

impl crate::memory::HeapSize for ClearanceMap {
    fn heap_bytes(&self) -> usize {
        let vehicles: usize = self.vehicles.iter().filter_map(|v| self.vehicle_bytes(&v.vehicle)).sum();
        self.map.heap_bytes() + self.annotation_bytes() + vehicles
    }
}
