//! `blockstar render --map MAP [--path FILE] --out PNG`: draws a map file with a path on top.

use super::{CliError, CliResult};
use crate::geometry::Point2;
use crate::map::DEFAULT_MAX_MAP_CELLS;
use crate::map_io::load_map_file;
use crate::render::{auto_scale, crop_map, known_window, render_map};
use std::path::PathBuf;

/// Arguments of `blockstar render`.
#[derive(Debug, clap::Args)]
pub struct RenderArgs {
    /// Map file: a map_server YAML (metres) or a Moving AI `.map` (cells).
    #[arg(long)]
    pub map: PathBuf,
    /// Path file: one point `X Y` or `X,Y` (map frame) per line; `#` starts a comment.
    #[arg(long)]
    pub path: Option<PathBuf>,
    /// Output PNG.
    #[arg(long)]
    pub out: PathBuf,
    /// Pixels per cell (default: about 800 pixels on the longer side).
    #[arg(long)]
    pub scale: Option<u32>,
    /// Draw only the known part of the map (and the path), with a margin of 10 cells.
    #[arg(long)]
    pub crop: bool,
}

/// Reads a path file (see [`RenderArgs::path`]); fails naming the first bad line.
pub fn parse_path_file(text: &str) -> Result<Vec<Point2>, CliError> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let v: Vec<f64> = line
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|t| !t.is_empty())
            .map(|t| t.parse::<f64>())
            .collect::<Result<_, _>>()
            .map_err(|_| CliError(format!("path line {}: {line:?} is not `X Y`", n + 1)))?;
        match v.as_slice() {
            [x, y, ..] if x.is_finite() && y.is_finite() => out.push(Point2::new(*x, *y)),
            _ => return Err(CliError(format!("path line {}: {line:?} is not `X Y`", n + 1))),
        }
    }
    Ok(out)
}

/// Runs `blockstar render`.
pub fn run(args: &RenderArgs) -> CliResult {
    let map = load_map_file(&args.map, "map", DEFAULT_MAX_MAP_CELLS)?;
    let paths = match &args.path {
        Some(p) => {
            vec![parse_path_file(&std::fs::read_to_string(p).map_err(|e| CliError(format!("{}: {e}", p.display())))?)?]
        }
        None => vec![],
    };
    let map = match known_window(&map, &paths, 10).filter(|_| args.crop) {
        Some(window) => crop_map(&map, window),
        None => map,
    };
    let scale = args.scale.unwrap_or_else(|| auto_scale(map.info.width, map.info.height, 800));
    let img = render_map(&map, &paths, scale, 65);
    let png = img.to_png()?;
    std::fs::write(&args.out, png).map_err(|e| CliError(format!("{}: {e}", args.out.display())))?;
    println!("wrote {} ({}x{} pixels)", args.out.display(), img.width, img.height);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_files_accept_spaces_commas_and_comments() {
        let p = parse_path_file("# x y\n1 2\n3,4.5\n\n").unwrap();
        assert_eq!(p, vec![Point2::new(1.0, 2.0), Point2::new(3.0, 4.5)]);
        assert!(parse_path_file("1 x\n").unwrap_err().0.contains("line 1"));
        assert!(parse_path_file("1\n").is_err());
    }
}
