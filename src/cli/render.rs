//! `blockstar render --map MAP [--path FILE] [--guide FILE] --out PNG`: draws a map file with a
//! trajectory, an any-angle guide, start and goal, the footprint's reach, a legend and a scale
//! bar (the same picture as `blockstar plan --png`).

use super::{CliError, CliResult};
use crate::geometry::{Point2, Pose2};
use crate::map_io::load_map_file;
use crate::params::NodeParams;
use crate::render::scene::{render_scene, Mark, Scene};
use crate::render::{known_window, picture_scale};
use std::path::{Path, PathBuf};

/// Arguments of `blockstar render`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Start and goal headings: a path line may carry a third number, the heading YAW \
    (radians, map frame). The start arrow uses the first line's YAW and the goal arrow the last line's; \
    without one, the heading is the direction of the first (last) segment of non-zero length, which is the \
    vehicle's heading for a forward-driving trajectory sampled densely (as /plan is, which \
    scripts/demo_client.py writes as `X Y` lines). A path of a single point has no heading: its footprint is drawn without an arrow.\n\n\
    Robot: the footprint drawn at start and goal and its reach (free cells within the robot radius of \
    an obstacle, tinted) take robot_radius and robot_side from --params (e.g. config/planner.yaml), \
    else the planner's defaults; --robot-radius and --robot-side override them.")]
pub struct RenderArgs {
    /// Map file: a map_server YAML (metres) or a Moving AI `.map` (cells).
    #[arg(long)]
    pub map: PathBuf,
    /// Trajectory file: one point per line, `X Y` or `X Y YAW` (metres and radians, map frame;
    /// spaces or commas); `#` starts a comment. Drawn as a thick line with start and goal marks;
    /// a step that leaves its point against that point's YAW is driven backwards, drawn in teal.
    #[arg(long)]
    pub path: Option<PathBuf>,
    /// Any-angle guide file, same format (YAW ignored); drawn dashed under the trajectory.
    #[arg(long)]
    pub guide: Option<PathBuf>,
    /// Output PNG.
    #[arg(long)]
    pub out: PathBuf,
    /// Pixels per cell (default: about 800 pixels on the map's longer side).
    #[arg(long)]
    pub scale: Option<u32>,
    /// Draw only the known part of the map (and the paths), with a margin of 10 cells.
    #[arg(long)]
    pub crop: bool,
    /// A ROS 2 parameters file (`config/planner.yaml`): robot size, occupied_threshold and
    /// allow_unknown; the flags below override it.
    #[arg(long)]
    pub params: Option<PathBuf>,
    /// Robot radius (map units) of the footprint drawn and its reach.
    #[arg(long)]
    pub robot_radius: Option<f64>,
    /// Side of a square footprint (map units; 0 = the circle of the robot radius).
    #[arg(long)]
    pub robot_side: Option<f64>,
}

/// One line of a path file: a point (m, map frame) and, when given, a heading (rad, map frame).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PathPoint {
    /// Position (m, map frame).
    pub at: Point2,
    /// The third column, if present (rad, map frame).
    pub yaw: Option<f64>,
}

/// Reads a path file (see [`RenderArgs::path`]): lines `X Y` or `X Y YAW` of finite numbers.
/// Fails naming the first bad line, or when the file holds no point.
pub fn parse_path_file(text: &str) -> Result<Vec<PathPoint>, CliError> {
    let mut out = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let bad = || CliError(format!("line {}: {line:?} is not `X Y` or `X Y YAW` (finite numbers)", n + 1));
        let v: Vec<f64> = line
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|t| !t.is_empty())
            .map(|t| t.parse::<f64>())
            .collect::<Result<_, _>>()
            .map_err(|_| bad())?;
        if !v.iter().all(|x| x.is_finite()) {
            return Err(bad());
        }
        match v.as_slice() {
            [x, y] => out.push(PathPoint { at: Point2::new(*x, *y), yaw: None }),
            [x, y, yaw] => out.push(PathPoint { at: Point2::new(*x, *y), yaw: Some(*yaw) }),
            _ => return Err(bad()),
        }
    }
    if out.is_empty() {
        return Err(CliError("no points (expected lines `X Y` or `X Y YAW`, metres in the map frame)".into()));
    }
    Ok(out)
}

/// Start and goal marks of a path: each end's own YAW when given, else the direction of the
/// first (last) segment of non-zero length; no heading for a path of one point (or of one
/// repeated point).
pub fn end_marks(path: &[PathPoint]) -> Option<(Mark, Mark)> {
    let (first, last) = (path.first()?, path.last()?);
    let direction = |from: Point2, to: Point2| (to.y - from.y).atan2(to.x - from.x);
    let moved = |p: &&PathPoint, q: Point2| p.at.distance(q) > 1e-9;
    let start_yaw = first.yaw.or_else(|| path.iter().find(|p| moved(p, first.at)).map(|p| direction(first.at, p.at)));
    let goal_yaw = last.yaw.or_else(|| path.iter().rev().find(|p| moved(p, last.at)).map(|p| direction(p.at, last.at)));
    Some((Mark { at: first.at, yaw: start_yaw }, Mark { at: last.at, yaw: goal_yaw }))
}

