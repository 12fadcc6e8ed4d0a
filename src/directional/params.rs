//! Parameters of Directional A* and of the refinement pipeline, and the context that owns the
//! lookup tables built from them.

use super::footprint::Shape;
use super::lattice::{HeadingBins, Neighbourhood};
use super::motion::{Gear, Motion, MotionModel};
use super::tables::{EdgeTable, HeuristicTable, TableKey};
use std::sync::{Arc, Weak};

/// A field of [`RefineParams`] out of its range.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{name} must be {range}, got {value}")]
pub struct InvalidParam {
    /// The field.
    pub name: &'static str,
    /// The range it must lie in, for a person.
    pub range: &'static str,
    /// The value given.
    pub value: String,
}

/// Parameters, all lengths in grid cells.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RefineParams {
    /// Minimum turning radius (cells, finite and > 0).
    pub turning_radius: f64,
    /// Radius of the vehicle's circular footprint (cells, >= 0); ignored when `footprint_side`
    /// is positive.
    pub footprint_radius: f64,
    /// Side of the vehicle's square footprint (cells, >= 0; 0 = the disk of `footprint_radius`),
    /// centred on the reference point and turning with the heading.
    #[serde(default)]
    pub footprint_side: f64,
    /// The vehicle's polygon (cells, vehicle frame: origin at the reference point, x forward);
    /// when set it wins over `footprint_side` and `footprint_radius`.
    #[serde(default)]
    pub footprint_polygon: Option<std::sync::Arc<crate::polygon::Polygon>>,
    /// Lattice cell side (cells, >= 1); `None` picks half the turning radius, so a quarter turn
    /// joins two Directional-24 neighbours exactly.
    pub lattice_spacing: Option<i64>,
    /// Heading bins per lattice cell.
    pub heading_bins: HeadingBins,
    /// How many path points ahead Smoothing may hop (>= 1; path points are `lattice_spacing`
    /// apart); `None` picks at least 3 (Pinter's Smoothing-48) and enough to span 2.5 turning
    /// radii, so a right-angle bend fits in one hop.
    pub smoothing_hops: Option<usize>,
    /// Neighbourhood of the window repair search.
    pub repair_neighbourhood: Neighbourhood,
    /// Neighbourhood of the full fallback search.
    pub fallback_neighbourhood: Neighbourhood,
    /// Margin (lattice cells) added around the failure window; `None` picks 2 turning radii.
    pub window_margin: Option<i64>,
    /// How many times the window is doubled after a failed repair before the full search.
    pub window_widenings: usize,
    /// Extra cost per radian turned (0 = shortest).
    pub turn_penalty: f64,
    /// Half-width (lattice cells) of the heuristic table's window.
    pub heuristic_window: i64,
    /// Forwards only, or forwards and backwards (see [`super::motion`]).
    #[serde(default)]
    pub motion_model: MotionModel,
    /// Factor (>= 1) on the length driven backwards.
    #[serde(default = "one")]
    pub reverse_penalty: f64,
    /// Cost (cells, >= 0) added per change of gear.
    #[serde(default)]
    pub change_penalty: f64,
}

fn one() -> f64 {
    1.0
}

impl Default for RefineParams {
    fn default() -> Self {
        Self {
            turning_radius: 10.0,
            footprint_radius: 4.0,
            footprint_side: 0.0,
            footprint_polygon: None,
            lattice_spacing: None,
            heading_bins: HeadingBins::Eight,
            smoothing_hops: None,
            repair_neighbourhood: Neighbourhood::Directional24,
            fallback_neighbourhood: Neighbourhood::Directional24,
            window_margin: None,
            window_widenings: 2,
            turn_penalty: 0.0,
            heuristic_window: 12,
            motion_model: MotionModel::Forward,
            reverse_penalty: 1.0,
            change_penalty: 0.0,
        }
    }
}

/// The largest turning radius Directional A* takes (cells): twice the largest lattice spacing
/// (4096 cells), the spacing being half the radius. Beyond it the lattice would no longer follow
/// the radius, every table entry would sweep a curve tens of thousands of cells long, and the
/// curves' words lose their precision.
pub const MAX_TURNING_RADIUS: f64 = 2.0 * MAX_SPACING as f64;

/// The largest lattice spacing (cells).
const MAX_SPACING: i64 = 4096;

impl RefineParams {
    /// Defaults for a vehicle of footprint radius `robot_radius` and minimum turning radius
    /// `min_turning_radius` (both metres) on a map of `resolution` metres per cell.
    pub fn from_metres(robot_radius: f64, min_turning_radius: f64, resolution: f64) -> Self {
        Self {
            turning_radius: min_turning_radius / resolution,
            footprint_radius: robot_radius / resolution,
            footprint_side: 0.0,
            footprint_polygon: None,
            ..Self::default()
        }
    }

