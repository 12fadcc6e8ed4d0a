//! The picture of a plan: map, footprint reach, guide, trajectory, start and goal, legend and
//! scale bar, laid out as
//!
//! ```text
//!  title (map name, metres per cell)
//!  ┌──────────────────────────┐
//!  │ the map, north up,        │  `scale` pixels per cell
//!  │ with paths and marks      │
//!  └──────────────────────────┘
//!  legend: obstacle, unknown, footprint reach, cost, guide, trajectory, nearest obstacle,
//!          start, goal, scale bar
//! ```
//!
//! Text is the 8 x 8 bitmap font at [`TEXT_SIZE`] times (16 pixels high), lines are several
//! pixels thick whatever the map's scale, so the picture reads at the size it is written.

use super::draw::{self, Px};
use super::{crop_map, Image, Rgb};
use crate::clearance::distance::{DistanceField, MAX_DISTANCE_CAP};
use crate::geometry::{Point2, Pose2};
use crate::map::{MapInfo, OccupancyMap, Traversability};
use crate::planner::PlannerConfig;

/// Free cell.
pub const FREE: Rgb = [255, 255, 255];
/// Occupied cell (occupancy at or above the threshold).
pub const OCCUPIED: Rgb = [40, 40, 40];
/// Unknown cell (-1).
pub const UNKNOWN: Rgb = [176, 176, 190];
/// Free cell within the footprint's reach of an obstacle (where the robot's centre may not go).
pub const REACH: Rgb = [255, 216, 160];
/// A free cell of traversal cost 1 (cheaper cells are blended towards [`FREE`]; see
/// [`crate::costs`]).
pub const COSTLY: Rgb = [150, 200, 250];
/// The any-angle guide (dashed).
pub const GUIDE: Rgb = [30, 100, 230];
/// The trajectory.
pub const TRAJECTORY: Rgb = [210, 20, 30];
/// The stretches of the trajectory driven backwards, over [`TRAJECTORY`].
pub const BACKWARDS: Rgb = [0, 150, 140];
/// The start pose's footprint and arrow.
pub const START: Rgb = [0, 150, 60];
/// The goal pose's footprint and arrow.
pub const GOAL: Rgb = [150, 40, 200];
/// Where the trajectory comes nearest an obstacle: a ring, and a line to the obstacle.
pub const NEAREST: Rgb = [235, 110, 0];
/// Text and the scale bar.
pub const INK: Rgb = [0, 0, 0];
/// Background outside the map.
pub const PAPER: Rgb = [255, 255, 255];
const FRAME: Rgb = [120, 120, 120];

/// Pixels around the map and between the picture's parts.
pub const MARGIN: u32 = 12;
/// Scale of the 8 x 8 font: text is `8 * TEXT_SIZE` pixels high.
pub const TEXT_SIZE: u32 = 2;
/// Height of the title band above the map (pixels; 0 without a title).
pub const TITLE_HEIGHT: u32 = 8 * TEXT_SIZE + 2 * MARGIN;
/// Narrowest picture (pixels): room for the legend beside a small map.
pub const MIN_WIDTH: u32 = 560;
/// Width of the trajectory line (pixels).
pub const TRAJECTORY_WIDTH: f64 = 5.0;
/// Width of the guide line (pixels).
pub const GUIDE_WIDTH: f64 = 3.0;
const GUIDE_DASH: (f64, f64) = (12.0, 7.0);
const ROW_HEIGHT: u32 = 8 * TEXT_SIZE + 12;
const SWATCH: u32 = 36;

/// A start or goal mark: where (metres, map frame) and, when known, the heading (radians, map
/// frame; `None` draws the footprint without an arrow).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mark {
    /// Position (m, map frame).
    pub at: Point2,
    /// Heading (rad, map frame), if known.
    pub yaw: Option<f64>,
}

impl From<Pose2> for Mark {
    fn from(p: Pose2) -> Self {
        Mark { at: p.point(), yaw: Some(p.yaw) }
    }
}

