//! `blockstar bench`: runs several search algorithms on the same Moving AI scenario queries in one
//! process and prints per-algorithm statistics side by side (text or JSON).
//!
//! Cell algorithms (`block-oct`, `block-tile`, `astar-oct`, `astar-euc`) search from the
//! scenario's start cell to its goal cell; vertex algorithms (`block-aa`, `theta`, `lazy-theta`)
//! from the low corner vertex of the start cell to that of the goal cell. A `+ps` suffix applies
//! post-smoothing (cell paths are smoothed through cell centres).

use super::{CliError, CliResult};
use crate::block_astar::{BlockAStar, BlockGrid};
use crate::lddb::{Lddb, LoadReport, Metric};
use crate::map_io::{load_movingai_map, load_scenarios, Scenario};
use crate::search::grid_astar::{CellHeuristic, GridAStar};
use crate::search::lazy_theta::LazyThetaStar;
use crate::search::los::{CellMask, LosRule};
use crate::search::path::GridPath;
use crate::search::smoothing::{cells_to_doubled, length_doubled, smooth_doubled, vertices_to_doubled};
use crate::search::theta::ThetaStar;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// `println!` that ignores a closed stdout (e.g. piped into `head`) instead of panicking.
macro_rules! emit {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($t)*);
    }};
}

/// Arguments of `blockstar bench`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Moving AI map (`.map`).
    #[arg(long)]
    pub map: PathBuf,
    /// Moving AI scenarios (`.map.scen`).
    #[arg(long)]
    pub scen: PathBuf,
    /// Comma-separated algorithms: block-aa, block-oct, block-tile, astar-oct, astar-euc, theta,
    /// lazy-theta; append `+ps` for post-smoothing.
    #[arg(long, value_delimiter = ',', default_value = "block-aa,block-oct,astar-oct,theta")]
    pub algo: Vec<String>,
    /// Use only the first N scenarios.
    #[arg(long, allow_negative_numbers = true)]
    pub limit: Option<usize>,
    /// Answer the queries on T threads sharing one LDDB and one grid (also reports queries/s).
    #[arg(long, allow_negative_numbers = true, default_value_t = 1)]
    pub threads: usize,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Line-of-sight rule of the any-angle algorithms: moving-ai or conservative.
    #[arg(long, default_value = "moving-ai")]
    pub los: String,
    /// LDDB cache file (default: see `blockstar lddb`).
    #[arg(long)]
    pub lddb_cache: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Algo {
    BlockAa,
    BlockOct,
    BlockTile,
    AstarOct,
    AstarEuc,
    Theta,
    LazyTheta,
}

impl Algo {
    fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "block-aa" => Algo::BlockAa,
            "block-oct" => Algo::BlockOct,
            "block-tile" => Algo::BlockTile,
            "astar-oct" => Algo::AstarOct,
            "astar-euc" => Algo::AstarEuc,
            "theta" => Algo::Theta,
            "lazy-theta" => Algo::LazyTheta,
            _ => return None,
        })
    }

    fn on_vertices(self) -> bool {
        matches!(self, Algo::BlockAa | Algo::Theta | Algo::LazyTheta)
    }

    fn octile(self) -> bool {
        matches!(self, Algo::BlockOct | Algo::AstarOct | Algo::AstarEuc)
    }
}

/// One searcher of each kind, per thread.
#[derive(Default)]
struct Searchers {
    block: BlockAStar,
    astar: GridAStar,
    theta: ThetaStar,
    lazy: LazyThetaStar,
}

struct Shared<'a> {
    lddb: Option<&'a Lddb>,
    blocks: Option<&'a BlockGrid>,
    mask: &'a CellMask,
    rule: LosRule,
}