    /// Checks ranges. Fails with the first field out of its range.
    pub fn validate(&self) -> Result<(), InvalidParam> {
        let bad = |name: &'static str, range: &'static str, value: &dyn std::fmt::Display| {
            Err(InvalidParam { name, range, value: value.to_string() })
        };
        let finite_at_least = |x: f64, min: f64| x.is_finite() && x >= min;
        if !(self.turning_radius > 0.0 && self.turning_radius <= MAX_TURNING_RADIUS) {
            return bad("turning_radius", "in (0, 8192] (MAX_TURNING_RADIUS)", &self.turning_radius);
        }
        if !finite_at_least(self.footprint_radius, 0.0) {
            return bad("footprint_radius", "finite and >= 0", &self.footprint_radius);
        }
        if !finite_at_least(self.footprint_side, 0.0) {
            return bad("footprint_side", "finite and >= 0", &self.footprint_side);
        }
        if let Some(s) = self.lattice_spacing.filter(|s| !(1..=MAX_SPACING).contains(s)) {
            return bad("lattice_spacing", "in 1..=4096", &s);
        }
        if let Some(h) = self.smoothing_hops.filter(|h| !(1..=16).contains(h)) {
            return bad("smoothing_hops", "in 1..=16", &h);
        }
        if let Some(m) = self.window_margin.filter(|&m| m < 0) {
            return bad("window_margin", ">= 0", &m);
        }
        if !finite_at_least(self.turn_penalty, 0.0) {
            return bad("turn_penalty", "finite and >= 0", &self.turn_penalty);
        }
        if !finite_at_least(self.reverse_penalty, 1.0) {
            return bad("reverse_penalty", "finite and >= 1", &self.reverse_penalty);
        }
        if !finite_at_least(self.change_penalty, 0.0) {
            return bad("change_penalty", "finite and >= 0", &self.change_penalty);
        }
        if !(1..=64).contains(&self.heuristic_window) {
            return bad("heuristic_window", "in 1..=64", &self.heuristic_window);
        }
        Ok(())
    }

    /// The footprint in force: the polygon when set, else the square when `footprint_side > 0`,
    /// else the disk.
    pub fn shape(&self) -> Shape {
        if let Some(p) = &self.footprint_polygon {
            Shape::Polygon(p.clone())
        } else if self.footprint_side > 0.0 {
            Shape::Square(self.footprint_side)
        } else {
            Shape::Disk(self.footprint_radius)
        }
    }

    /// The lattice spacing in force.
    pub fn spacing(&self) -> i64 {
        self.lattice_spacing.unwrap_or(((self.turning_radius / 2.0).round() as i64).clamp(1, MAX_SPACING))
    }

    /// The smoothing hop count in force.
    pub fn hops(&self) -> usize {
        self.smoothing_hops.unwrap_or_else(|| {
            let needed = (2.5 * self.turning_radius / self.spacing() as f64).ceil() as usize;
            needed.clamp(3, 8)
        })
    }

    /// The window margin in force (lattice cells).
    pub fn margin(&self) -> i64 {
        self.window_margin.unwrap_or((2.0 * self.turning_radius / self.spacing() as f64).ceil() as i64 + 1)
    }

    /// The vehicle as verification checks it: footprint, turning radius, gears.
    pub fn vehicle(&self) -> super::verify::Vehicle {
        super::verify::Vehicle {
            footprint: self.shape(),
            min_turning_radius: self.turning_radius,
            may_reverse: self.motion_model == MotionModel::ReedsShepp,
        }
    }

    /// The motion model with its radius and prices.
    pub fn motion(&self) -> Motion {
        Motion {
            model: self.motion_model,
            radius: self.turning_radius,
            turn_penalty: self.turn_penalty,
            reverse_penalty: self.reverse_penalty,
            change_penalty: self.change_penalty,
        }
    }

    fn table_key(&self) -> TableKey {
        TableKey {
            turning_radius: self.turning_radius,
            footprint: self.shape(),
            spacing: self.spacing(),
            bins: self.heading_bins,
        }
    }
}

/// Parameters plus the tables built from them. Build once and reuse across plans: the tables
/// depend only on (turning radius, footprint, lattice spacing, heading bins, the heuristic's
/// window, and for the motion model: the gears of the hit-check table, the curves of the
/// heuristic), never on the map (see [`super::tables`]). They are shared:
/// [`Directional::with_params`] keeps them under parameters they do not depend on (penalties,
/// neighbourhoods, smoothing).
#[derive(Debug)]
pub struct Directional {
    params: RefineParams,
    edges: Arc<EdgeTable>,
    heuristic: Arc<HeuristicTable>,
}

