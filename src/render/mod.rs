//! Pictures of maps and plans: what a person checks at a glance, as an RGB PNG.
//!
//! [`scene::render_scene`] draws a [`scene::Scene`]: the occupancy map (one cell becomes
//! `scale` x `scale` pixels, north (+y) up as in RViz), the footprint's reach (free cells within
//! the robot's radius of an obstacle, tinted), the any-angle guide and the trajectory as thick
//! lines of their own colours, start and goal with the robot footprint and a heading arrow, a
//! title, a legend and a scale bar in metres. [`draw`] holds the primitives (thick lines, dashes,
//! circles, polygons, arrows, bitmap text). `blockstar render` and `blockstar plan --png` both
//! draw through [`scene::render_scene`].

pub mod draw;
pub mod nearest;
pub mod scene;

use crate::geometry::Point2;
use crate::map::OccupancyMap;

/// An RGB image, row 0 at the top.
#[derive(Debug, Clone, PartialEq)]
pub struct Image {
    /// Pixels per row.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// `width * height * 3` bytes, row-major from the top-left pixel.
    pub rgb: Vec<u8>,
}

/// An RGB colour.
pub type Rgb = [u8; 3];

impl Image {
    /// A `width` x `height` image filled with `background`.
    pub fn new(width: u32, height: u32, background: Rgb) -> Self {
        let n = width as usize * height as usize;
        Self { width, height, rgb: background.iter().copied().cycle().take(3 * n).collect() }
    }

