//! `blockstar bench-nav`: the turning-radius-legal planners side by side on random start/goal
//! poses of one map (the protocol of Navigation2's planner benchmark: random free poses at least
//! `--min-separation` apart with random headings, every algorithm on the same pairs, one process).

use super::bench_clearance::{ms_since, Stamp};
use super::nav2_cost::{Inflation, Nav2Cost, PathCost};
use super::{CliError, CliResult};
use crate::directional::footprint::Shape;
use crate::directional::refine::full_search;
use crate::directional::{
    verify_trajectory, CollisionMap, Directional, MotionModel, Neighbourhood, RefineError, Vehicle,
};
use crate::geometry::{Point2, Pose2};
use crate::grid::Grid;
use crate::map::DEFAULT_MAX_MAP_CELLS;
use crate::map_io::load_map_file;
use crate::planner::{Budget, PlanStats, Planner, PlannerConfig};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Arguments of `blockstar bench-nav`.
#[derive(Debug, clap::Args)]
pub struct BenchNavArgs {
    /// Map file: a map_server YAML (metres) or a Moving AI `.map` (cells, resolution 1).
    #[arg(long)]
    pub map: PathBuf,
    /// Plan on the map repeated from its origin to `WIDTHxHEIGHT` cells (the last copies cut),
    /// so site-scale figures can be made again from the shared maps: `--tile 6000x6000` on a
    /// 2000 x 2000 map is its 3 x 3 tiling. At most 100 000 000 cells.
    #[arg(long, value_parser = parse_size)]
    pub tile: Option<(usize, usize)>,
    /// Number of start/goal pairs.
    #[arg(long, allow_negative_numbers = true, default_value_t = 100)]
    pub pairs: usize,
    /// Seed of the pair generator.
    #[arg(long, allow_negative_numbers = true, default_value_t = 33)]
    pub seed: u64,
    /// Smallest start-goal distance (map units).
    #[arg(long, allow_negative_numbers = true, default_value_t = 3.0)]
    pub min_separation: f64,
    /// Comma-separated algorithms: pipeline, pipeline-shortest, directional-8, directional-24,
    /// directional-48, each forwards only, or with reversing (Reeds-Shepp) with the suffix `-rs`:
    /// pipeline-rs, directional-24-rs, ... `pipeline` plans with the traversal costs of
    /// `--cost-penalty`, `pipeline-shortest` at cost penalty 0 (the shortest legal path); the
    /// full Directional A* searches price the same costs as `pipeline`. `pipeline-polygon`,
    /// `pipeline-shortest-polygon` (and their `-rs`) plan with the polygon of `--footprint`; with
    /// `-flat` after the pipeline's name (`pipeline-flat`, `pipeline-polygon-flat-rs`) the
    /// cluster graph's corridors are off, every guide searched over the whole map.
    #[arg(long, default_value = "pipeline,directional-24")]
    pub algo: String,
    /// Nav2's footprint string (map units, base_link frame) for the `-polygon` algorithms; the
    /// pairs are then drawn where both the disk of `--robot-radius` and this polygon stand free.
    #[arg(long, allow_hyphen_values = true)]
    pub footprint: Option<String>,
    /// For the `-rs` algorithms: factor (>= 1) on the length driven backwards.
    #[arg(long, allow_negative_numbers = true, default_value_t = 1.0)]
    pub reverse_penalty: f64,
    /// For the `-rs` algorithms: cost (map units, >= 0) per change of gear.
    #[arg(long, allow_negative_numbers = true, default_value_t = 0.0)]
    pub change_penalty: f64,
    /// The `pipeline` algorithms' `cost_penalty` (0..=1000; default the planner's).
    #[arg(long, allow_negative_numbers = true)]
    pub cost_penalty: Option<f64>,
    /// The `pipeline` algorithms' `preferred_clearance` (map units, >= 0; default the planner's).
    #[arg(long, allow_negative_numbers = true)]
    pub preferred_clearance: Option<f64>,
    /// Robot radius (map units).
    #[arg(long, allow_negative_numbers = true, default_value_t = 0.2)]
    pub robot_radius: f64,
    /// Minimum turning radius (map units).
    #[arg(long, allow_negative_numbers = true, default_value_t = 0.5)]
    pub min_turning_radius: f64,
    /// Time budget per plan (s).
    #[arg(long, allow_negative_numbers = true, default_value_t = 5.0)]
    pub max_planning_time: f64,
    /// The inflation radius (map units) of the costmap the paths are measured against, as
    /// Navigation2's benchmark does (its default 0.55 m); the inscribed radius is the robot's.
    #[arg(long, allow_negative_numbers = true, default_value_t = 0.55)]
    pub inflation_radius: f64,
    /// The cost scaling factor of that costmap's inflation (Navigation2's default 3.0).
    #[arg(long, allow_negative_numbers = true, default_value_t = 3.0)]
    pub cost_scaling_factor: f64,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Also print every pair's outcome and stage times (to stderr).
    #[arg(long)]
    pub verbose: bool,
    /// Time each plan on the process's CPU clock instead of the wall clock: on a machine other
    /// processes keep busy, a plan's time is then its own work, not the time it waited for a
    /// core (the stage times and the planning budget stay wall-clock).
    #[arg(long)]
    pub cpu_time: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Method {
    /// The planner, with traversal costs when `costs`, with the polygon of `--footprint` when
    /// `polygon` (else the disk of `--robot-radius`), without the cluster graph's corridors when
    /// `flat` (every guide searched over the whole map).
    Pipeline {
        costs: bool,
        polygon: bool,
        flat: bool,
    },
    Full(Neighbourhood),
}

/// An algorithm of the benchmark: a method and the gears it may use.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Algo {
    method: Method,
    model: MotionModel,
}

