//! Moving AI benchmark maps (`.map`) and scenarios (`.map.scen`).
//!
//! Map rows appear top to bottom; row `y` of the file is grid row `y`. Passable terrain is `.`,
//! `G` and `S`; every other character (`@`, `O`, `T`, `W`, ...) is blocked for a ground robot.

use crate::error::MapError;
use crate::grid::Grid;
use std::path::Path;

fn fmt(msg: impl Into<String>) -> MapError {
    MapError::Format(msg.into())
}

/// Parses the text of a `.map` file.
pub fn parse_movingai_map(text: &str) -> Result<Grid, MapError> {
    let mut lines = text.lines();
    let mut width = None;
    let mut height = None;
    loop {
        let line = lines.next().ok_or_else(|| fmt("missing `map` line"))?.trim();
        let mut parts = line.split_whitespace();
        match (parts.next(), parts.next()) {
            (Some("type"), _) => {}
            (Some("height"), Some(v)) => {
                height = Some(v.parse::<usize>().map_err(|_| fmt(format!("bad height {v:?}")))?)
            }
            (Some("width"), Some(v)) => width = Some(v.parse::<usize>().map_err(|_| fmt(format!("bad width {v:?}")))?),
            (Some("map"), None) => break,
            (None, _) => {}
            _ => return Err(fmt(format!("unexpected header line {line:?}"))),
        }
    }
    let (w, h) = (width.ok_or_else(|| fmt("missing width"))?, height.ok_or_else(|| fmt("missing height"))?);
    if w == 0 || h == 0 || w > super::MAX_IMAGE_SIDE || h > super::MAX_IMAGE_SIDE {
        return Err(fmt(format!("map size {w}x{h} is out of range")));
    }
    // Every row needs at least `w` bytes: a header promising more than the text holds is rejected
    // before allocating for it.
    if w * h > text.len() {
        return Err(fmt(format!("map header says {w}x{h} but the file holds only {} bytes", text.len())));
    }
    let mut blocked = Vec::with_capacity(w * h);
    for y in 0..h {
        let row = lines.next().ok_or_else(|| fmt(format!("map has {y} rows, expected {h}")))?;
        let row = row.trim_end_matches('\r').as_bytes();
        if row.len() < w {
            return Err(fmt(format!("row {y} has {} cells, expected {w}", row.len())));
        }
        blocked.extend(row[..w].iter().map(|c| !matches!(c, b'.' | b'G' | b'S')));
    }
    Ok(Grid::from_blocked(w, h, blocked)?)
}

/// Reads a `.map` file.
pub fn load_movingai_map(path: &Path) -> Result<Grid, MapError> {
    let text =
        std::fs::read_to_string(path).map_err(|source| MapError::Io { path: path.display().to_string(), source })?;
    parse_movingai_map(&text)
}

/// One query of a scenario file. Coordinates are cells (column, row).
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// Difficulty bucket.
    pub bucket: u32,
    /// Map width the scenario was made for.
    pub map_width: usize,
    /// Map height the scenario was made for.
    pub map_height: usize,
    /// Start cell.
    pub start: (usize, usize),
    /// Goal cell.
    pub goal: (usize, usize),
    /// Optimal 8-connected length (diagonal sqrt 2, no corner cutting), as printed.
    pub optimal_length: f64,
    /// How far a correct length may lie from `optimal_length`: one unit of its last printed
    /// digit, and at least 1e-4. The files print 6 significant digits (2 decimals in some) of
    /// a length their generator computed in single precision, so 101.69848 appears as
    /// 101.698.
    pub optimal_tolerance: f64,
}

impl Scenario {
    /// True when `length` (cells) reproduces the optimal length within the file's printed
    /// precision ([`Scenario::optimal_tolerance`]).
    pub fn is_optimal(&self, length: f64) -> bool {
        (length - self.optimal_length).abs() <= self.optimal_tolerance
    }
}