/// Everything a picture shows. Coordinates are metres in the map frame.
#[derive(Debug, Clone, Copy)]
pub struct Scene<'a> {
    /// The whole map (the footprint reach is computed on it before cropping, so the crop's edge
    /// is not taken for an obstacle).
    pub map: &'a OccupancyMap,
    /// Cell window `(x0, y0, x1, y1)` (inclusive-exclusive, e.g. from [`super::known_window`])
    /// to draw; `None` draws the whole map. Clipped to the map.
    pub window: Option<(usize, usize, usize, usize)>,
    /// The robot: `robot_radius` and `robot_side` (m) give the footprint drawn at start and
    /// goal, [`PlannerConfig::mask_radius`] the reach, `occupied_threshold` and `allow_unknown`
    /// which cells are obstacles.
    pub robot: &'a PlannerConfig,
    /// The any-angle guide (m), drawn dashed under the trajectory; empty for none.
    pub guide: &'a [Point2],
    /// The trajectory (m); empty for none.
    pub trajectory: &'a [Point2],
    /// Per step of `trajectory` (point `i` to `i + 1`), whether it is driven backwards (drawn
    /// in [`BACKWARDS`], with its length in the legend); empty: every step forwards. See
    /// [`steps_driven_backwards`].
    pub backwards: &'a [bool],
    /// The start mark.
    pub start: Option<Mark>,
    /// The goal mark.
    pub goal: Option<Mark>,
    /// A line of text above the map (e.g. the map file's name); empty for no title band.
    pub title: &'a str,
}

/// A rendered scene and where its map lies in the image.
#[derive(Debug, Clone)]
pub struct Picture {
    /// The image.
    pub image: Image,
    /// Pixels per cell.
    pub scale: u32,
    /// The drawn (cropped) map's geometry.
    pub info: MapInfo,
    /// Pixel column of the map's left edge.
    pub map_left: u32,
    /// Pixel row of the map's top edge.
    pub map_top: u32,
    /// Length of the scale bar (m) and in pixels.
    pub scale_bar: (f64, u32),
}

impl Picture {
    /// The continuous pixel position (see [`draw`]) of world point `p` (m, map frame).
    pub fn to_px(&self, p: Point2) -> Px {
        let c = self.info.world_to_cell(p);
        let s = f64::from(self.scale);
        (f64::from(self.map_left) + c.x * s, f64::from(self.map_top) + (self.info.height as f64 - c.y) * s)
    }
}

/// The scale bar's length (m): the longest of 1, 2 and 5 times a power of ten (0.001 m to
/// 10 km) whose pixel length `metres / resolution * scale` is at most `max_px`; the shortest
/// when none fits. `resolution` is metres per cell, `scale` pixels per cell.
pub fn scale_bar_metres(resolution: f64, scale: u32, max_px: f64) -> f64 {
    let px_per_m = f64::from(scale) / resolution;
    let mut best = 0.001;
    for e in -3..=4 {
        for m in [1.0, 2.0, 5.0] {
            let len = m * 10f64.powi(e);
            if len * px_per_m <= max_px {
                best = len;
            }
        }
    }
    best
}

/// The scale bar's pixel length: `metres / resolution * scale`, rounded (at least 1).
pub fn scale_bar_px(metres: f64, resolution: f64, scale: u32) -> u32 {
    (metres / resolution * f64::from(scale)).round().clamp(1.0, 1e6) as u32
}

/// Draws a scale bar of `len` pixels from column `x`, centred on row `y`: a bar 6 pixels high
/// spanning exactly columns `x..x + len`, with end ticks 14 pixels high.
pub fn draw_scale_bar(img: &mut Image, x: i64, y: i64, len: u32) {
    let len = i64::from(len);
    draw::fill_rect(img, x, y - 3, len, 6, INK);
    draw::fill_rect(img, x, y - 7, 2.min(len), 14, INK);
    draw::fill_rect(img, x + len - 2.min(len), y - 7, 2.min(len), 14, INK);
}

/// Formats a length in metres for a label: `0.5 m`, `2 m`, `4.37 m`.
fn metres(v: f64) -> String {
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s} m")
}

fn length(path: &[Point2]) -> f64 {
    path.windows(2).map(|w| w[0].distance(w[1])).sum()
}

/// [`Scene::backwards`] of a path of poses (the vehicle's headings, as `/plan` carries them): a
/// step is backwards when it leaves its first pose against that pose's heading
/// ([`crate::geometry::is_reversing_step`]).
pub fn steps_driven_backwards(poses: &[crate::geometry::Pose2]) -> Vec<bool> {
    poses.windows(2).map(|w| crate::geometry::is_reversing_step(w[0], w[1].point())).collect()
}

