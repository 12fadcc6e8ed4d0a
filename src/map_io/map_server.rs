//! The ROS `map_server` map format: a YAML file naming a PGM or PNG image.
//!
//! Interpretation follows Navigation2's `map_server` exactly:
//! - `shade` is the mean of the pixel's colour channels scaled to `0..=1` (in `trinary` mode an
//!   alpha channel, when present, is averaged in as one more channel);
//! - `occ = 1 - shade`, or `occ = shade` with `negate: 1`;
//! - `trinary`: `occ > occupied_thresh` is 100, `occ < free_thresh` is 0, anything else -1;
//! - `scale`: like trinary, but values in between become `rint(100 * (occ - free) / (occ_t - free))`
//!   and non-opaque pixels are unknown;
//! - `raw`: the value `round(255 * shade)` if it lies in `0..=100`, else -1;
//! - the image's top row is the map's last row (the origin is the bottom-left pixel).

use super::pnm::{decode_pgm, GrayImage};
use crate::error::MapError;
use crate::geometry::Pose2;
use crate::map::{MapInfo, OccupancyMap};
use std::path::{Path, PathBuf};

/// How pixel shades become occupancy values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapMode {
    /// Occupied, free or unknown.
    Trinary,
    /// Occupied, free, or a percentage in between.
    Scale,
    /// Pixel values are the occupancy values.
    Raw,
}

/// The fields of a `map_server` YAML file.
#[derive(Debug, Clone, PartialEq)]
pub struct MapServerParams {
    /// The image path, resolved against the YAML file's folder.
    pub image: PathBuf,
    /// The image as the YAML file names it (for messages).
    pub image_name: String,
    /// Metres per pixel.
    pub resolution: f64,
    /// Pose of the bottom-left pixel's low corner (x, y, yaw).
    pub origin: Pose2,
    /// Whether white means occupied.
    pub negate: bool,
    /// Occupancy above which a pixel is occupied.
    pub occupied_thresh: f64,
    /// Occupancy below which a pixel is free.
    pub free_thresh: f64,
    /// Interpretation mode (default trinary).
    pub mode: MapMode,
}

fn fmt(msg: impl Into<String>) -> MapError {
    MapError::Format(msg.into())
}

fn number(v: &serde_yaml::Value, key: &str) -> Result<f64, MapError> {
    v.as_f64()
        .or_else(|| v.as_i64().map(|i| i as f64))
        .filter(|f| f.is_finite())
        .ok_or_else(|| fmt(format!("`{key}` must be a finite number")))
}

impl MapServerParams {
    /// Parses the YAML text; relative image paths are resolved against `base_dir`.
    pub fn parse(text: &str, base_dir: &Path) -> Result<Self, MapError> {
        let doc: serde_yaml::Value = serde_yaml::from_str(text).map_err(|e| fmt(format!("YAML: {e}")))?;
        let map = doc.as_mapping().ok_or_else(|| fmt("the YAML document is not a mapping"))?;
        let get = |key: &str| map.get(serde_yaml::Value::from(key));
        let need = |key: &str| get(key).ok_or_else(|| fmt(format!("missing required key `{key}`")));

        let image = need("image")?.as_str().ok_or_else(|| fmt("`image` must be a string"))?;
        if image.is_empty() {
            return Err(fmt("`image` is empty"));
        }
        let image_name = image.to_string();
        let image = if Path::new(image).is_absolute() { PathBuf::from(image) } else { base_dir.join(image) };
        let resolution = number(need("resolution")?, "resolution")?;
        if resolution <= 0.0 {
            return Err(fmt(format!("`resolution` must be positive, got {resolution}")));
        }
        let origin = need("origin")?.as_sequence().ok_or_else(|| fmt("`origin` must be a list [x, y, yaw]"))?;
        if origin.len() != 3 {
            return Err(fmt(format!("`origin` must have 3 numbers, got {}", origin.len())));
        }
        let origin =
            Pose2::new(number(&origin[0], "origin")?, number(&origin[1], "origin")?, number(&origin[2], "origin")?);
        let negate = match need("negate")? {
            serde_yaml::Value::Bool(b) => *b,
            v => number(v, "negate")? != 0.0,
        };
        let occupied_thresh = number(need("occupied_thresh")?, "occupied_thresh")?;
        let free_thresh = number(need("free_thresh")?, "free_thresh")?;
        if !(0.0..=1.0).contains(&occupied_thresh)
            || !(0.0..=1.0).contains(&free_thresh)
            || free_thresh > occupied_thresh
        {
            return Err(fmt(format!(
                "thresholds must satisfy 0 <= free_thresh ({free_thresh}) <= occupied_thresh ({occupied_thresh}) <= 1"
            )));
        }
        let mode = match get("mode").map(|m| m.as_str().ok_or_else(|| fmt("`mode` must be a string"))).transpose()? {
            None | Some("trinary") => MapMode::Trinary,
            Some("scale") => MapMode::Scale,
            Some("raw") => MapMode::Raw,
            Some(other) => return Err(fmt(format!("unknown mode `{other}` (trinary, scale or raw)"))),
        };
        Ok(Self { image, image_name, resolution, origin, negate, occupied_thresh, free_thresh, mode })
    }