    /// The pixel at (`x`, `y`) from the top-left, or `None` outside the image.
    pub fn pixel(&self, x: u32, y: u32) -> Option<[u8; 3]> {
        (x < self.width && y < self.height).then(|| {
            let i = 3 * (y as usize * self.width as usize + x as usize);
            [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
        })
    }

    fn put(&mut self, x: i64, y: i64, c: [u8; 3]) {
        if x >= 0 && y >= 0 && (x as u32) < self.width && (y as u32) < self.height {
            let i = 3 * (y as usize * self.width as usize + x as usize);
            self.rgb[i..i + 3].copy_from_slice(&c);
        }
    }

    /// Mixes `c` into pixel (`x`, `y`) with weight `alpha` (clamped to 0..=1); nothing outside.
    fn blend(&mut self, x: i64, y: i64, c: Rgb, alpha: f64) {
        if x >= 0 && y >= 0 && (x as u32) < self.width && (y as u32) < self.height {
            let a = if alpha.is_nan() { 0.0 } else { alpha.clamp(0.0, 1.0) };
            let i = 3 * (y as usize * self.width as usize + x as usize);
            for (old, new) in self.rgb[i..i + 3].iter_mut().zip(c) {
                *old = (f64::from(*old) * (1.0 - a) + f64::from(new) * a).round() as u8;
            }
        }
    }

    /// Encodes the image as PNG bytes.
    ///
    /// Fails only when the PNG encoder does (for example a zero-sized image).
    pub fn to_png(&self) -> Result<Vec<u8>, png::EncodingError> {
        let mut out = Vec::new();
        {
            let mut enc = png::Encoder::new(&mut out, self.width, self.height);
            enc.set_color(png::ColorType::Rgb);
            enc.set_depth(png::BitDepth::Eight);
            let mut w = enc.write_header()?;
            w.write_image_data(&self.rgb)?;
        }
        Ok(out)
    }
}

/// The integer scale that makes the longer side of a `width` x `height` map about `target`
/// pixels (at least 1).
pub fn auto_scale(width: usize, height: usize, target: usize) -> u32 {
    (target / width.max(height).max(1)).clamp(1, 64) as u32
}

/// The pixels per cell of a picture of `map` (or of its cell `window`, see [`known_window`]):
/// the long side is drawn about 800 pixels long, so small maps are upscaled until marks and text
/// are legible.
pub fn picture_scale(map: &OccupancyMap, window: Option<(usize, usize, usize, usize)>) -> u32 {
    let (w, h) = window.map_or((map.info.width, map.info.height), |(x0, y0, x1, y1)| (x1 - x0, y1 - y0));
    auto_scale(w, h, 800)
}

/// The smallest cell window `(x0, y0, x1, y1)` (inclusive-exclusive) holding every known cell
/// (value != -1) and every path point, grown by `margin` cells and clipped to the map; `None`
/// when the map has no known cell and no path point in it.
pub fn known_window(map: &OccupancyMap, paths: &[Vec<Point2>], margin: usize) -> Option<(usize, usize, usize, usize)> {
    let (w, h) = (map.info.width, map.info.height);
    let (mut x0, mut y0, mut x1, mut y1) = (usize::MAX, usize::MAX, 0usize, 0usize);
    let mut grow = |x: usize, y: usize| {
        x0 = x0.min(x);
        y0 = y0.min(y);
        x1 = x1.max(x + 1);
        y1 = y1.max(y + 1);
    };
    for (i, &v) in map.data.iter().enumerate() {
        if v != -1 {
            grow(i % w, i / w);
        }
    }
    for p in paths.iter().flatten() {
        if let Some((x, y)) = map.info.cell_of(map.info.world_to_cell(*p)) {
            grow(x, y);
        }
    }
    (x0 != usize::MAX)
        .then(|| (x0.saturating_sub(margin), y0.saturating_sub(margin), (x1 + margin).min(w), (y1 + margin).min(h)))
}

/// The part of `map` in the cell window `(x0, y0, x1, y1)` (from [`known_window`]), as a map of
/// its own with the origin moved so that world coordinates are unchanged.
pub fn crop_map(map: &OccupancyMap, window: (usize, usize, usize, usize)) -> OccupancyMap {
    let (x0, y0, x1, y1) = window;
    let w = map.info.width;
    let data = (y0..y1).flat_map(|y| map.data[y * w + x0..y * w + x1].iter().copied()).collect();
    let corner = map.info.cell_to_world(Point2::new(x0 as f64, y0 as f64));
    let mut info = map.info.clone();
    info.width = x1 - x0;
    info.height = y1 - y0;
    info.origin.x = corner.x;
    info.origin.y = corner.y;
    OccupancyMap { info, data }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Pose2;
    use crate::map::MapInfo;

    fn map() -> OccupancyMap {
        // 4 x 3 cells of 0.5 m; cell (3, 2) (top right) occupied, cell (0, 0) unknown.
        let info =
            MapInfo { width: 4, height: 3, resolution: 0.5, origin: Pose2::new(1.0, 1.0, 0.0), frame_id: "map".into() };
        let mut data = vec![0i8; 12];
        data[2 * 4 + 3] = 100;
        data[0] = -1;
        OccupancyMap::new(info, data, 100).unwrap()
    }

    #[test]
    fn cropping_keeps_world_coordinates() {
        let mut m = map();
        m.data = vec![-1; 12];
        m.data[4 + 1] = 0; // cell (1, 1)
        let path = vec![Point2::new(1.25 + 1.0, 1.25 + 0.5)]; // cell (2, 1)
        let win = known_window(&m, std::slice::from_ref(&path), 0).unwrap();
        assert_eq!(win, (1, 1, 3, 2));
        let c = crop_map(&m, win);
        assert_eq!((c.info.width, c.info.height), (2, 1));
        assert_eq!(c.info.cell_of(c.info.world_to_cell(path[0])), Some((1, 0)));
        assert_eq!(c.data, vec![0, -1]);
        assert_eq!(known_window(&m, &[], 5), Some((0, 0, 4, 3)));
        assert_eq!(known_window(&OccupancyMap { data: vec![-1; 12], ..m }, &[], 1), None);
    }

    #[test]
    fn auto_scale_targets_the_long_side() {
        assert_eq!(auto_scale(100, 50, 600), 6);
        assert_eq!(auto_scale(5000, 10, 600), 1);
    }
}
