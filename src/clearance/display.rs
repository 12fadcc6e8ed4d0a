//! Clearance for people: `OccupancyGrid`-style values for RViz and a PNG heat map.

use super::{Capability, CellClass, ClearanceError, ClearanceMap};
use crate::map::OccupancyMap;
use std::path::Path;

/// Which annotation to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Annotation {
    /// Obstacle distance (see [`super::distance`]).
    Distance,
    /// True clearance (see [`super::true_clearance`]).
    Clearance,
}

/// Per cell, the annotation as a fraction of its cap in `0.0..=1.0`, or `None` for a cell the
/// capability may not enter. Fails with [`ClearanceError::Config`] when the capability has no
/// annotations in `map`.
pub fn normalized(
    map: &ClearanceMap,
    capability: Capability,
    which: Annotation,
) -> Result<Vec<Option<f64>>, ClearanceError> {
    let layer = map
        .layer(capability)
        .ok_or_else(|| ClearanceError::Config(format!("capability {:#x} has no annotations", capability.0)))?;
    let (w, h) = (layer.width(), layer.height());
    let mut out = Vec::with_capacity(w * h);
    for y in 0..h {
        for x in 0..w {
            out.push((!layer.is_blocked(x, y)).then(|| match which {
                Annotation::Distance => {
                    let cap = f64::from(layer.distance().cap());
                    layer.obstacle_distance(x, y).unwrap_or(0.0) / cap
                }
                Annotation::Clearance => {
                    f64::from(layer.true_clearance(x, y).unwrap_or(0)) / f64::from(layer.clearance().cap())
                }
            }));
        }
    }
    Ok(out)
}

/// The annotation as an occupancy map with the held map's geometry, scaled for display in RViz:
/// `100` where the capability may not enter (unknown cells stay `-1`), and for other cells
/// `round(99 * (1 - value / cap))`, so cells near obstacles look dark and open space white.
pub fn to_occupancy(
    map: &ClearanceMap,
    capability: Capability,
    which: Annotation,
) -> Result<OccupancyMap, ClearanceError> {
    let values = normalized(map, capability, which)?;
    let classifier = &map.config().classifier;
    let data = values
        .iter()
        .zip(map.data())
        .map(|(v, &raw)| match v {
            Some(f) => (99.0 * (1.0 - f.clamp(0.0, 1.0))).round() as i8,
            None if classifier.classify(raw) == CellClass::UNKNOWN => -1,
            None => 100,
        })
        .collect();
    Ok(OccupancyMap { info: map.info().clone(), data })
}

/// Heat-map colour of a normalised value: dark red near obstacles through yellow to green at
/// the cap.
pub fn heat_color(f: f64) -> [u8; 3] {
    let f = f.clamp(0.0, 1.0);
    if f < 0.5 {
        let t = f / 0.5;
        [(128.0 + 127.0 * t) as u8, (255.0 * t) as u8, 0]
    } else {
        let t = (f - 0.5) / 0.5;
        [(255.0 * (1.0 - t)) as u8, (255.0 - 95.0 * t) as u8, (64.0 * t) as u8]
    }
}

/// Writes the annotation as an RGB PNG, north up like map_server images (the map's last row is
/// the image's first): blocked cells black, unknown cells grey, others [`heat_color`].
///
/// Fails with [`ClearanceError::Config`] for a capability without annotations and
/// [`ClearanceError::Io`] when the file cannot be written.
pub fn write_heat_map_png(
    path: &Path,
    map: &ClearanceMap,
    capability: Capability,
    which: Annotation,
) -> Result<(), ClearanceError> {
    let values = normalized(map, capability, which)?;
    let (w, h) = (map.info().width, map.info().height);
    let classifier = &map.config().classifier;
    let mut rgb = Vec::with_capacity(w * h * 3);
    for y in (0..h).rev() {
        for x in 0..w {
            let i = y * w + x;
            rgb.extend_from_slice(&match values[i] {
                Some(f) => heat_color(f),
                None if classifier.classify(map.data()[i]) == CellClass::UNKNOWN => [128, 128, 128],
                None => [0, 0, 0],
            });
        }
    }
    let io = |e: String| ClearanceError::Io(format!("{}: {e}", path.display()));
    let file = std::fs::File::create(path).map_err(|e| io(e.to_string()))?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), w as u32, h as u32);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc.write_header().map_err(|e| io(e.to_string()))?;
    writer.write_image_data(&rgb).map_err(|e| io(e.to_string()))?;
    writer.finish().map_err(|e| io(e.to_string()))
}