/// The picture's title: the map file's name and its cell size (metres per cell for a map_server
/// map; a Moving AI map is in cells).
pub fn map_title(path: &Path, map: &crate::map::OccupancyMap) -> String {
    let name = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into());
    match crate::map_io::map_file_units(path) {
        crate::map::MapUnits::Metres => format!("{name}   {} m/cell", crate::map::Resolution(map.info.resolution)),
        crate::map::MapUnits::Cells => format!("{name}   (lengths in cells)"),
    }
}

fn read_path(file: &Path) -> Result<Vec<PathPoint>, CliError> {
    let text = std::fs::read_to_string(file).map_err(|e| CliError(format!("{}: {e}", file.display())))?;
    parse_path_file(&text).map_err(|e| CliError(format!("{}: {e}", file.display())))
}

/// Runs `blockstar render`.
pub fn run(args: &RenderArgs) -> CliResult {
    let mut robot = match &args.params {
        Some(path) => NodeParams::from_yaml_file(path, "planner_node")?.planner,
        None => NodeParams::default().planner,
    };
    if let Some(r) = args.robot_radius {
        robot.robot_radius = r;
    }
    if let Some(a) = args.robot_side {
        robot.robot_side = a;
    }
    robot.validate()?;
    let map = load_map_file(&args.map, "map", robot.max_map_cells)?;
    let traj = args.path.as_deref().map(read_path).transpose()?.unwrap_or_default();
    let guide = args.guide.as_deref().map(read_path).transpose()?.unwrap_or_default();
    for (file, pts) in [(&args.path, &traj), (&args.guide, &guide)] {
        let off = pts.iter().filter(|p| map.info.cell_of(map.info.world_to_cell(p.at)).is_none()).count();
        if let (Some(file), true) = (file, off > 0) {
            eprintln!(
                "blockstar: warning: {off} of {} points of {} lie outside the map (expected metres in the map frame)",
                pts.len(),
                file.display()
            );
        }
    }
    let traj_pts: Vec<Point2> = traj.iter().map(|p| p.at).collect();
    // A path file's headings, where it gives them, tell the steps driven backwards.
    let backwards: Vec<bool> = traj
        .windows(2)
        .map(|w| {
            w[0].yaw
                .is_some_and(|yaw| crate::geometry::is_reversing_step(Pose2::new(w[0].at.x, w[0].at.y, yaw), w[1].at))
        })
        .collect();
    let guide_pts: Vec<Point2> = guide.iter().map(|p| p.at).collect();
    let window = if args.crop { known_window(&map, &[traj_pts.clone(), guide_pts.clone()], 10) } else { None };
    let scale = args.scale.unwrap_or_else(|| picture_scale(&map, window));
    let marks = end_marks(&traj);
    let title = map_title(&args.map, &map);
    let scene = Scene {
        map: &map,
        window,
        robot: &robot,
        guide: &guide_pts,
        trajectory: &traj_pts,
        backwards: &backwards,
        start: marks.map(|m| m.0),
        goal: marks.map(|m| m.1),
        title: &title,
    };
    let img = render_scene(&scene, scale).image;
    let png = img.to_png()?;
    std::fs::write(&args.out, png).map_err(|e| CliError(format!("{}: {e}", args.out.display())))?;
    println!("wrote {} ({}x{} pixels)", args.out.display(), img.width, img.height);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_files_accept_spaces_commas_comments_and_headings() {
        let p = parse_path_file("# x y\n1 2\n3,4.5, 0.5\n\n").unwrap();
        assert_eq!(
            p,
            vec![
                PathPoint { at: Point2::new(1.0, 2.0), yaw: None },
                PathPoint { at: Point2::new(3.0, 4.5), yaw: Some(0.5) }
            ]
        );
        for (bad, what) in [("1 x\n", "line 1"), ("0 0\n1\n", "line 2"), ("1 2 3 4\n", "line 1"), ("1 inf\n", "line 1")]
        {
            let e = parse_path_file(bad).unwrap_err().0;
            assert!(e.contains(what) && e.contains("`X Y` or `X Y YAW`"), "{bad:?}: {e}");
        }
        assert!(parse_path_file("# nothing\n\n").unwrap_err().0.contains("no points"));
    }

    #[test]
    fn headings_come_from_the_yaw_column_or_the_end_segments() {
        let p = parse_path_file("0 0\n0 0\n1 1\n2 1\n2 1\n").unwrap();
        let (s, g) = end_marks(&p).unwrap();
        assert!((s.yaw.unwrap() - std::f64::consts::FRAC_PI_4).abs() < 1e-12, "repeated points skipped");
        assert_eq!(g.yaw, Some(0.0));
        let p = parse_path_file("0 0 3.0\n1 1\n2 1 -1.5\n").unwrap();
        let (s, g) = end_marks(&p).unwrap();
        assert_eq!((s.yaw, g.yaw), (Some(3.0), Some(-1.5)));
        let (s, g) = end_marks(&parse_path_file("5 5\n5 5\n").unwrap()).unwrap();
        assert_eq!((s.yaw, g.yaw, s.at), (None, None, Point2::new(5.0, 5.0)));
        assert_eq!(end_marks(&[]), None);
    }
}