    /// Converts one pixel to an occupancy value. `channels` are the colour channels and `alpha`
    /// the alpha channel when the image has one, all scaled to `0..=1`.
    pub fn occupancy(&self, channels: &[f64], alpha: Option<f64>) -> i8 {
        let mut sum: f64 = channels.iter().sum();
        let mut n = channels.len() as f64;
        if let (MapMode::Trinary, Some(a)) = (self.mode, alpha) {
            sum += a;
            n += 1.0;
        }
        let shade = sum / n;
        let occ = if self.negate { shade } else { 1.0 - shade };
        match self.mode {
            MapMode::Trinary => {
                if self.occupied_thresh < occ {
                    100
                } else if occ < self.free_thresh {
                    0
                } else {
                    -1
                }
            }
            MapMode::Scale => {
                if alpha.is_some_and(|a| a < 1.0) {
                    -1
                } else if self.occupied_thresh < occ {
                    100
                } else if occ < self.free_thresh {
                    0
                } else {
                    let v = ((occ - self.free_thresh) / (self.occupied_thresh - self.free_thresh) * 100.0)
                        .round_ties_even();
                    v.clamp(0.0, 100.0) as i8
                }
            }
            MapMode::Raw => {
                let v = (shade * 255.0).round();
                if (0.0..=100.0).contains(&v) {
                    v as i8
                } else {
                    -1
                }
            }
        }
    }
}

/// A decoded image: per pixel, colour channels and optional alpha, all in `0..=1`; row 0 at the top.
struct Pixels {
    width: usize,
    height: usize,
    channels: usize,
    has_alpha: bool,
    values: Vec<f64>,
}

fn from_gray(img: GrayImage) -> Pixels {
    let m = f64::from(img.maxval);
    Pixels {
        width: img.width,
        height: img.height,
        channels: 1,
        has_alpha: false,
        values: img.pixels.iter().map(|&p| f64::from(p) / m).collect(),
    }
}