impl Algo {
    fn parse(s: &str) -> Result<Self, CliError> {
        let s = s.trim();
        let (base, model) = match s.strip_suffix("-rs") {
            Some(base) => (base, MotionModel::ReedsShepp),
            None => (s, MotionModel::Forward),
        };
        let (base, flat) = match base.strip_suffix("-flat") {
            Some(base) if base.starts_with("pipeline") => (base, true),
            _ => (base, false),
        };
        let (base, polygon) = match base.strip_suffix("-polygon") {
            Some(base) if base.starts_with("pipeline") => (base, true),
            _ => (base, false),
        };
        let method = match base {
            "pipeline" => Method::Pipeline { costs: true, polygon, flat },
            "pipeline-shortest" => Method::Pipeline { costs: false, polygon, flat },
            "directional-8" => Method::Full(Neighbourhood::Directional8),
            "directional-24" => Method::Full(Neighbourhood::Directional24),
            "directional-48" => Method::Full(Neighbourhood::Directional48),
            _ => {
                return Err(CliError(format!(
                    "unknown algorithm {s:?} (expected pipeline, pipeline-shortest, directional-8, directional-24, \
                     directional-48, \
                     each with or without the suffix -rs; a pipeline also with -polygon, then -flat, before it: \
                     pipeline-shortest-polygon-flat-rs)"
                )))
            }
        };
        Ok(Self { method, model })
    }

    /// The pipeline that plans (for a full search: gives its Directional A* context) for it.
    fn engine(self) -> Method {
        match self.method {
            Method::Full(_) => Method::Pipeline { costs: true, polygon: false, flat: false },
            pipeline => pipeline,
        }
    }

    fn name(self) -> String {
        let base = match self.method {
            Method::Pipeline { costs, polygon, flat } => format!(
                "pipeline{}{}{}",
                if costs { "" } else { "-shortest" },
                if polygon { "-polygon" } else { "" },
                if flat { "-flat" } else { "" }
            ),
            Method::Full(n) => n.name().to_string(),
        };
        match self.model {
            MotionModel::Forward => base,
            MotionModel::ReedsShepp => format!("{base}-rs"),
        }
    }
}

/// A planner and a Directional A* context for one motion model, with or without costs, with the
/// disk or the polygon.
struct Engine {
    model: MotionModel,
    method: Method,
    planner: Planner,
    ctx: Option<Directional>,
}

impl Engine {
    /// The planner's map structures in bytes per cell, by component: what its site shares and
    /// what the profile holds of its own (the "bytes per cell by component").
    fn structures_json(&self, cells: f64) -> Option<serde_json::Value> {
        let (site, own) = self.planner.memory()?;
        Some(serde_json::json!({
            "motion_model": self.model.name(),
            "costs": matches!(self.method, Method::Pipeline { costs: true, .. }),
            "polygon": matches!(self.method, Method::Pipeline { polygon: true, .. }),
            "flat": matches!(self.method, Method::Pipeline { flat: true, .. }),
            "shared": super::bytes_per_cell(&site.components(), cells),
            "profile": super::bytes_per_cell(&own.components(), cells),
            "total": (site.total() + own.total()) as f64 / cells,
        }))
    }
}

/// splitmix64: a small, reproducible generator (the pairs must not depend on a crate's version).
struct SplitMix(u64);

