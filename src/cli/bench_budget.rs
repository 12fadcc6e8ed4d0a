//! `blockstar bench-budget`: how late a plan stops once its time budget has run out or its
//! request has been cancelled, wherever in the pipeline it is at that moment.
//!
//! A plan promises `TIMEOUT` within a few milliseconds of `max_planning_time`, and `SUPERSEDED`
//! (a cancel, or a newer goal) as soon: a navigator that cancels must not wait for a search that
//! runs on. Every long loop polls [`Budget::should_stop`]; this benchmark measures what the
//! polling achieves, on the maps and pairs a user plans on.
//!
//! For each random pair (bench-nav's protocol) the plan is first timed with the generous
//! `--max-planning-time` (its full time `T`). Then, for each fraction `f` of `--fractions`, it is
//! planned twice more: with a budget of `f·T`, so the deadline falls in whatever stage runs at that
//! moment, and with the generous budget and a cancel raised from another thread at `f·T`.
//! Lateness is the time from the deadline (or from the cancel) to the plan's return. A run that
//! finishes before its deadline or cancel is counted as finished, not as late.

use super::bench_nav::{parse_size, percentile, random_pairs};
use super::{CliError, CliResult};
use crate::directional::{CollisionMap, MotionModel};
use crate::map::DEFAULT_MAX_MAP_CELLS;
use crate::map_io::load_map_file;
use crate::planner::{Budget, Planner, PlannerConfig, StatusCode};
use crate::polygon::Polygon;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Arguments of `blockstar bench-budget`.
#[derive(Debug, clap::Args)]
pub struct BenchBudgetArgs {
    /// Map file: a map_server YAML (metres) or a Moving AI `.map` (cells, resolution 1).
    #[arg(long)]
    pub map: PathBuf,
    /// Plan on the map repeated from its origin to `WIDTHxHEIGHT` cells (as bench-nav's `--tile`).
    #[arg(long, value_parser = parse_size)]
    pub tile: Option<(usize, usize)>,
    /// Number of start/goal pairs.
    #[arg(long, allow_negative_numbers = true, default_value_t = 10)]
    pub pairs: usize,
    /// Seed of the pairs (the same seed gives the same pairs as bench-nav's).
    #[arg(long, allow_negative_numbers = true, default_value_t = 33)]
    pub seed: u64,
    /// Minimum start-goal distance (map units).
    #[arg(long, allow_negative_numbers = true, default_value_t = 3.0)]
    pub min_separation: f64,
    /// Robot radius (map units).
    #[arg(long, allow_negative_numbers = true, default_value_t = 0.2)]
    pub robot_radius: f64,
    /// Minimum turning radius (map units).
    #[arg(long, allow_negative_numbers = true, default_value_t = 0.5)]
    pub min_turning_radius: f64,
    /// Footprint polygon in Nav2's string form (map units, vehicle frame); wins over
    /// `--robot-radius` for planning, as the node's `footprint` does.
    #[arg(long, allow_hyphen_values = true)]
    pub footprint: Option<String>,
    /// `forward` or `reeds_shepp`.
    #[arg(long, default_value = "forward")]
    pub motion_model: String,
    /// The generous budget (s) of the timing run and of the cancelled runs.
    #[arg(long, allow_negative_numbers = true, default_value_t = 30.0)]
    pub max_planning_time: f64,
    /// Where the deadline or the cancel falls, as fractions of each pair's full planning time.
    #[arg(long, default_value = "0.05,0.25,0.5,0.75,0.95")]
    pub fractions: String,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Print every run.
    #[arg(long)]
    pub verbose: bool,
}

/// The lateness figures of one way of stopping (milliseconds from the deadline or cancel to the
/// answer, whatever the answer: a plan that ends with a path just after its deadline kept its
/// caller waiting as long as one that ends with `TIMEOUT`).
#[derive(Default)]
struct Lateness {
    late_ms: Vec<f64>,
    /// Runs that answered before the stop came.
    finished: usize,
    /// Runs that answered after the stop with something else than the stop's status (a path, or
    /// a failure found between two polls).
    other_answer: usize,
}

impl Lateness {
    /// One run: its answer, how long after the stop it came, and whether it came after the stop.
    fn record(&mut self, expected: StatusCode, result: Result<(), StatusCode>, late_ms: f64, after_stop: bool) {
        if !after_stop {
            self.finished += 1;
            return;
        }
        self.late_ms.push(late_ms);
        if result != Err(expected) {
            self.other_answer += 1;
        }
    }