fn solve(algo: Algo, smooth: bool, sh: &Shared<'_>, s: &mut Searchers, q: &Scenario) -> Option<(f64, usize)> {
    let (a, b) = ((q.start.0 as u32, q.start.1 as u32), (q.goal.0 as u32, q.goal.1 as u32));
    let block = |s: &mut Searchers, m: Metric| match (sh.lddb, sh.blocks) {
        (Some(l), Some(g)) => s.block.find_path(l, g, a, b, m, sh.rule, || false).ok(),
        _ => None,
    };
    let path: GridPath = match algo {
        Algo::BlockAa => block(s, Metric::AnyAngle)?,
        Algo::BlockOct => block(s, Metric::Octile)?,
        Algo::BlockTile => block(s, Metric::Tile)?,
        Algo::AstarOct => s.astar.find_path(sh.mask, a, b, CellHeuristic::Octile, || false).ok()?,
        Algo::AstarEuc => s.astar.find_path(sh.mask, a, b, CellHeuristic::Euclidean, || false).ok()?,
        Algo::Theta => s.theta.find_path(sh.mask, sh.rule, a, b, || false).ok()?,
        Algo::LazyTheta => s.lazy.find_path(sh.mask, sh.rule, a, b, || false).ok()?,
    };
    if !smooth {
        return Some((path.length, path.expansions));
    }
    let pts = if algo.on_vertices() { vertices_to_doubled(&path.points) } else { cells_to_doubled(&path.points) };
    Some((length_doubled(&smooth_doubled(sh.mask, sh.rule, &pts)), path.expansions))
}

/// Statistics of one algorithm.
#[derive(Debug, serde::Serialize)]
struct Stats {
    name: String,
    queries: usize,
    solved: usize,
    mean_ms: f64,
    median_ms: f64,
    p95_ms: f64,
    mean_expansions: f64,
    mean_length: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_abs_err: Option<f64>,
    /// Octile algorithms: solved queries whose length lies outside the scenario's printed
    /// precision (`Scenario::optimal_tolerance`); 0 for a correct search.
    #[serde(skip_serializing_if = "Option::is_none")]
    not_optimal: Option<usize>,
    threads: usize,
    queries_per_s: f64,
    /// This algorithm's median time over the first listed algorithm's (the side-by-side
    /// speed ratio: 4.0 means the first one is four times faster at the median).
    median_vs_first: f64,
}

/// Runs `blockstar bench`.
pub fn run(args: &BenchArgs) -> CliResult {
    let rule = match args.los.as_str() {
        "moving-ai" => LosRule::MovingAi,
        "conservative" => LosRule::Conservative,
        other => return Err(CliError(format!("unknown --los {other:?} (moving-ai or conservative)"))),
    };
    let mut algos = vec![];
    for name in &args.algo {
        let (base, smooth) = match name.strip_suffix("+ps") {
            Some(b) => (b, true),
            None => (name.as_str(), false),
        };
        let algo = Algo::parse(base).ok_or_else(|| CliError(format!("unknown algorithm {name:?}")))?;
        algos.push((name.clone(), algo, smooth));
    }
    if args.threads == 0 {
        return Err(CliError("--threads must be at least 1".into()));
    }
    let grid = load_movingai_map(&args.map)?;
    let mut scens = load_scenarios(&args.scen)?;
    if let Some(n) = args.limit {
        scens.truncate(n);
    }
    if let Some(q) = scens.iter().find(|q| {
        q.start.0 >= grid.width() || q.goal.0 >= grid.width() || q.start.1 >= grid.height() || q.goal.1 >= grid.height()
    }) {
        return Err(CliError(format!("scenario {q:?} lies outside the {}x{} map", grid.width(), grid.height())));
    }
    let mask = CellMask::from_grid(&grid);
    let needs_lddb = algos.iter().any(|(_, a, _)| matches!(a, Algo::BlockAa | Algo::BlockOct | Algo::BlockTile));
    let lddb = if needs_lddb {
        let t = Instant::now();
        let (db, report) = Lddb::load_or_build(args.lddb_cache.as_deref(), 4, &|_, _| {})?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        match report {
            LoadReport::Loaded { path } => eprintln!("LDDB loaded from {} in {ms:.1} ms", path.display()),
            LoadReport::Built { reason, saved, .. } => {
                eprintln!(
                    "LDDB built in {ms:.1} ms ({reason}); cache {}",
                    if saved.is_ok() { "saved" } else { "not saved" }
                )
            }
        }
        Some(db)
    } else {
        None
    };
    let blocks = match &lddb {
        Some(db) => Some(BlockGrid::new(&grid, db.side())?),
        None => None,
    };
    let shared = Shared { lddb: lddb.as_ref(), blocks: blocks.as_ref(), mask: &mask, rule };
    let mut all = vec![];
    for (name, algo, smooth) in &algos {
        all.push(bench_one(name, *algo, *smooth, &shared, &scens, args.threads));
    }
    let first_median = all.first().map_or(0.0, |s| s.median_ms);
    for s in &mut all {
        s.median_vs_first = if first_median > 0.0 { s.median_ms / first_median } else { f64::NAN };
    }
    if args.json {
        let v = serde_json::json!({
            "map": args.map.display().to_string(),
            "scen": args.scen.display().to_string(),
            "los": args.los,
            "threads": args.threads,
            "algorithms": all,
        });
        emit!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        emit!(
            "{:<16} {:>7} {:>7} {:>9} {:>9} {:>9} {:>11} {:>11} {:>11} {:>11} {:>9} {:>9}",
            "algorithm",
            "queries",
            "solved",
            "mean_ms",
            "median_ms",
            "p95_ms",
            "mean_expans",
            "mean_length",
            "max_abs_err",
            "not_optimal",
            "q/s",
            "x_median"
        );
        for s in &all {
            emit!(
                "{:<16} {:>7} {:>7} {:>9.4} {:>9.4} {:>9.4} {:>11.1} {:>11.4} {:>11} {:>11} {:>9.0} {:>9.2}",
                s.name,
                s.queries,
                s.solved,
                s.mean_ms,
                s.median_ms,
                s.p95_ms,
                s.mean_expansions,
                s.mean_length,
                s.max_abs_err.map_or("-".to_string(), |e| format!("{e:.2e}")),
                s.not_optimal.map_or("-".to_string(), |n| n.to_string()),
                s.queries_per_s,
                s.median_vs_first
            );
        }
    }
    Ok(())
}