/// Parses the text of a `.map.scen` file (`version 1` tab-separated or `version 1.0`
/// space-separated).
pub fn parse_scenarios(text: &str) -> Result<Vec<Scenario>, MapError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with("version") {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() != 9 {
            return Err(fmt(format!("scenario line {}: expected 9 fields, got {}", i + 1, f.len())));
        }
        let int = |k: usize| {
            f[k].parse::<usize>().map_err(|_| fmt(format!("scenario line {}: bad integer {:?}", i + 1, f[k])))
        };
        let len: f64 = f[8].parse().map_err(|_| fmt(format!("scenario line {}: bad length {:?}", i + 1, f[8])))?;
        if !len.is_finite() || len < 0.0 {
            return Err(fmt(format!("scenario line {}: bad length {len}", i + 1)));
        }
        out.push(Scenario {
            bucket: int(0)? as u32,
            map_width: int(2)?,
            map_height: int(3)?,
            start: (int(4)?, int(5)?),
            goal: (int(6)?, int(7)?),
            optimal_length: len,
            optimal_tolerance: printed_unit(f[8]).max(1e-4),
        });
    }
    Ok(out)
}

/// One unit of the last digit of a printed decimal number (1 for an integer), with a hair of
/// slack for the binary rounding of both sides.
fn printed_unit(field: &str) -> f64 {
    let decimals = field.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
    10f64.powi(-decimals) + 1e-9
}

/// Reads a `.map.scen` file.
pub fn load_scenarios(path: &Path) -> Result<Vec<Scenario>, MapError> {
    let text =
        std::fs::read_to_string(path).map_err(|source| MapError::Io { path: path.display().to_string(), source })?;
    parse_scenarios(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_small_map() {
        let g = parse_movingai_map("type octile\nheight 2\nwidth 3\nmap\n.@T\nGS.\n").unwrap();
        assert_eq!((g.width(), g.height()), (3, 2));
        assert!(g.is_free(0, 0) && g.is_blocked(1, 0) && g.is_blocked(2, 0));
        assert!(g.is_free(0, 1) && g.is_free(1, 1));
    }

    #[test]
    fn rejects_malformed_maps() {
        assert!(parse_movingai_map("type octile\nheight 2\nwidth 3\nmap\n...\n").is_err());
        assert!(parse_movingai_map("type octile\nheight 2\nwidth 3\nmap\n..\n...\n").is_err());
        assert!(parse_movingai_map("height x\n").is_err());
        assert!(parse_movingai_map("type octile\nheight 0\nwidth 3\nmap\n").is_err());
        assert!(parse_movingai_map("").is_err());
        assert!(parse_movingai_map("type octile\nheight 99999\nwidth 99999\nmap\n..\n").is_err());
    }

    #[test]
    fn parses_both_scenario_versions() {
        let s = parse_scenarios("version 1\n0\tmaps/a.map\t10\t12\t1\t2\t3\t4\t2.41421\n").unwrap();
        assert_eq!(s[0].start, (1, 2));
        assert_eq!(s[0].goal, (3, 4));
        assert!((s[0].optimal_length - 2.41421).abs() < 1e-12);
        assert!((s[0].optimal_tolerance - 1e-4).abs() < 1e-8, "5 decimals: the 1e-4 floor");
        let s = parse_scenarios("version 1.0\n3 a.map 512 512 1 2 3 4 5.66\n").unwrap();
        assert_eq!(s[0].bucket, 3);
        assert!((s[0].optimal_tolerance - 0.01).abs() < 1e-8, "2 decimals: one unit of the last");
        let s = parse_scenarios("version 1\n25\tarena2.map\t281\t209\t100\t161\t93\t68\t101.698\n").unwrap();
        assert!(s[0].is_optimal(101.69848480983494));
        assert!(!s[0].is_optimal(101.6995), "two units of the last digit off");
        assert!(parse_scenarios("version 1\n0 a 1 2 3\n").is_err());
    }
}