impl Directional {
    /// Validates `params` and allocates the tables (edges are filled lazily on first use).
    pub fn new(params: RefineParams) -> Result<Self, InvalidParam> {
        params.validate()?;
        let key = params.table_key();
        let edges = EdgeTable::new(key.clone(), Neighbourhood::Directional48.reach(), params.motion_model);
        let heuristic = HeuristicTable::new(
            key.turning_radius,
            key.spacing,
            key.bins,
            params.heuristic_window,
            params.motion_model,
        );
        Ok(Self { params, edges: Arc::new(edges), heuristic: Arc::new(heuristic) })
    }

    /// The same under `params`: these tables (shared, with what they hold filled) when no value
    /// they depend on changed, otherwise new ones. Fails on invalid parameters.
    pub fn with_params(&self, params: RefineParams) -> Result<Self, InvalidParam> {
        params.validate()?;
        if self.tables_serve(&params) {
            Ok(Self { params, edges: self.edges.clone(), heuristic: self.heuristic.clone() })
        } else {
            Self::new(params)
        }
    }

    /// True when these tables are the ones `params` would build: no value they depend on (turning
    /// radius, footprint, lattice spacing, heading bins, the heuristic's window, motion model)
    /// differs. Then [`Directional::with_params`] shares them.
    pub fn tables_serve(&self, params: &RefineParams) -> bool {
        params.table_key() == self.params.table_key()
            && params.heuristic_window == self.params.heuristic_window
            && params.motion_model == self.params.motion_model
    }

    /// Replaces the parameters; the tables are rebuilt only when a value they depend on changed
    /// (see [`Directional::with_params`]). On invalid parameters nothing changes.
    pub fn set_params(&mut self, params: RefineParams) -> Result<(), InvalidParam> {
        *self = self.with_params(params)?;
        Ok(())
    }

    /// The filling of the hit-check table ahead of the searches, for a caller with time to spare
    /// now (the node, on a background thread after a map or new parameters arrive, so the first
    /// plans that need a window repair or a full search do not spend their time filling it): the
    /// entries these parameters' searches look up (every heading pair across the offsets of the
    /// repair and fallback neighbourhoods, in every gear of the motion model). Each offset is
    /// handed out once per table (`None` when every one was), so one filler runs per table
    /// however often it is offered, and a table kept under a wider neighbourhood gets a filler
    /// for the new offsets only.
    pub fn warmer(&self) -> Option<TableWarmer> {
        let p = &self.params;
        let mut offsets = p.repair_neighbourhood.offsets();
        offsets.extend(p.fallback_neighbourhood.offsets());
        offsets.sort_unstable();
        offsets.dedup();
        let offsets = self.edges.claim_filling(&offsets);
        (!offsets.is_empty()).then(|| TableWarmer {
            table: Arc::downgrade(&self.edges),
            gears: p.motion_model.gears(),
            offsets,
        })
    }

    /// The parameters in force.
    pub fn params(&self) -> &RefineParams {
        &self.params
    }

    /// The hit-check table.
    pub fn edges(&self) -> &EdgeTable {
        &self.edges
    }

    /// The heuristic table.
    pub fn heuristic(&self) -> &HeuristicTable {
        &self.heuristic
    }
}

/// The filling of one hit-check table ahead of the searches ([`Directional::warmer`]), to run on
/// a thread of its own. It holds the table weakly, so it keeps nothing alive.
#[derive(Debug)]
pub struct TableWarmer {
    table: Weak<EdgeTable>,
    gears: &'static [Gear],
    offsets: Vec<(i64, i64)>,
}

impl TableWarmer {
    /// Fills the entries, one pair of headings at a time; returns how many it computed (those no
    /// search had filled first), or `None` when the table was dropped before it finished
    /// (nothing held it any more: the parameters or the map's resolution changed), which stops
    /// it at the next pair of headings (one entry per offset: the filling for parameters
    /// already replaced stops within a fraction of a second even where entries are slow, a
    /// large turning radius's). A search needing an entry meanwhile never waits for the filler
    /// to compute it (see [`EdgeTable::fill_pair`]) and gets the same entry.
    pub fn run(self) -> Option<usize> {
        self.run_observed(|| {})
    }

    /// [`TableWarmer::run`], calling `after_each_pair` after each pair of headings it filled.
    pub(super) fn run_observed(self, mut after_each_pair: impl FnMut()) -> Option<usize> {
        let bins = self.table.upgrade()?.key().bins.count();
        let mut computed = 0;
        for &gear in self.gears {
            for h0 in 0..bins {
                for h1 in 0..bins {
                    computed += self.table.upgrade()?.fill_pair(gear, h0, h1, &self.offsets);
                    after_each_pair();
                }
            }
        }
        Some(computed)
    }
}
