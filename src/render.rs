//! Pictures of maps and paths: an occupancy map drawn as an RGB PNG with paths on top.
//!
//! One map cell becomes `scale` x `scale` pixels; north (+y) is up, so the picture looks like the
//! map in RViz. Free cells are white, occupied cells (>= the threshold) black, unknown cells grey,
//! values in between shades of grey; paths are drawn in red with the start in green and the end
//! in blue.

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

/// Colour of the main path (the trajectory).
pub const RED: [u8; 3] = [220, 30, 30];
/// Colour of a secondary path (the any-angle guide).
pub const ORANGE: [u8; 3] = [250, 160, 20];
const GREEN: [u8; 3] = [20, 170, 20];
const BLUE: [u8; 3] = [30, 60, 230];

impl Image {
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

/// Draws `map` with `paths` (world coordinates, metres, map frame) at `scale` pixels per cell.
/// `occupied_threshold` (0..=100) decides which cells are drawn black.
pub fn render_map(map: &OccupancyMap, paths: &[Vec<Point2>], scale: u32, occupied_threshold: i8) -> Image {
    let layers: Vec<(&[Point2], [u8; 3])> = paths.iter().map(|p| (p.as_slice(), RED)).collect();
    render_layers(map, &layers, scale, occupied_threshold)
}

/// Like [`render_map`], each path in its own colour (drawn in order, later on top).
pub fn render_layers(map: &OccupancyMap, paths: &[(&[Point2], [u8; 3])], scale: u32, occupied_threshold: i8) -> Image {
    let scale = scale.max(1);
    let (w, h) = (map.info.width as u32, map.info.height as u32);
    let mut img = Image { width: w * scale, height: h * scale, rgb: vec![0; (w * scale * h * scale * 3) as usize] };
    for cy in 0..h {
        for cx in 0..w {
            let v = map.data[cy as usize * w as usize + cx as usize];
            let c = match v {
                -1 => [160, 160, 176],
                v if v >= occupied_threshold => [0, 0, 0],
                v if (0..=100).contains(&v) => {
                    let g = 255 - (v as u32 * 155 / 100) as u8;
                    [g, g, g]
                }
                _ => [255, 0, 255],
            };
            let top = (h - 1 - cy) * scale;
            for py in top..top + scale {
                for px in cx * scale..(cx + 1) * scale {
                    img.put(px as i64, py as i64, c);
                }
            }
        }
    }
    // World point -> pixel (continuous), y flipped.
    let to_px = |p: Point2| {
        let c = map.info.world_to_cell(p);
        (c.x * scale as f64, (h as f64 - c.y) * scale as f64)
    };
    let thick = (scale as i64 / 3).max(1);
    for &(path, colour) in paths {
        for seg in path.windows(2) {
            let (a, b) = (to_px(seg[0]), to_px(seg[1]));
            let steps = ((b.0 - a.0).abs().max((b.1 - a.1).abs()).ceil() as usize).clamp(1, 1 << 20);
            for i in 0..=steps {
                let t = i as f64 / steps as f64;
                let (x, y) = (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t);
                dot(&mut img, x, y, thick / 2, colour);
            }
        }
        if let (Some(&s), Some(&e)) = (path.first(), path.last()) {
            let (s, e) = (to_px(s), to_px(e));
            dot(&mut img, s.0, s.1, thick + 1, GREEN);
            dot(&mut img, e.0, e.1, thick + 1, BLUE);
        }
    }
    img
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

fn dot(img: &mut Image, x: f64, y: f64, r: i64, c: [u8; 3]) {
    if !(x.is_finite() && y.is_finite()) {
        return;
    }
    let (x, y) = (x.floor() as i64, y.floor() as i64);
    for dy in -r..=r {
        for dx in -r..=r {
            img.put(x + dx, y + dy, c);
        }
    }
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
    fn cells_land_where_rviz_shows_them() {
        let img = render_map(&map(), &[], 10, 65);
        assert_eq!((img.width, img.height), (40, 30));
        assert_eq!(img.pixel(35, 5), Some([0, 0, 0]), "top right cell is occupied");
        assert_eq!(img.pixel(5, 25), Some([160, 160, 176]), "bottom left cell is unknown");
        assert_eq!(img.pixel(15, 15), Some([255, 255, 255]));
    }

    #[test]
    fn path_is_drawn_between_its_ends() {
        // From the centre of cell (0, 1) to the centre of cell (2, 1): world y = 1.75.
        let path = vec![Point2::new(1.25, 1.75), Point2::new(2.25, 1.75)];
        let img = render_map(&map(), &[path], 10, 65);
        assert_eq!(img.pixel(5, 15), Some(GREEN));
        assert_eq!(img.pixel(25, 15), Some(BLUE));
        assert_eq!(img.pixel(15, 15), Some(RED));
        assert_eq!(img.pixel(15, 5), Some([255, 255, 255]), "nothing drawn off the path");
        let png = img.to_png().unwrap();
        assert_eq!(&png[1..4], b"PNG");
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
