//! `blockstar curve`: the shortest bounded-curvature curve between two poses, with no map (Dubins
//! forwards only, or Reeds-Shepp with reversing), one pair from the flags or many from a file.

use super::plan::{parse_pose, segment_json};
use super::{CliError, CliResult};
use crate::curves::{dubins_shortest, reeds_shepp_shortest};
use crate::geometry::{normalize_angle, Coord, Pose2};
use crate::trajectory::Segment;
use std::io::{BufRead, BufWriter, Write};
use std::path::PathBuf;

/// Which curves: forwards only (Dubins) or forwards and backwards (Reeds-Shepp).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CurveModel {
    /// Dubins curves: forwards only.
    Forward,
    /// Reeds-Shepp curves: forwards and backwards.
    #[value(name = "reeds_shepp")]
    ReedsShepp,
}

/// Arguments of `blockstar curve`.
#[derive(Debug, clap::Args)]
pub struct CurveArgs {
    /// Forwards only (`forward`, Dubins) or with reversing (`reeds_shepp`).
    #[arg(long, value_enum, default_value = "reeds_shepp")]
    pub motion_model: CurveModel,
    /// Minimum turning radius (> 0, the poses' units).
    #[arg(long, allow_negative_numbers = true)]
    pub radius: f64,
    /// Start pose `X,Y,YAW` (radians).
    #[arg(long, value_parser = parse_pose, allow_hyphen_values = true, required_unless_present = "pairs")]
    pub from: Option<Pose2>,
    /// Goal pose `X,Y,YAW` (radians).
    #[arg(long, value_parser = parse_pose, allow_hyphen_values = true, required_unless_present = "pairs")]
    pub to: Option<Pose2>,
    /// A file of pose pairs (`-` for stdin), one per line as six numbers `X1 Y1 YAW1 X2 Y2 YAW2`
    /// (spaces or commas); prints one JSON line per pair: `length`, `end`, `word`, `cusps`,
    /// `reverse_length`.
    #[arg(long, conflicts_with_all = ["from", "to"])]
    pub pairs: Option<PathBuf>,
    /// Print JSON (with every segment) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// The curve's segments, its word and its number of cusps.
struct Solved {
    segments: Vec<Segment>,
    word: String,
    cusps: usize,
}

/// How far (relative to the larger of the poses' distance and 1) the curve found may end from
/// `--to`: the words are solved in units of the radius, so poses a tiny fraction of a radius
/// apart lose the precision of the result (at 1e8 radii per unit of distance the shortest word
/// came out empty, its length -0.0). Ordinary pairs end within about 1e-7 (radius 1, 20 000
/// random pairs).
const END_TOLERANCE: f64 = 1e-6;

/// The shortest curve of `model`; fails with "no curve", or when the curve found does not end at
/// `to` (the radius too large for the poses to be solved precisely).
fn solve(model: CurveModel, from: Pose2, to: Pose2, radius: f64) -> Result<Solved, CliError> {
    let solved = match model {
        CurveModel::Forward => dubins_shortest(from, to, radius).map(|c| Solved {
            segments: c.segments(),
            word: format!("{:?}", c.word).to_uppercase(),
            cusps: 0,
        }),
        CurveModel::ReedsShepp => reeds_shepp_shortest(from, to, radius).map(|c| Solved {
            segments: c.segments(),
            word: c.word(),
            cusps: c.cusps(),
        }),
    };
    let solved = solved.ok_or_else(|| CliError("no curve".into()))?;
    let end = solved.segments.last().map_or(from, Segment::end);
    let scale = from.point().distance(to.point()).max(1.0);
    let (off, turned) = (end.point().distance(to.point()), normalize_angle(end.yaw - to.yaw).abs());
    if off > END_TOLERANCE * scale || turned > 1e-6 {
        return Err(CliError(format!(
            "the curve found ends {off:.3e} away from --to (heading off by {turned:.3e} rad): --radius {:.3} is too \
             large for poses this close to be solved precisely; scale both down",
            Coord(radius)
        )));
    }
    Ok(solved)
}

impl Solved {
    /// Its length and the length driven backwards, as a trajectory of its segments sums them
    /// (0, not -0, when there are none).
    fn lengths(&self) -> (f64, f64) {
        let t = crate::trajectory::Trajectory { segments: self.segments.clone(), min_turning_radius: 0.0 };
        (t.length(), t.reverse_length())
    }
}

fn summary(s: &Solved, from: Pose2) -> serde_json::Value {
    let end = s.segments.last().map_or(from, Segment::end);
    let (length, reverse_length) = s.lengths();
    serde_json::json!({
        "length": length,
        "reverse_length": reverse_length,
        "cusps": s.cusps,
        "word": s.word,
        "end": [end.x, end.y, end.yaw],
    })
}

/// Parses one line of a pairs file: six numbers.
fn parse_pair(line: &str) -> Result<(Pose2, Pose2), String> {
    let v: Vec<f64> = line
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|t| !t.is_empty())
        .map(|t| t.parse::<f64>().map_err(|_| format!("{t:?} is not a number")))
        .collect::<Result<_, _>>()?;
    match v.as_slice() {
        [a, b, c, d, e, f] if v.iter().all(|x| x.is_finite()) => Ok((Pose2::new(*a, *b, *c), Pose2::new(*d, *e, *f))),
        _ => Err(format!("expected six finite numbers X1 Y1 YAW1 X2 Y2 YAW2, got {line:?}")),
    }
}