    fn summary(&self) -> (usize, f64, f64, f64) {
        let mut v = self.late_ms.clone();
        v.sort_by(f64::total_cmp);
        (v.len(), percentile(&v, 0.5), percentile(&v, 0.95), v.last().copied().unwrap_or(f64::NAN))
    }

    fn json(&self) -> serde_json::Value {
        let (n, p50, p95, max) = self.summary();
        serde_json::json!({
            "after_stop": n,
            "finished": self.finished,
            "other_answer": self.other_answer,
            "p50_ms": finite(p50),
            "p95_ms": finite(p95),
            "max_ms": finite(max),
        })
    }
}

/// `x`, or JSON null when it is not finite (no run to measure).
fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// The fractions of `--fractions`, each in (0, 1).
fn parse_fractions(text: &str) -> Result<Vec<f64>, CliError> {
    let fractions: Vec<f64> = text
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse::<f64>().map_err(|_| CliError(format!("--fractions: '{s}' is not a number"))))
        .collect::<Result<_, _>>()?;
    if fractions.is_empty() || fractions.iter().any(|f| !(*f > 0.0 && *f < 1.0)) {
        return Err(CliError(format!("--fractions must list numbers between 0 and 1 (exclusive), got '{text}'")));
    }
    Ok(fractions)
}