impl SplitMix {
    fn next_f64(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Random start/goal poses (cell units) whose footprint fits (by `mask`, the centre mask, and the
/// exact disk test of radius `rho` cells), at least `min_sep` cells apart, with uniform random
/// headings: `n` pairs, the same for the same `seed` on every machine (bench-nav's protocol, also
/// used by the criterion benchmark `benches/pipeline.rs`). Fails when the map has no room for the
/// vehicle or too few poses that far apart.
pub fn random_pairs(
    map: &CollisionMap,
    mask: &Grid,
    rho: f64,
    n: usize,
    seed: u64,
    min_sep: f64,
) -> Result<Vec<(Pose2, Pose2)>, CliError> {
    let mut rng = SplitMix(seed);
    let (w, h) = (map.width() as f64, map.height() as f64);
    let draw = |rng: &mut SplitMix| -> Option<Pose2> {
        for _ in 0..1_000_000 {
            let p = Point2::new(rng.next_f64() * w, rng.next_f64() * h);
            if mask.is_free(p.x as i64, p.y as i64) && map.disk_free(p, rho) {
                let yaw = (rng.next_f64() * 2.0 - 1.0) * std::f64::consts::PI;
                return Some(Pose2::new(p.x, p.y, yaw));
            }
        }
        None
    };
    let mut out = Vec::with_capacity(n);
    let mut starts = 0;
    while out.len() < n {
        starts += 1;
        if starts > 100 * n + 1000 {
            return Err(CliError(format!("could not find {n} pairs of free poses {min_sep:.1} cells apart")));
        }
        let s = draw(&mut rng).ok_or_else(|| CliError("the map has no room for the vehicle".into()))?;
        // A start in a small pocket gets no partner; draw another start then.
        for _ in 0..1000 {
            let g = draw(&mut rng).ok_or_else(|| CliError("the map has no room for the vehicle".into()))?;
            if s.point().distance(g.point()) >= min_sep {
                out.push((s, g));
                break;
            }
        }
    }
    Ok(out)
}

/// Where a disc fits, on a lattice of points a quarter of a cell apart, and the connected
/// regions of those points (4-neighbour). Neighbouring points are one sampling step apart, so the
/// sweep rule's grown disc at both covers the disc moving between them: two points in one region
/// are joined by a path the disc can drive while turning on the spot.
struct DiscRegions {
    cols: usize,
    rows: usize,
    /// Region of each lattice point (from 1; 0 where the disc does not fit).
    label: Vec<u32>,
}

impl DiscRegions {
    const STEP: f64 = 0.25;

    fn point(i: usize, j: usize) -> Point2 {
        Point2::new((i as f64 + 0.5) * Self::STEP, (j as f64 + 0.5) * Self::STEP)
    }

    fn new(map: &CollisionMap, rho: f64) -> Self {
        let (cols, rows) = (map.width() * 4, map.height() * 4);
        let free: Vec<bool> = (0..cols * rows).map(|k| map.disk_free(Self::point(k % cols, k / cols), rho)).collect();
        let mut label = vec![0u32; cols * rows];
        let mut next = 0;
        let mut stack = Vec::new();
        for start in 0..cols * rows {
            if label[start] != 0 || !free[start] {
                continue;
            }
            next += 1;
            label[start] = next;
            stack.push(start);
            while let Some(k) = stack.pop() {
                let (i, j) = (k % cols, k / cols);
                let up = (j + 1 < rows).then(|| k + cols);
                let down = (j > 0).then(|| k - cols);
                let right = (i + 1 < cols).then(|| k + 1);
                let left = (i > 0).then(|| k - 1);
                for n in [up, down, right, left].into_iter().flatten() {
                    if free[n] && label[n] == 0 {
                        label[n] = next;
                        stack.push(n);
                    }
                }
            }
        }
        Self { cols, rows, label }
    }

    /// The regions of the lattice points around `p` (within one step, so the disc fitting at `p`
    /// reaches them under the same rule).
    fn regions_at(&self, p: Point2) -> Vec<u32> {
        let (ci, cj) = ((p.x / Self::STEP - 0.5).floor() as i64, (p.y / Self::STEP - 0.5).floor() as i64);
        let mut out = Vec::new();
        for (i, j) in [(ci, cj), (ci + 1, cj), (ci, cj + 1), (ci + 1, cj + 1)] {
            if i >= 0 && j >= 0 && (i as usize) < self.cols && (j as usize) < self.rows {
                let l = self.label[j as usize * self.cols + i as usize];
                if l != 0 && Self::point(i as usize, j as usize).distance(p) <= Self::STEP {
                    out.push(l);
                }
            }
        }
        out
    }

    /// True when the disc can drive from `a` to `b`.
    fn joined(&self, a: Point2, b: Point2) -> bool {
        let at_b = self.regions_at(b);
        self.regions_at(a).iter().any(|l| at_b.contains(l))
    }
}

/// One line about how the planner solved a pair (for `--verbose`).
pub(super) fn describe(stats: &PlanStats) -> String {
    let stages: Vec<String> = stats.stage_ms.iter().map(|t| format!("{} {:.2}ms", t.label(), t.ms)).collect();
    format!("{} ({}), {} expansions", stats.solved_by_label(), stages.join(", "), stats.expansions)
}

pub(super) fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let k = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[k]
}

/// `WIDTHxHEIGHT` (cells) of `--tile`.
pub(super) fn parse_size(text: &str) -> Result<(usize, usize), String> {
    let (w, h) = text.split_once(['x', 'X']).ok_or_else(|| format!("expected WIDTHxHEIGHT cells, got {text:?}"))?;
    let cells = |s: &str| s.trim().parse::<usize>().map_err(|_| format!("expected WIDTHxHEIGHT cells, got {text:?}"));
    Ok((cells(w)?, cells(h)?))
}

/// Runs `blockstar bench-nav`.
pub fn run(args: &BenchNavArgs) -> CliResult {
    let algos: Vec<Algo> =
        args.algo.split(',').filter(|s| !s.trim().is_empty()).map(Algo::parse).collect::<Result<_, _>>()?;
    if algos.is_empty() {
        return Err(CliError("--algo lists no algorithm".into()));
    }
    // A benchmark of no pairs has no figures (it printed a table of NaN).
    if args.pairs == 0 {
        return Err(CliError("--pairs must be at least 1".into()));
    }
    let u = crate::map_io::map_file_units(&args.map);
    super::non_negative("--robot-radius", args.robot_radius, u)?;
    super::non_negative("--min-separation", args.min_separation, u)?;
    // Radius 0 (turning on the spot) is the pipeline's alone: Directional A* needs a radius.
    let only_pipeline = algos.iter().all(|a| matches!(a.method, Method::Pipeline { .. }));
    let radius_ok = args.min_turning_radius.is_finite()
        && (args.min_turning_radius > 0.0 || (args.min_turning_radius == 0.0 && only_pipeline));
    if !radius_ok {
        let (r, u) = (args.min_turning_radius, u.symbol());
        return Err(CliError(format!(
            "--min-turning-radius must be > 0 {u} (or 0 with --algo pipeline alone), got {r} {u}"
        )));
    }
    super::non_negative("--change-penalty", args.change_penalty, u)?;
    let defaults = PlannerConfig::default();
    let cost_penalty = args.cost_penalty.unwrap_or(defaults.cost_penalty);
    let preferred_clearance = args.preferred_clearance.unwrap_or(defaults.preferred_clearance);
    // A weight, not a length: its own range (the planner's), said in the flag's name.
    let heaviest = crate::planner::MAX_COST_PENALTY;
    if !(0.0..=heaviest).contains(&cost_penalty) {
        let got = crate::geometry::Number(cost_penalty);
        return Err(CliError(format!("--cost-penalty must be in 0..={heaviest}, got {got}")));
    }
    super::non_negative("--preferred-clearance", preferred_clearance, u)?;
    super::non_negative("--inflation-radius", args.inflation_radius, u)?;
    super::non_negative("--cost-scaling-factor", args.cost_scaling_factor, u)?;
    if !(args.max_planning_time.is_finite() && args.max_planning_time > 0.0) {
        return Err(CliError(format!("--max-planning-time must be > 0 s, got {} s", args.max_planning_time)));
    }
    let map = load_map_file(&args.map, "map", DEFAULT_MAX_MAP_CELLS)?;
    let map = match args.tile {
        None => map,
        Some((w, h)) => map.tiled(w, h, DEFAULT_MAX_MAP_CELLS).map_err(|e| CliError(format!("--tile {w}x{h}: {e}")))?,
    };
    let info = map.info.clone();
    let res = info.resolution;
    // The pipeline is the planner itself (clearance mask, regions, Block A*, refinement,
    // verification), so the figures are those a user of the node or `blockstar plan` sees.
    let config = PlannerConfig {
        robot_radius: args.robot_radius,
        min_turning_radius: args.min_turning_radius,
        max_planning_time: args.max_planning_time,
        reverse_penalty: args.reverse_penalty,
        change_penalty: args.change_penalty,
        cost_penalty,
        preferred_clearance,
        ..PlannerConfig::default()
    };
    // The planner's own ranges (one owner: `PlannerConfig::PARAMS`), whatever the algorithms.
    config.validate()?;
    let grid = map.to_grid(config.traversability());
    let fp = args.robot_radius / res;
    let radius = args.min_turning_radius / res;
    let t_prep = Instant::now();
    // One planner and one Directional A* context per motion model the algorithms use.
    let mut engines = Vec::new();
    let polygon = super::footprint_option(args.footprint.as_deref())?;
    let wants_polygon = algos.iter().any(|a| matches!(a.method, Method::Pipeline { polygon: true, .. }));
    if wants_polygon != polygon.is_some() {
        return Err(CliError("the -polygon algorithms and --footprint go together".into()));
    }
    // One engine per pipeline the algorithms name; the full searches take their Directional A*
    // context from the disk's costed engine.
    let mut kinds: Vec<(MotionModel, Method)> = Vec::new();
    for a in &algos {
        let kind = (a.model, a.engine());
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    for (model, method) in kinds {
        let Method::Pipeline { costs, polygon: with_polygon, flat } = method else {
            unreachable!("engines are pipelines")
        };
        let cost_penalty = if costs { config.cost_penalty } else { 0.0 };
        let footprint = if with_polygon { polygon.clone() } else { None };
        let hierarchy_min_distance = if flat { f64::MAX } else { config.hierarchy_min_distance };
        let config =
            PlannerConfig { motion_model: model, cost_penalty, footprint, hierarchy_min_distance, ..config.clone() };
        let mut planner = Planner::new(config.clone())?;
        planner.set_units(u);
        planner.set_map(map.clone())?;
        let ctx = match config.refine_params(res)? {
            Some(params) => Some(Directional::new(params).map_err(|e| CliError(e.to_string()))?),
            None => None,
        };
        if let Some(ctx) = &ctx {
            ctx.edges().fill_all();
        }
        if let Some(d) = planner.map().and_then(|m| m.directional()) {
            d.edges().fill_all();
        }
        engines.push(Engine { model, method, planner, ctx });
    }
    let cmap = CollisionMap::new(&grid);
    // The full searches price the costs the pipeline does (the same field); verification reads
    // the blocked cells alone.
    let mut priced = cmap.clone();
    priced.set_costs(config.cost_rule(res).map(|rule| crate::costs::CostField::of_map(&map, rule)));
    let mask = cmap.centre_mask(fp, 0.0);
    let prep_ms = t_prep.elapsed().as_secs_f64() * 1e3;
    let rho = crate::directional::footprint::sampled_radius(fp) + 1e-6;
    // With a polygon: pairs where it stands free too, drawn from a longer list of the same seed
    // (whose first pairs are those of the disk alone).
    let polygon_cells = polygon.as_ref().map(|p| Shape::Polygon(std::sync::Arc::new(p.scaled(1.0 / res))));
    let drawn = if polygon_cells.is_some() { args.pairs * 20 } else { args.pairs };
    let pairs = random_pairs(&cmap, &mask, rho, drawn, args.seed, args.min_separation / res)?;
    let pairs = match &polygon_cells {
        None => pairs,
        Some(shape) => {
            let fits = |(s, g): &(Pose2, Pose2)| cmap.stands_free(*s, shape) && cmap.stands_free(*g, shape);
            let kept: Vec<(Pose2, Pose2)> = pairs.into_iter().filter(fits).take(args.pairs).collect();
            if kept.len() < args.pairs {
                return Err(CliError(format!(
                    "only {} of {} pairs let the footprint stand at both ends",
                    kept.len(),
                    args.pairs
                )));
            }
            kept
        }
    };
    // Pairs a disc robot that turns on the spot can join, decided here independently of the
    // planner's mask and searches (and finer than its fallback's half-cell lattice): a flood fill
    // over a quarter-cell lattice of the points where the disc fits.
    let disc = DiscRegions::new(&cmap, rho);
    let disc_reachable: Vec<bool> = pairs.iter().map(|(s, g)| disc.joined(s.point(), g.point())).collect();
    let budget = Duration::from_secs_f64(args.max_planning_time);

    struct Row {
        ms: Vec<f64>,
        lengths: Vec<Option<f64>>,
        verified: usize,
        /// Cusps of each solved plan.
        cusps: Vec<usize>,
        /// Length driven backwards over the solved plans (map units).
        reverse_length: f64,
        /// What each solved plan that moves keeps from obstacles (see `nav2_cost`).
        costs: Vec<PathCost>,
    }
    let mut rows: Vec<Row> = algos
        .iter()
        .map(|_| Row { ms: vec![], lengths: vec![], verified: 0, cusps: vec![], reverse_length: 0.0, costs: vec![] })
        .collect();
    let inflation = Inflation {
        inscribed_radius: args.robot_radius,
        inflation_radius: args.inflation_radius,
        cost_scaling_factor: args.cost_scaling_factor,
    };
    let mut nav2_cost = Nav2Cost::new(&grid, res, inflation);
    let mut memory = Vec::new();
    for (done, &(s, g)) in pairs.iter().enumerate() {
        for (a, row) in algos.iter().zip(rows.iter_mut()) {
            let engine =
                engines.iter_mut().find(|e| e.model == a.model && e.method == a.engine()).expect("one engine per kind");
            let t0 = Instant::now();
            let clock = if args.cpu_time { Stamp::now_all_threads() } else { Stamp::Wall(t0) };
            let deadline = t0 + budget;
            let mut stop = || Instant::now() >= deadline;
            // Both kinds of result as (trajectory in cells, stats line) for the common checks.
            let result: Result<(crate::trajectory::Trajectory, String), String> = match a.method {
                Method::Pipeline { .. } => {
                    let budget = Budget::new(args.max_planning_time, None);
                    let r = engine.planner.plan(info.cell_pose_to_world(s), info.cell_pose_to_world(g), false, &budget);
                    row.ms.push(ms_since(clock));
                    r.map(|p| {
                        let line = format!("{}, cost {:.3}", describe(&p.stats), p.stats.figures.cost);
                        (p.trajectory.to_cells(&info), line)
                    })
                    .map_err(|e| e.to_string())
                }
                Method::Full(n) => {
                    let ctx = engine.ctx.as_ref().expect("checked above: Directional A* only with a radius");
                    let r = full_search(ctx, &priced, s, g, false, n, &mut stop);
                    row.ms.push(ms_since(clock));
                    r.map(|r| {
                        let line = format!("{} {} expansions", r.stats.solved_by, r.stats.expansions);
                        (r.trajectory, line)
                    })
                    .map_err(|e: RefineError| e.to_string())
                }
            };
            if args.verbose {
                match &result {
                    Ok((t, line)) => eprintln!(
                        "{} {:.3}ms {:?}->{:?}: len {:.3} by {line}; Nav2 mean cost {:.1}",
                        a.name(),
                        row.ms.last().copied().unwrap_or(f64::NAN),
                        (s.x, s.y, s.yaw),
                        (g.x, g.y, g.yaw),
                        t.length() * res,
                        nav2_cost.measure(t).map_or(f64::NAN, |c| c.mean_cost)
                    ),
                    Err(e) => eprintln!(
                        "{} {:.3}ms {:?}->{:?}: {e}",
                        a.name(),
                        row.ms.last().copied().unwrap_or(f64::NAN),
                        (s.x, s.y, s.yaw),
                        (g.x, g.y, g.yaw)
                    ),
                }
            }
            match result {
                Ok((t, _)) => {
                    // Independent re-verification of what the algorithm returned.
                    let footprint = match (&polygon_cells, a.method) {
                        (Some(shape), Method::Pipeline { polygon: true, .. }) => shape.clone(),
                        _ => Shape::Disk(fp),
                    };
                    let vehicle = Vehicle {
                        may_reverse: a.model == MotionModel::ReedsShepp,
                        ..Vehicle::forward(footprint, radius)
                    };
                    match verify_trajectory(&cmap, &t, &vehicle, s, g, false) {
                        Ok(()) => row.verified += 1,
                        Err(e) if args.verbose => eprintln!(
                            "{} {:?}->{:?}: NOT VERIFIED: {e}",
                            a.name(),
                            (s.x, s.y, s.yaw),
                            (g.x, g.y, g.yaw)
                        ),
                        Err(_) => {}
                    }
                    row.lengths.push(Some(t.length() * res));
                    row.cusps.push(t.cusps());
                    row.reverse_length += t.reverse_length() * res;
                    row.costs.extend(nav2_cost.measure(&t));
                }
                Err(_) => row.lengths.push(None),
            }
        }
        if is_memory_checkpoint(done + 1, pairs.len()) {
            memory.push(MemoryReading::now(done + 1));
        }
    }
    let common: Vec<usize> = (0..pairs.len()).filter(|&k| rows.iter().all(|r| r.lengths[k].is_some())).collect();
    let mut out = Vec::new();
    for (a, row) in algos.iter().zip(&rows) {
        let mut ms = row.ms.clone();
        ms.sort_by(f64::total_cmp);
        let solved: Vec<f64> = row.lengths.iter().flatten().copied().collect();
        let mean = |v: &[f64]| if v.is_empty() { f64::NAN } else { v.iter().sum::<f64>() / v.len() as f64 };
        let common_lengths: Vec<f64> = common.iter().filter_map(|&k| row.lengths[k]).collect();
        let reachable = disc_reachable.iter().filter(|&&r| r).count();
        let solved_reachable = (0..pairs.len()).filter(|&k| disc_reachable[k] && row.lengths[k].is_some()).count();
        let mut common_ms: Vec<f64> = common.iter().map(|&k| row.ms[k]).collect();
        common_ms.sort_by(f64::total_cmp);
        let cusps: Vec<f64> = row.cusps.iter().map(|&c| c as f64).collect();
        let total_length: f64 = solved.iter().sum();
        let sorted = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v
        };
        let mean_costs = sorted(row.costs.iter().map(|c| c.mean_cost).collect());
        let max_costs = sorted(row.costs.iter().map(|c| f64::from(c.max_cost)).collect());
        // A path with no sample within the inflation radius keeps at least that much.
        let clearances = sorted(row.costs.iter().map(|c| c.min_clearance.unwrap_or(args.inflation_radius)).collect());
        out.push(serde_json::json!({
            "name": a.name(),
            "pairs": pairs.len(),
            "solved": solved.len(),
            "median_ms": percentile(&ms, 0.5),
            "p95_ms": percentile(&ms, 0.95),
            "mean_length": mean(&solved),
            "verified": row.verified,
            "mean_length_common": mean(&common_lengths),
            "median_length_common": percentile(&sorted(common_lengths.clone()), 0.5),
            "disc_reachable": reachable,
            "solved_disc_reachable": solved_reachable,
            "median_ms_common": percentile(&common_ms, 0.5),
            "mean_cusps": mean(&cusps),
            "plans_with_cusps": row.cusps.iter().filter(|&&c| c > 0).count(),
            "reverse_share": if total_length > 0.0 { row.reverse_length / total_length } else { 0.0 },
            "median_mean_cost": percentile(&mean_costs, 0.5),
            "median_max_cost": percentile(&max_costs, 0.5),
            "median_min_clearance": percentile(&clearances, 0.5),
            "min_clearance": clearances.first().copied().unwrap_or(f64::NAN),
        }));
    }
    let cells = (info.width * info.height) as f64;
    let structures: Vec<serde_json::Value> = engines.iter().filter_map(|e| e.structures_json(cells)).collect();
    let thread_stores = crate::planner::thread_stores_bytes() as f64 / cells;
    if args.json {
        println!(
            "{}",
            serde_json::json!({
                "map": args.map.display().to_string(),
                "width": info.width,
                "height": info.height,
                "pairs": pairs.len(),
                "seed": args.seed,
                "min_separation": args.min_separation,
                "robot_radius": args.robot_radius,
                "footprint": args.footprint,
                "min_turning_radius": args.min_turning_radius,
                "reverse_penalty": args.reverse_penalty,
                "change_penalty": args.change_penalty,
                "inflation_radius": args.inflation_radius,
                "cost_scaling_factor": args.cost_scaling_factor,
                "cost_penalty": cost_penalty,
                "preferred_clearance": preferred_clearance,
                "commonly_solved": common.len(),
                "prepare_ms": prep_ms,
                "plan_clock": if args.cpu_time { "cpu" } else { "wall" },
                "algorithms": out,
                "memory": memory.iter().map(MemoryReading::to_json).collect::<Vec<_>>(),
                "structures_bytes_per_cell": structures,
                "thread_stores_bytes_per_cell": thread_stores,
            })
        );
    } else {
        println!(
            "{} ({}x{} cells, {} pairs, seed {}, >= {} apart; tables+masks {:.1} ms; {} solved by all{})",
            args.map.display(),
            grid.width(),
            grid.height(),
            pairs.len(),
            args.seed,
            args.min_separation,
            prep_ms,
            common.len(),
            if args.cpu_time { "; plans timed on the CPU clock" } else { "" }
        );
        println!(
            "{:<19} {:>6} {:>6} {:>9} {:>9} {:>10} {:>9} {:>11} {:>10} {:>8} {:>15} {:>6} {:>9} {:>9} {:>8} {:>9} {:>9}",
            "algorithm",
            "pairs",
            "solved",
            "median_ms",
            "p95_ms",
            "median_com",
            "mean_len",
            "mean_common",
            "med_common",
            "verified",
            "disc_reachable",
            "cusps",
            "rev_share",
            "mean_cost",
            "max_cost",
            "clear_med",
            "clear_min"
        );
        for o in &out {
            println!(
                "{:<19} {:>6} {:>6} {:>9.2} {:>9.2} {:>10.2} {:>9.3} {:>11.3} {:>10.3} {:>8} {:>15} {:>6.2} {:>9.3} {:>9.1} {:>8.0} {:>9.3} {:>9.3}",
                o["name"].as_str().unwrap_or(""),
                o["pairs"],
                o["solved"],
                o["median_ms"].as_f64().unwrap_or(f64::NAN),
                o["p95_ms"].as_f64().unwrap_or(f64::NAN),
                o["median_ms_common"].as_f64().unwrap_or(f64::NAN),
                o["mean_length"].as_f64().unwrap_or(f64::NAN),
                o["mean_length_common"].as_f64().unwrap_or(f64::NAN),
                o["median_length_common"].as_f64().unwrap_or(f64::NAN),
                o["verified"],
                format!("{}/{}", o["solved_disc_reachable"], o["disc_reachable"]),
                o["mean_cusps"].as_f64().unwrap_or(f64::NAN),
                o["reverse_share"].as_f64().unwrap_or(f64::NAN),
                o["median_mean_cost"].as_f64().unwrap_or(f64::NAN),
                o["median_max_cost"].as_f64().unwrap_or(f64::NAN),
                o["median_min_clearance"].as_f64().unwrap_or(f64::NAN),
                o["min_clearance"].as_f64().unwrap_or(f64::NAN)
            );
        }
        println!("memory after n pairs (heap held by the program; resident set and its peak so far):");
        println!("{:>9} {:>10} {:>12} {:>9} {:>14}", "pairs", "heap_MiB", "heap_blocks", "rss_MiB", "peak_rss_MiB");
        for m in &memory {
            println!(
                "{:>9} {:>10} {:>12} {:>9} {:>14}",
                m.pairs,
                m.heap_mib(),
                m.heap_blocks(),
                m.rss_mib(),
                m.peak_mib()
            );
        }
        println!("map structures per planner, bytes per cell (shared by every profile; the profile's own):");
        for e in &structures {
            let row = |o: &serde_json::Value| {
                o.as_object()
                    .map(|o| {
                        o.iter().map(|(k, v)| format!("{k} {:.2}", v.as_f64().unwrap_or(f64::NAN))).collect::<Vec<_>>()
                    })
                    .unwrap_or_default()
                    .join(", ")
            };
            println!(
                "  {}{}{}: {:.2} in all; shared: {}; own: {}",
                e["motion_model"].as_str().unwrap_or(""),
                if e["costs"] == true { ", costs" } else { "" },
                if e["polygon"] == true { ", polygon" } else { "" },
                e["total"].as_f64().unwrap_or(f64::NAN),
                row(&e["shared"]),
                row(&e["profile"])
            );
        }
        println!("  the planning threads' search scratch and memos: {thread_stores:.2}");
    }
    Ok(())
}

/// Whether the memory is read after `done` of `total` pairs: after 1, 3, 10, 30, 100, ... pairs
/// and after the last, so a long run shows how memory follows the number of plans.
fn is_memory_checkpoint(done: usize, total: usize) -> bool {
    let mut n = done;
    while n >= 10 && n % 10 == 0 {
        n /= 10;
    }
    done == total || n == 1 || n == 3
}

/// The program's memory after a number of pairs (`None` where a figure cannot be read: the heap
/// without the counting allocator, the resident set off Linux).
struct MemoryReading {
    pairs: usize,
    heap: Option<crate::memory::HeapUse>,
    resident: Option<crate::memory::Resident>,
}

impl MemoryReading {
    fn now(pairs: usize) -> Self {
        Self { pairs, heap: crate::memory::heap(), resident: crate::memory::resident() }
    }

    fn heap_mib(&self) -> String {
        self.heap.map_or("n/a".into(), |h| format!("{:.2}", crate::memory::mib(h.bytes)))
    }

    fn heap_blocks(&self) -> String {
        self.heap.map_or("n/a".into(), |h| h.blocks.to_string())
    }

    fn rss_mib(&self) -> String {
        self.resident.map_or("n/a".into(), |r| format!("{:.1}", r.kib as f64 / 1024.0))
    }

    fn peak_mib(&self) -> String {
        self.resident.map_or("n/a".into(), |r| format!("{:.1}", r.peak_kib as f64 / 1024.0))
    }

    fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "pairs": self.pairs,
            "heap_bytes": self.heap.map(|h| h.bytes),
            "heap_blocks": self.heap.map(|h| h.blocks),
            "rss_kib": self.resident.map(|r| r.kib),
            "peak_rss_kib": self.resident.map(|r| r.peak_kib),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(algo: &str) -> BenchNavArgs {
        BenchNavArgs {
            map: PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/config/tb3_sandbox.yaml")),
            tile: None,
            pairs: 4,
            seed: 33,
            min_separation: 3.0,
            algo: algo.into(),
            footprint: None,
            robot_radius: 0.2,
            min_turning_radius: 0.5,
            max_planning_time: 5.0,
            reverse_penalty: 1.0,
            change_penalty: 0.0,
            cost_penalty: None,
            preferred_clearance: None,
            inflation_radius: 0.55,
            cost_scaling_factor: 3.0,
            json: true,
            verbose: false,
            cpu_time: false,
        }
    }

    #[test]
    fn memory_is_read_at_one_three_ten_and_the_last() {
        let at: Vec<usize> = (1..=4000).filter(|&d| is_memory_checkpoint(d, 4000)).collect();
        assert_eq!(at, [1, 3, 10, 30, 100, 300, 1000, 3000, 4000]);
    }

    #[test]
    fn runs_every_algorithm_and_rejects_unknown_ones() {
        assert!(run(&args("pipeline,directional-8,directional-24")).is_ok());
        assert!(run(&args("pipeline-rs,directional-24-rs")).is_ok());
        assert!(run(&args("pipeline-reeds")).is_err());
        let mut bad = args("pipeline-rs");
        bad.reverse_penalty = 0.5;
        assert!(run(&bad).is_err());
        bad.reverse_penalty = 1.0;
        bad.change_penalty = -1.0;
        assert!(run(&bad).is_err());
        assert!(run(&args("pipeline,astar")).is_err());
        // The polygon algorithms need --footprint, and --footprint needs them.
        assert!(run(&args("pipeline-polygon")).is_err());
        let rect = Some("[[0.3, 0.12], [0.3, -0.12], [-0.08, -0.12], [-0.08, 0.12]]".to_string());
        assert!(run(&BenchNavArgs { footprint: rect.clone(), ..args("pipeline") }).is_err());
        assert!(run(&BenchNavArgs { footprint: rect, ..args("pipeline,pipeline-shortest-polygon-rs") }).is_ok());
        assert!(run(&args(" , ")).is_err());
        // Radius 0 is the pipeline's alone (turning on the spot); Directional A* needs a radius.
        let mut spot = args("pipeline");
        spot.min_turning_radius = 0.0;
        assert!(run(&spot).is_ok());
        let mut bad = args("pipeline,directional-24");
        bad.min_turning_radius = 0.0;
        assert!(run(&bad).is_err());
        bad.min_turning_radius = -1.0;
        bad.algo = "pipeline".into();
        assert!(run(&bad).is_err());
        // A tiled map: twice the map each way plans; a size over the cell limit is refused.
        assert!(run(&BenchNavArgs { tile: Some((2 * 384, 2 * 384)), ..args("pipeline") }).is_ok());
        assert!(run(&BenchNavArgs { tile: Some((20_000, 20_000)), ..args("pipeline") }).is_err());
        assert_eq!(parse_size("6000x4000"), Ok((6000, 4000)));
        assert!(parse_size("6000").is_err() && parse_size("x5").is_err());
    }

    #[test]
    fn pairs_are_reproducible_free_and_far_apart() {
        let g = Grid::from_rows(&[
            "....................",
            "....................",
            "..........@@........",
            "....................",
        ])
        .unwrap();
        let m = CollisionMap::new(&g);
        let mask = m.centre_mask(0.5, 0.0);
        let rho = crate::directional::footprint::sampled_radius(0.5);
        let a = random_pairs(&m, &mask, rho, 10, 7, 8.0).unwrap();
        assert_eq!(a, random_pairs(&m, &mask, rho, 10, 7, 8.0).unwrap());
        for (s, e) in a {
            assert!(s.point().distance(e.point()) >= 8.0);
            assert!(m.disk_free(s.point(), rho) && m.disk_free(e.point(), rho));
        }
        assert!(random_pairs(&m, &mask, rho, 1, 7, 100.0).is_err());
    }
}