/// The runs of consecutive backwards steps of `path` (`backwards` as [`Scene::backwards`]), each
/// as its points.
fn backwards_runs<'p>(path: &'p [Point2], backwards: &[bool]) -> Vec<&'p [Point2]> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < backwards.len().min(path.len().saturating_sub(1)) {
        if backwards[i] {
            let start = i;
            while i < backwards.len() && i + 1 < path.len() && backwards[i] {
                i += 1;
            }
            runs.push(&path[start..=i]);
        } else {
            i += 1;
        }
    }
    runs
}

/// Free cells (row-major) within `radius` cells of a cell blocked under `rule`, by the rule the
/// planner's vehicle mask uses (a circle fits at a cell when its squared obstacle distance
/// exceeds `floor(radius²)`; the map's border counts as blocked). Radii beyond the distance
/// transform's cap (127 cells) tint only the cells within the cap.
fn reach_cells(map: &OccupancyMap, rule: Traversability, radius: f64) -> Vec<bool> {
    let blocked: Vec<bool> = map.data.iter().map(|&v| rule.is_blocked(v)).collect();
    if !(radius.is_finite() && radius >= 1.0) {
        // No cell centre other than the obstacle's own lies within less than one cell.
        return vec![false; blocked.len()];
    }
    let cap = (radius.floor() + 1.0).min(f64::from(MAX_DISTANCE_CAP)) as u16;
    let limit = ((radius * radius).floor() as u32).min(u32::from(cap) * u32::from(cap) - 1);
    let field = DistanceField::new(map.info.width, map.info.height, &blocked, cap);
    field.values().iter().zip(&blocked).map(|(&d, &b)| !b && u32::from(d) <= limit).collect()
}

enum Swatch {
    Cell(Rgb),
    Line(Rgb, f64, bool),
    Mark(Rgb),
    ScaleBar(u32),
}

struct Item {
    swatch: Swatch,
    label: String,
}

impl Item {
    fn swatch_width(&self) -> u32 {
        match self.swatch {
            Swatch::ScaleBar(px) => px,
            _ => SWATCH,
        }
    }
    fn width(&self) -> u32 {
        self.swatch_width() + 8 + draw::text_width(&self.label, TEXT_SIZE)
    }
}

/// `a` moved towards `b` by `t` in `0..=1`.
fn blend(a: Rgb, b: Rgb, t: f64) -> Rgb {
    let t = t.clamp(0.0, 1.0);
    std::array::from_fn(|i| (f64::from(a[i]) + t * (f64::from(b[i]) - f64::from(a[i]))).round() as u8)
}

/// Positions `(x, row)` of legend items flowing left to right in rows no wider than `width`.
fn flow(items: &[Item], width: u32) -> Vec<(u32, u32)> {
    let (mut x, mut row) = (MARGIN, 0);
    items
        .iter()
        .map(|it| {
            if x > MARGIN && x + it.width() + MARGIN > width {
                x = MARGIN;
                row += 1;
            }
            let at = (x, row);
            x += it.width() + 2 * MARGIN;
            at
        })
        .collect()
}