/// Runs the benchmark.
pub fn run(args: &BenchBudgetArgs) -> CliResult {
    if args.pairs == 0 {
        return Err(CliError("--pairs must be at least 1".into()));
    }
    let u = crate::map_io::map_file_units(&args.map);
    super::non_negative("--robot-radius", args.robot_radius, u)?;
    super::non_negative("--min-separation", args.min_separation, u)?;
    let fractions = parse_fractions(&args.fractions)?;
    let model = MotionModel::parse(&args.motion_model).ok_or_else(|| {
        CliError(format!("--motion-model must be forward or reeds_shepp, got '{}'", args.motion_model))
    })?;
    let footprint = super::footprint_option(args.footprint.as_deref())?;
    let config = PlannerConfig {
        robot_radius: args.robot_radius,
        footprint,
        min_turning_radius: args.min_turning_radius,
        max_planning_time: args.max_planning_time,
        motion_model: model,
        ..PlannerConfig::default()
    };
    config.validate()?;
    let map = load_map_file(&args.map, "map", DEFAULT_MAX_MAP_CELLS)?;
    let map = match args.tile {
        None => map,
        Some((w, h)) => map.tiled(w, h, DEFAULT_MAX_MAP_CELLS).map_err(|e| CliError(format!("--tile {w}x{h}: {e}")))?,
    };
    let info = map.info.clone();
    // Poses are drawn where the vehicle fits in every heading: the polygon's circumscribed disc.
    let fp = config.footprint.as_ref().map_or(args.robot_radius, Polygon::circumradius) / info.resolution;
    let pairs = {
        let grid = map.to_grid(config.traversability());
        let cmap = CollisionMap::new(&grid);
        let mask = cmap.centre_mask(fp, 0.0);
        random_pairs(&cmap, &mask, fp, args.pairs, args.seed, args.min_separation / info.resolution)?
    };
    let mut planner = Planner::new(config.clone())?;
    planner.set_units(u);
    planner.set_map(map)?;
    let plan = |budget: &Budget, (s, g): (crate::geometry::Pose2, crate::geometry::Pose2)| {
        planner
            .plan(info.cell_pose_to_world(s), info.cell_pose_to_world(g), false, budget)
            .map(|_| ())
            .map_err(|e| e.code)
    };
    let (mut timeouts, mut cancels) = (Lateness::default(), Lateness::default());
    let mut full_ms = Vec::new();
    for (i, &pair) in pairs.iter().enumerate() {
        // Once to warm the thread's scratch, once to time.
        let _ = plan(&Budget::new(args.max_planning_time, None), pair);
        let t0 = Instant::now();
        let full = planner.plan(
            info.cell_pose_to_world(pair.0),
            info.cell_pose_to_world(pair.1),
            false,
            &Budget::new(args.max_planning_time, None),
        );
        let full_s = t0.elapsed().as_secs_f64();
        full_ms.push(full_s * 1e3);
        if args.verbose {
            let how = full.map_or_else(|e| e.to_string(), |p| super::bench_nav::describe(&p.stats));
            eprintln!("pair {i}: {:.3} ms, {how}", full_s * 1e3);
        }
        for &f in &fractions {
            let at = Duration::from_secs_f64(f * full_s);
            // The deadline at f·T.
            let t0 = Instant::now();
            let r = plan(&Budget::new(at.as_secs_f64(), None), pair);
            let returned = t0.elapsed();
            let late = returned.saturating_sub(at).as_secs_f64() * 1e3;
            if args.verbose {
                eprintln!("  at {:.1} ms: timeout answered {r:?} {late:.3} ms late", at.as_secs_f64() * 1e3);
            }
            timeouts.record(StatusCode::Timeout, r, late, returned >= at);
            // A cancel at f·T, raised by another thread as the node's action server would.
            let flag = Arc::new(AtomicBool::new(false));
            let budget = Budget::new(args.max_planning_time, Some(flag.clone()));
            let done = AtomicBool::new(false);
            let (r, returned, raised) = std::thread::scope(|scope| {
                let t0 = Instant::now();
                let (flag, done) = (&flag, &done);
                let raiser = scope.spawn(move || {
                    while t0.elapsed() < at && !done.load(Ordering::Relaxed) {
                        std::thread::sleep((at - t0.elapsed().min(at)).min(Duration::from_micros(200)));
                    }
                    if done.load(Ordering::Relaxed) {
                        None
                    } else {
                        flag.store(true, Ordering::Relaxed);
                        Some(Instant::now())
                    }
                });
                let r = plan(&budget, pair);
                let returned = Instant::now();
                done.store(true, Ordering::Relaxed);
                (r, returned, raiser.join().ok().flatten())
            });
            let late = raised.map_or(0.0, |raised| returned.saturating_duration_since(raised).as_secs_f64() * 1e3);
            if args.verbose {
                eprintln!("  at {:.1} ms: cancel answered {r:?} {late:.3} ms late", at.as_secs_f64() * 1e3);
            }
            cancels.record(StatusCode::Superseded, r, late, raised.is_some_and(|t| t <= returned));
        }
    }
    full_ms.sort_by(f64::total_cmp);
    if args.json {
        let out = serde_json::json!({
            "map": args.map.display().to_string(),
            "width": info.width,
            "height": info.height,
            "motion_model": model.name(),
            "pairs": pairs.len(),
            "full_p50_ms": finite(percentile(&full_ms, 0.5)),
            "full_max_ms": finite(full_ms.last().copied().unwrap_or(f64::NAN)),
            "timeout": timeouts.json(),
            "cancel": cancels.json(),
        });
        println!("{out}");
    } else {
        println!(
            "{} ({} x {} cells), {}, {} pairs: full plan median {:.1} ms, max {:.1} ms",
            args.map.display(),
            info.width,
            info.height,
            model.name(),
            pairs.len(),
            percentile(&full_ms, 0.5),
            full_ms.last().copied().unwrap_or(f64::NAN)
        );
        println!(
            "{:<8} {:>8} {:>9} {:>12} {:>9} {:>9} {:>9}",
            "stop", "after_stop", "finished", "other_answer", "p50_ms", "p95_ms", "max_ms"
        );
        for (name, l) in [("timeout", &timeouts), ("cancel", &cancels)] {
            let (n, p50, p95, max) = l.summary();
            println!("{name:<8} {n:>8} {:>9} {:>12} {p50:>9.3} {p95:>9.3} {max:>9.3}", l.finished, l.other_answer);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_are_checked() {
        assert_eq!(parse_fractions("0.1, 0.5").unwrap(), vec![0.1, 0.5]);
        for bad in ["", "0", "1", "x", "0.5,1.5", "NaN"] {
            assert!(parse_fractions(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn lateness_counts_answers_before_the_stop_apart() {
        let mut l = Lateness::default();
        l.record(StatusCode::Timeout, Err(StatusCode::Timeout), 2.0, true);
        l.record(StatusCode::Timeout, Ok(()), 0.0, false);
        l.record(StatusCode::Timeout, Err(StatusCode::NoValidPath), 0.0, false);
        l.record(StatusCode::Timeout, Ok(()), 1.0, true);
        assert_eq!((l.late_ms.len(), l.finished, l.other_answer), (2, 2, 1));
        assert_eq!(l.summary().3, 2.0);
    }
}