/// One answered query: its index, elapsed milliseconds and (length, expansions) when solved.
type Timed = (usize, f64, Option<(f64, usize)>);

fn bench_one(name: &str, algo: Algo, smooth: bool, sh: &Shared<'_>, scens: &[Scenario], threads: usize) -> Stats {
    // Per query: (elapsed ms, result).
    let mut results: Vec<(f64, Option<(f64, usize)>)> = vec![(0.0, None); scens.len()];
    let next = AtomicUsize::new(0);
    let wall = Instant::now();
    let chunks: Vec<Vec<Timed>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut s = Searchers::default();
                    let mut out = vec![];
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= scens.len() {
                            break;
                        }
                        let t = Instant::now();
                        let r = solve(algo, smooth, sh, &mut s, &scens[i]);
                        out.push((i, t.elapsed().as_secs_f64() * 1e3, r));
                    }
                    out
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_default()).collect()
    });
    let wall_s = wall.elapsed().as_secs_f64();
    for (i, ms, r) in chunks.into_iter().flatten() {
        results[i] = (ms, r);
    }
    let mut times: Vec<f64> = results.iter().map(|r| r.0).collect();
    times.sort_by(f64::total_cmp);
    let n = scens.len().max(1);
    let pct = |p: f64| times.get(((times.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or(0.0);
    let solved: Vec<(usize, f64, usize)> =
        results.iter().enumerate().filter_map(|(i, r)| r.1.map(|(l, e)| (i, l, e))).collect();
    let ns = solved.len().max(1) as f64;
    let octile = algo.octile() && !smooth;
    let max_abs_err =
        octile.then(|| solved.iter().map(|&(i, l, _)| (l - scens[i].optimal_length).abs()).fold(0.0, f64::max));
    let not_optimal = octile.then(|| solved.iter().filter(|&&(i, l, _)| !scens[i].is_optimal(l)).count());
    Stats {
        name: name.to_string(),
        queries: scens.len(),
        solved: solved.len(),
        mean_ms: times.iter().sum::<f64>() / n as f64,
        median_ms: pct(0.5),
        p95_ms: pct(0.95),
        mean_expansions: solved.iter().map(|s| s.2 as f64).sum::<f64>() / ns,
        mean_length: solved.iter().map(|s| s.1).sum::<f64>() / ns,
        max_abs_err,
        not_optimal,
        threads,
        queries_per_s: scens.len() as f64 / wall_s.max(1e-9),
        median_vs_first: f64::NAN,
    }
}