/// Draws `scene` at `scale` pixels per cell (at least 1) and returns the picture (see the
/// module documentation for the layout). Never fails: points off the map or not finite are
/// clipped, a window beyond the map is clipped to it.
pub fn render_scene(scene: &Scene, scale: u32) -> Picture {
    let scale = scale.max(1);
    let full = scene.map;
    let (fw, fh) = (full.info.width, full.info.height);
    let rule = scene.robot.traversability();
    let res = full.info.resolution;
    let reach_radius = scene.robot.mask_radius();
    let reach_full = reach_cells(full, rule, reach_radius / res);
    // The traversal costs the planner prices (none at cost_penalty 0).
    let costs = scene.robot.cost_rule(res).map(|rule| crate::costs::CostField::of_map(full, rule));
    let (x0, y0, x1, y1) = match scene.window {
        Some((x0, y0, x1, y1)) => {
            let (x1, y1) = (x1.min(fw), y1.min(fh));
            (x0.min(x1), y0.min(y1), x1, y1)
        }
        None => (0, 0, fw, fh),
    };
    let map = if (x0, y0, x1, y1) == (0, 0, fw, fh) { full.clone() } else { crop_map(full, (x0, y0, x1, y1)) };
    let (w, h) = (map.info.width as u32, map.info.height as u32);

    // Legend items, then the layout.
    let mut items = vec![Item { swatch: Swatch::Cell(OCCUPIED), label: "obstacle".into() }];
    if map.data.contains(&-1) {
        let verdict = if rule.allow_unknown { "unknown (drivable)" } else { "unknown (obstacle)" };
        items.push(Item { swatch: Swatch::Cell(UNKNOWN), label: verdict.into() });
    }
    let reach_label = if scene.robot.footprint.is_some() {
        format!("footprint reach ({}, inscribed in the polygon)", metres(reach_radius))
    } else if scene.robot.robot_side > 0.0 {
        format!("footprint reach ({}, square {})", metres(reach_radius), metres(scene.robot.robot_side))
    } else {
        format!("footprint reach (radius {})", metres(reach_radius))
    };
    items.push(Item { swatch: Swatch::Cell(REACH), label: reach_label });
    if costs.is_some() {
        let label = format!(
            "cost (penalty {}, clearance {})",
            scene.robot.cost_penalty,
            metres(scene.robot.preferred_clearance)
        );
        items.push(Item { swatch: Swatch::Cell(blend(FREE, COSTLY, 0.6)), label });
    }
    if !scene.guide.is_empty() {
        items.push(Item {
            swatch: Swatch::Line(GUIDE, GUIDE_WIDTH, true),
            label: format!("any-angle guide {}", metres(length(scene.guide))),
        });
    }
    if !scene.trajectory.is_empty() {
        items.push(Item {
            swatch: Swatch::Line(TRAJECTORY, TRAJECTORY_WIDTH, false),
            label: format!("trajectory {}", metres(length(scene.trajectory))),
        });
        let reversed: f64 = backwards_runs(scene.trajectory, scene.backwards).iter().map(|r| length(r)).sum();
        if reversed > 0.0 {
            items.push(Item {
                swatch: Swatch::Line(BACKWARDS, TRAJECTORY_WIDTH, false),
                label: format!("driven backwards {}", metres(reversed)),
            });
        }
    }
    // Measured on the whole map, so an obstacle beyond a cropped window still counts.
    let nearest = super::nearest::nearest_obstacle(full, rule, scene.trajectory);
    if let Some(n) = nearest {
        let label = format!("nearest obstacle {:.3} m", n.distance);
        items.push(Item { swatch: Swatch::Line(NEAREST, 3.0, false), label });
    }
    if scene.start.is_some() {
        items.push(Item { swatch: Swatch::Mark(START), label: "start".into() });
    }
    if scene.goal.is_some() {
        items.push(Item { swatch: Swatch::Mark(GOAL), label: "goal".into() });
    }
    let bar_m = scale_bar_metres(res, scale, (f64::from(w * scale) / 3.0).clamp(60.0, 240.0));
    let bar_px = scale_bar_px(bar_m, res, scale);
    items.push(Item { swatch: Swatch::ScaleBar(bar_px), label: metres(bar_m) });

    let widest_item = items.iter().map(Item::width).max().unwrap_or(0);
    let title_w = draw::text_width(scene.title, TEXT_SIZE);
    let width = (w * scale + 2 * MARGIN).max(MIN_WIDTH).max(widest_item.max(title_w) + 2 * MARGIN);
    let places = flow(&items, width);
    let rows = places.last().map_or(0, |p| p.1 + 1);
    let map_top = if scene.title.is_empty() { MARGIN } else { TITLE_HEIGHT };
    let map_left = MARGIN;
    let legend_top = map_top + h * scale + MARGIN;
    let height = legend_top + rows * ROW_HEIGHT + MARGIN;
    let mut img = Image::new(width, height, PAPER);

    // Title.
    draw::text(&mut img, i64::from(MARGIN), i64::from(MARGIN), scene.title, TEXT_SIZE, INK);

    // Cells, with the footprint reach tinted.
    let frame = (i64::from(map_left) - 1, i64::from(map_top) - 1);
    draw::fill_rect(&mut img, frame.0, frame.1, i64::from(w * scale) + 2, i64::from(h * scale) + 2, FRAME);
    for cy in 0..h as usize {
        for cx in 0..w as usize {
            let v = map.data[cy * w as usize + cx];
            let c = match v {
                -1 => UNKNOWN,
                v if rule.is_blocked(v) => OCCUPIED,
                _ if reach_full[(cy + y0) * fw + cx + x0] => REACH,
                _ if costs.as_ref().is_some_and(|f| f.cost((cx + x0) as i64, (cy + y0) as i64) > 0.0) => {
                    let c = costs.as_ref().map_or(0.0, |f| f.cost((cx + x0) as i64, (cy + y0) as i64));
                    blend(FREE, COSTLY, c)
                }
                v if (0..=100).contains(&v) => {
                    let g = 255 - (v as u32 * 155 / 100) as u8;
                    [g, g, g]
                }
                _ => [255, 0, 255],
            };
            let top = i64::from(map_top + (h - 1 - cy as u32) * scale);
            let left = i64::from(map_left + cx as u32 * scale);
            draw::fill_rect(&mut img, left, top, i64::from(scale), i64::from(scale), c);
        }
    }

    let mut pic = Picture { image: img, scale, info: map.info.clone(), map_left, map_top, scale_bar: (bar_m, bar_px) };
    let to_px = |p: Point2| {
        let c = map.info.world_to_cell(p);
        (f64::from(map_left) + c.x * f64::from(scale), f64::from(map_top) + (f64::from(h) - c.y) * f64::from(scale))
    };
    let img = &mut pic.image;

    // Paths: the guide dashed, the trajectory on top.
    let guide: Vec<Px> = scene.guide.iter().map(|&p| to_px(p)).collect();
    draw::polyline(img, &guide, GUIDE_WIDTH, GUIDE, Some(GUIDE_DASH));
    let traj: Vec<Px> = scene.trajectory.iter().map(|&p| to_px(p)).collect();
    draw::polyline(img, &traj, TRAJECTORY_WIDTH, TRAJECTORY, None);
    for run in backwards_runs(scene.trajectory, scene.backwards) {
        let run: Vec<Px> = run.iter().map(|&p| to_px(p)).collect();
        draw::polyline(img, &run, TRAJECTORY_WIDTH, BACKWARDS, None);
    }
    if let Some(n) = nearest {
        let (at, obstacle) = (to_px(n.at), to_px(n.obstacle));
        draw::polyline(img, &[at, obstacle], 3.0, NEAREST, None);
        draw::ring(img, at, 7.0, 2.5, NEAREST);
    }

    // Start and goal: footprint (filled lightly, outlined) and heading arrow.
    let px_per_m = f64::from(scale) / res;
    let robot = scene.robot;
    for (mark, colour) in [(scene.goal, GOAL), (scene.start, START)] {
        let Some(mark) = mark else { continue };
        let centre = to_px(mark.at);
        // Headings on the picture are relative to the map's axes.
        let yaw = mark.yaw.map(|y| y - map.info.origin.yaw);
        let size = if let Ok(Some(polygon)) = robot.padded_footprint() {
            // Vehicle frame to pixels: x along the heading, y to its left (pixel rows grow
            // downwards, so left of (ux, uy) is (uy, -ux)).
            let (ux, uy) = draw::heading_vector(yaw.unwrap_or(0.0));
            let mut corners: Vec<Px> = polygon
                .vertices()
                .iter()
                .map(|v| (centre.0 + px_per_m * (v.x * ux + v.y * uy), centre.1 + px_per_m * (v.x * uy - v.y * ux)))
                .collect();
            corners.push(corners[0]);
            draw::fill_polygon(img, &corners, colour, 0.3);
            draw::polyline(img, &corners, 2.0, colour, None);
            polygon.circumradius() * px_per_m
        } else if robot.robot_side > 0.0 {
            let half = robot.robot_side / 2.0 * px_per_m;
            let (ux, uy) = draw::heading_vector(yaw.unwrap_or(0.0));
            let (nx, ny) = (-uy, ux);
            let corners: Vec<Px> = [(1.0, 1.0), (1.0, -1.0), (-1.0, -1.0), (-1.0, 1.0), (1.0, 1.0)]
                .iter()
                .map(|&(a, b)| (centre.0 + half * (a * ux + b * nx), centre.1 + half * (a * uy + b * ny)))
                .collect();
            draw::fill_polygon(img, &corners, colour, 0.3);
            draw::polyline(img, &corners, 2.0, colour, None);
            half * std::f64::consts::SQRT_2
        } else {
            let r = robot.robot_radius * px_per_m;
            draw::blend_disc(img, centre, r, colour, 0.3);
            draw::ring(img, centre, r, 2.0, colour);
            r
        };
        draw::blend_disc(img, centre, 3.5, colour, 1.0);
        if let Some(yaw) = yaw {
            draw::arrow(img, centre, yaw, (2.5 * size).max(40.0), 4.0, colour);
        }
    }

    // Legend.
    for (it, &(x, row)) in items.iter().zip(&places) {
        let top = i64::from(legend_top + row * ROW_HEIGHT);
        let mid = top + i64::from(draw::text_height(TEXT_SIZE)) / 2;
        let (x, sw) = (i64::from(x), i64::from(it.swatch_width()));
        match it.swatch {
            Swatch::Cell(c) => {
                draw::fill_rect(img, x, top, sw, 16, FRAME);
                draw::fill_rect(img, x + 1, top + 1, sw - 2, 14, c);
            }
            Swatch::Line(c, width, dashed) => {
                let (a, b) = ((x as f64 + 2.0, mid as f64), ((x + sw) as f64 - 2.0, mid as f64));
                draw::polyline(img, &[a, b], width, c, dashed.then_some((10.0, 6.0)));
            }
            Swatch::Mark(c) => {
                let centre = (x as f64 + 8.0, mid as f64);
                draw::blend_disc(img, centre, 7.0, c, 0.3);
                draw::ring(img, centre, 7.0, 2.0, c);
                draw::arrow(img, centre, 0.0, 26.0, 3.0, c);
            }
            Swatch::ScaleBar(px) => draw_scale_bar(img, x, mid, px),
        }
        draw::text(img, x + sw + 8, top, &it.label, TEXT_SIZE, INK);
    }
    pic
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Pose2;

    /// `w` x `h` cells of `res` m, origin (1, 1); a wall on column `w - 3` from row 2 up.
    fn map(w: usize, h: usize, res: f64) -> OccupancyMap {
        let info =
            MapInfo { width: w, height: h, resolution: res, origin: Pose2::new(1.0, 1.0, 0.0), frame_id: "map".into() };
        let mut data = vec![0i8; w * h];
        for y in 2..h {
            data[y * w + w - 3] = 100;
        }
        data[0] = -1;
        OccupancyMap::new(info, data, 1 << 20).unwrap()
    }

    fn robot(radius: f64) -> PlannerConfig {
        PlannerConfig { robot_radius: radius, ..PlannerConfig::default() }
    }

    /// A scene of the map alone: no paths, marks or title.
    fn bare<'a>(map: &'a OccupancyMap, robot: &'a PlannerConfig) -> Scene<'a> {
        Scene {
            map,
            window: None,
            robot,
            guide: &[],
            trajectory: &[],
            backwards: &[],
            start: None,
            goal: None,
            title: "",
        }
    }

    fn count(img: &Image, c: Rgb) -> usize {
        img.rgb.chunks(3).filter(|p| *p == c).count()
    }

    #[test]
    fn cells_land_where_rviz_shows_them() {
        let m = map(20, 10, 0.5);
        // No cost shading: free cells are white.
        let r = PlannerConfig { cost_penalty: 0.0, ..robot(0.0) };
        let scene = bare(&m, &r);
        let pic = render_scene(&scene, 10);
        let (l, t) = (pic.map_left, pic.map_top);
        assert_eq!(pic.image.width, MIN_WIDTH.max(200 + 2 * MARGIN));
        assert_eq!(pic.image.pixel(l + 175, t + 5), Some(OCCUPIED), "column 17, top row: the wall");
        assert_eq!(pic.image.pixel(l + 5, t + 95), Some(UNKNOWN), "bottom left cell is unknown");
        assert_eq!(pic.image.pixel(l + 55, t + 55), Some(FREE));
        assert_eq!(pic.to_px(Point2::new(1.0, 1.0)), (f64::from(l), f64::from(t + 100)));
    }

    #[test]
    fn the_footprint_reach_is_tinted_around_obstacles() {
        // Radius 1.2 cells: cells at distance 1 from the wall (and the border) are within reach.
        let m = map(20, 10, 0.5);
        let r = robot(0.6);
        let scene = bare(&m, &r);
        let pic = render_scene(&scene, 10);
        let at = |cx: u32, cy: u32| pic.image.pixel(pic.map_left + cx * 10 + 5, pic.map_top + (9 - cy) * 10 + 5);
        assert_eq!(at(16, 5), Some(REACH), "beside the wall");
        assert_eq!(at(15, 5), Some(FREE), "two cells from the wall");
        assert_eq!(at(8, 0), Some(REACH), "on the border row");
        assert_eq!(at(8, 4), Some(FREE));
        // A square of side s reaches as far as its circumscribed circle (the planner's mask).
        // Side 1.8 m: circumscribed radius 1.27 m = 2.55 cells reaches two cells from the wall
        // (the inscribed 0.9 m = 1.8 cells would not).
        let sq = PlannerConfig { robot_side: 1.8, ..robot(0.0) };
        let scene = Scene { robot: &sq, ..scene };
        let pic = render_scene(&scene, 10);
        let at = |cx: u32, cy: u32| pic.image.pixel(pic.map_left + cx * 10 + 5, pic.map_top + (9 - cy) * 10 + 5);
        assert_eq!(at(15, 5), Some(REACH));
        assert_eq!(at(14, 5), Some(FREE), "three cells from the wall");
    }

    #[test]
    fn the_scale_bar_has_its_length_in_pixels() {
        assert_eq!(scale_bar_metres(0.05, 4, 240.0), 2.0); // 80 px per metre
        assert_eq!(scale_bar_metres(0.05, 10, 240.0), 1.0); // 200 px per metre
        assert_eq!(scale_bar_metres(1.0, 1, 240.0), 200.0);
        assert_eq!(scale_bar_metres(0.05, 4, 10.0), 0.1);
        for (res, scale) in [(0.05, 4), (0.05, 7), (0.1, 3), (1.0, 2)] {
            let m = map(120, 60, res);
            let r = robot(0.0);
            let scene = bare(&m, &r);
            let pic = render_scene(&scene, scale);
            let (bar_m, bar_px) = pic.scale_bar;
            assert_eq!(bar_px, (bar_m / res * f64::from(scale)).round() as u32);
            // A round length: 1, 2 or 5 times a power of ten.
            let mant = bar_m / 10f64.powf(bar_m.log10().floor());
            assert!([1.0, 2.0, 5.0].iter().any(|v| (mant - v).abs() < 1e-9), "{bar_m}");
            // Drawn: the legend's longest run of ink in one row is the bar.
            let img = &pic.image;
            let top = pic.map_top + 60 * scale + MARGIN;
            let longest = (top..img.height)
                .map(|y| {
                    let (mut best, mut run) = (0, 0);
                    for x in 0..img.width {
                        run = if img.pixel(x, y) == Some(INK) { run + 1 } else { 0 };
                        best = best.max(run);
                    }
                    best
                })
                .max()
                .unwrap();
            assert_eq!(longest, bar_px, "res {res} scale {scale}");
        }
        // Drawn alone: exactly `len` columns on the middle row.
        let mut img = Image::new(100, 20, PAPER);
        draw_scale_bar(&mut img, 10, 10, 37);
        let row: Vec<u32> = (0..100).filter(|&x| img.pixel(x, 10) == Some(INK)).collect();
        assert_eq!(row, (10..47).collect::<Vec<_>>());
    }

    #[test]
    fn paths_marks_and_legend_are_drawn() {
        let m = map(40, 20, 0.25);
        let r = robot(0.3);
        let guide = [Point2::new(2.0, 2.0), Point2::new(5.0, 5.0), Point2::new(8.0, 5.0)];
        let traj = [Point2::new(2.0, 2.0), Point2::new(3.0, 4.0), Point2::new(5.5, 5.2), Point2::new(8.0, 5.0)];
        let scene = Scene {
            map: &m,
            window: None,
            robot: &r,
            guide: &guide,
            trajectory: &traj,
            backwards: &[],
            start: Some(Mark { at: traj[0], yaw: Some(1.0) }),
            goal: Some(Mark::from(Pose2::new(8.0, 5.0, 0.0))),
            title: "test map",
        };
        let pic = render_scene(&scene, 8);
        let img = &pic.image;
        assert_eq!(pic.map_top, TITLE_HEIGHT);
        // Mid-segment of the trajectory, away from the marks.
        let mid = pic.to_px(Point2::new(4.25, 4.6));
        assert_eq!(img.pixel(mid.0 as u32, mid.1 as u32), Some(TRAJECTORY));
        assert!(count(img, GUIDE) > 100, "the guide shows where it leaves the trajectory");
        assert!(count(img, START) > 50 && count(img, GOAL) > 50);
        // The start arrow points along yaw 1 (north-east-ish, up in the picture).
        let s = pic.to_px(traj[0]);
        let (ux, uy) = draw::heading_vector(1.0);
        let probe = (s.0 + ux * 26.0, s.1 + uy * 26.0);
        assert_eq!(img.pixel(probe.0 as u32, probe.1 as u32), Some(START));
        // Title and legend text: ink above the map and below it.
        let ink_rows = |ys: std::ops::Range<u32>| {
            ys.flat_map(|y| (0..img.width).map(move |x| (x, y))).filter(|&(x, y)| img.pixel(x, y) == Some(INK)).count()
        };
        assert!(ink_rows(0..pic.map_top) > 100, "title");
        let legend_top = pic.map_top + 20 * 8 + MARGIN;
        assert!(ink_rows(legend_top..img.height) > 500, "legend labels");
        // The word "trajectory" is written where the legend puts it: its glyphs match the font.
        let legend = legend_items_text(img, legend_top, "trajectory");
        assert!(legend.contains("trajectory"), "{legend}");
        // The trajectory comes nearest the map's upper edge at its last point, (8, 5) m: cell
        // (28, 16), whose centre lies 4 cells (1 m) from the centres of the cells beyond row 19
        // (the cells beyond the map count as obstacles). The legend says so; the mark is drawn.
        let legend = legend_items_text(img, legend_top, "nearest obstacle");
        assert!(legend.contains("nearest obstacle 1.000 m"), "{legend}");
        assert!(count(img, NEAREST) > 50, "the nearest obstacle's mark");
        assert_eq!(count(img, BACKWARDS), 0, "nothing driven backwards");

        // The last step leaves a pose facing west eastwards: driven backwards, drawn and named.
        let poses = [
            Pose2::new(2.0, 2.0, 2f64.atan2(1.0)),
            Pose2::new(3.0, 4.0, 1.2f64.atan2(2.5)),
            Pose2::new(5.5, 5.2, std::f64::consts::PI),
            Pose2::new(8.0, 5.0, std::f64::consts::PI),
        ];
        let backwards = steps_driven_backwards(&poses);
        assert_eq!(backwards, [false, false, true]);
        let pic = render_scene(&Scene { backwards: &backwards, ..scene }, 8);
        let img = &pic.image;
        let mid = pic.to_px(Point2::new(6.75, 5.1));
        assert_eq!(img.pixel(mid.0 as u32, mid.1 as u32), Some(BACKWARDS));
        assert_eq!(
            img.pixel(pic.to_px(Point2::new(4.25, 4.6)).0 as u32, pic.to_px(Point2::new(4.25, 4.6)).1 as u32),
            Some(TRAJECTORY)
        );
        // 2.508 m from (5.5, 5.2) to (8, 5).
        let legend = legend_items_text(img, legend_top, "driven backwards");
        assert!(legend.contains("driven backwards 2.51 m"), "{legend}");
    }

    /// Reads the legend back: every 16-pixel glyph cell whose ink matches a font glyph.
    fn legend_items_text(img: &Image, top: u32, word: &str) -> String {
        for y in top..img.height.saturating_sub(16) {
            for x0 in 0..16 {
                let mut line = String::new();
                let mut x = x0;
                while x + 16 <= img.width {
                    let ch = (32u8..127).find(|&c| {
                        let g = font8x8::legacy::BASIC_LEGACY[c as usize];
                        (0..8).all(|r| {
                            (0..8).all(|k| {
                                (g[r] & (1 << k) != 0) == (img.pixel(x + 2 * k, y + 2 * r as u32) == Some(INK))
                            })
                        })
                    });
                    line.push(ch.map_or('~', char::from));
                    x += 16;
                }
                if line.contains(word) {
                    return line;
                }
            }
        }
        "(not found)".into()
    }

    #[test]
    fn windows_and_odd_input_do_not_panic() {
        let m = map(20, 10, 0.5);
        let r = robot(0.2);
        let bad = [Point2::new(f64::NAN, 1.0), Point2::new(1e12, -1e12), Point2::new(2.0, 2.0)];
        let scene = Scene {
            map: &m,
            window: Some((15, 8, 400, 400)),
            robot: &r,
            guide: &bad,
            trajectory: &bad,
            // Longer than the trajectory's steps: the extra flags are ignored.
            backwards: &[true, true, true, true],
            start: Some(Mark { at: bad[0], yaw: Some(f64::INFINITY) }),
            goal: Some(Mark { at: bad[1], yaw: None }),
            title: "é",
        };
        let pic = render_scene(&scene, 3);
        assert_eq!((pic.info.width, pic.info.height), (5, 2));
        let scene = Scene { window: Some((30, 30, 2, 2)), ..scene };
        let pic = render_scene(&scene, 0);
        assert_eq!((pic.info.width, pic.info.height), (0, 0));
        assert!(pic.image.to_png().is_ok());
    }
}