fn decode_png(bytes: &[u8], max_pixels: usize) -> Result<Pixels, MapError> {
    let mut decoder = png::Decoder::new(bytes);
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().map_err(|e| fmt(format!("PNG: {e}")))?;
    let (w, h) = (reader.info().width as usize, reader.info().height as usize);
    if w == 0 || h == 0 || w > super::MAX_IMAGE_SIDE || h > super::MAX_IMAGE_SIDE {
        return Err(fmt(format!("PNG size {w}x{h} is out of range")));
    }
    if w * h > max_pixels {
        return Err(MapError::TooLarge { cells: w * h, cap: max_pixels });
    }
    let mut buf = vec![0; reader.output_buffer_size()];
    let frame = reader.next_frame(&mut buf).map_err(|e| fmt(format!("PNG: {e}")))?;
    let (color, depth) = (frame.color_type, frame.bit_depth);
    let samples_per_px = color.samples();
    let wide = depth == png::BitDepth::Sixteen;
    let max = if wide { 65535.0 } else { 255.0 };
    let data = &buf[..frame.buffer_size()];
    let sample = |i: usize| -> f64 {
        if wide {
            f64::from(u16::from_be_bytes([data[2 * i], data[2 * i + 1]])) / max
        } else {
            f64::from(data[i]) / max
        }
    };
    let has_alpha = matches!(color, png::ColorType::GrayscaleAlpha | png::ColorType::Rgba);
    let channels = samples_per_px - usize::from(has_alpha);
    let mut values = Vec::with_capacity(w * h * samples_per_px);
    for i in 0..w * h * samples_per_px {
        values.push(sample(i));
    }
    Ok(Pixels { width: w, height: h, channels, has_alpha, values })
}

fn io_error(path: &Path, source: std::io::Error) -> MapError {
    MapError::Io { path: path.display().to_string(), source }
}

/// Loads a `map_server` YAML file and its image into an [`OccupancyMap`] in frame `frame_id`.
///
/// Fails with [`MapError::Io`] when the YAML file cannot be read, [`MapError::Image`] (naming the
/// YAML file, the image as it names it and the absolute path that resolved to) when the image
/// cannot, [`MapError::Format`] when the YAML (the message starts with its path) or the image is
/// malformed, and [`MapError::TooLarge`] when the map exceeds `max_cells`.
pub fn load_map_server_yaml(yaml_path: &Path, frame_id: &str, max_cells: usize) -> Result<OccupancyMap, MapError> {
    let text = std::fs::read_to_string(yaml_path).map_err(|e| io_error(yaml_path, e))?;
    let base = yaml_path.parent().unwrap_or(Path::new("."));
    let params = MapServerParams::parse(&text, base).map_err(|e| match e {
        MapError::Format(m) => MapError::Format(format!("{}: {m}", yaml_path.display())),
        other => other,
    })?;
    let bytes = std::fs::read(&params.image).map_err(|source| MapError::Image {
        yaml: yaml_path.display().to_string(),
        image: params.image_name.clone(),
        // A relative YAML path gives a relative image path; the user needs to know where it was
        // looked for.
        resolved: std::path::absolute(&params.image).unwrap_or_else(|_| params.image.clone()).display().to_string(),
        source,
    })?;
    map_from_image_bytes(&params, &bytes, frame_id, max_cells)
}