/// Runs `blockstar curve`.
pub fn run(args: &CurveArgs) -> CliResult {
    let radius = args.radius;
    if !(radius.is_finite() && radius > 0.0) {
        return Err(CliError(format!("--radius must be a finite number > 0, got {radius}")));
    }
    if let Some(path) = &args.pairs {
        let reader: Box<dyn BufRead> = if path.as_os_str() == "-" {
            Box::new(std::io::stdin().lock())
        } else {
            let file =
                std::fs::File::open(path).map_err(|e| CliError(format!("cannot read {}: {e}", path.display())))?;
            Box::new(std::io::BufReader::new(file))
        };
        let mut out = BufWriter::new(std::io::stdout().lock());
        for (n, line) in reader.lines().enumerate() {
            let line = line?;
            if line.trim().is_empty() || line.trim_start().starts_with('#') {
                continue;
            }
            let (from, to) = parse_pair(&line).map_err(|e| CliError(format!("{}:{}: {e}", path.display(), n + 1)))?;
            let solved = solve(args.motion_model, from, to, radius)?;
            writeln!(out, "{}", summary(&solved, from))?;
        }
        out.flush()?;
        return Ok(());
    }
    let (Some(from), Some(to)) = (args.from, args.to) else {
        return Err(CliError("give --from and --to, or --pairs".into()));
    };
    let solved = solve(args.motion_model, from, to, radius)?;
    if args.json {
        let mut v = summary(&solved, from);
        v["segments"] = solved.segments.iter().map(segment_json).collect();
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        let (length, reversing) = solved.lengths();
        println!("{} length {length:.6} ({} cusps, {reversing:.6} reversing)", solved.word, solved.cusps);
        for g in &solved.segments {
            let what =
                if g.curvature == 0.0 { "line".to_string() } else { format!("arc {:?} r {}", g.turn(), g.radius()) };
            let gear = if g.reverse { "reverse" } else { "forward" };
            println!(
                "  {gear:7} {what} from ({:.4}, {:.4}, {:.4}) length {:.6}",
                g.start.x, g.start.y, g.start.yaw, g.length
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_lines_parse_or_name_the_problem() {
        let (a, b) = parse_pair("1 2 0.5, -3 4 -1").unwrap();
        assert_eq!((a, b), (Pose2::new(1.0, 2.0, 0.5), Pose2::new(-3.0, 4.0, -1.0)));
        assert!(parse_pair("1 2 3").unwrap_err().contains("six"));
        assert!(parse_pair("1 2 3 4 5 x").unwrap_err().contains("\"x\""));
        assert!(parse_pair("1 2 3 4 5 NaN").unwrap_err().contains("finite"));
    }
}