/// Builds the map from already-read image bytes (PGM or PNG, recognised by content).
pub fn map_from_image_bytes(
    params: &MapServerParams,
    bytes: &[u8],
    frame_id: &str,
    max_cells: usize,
) -> Result<OccupancyMap, MapError> {
    let px = if bytes.starts_with(b"\x89PNG") {
        decode_png(bytes, max_cells)?
    } else if bytes.starts_with(b"P5") || bytes.starts_with(b"P2") {
        from_gray(decode_pgm(bytes, max_cells)?)
    } else {
        return Err(fmt(format!("{}: unsupported image format (PGM or PNG)", params.image.display())));
    };
    let (w, h) = (px.width, px.height);
    let info = MapInfo {
        width: w,
        height: h,
        resolution: params.resolution,
        origin: params.origin,
        frame_id: frame_id.to_string(),
    };
    info.validate(max_cells)?;
    let stride = px.channels + usize::from(px.has_alpha);
    let mut data = vec![-1i8; w * h];
    for row in 0..h {
        let map_row = h - 1 - row;
        for col in 0..w {
            let base = (row * w + col) * stride;
            let ch = &px.values[base..base + px.channels];
            let alpha = px.has_alpha.then(|| px.values[base + px.channels]);
            data[map_row * w + col] = params.occupancy(ch, alpha);
        }
    }
    OccupancyMap::new(info, data, max_cells)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(mode: MapMode, negate: bool) -> MapServerParams {
        MapServerParams {
            image: "x.pgm".into(),
            image_name: "x.pgm".into(),
            resolution: 0.05,
            origin: Pose2::default(),
            negate,
            occupied_thresh: 0.65,
            free_thresh: 0.196,
            mode,
        }
    }

    #[test]
    fn trinary_and_negate() {
        let p = params(MapMode::Trinary, false);
        assert_eq!(p.occupancy(&[1.0], None), 0);
        assert_eq!(p.occupancy(&[0.0], None), 100);
        assert_eq!(p.occupancy(&[205.0 / 255.0], None), -1);
        let n = params(MapMode::Trinary, true);
        assert_eq!(n.occupancy(&[1.0], None), 100);
        assert_eq!(n.occupancy(&[0.0], None), 0);
    }

    #[test]
    fn scale_and_raw() {
        let p = params(MapMode::Scale, false);
        // occ = 0.4 -> (0.4 - 0.196) / (0.65 - 0.196) * 100 = 44.9 -> 45
        assert_eq!(p.occupancy(&[0.6], None), 45);
        assert_eq!(p.occupancy(&[0.6], Some(0.5)), -1);
        let r = params(MapMode::Raw, false);
        assert_eq!(r.occupancy(&[50.0 / 255.0], None), 50);
        assert_eq!(r.occupancy(&[200.0 / 255.0], None), -1);
    }

    #[test]
    fn image_top_row_is_last_map_row() {
        let p = params(MapMode::Trinary, false);
        let mut pgm = b"P5 2 2 255\n".to_vec();
        pgm.extend_from_slice(&[0, 255, 255, 255]); // top-left pixel black
        let m = map_from_image_bytes(&p, &pgm, "map", 100).unwrap();
        assert_eq!(m.data, vec![0, 0, 100, 0]);
    }

    #[test]
    fn yaml_errors_are_clear() {
        let base = Path::new("/tmp");
        assert!(MapServerParams::parse("image: a.pgm\n", base).is_err());
        let good =
            "image: a.pgm\nresolution: 0.1\norigin: [1, 2, 0.5]\nnegate: 0\noccupied_thresh: 0.65\nfree_thresh: 0.2\n";
        let p = MapServerParams::parse(good, base).unwrap();
        assert_eq!(p.image, PathBuf::from("/tmp/a.pgm"));
        assert_eq!(p.origin, Pose2::new(1.0, 2.0, 0.5));
        assert_eq!(p.mode, MapMode::Trinary);
        assert!(MapServerParams::parse(&good.replace("0.1", "-1"), base).is_err());
        assert!(MapServerParams::parse(&good.replace("[1, 2, 0.5]", "[1, 2]"), base).is_err());
        assert!(MapServerParams::parse(&format!("{good}mode: fancy\n"), base).is_err());
        assert!(MapServerParams::parse("[1, 2", base).is_err());
    }

    #[test]
    fn a_missing_image_names_the_yaml_and_where_it_looked() {
        let dir = std::env::temp_dir().join(format!("blockstar-missing-image-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let yaml = dir.join("map.yaml");
        std::fs::write(
            &yaml,
            "image: missing.pgm\nresolution: 0.05\norigin: [0, 0, 0]\nnegate: 0\noccupied_thresh: 0.65\nfree_thresh: 0.2\n",
        )
        .unwrap();
        let e = load_map_server_yaml(&yaml, "map", 100).unwrap_err().to_string();
        let want =
            format!("{}: image \"missing.pgm\" (resolved to {}): ", yaml.display(), dir.join("missing.pgm").display());
        assert!(e.starts_with(&want), "{e}");
        // Malformed YAML names the file too.
        std::fs::write(&yaml, "image: missing.pgm\n").unwrap();
        let e = load_map_server_yaml(&yaml, "map", 100).unwrap_err().to_string();
        assert!(e.contains(&format!("{}: missing required key", yaml.display())), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
