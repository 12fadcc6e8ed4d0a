//! `blockstar bench-clearance`: full annotation versus random patch updates, side by side.

use super::{CliError, CliResult};
use crate::clearance::distance::DistanceField;
use crate::clearance::true_clearance::TrueClearance;
use crate::clearance::{Capability, CellClass, ClearanceConfig, ClearanceMap, Footprint, PatchRect, Vehicle};
use crate::map::DEFAULT_MAX_MAP_CELLS;
use crate::map_io::load_map_file;
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `blockstar bench-clearance`.
#[derive(Debug, clap::Args)]
pub struct BenchClearanceArgs {
    /// Map file: a map_server YAML or a Moving AI `.map`.
    #[arg(long)]
    pub map: PathBuf,
    /// Side of each random square patch (cells).
    #[arg(long, allow_negative_numbers = true, default_value_t = 10)]
    pub patch_size: usize,
    /// Number of random patches.
    #[arg(long, allow_negative_numbers = true, default_value_t = 200)]
    pub patches: usize,
    /// Full annotations to time (the median is reported).
    #[arg(long, allow_negative_numbers = true, default_value_t = 5)]
    pub repeats: usize,
    /// Radius (cells) of the circular vehicle whose mask and regions are also timed.
    #[arg(long, allow_negative_numbers = true, default_value_t = 6.0)]
    pub radius: f64,
    /// Cap (cells) for obstacle distance and true clearance.
    #[arg(long, allow_negative_numbers = true, default_value_t = crate::clearance::DEFAULT_CAP)]
    pub cap: u16,
    /// Seed of the patch positions and contents.
    #[arg(long, allow_negative_numbers = true, default_value_t = 1)]
    pub seed: u64,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// A small xorshift generator: the benchmark needs reproducible, not strong, randomness.
pub(super) struct Xorshift(u64);

impl Xorshift {
    /// A generator from any seed (never the all-zero state).
    pub(super) fn seeded(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub(super) fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

pub(super) fn median(v: Vec<f64>) -> f64 {
    quantile(v, 0.5)
}

/// The `q`-quantile (nearest rank) of `v`; NaN when empty.
fn quantile(mut v: Vec<f64>, q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
}

/// A point in time for the benchmarks: CPU time where the system reports it (unaffected by other
/// processes sharing the cores), else wall-clock time. [`Stamp::now`] reads this thread's CPU
/// time (`CLOCK_THREAD_CPUTIME_ID`), for steps that run on the calling thread;
/// [`Stamp::now_all_threads`] the whole process's (`CLOCK_PROCESS_CPUTIME_ID`), for steps that
/// hand work to rayon's threads.
#[derive(Clone, Copy)]
pub(super) enum Stamp {
    Cpu(libc::clockid_t, u64),
    Wall(Instant),
}

fn cpu_time_ns(clock: libc::clockid_t) -> Option<u64> {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    (rc == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

impl Stamp {
    /// Now, on this thread's CPU clock.
    pub(super) fn now() -> Self {
        Self::on(libc::CLOCK_THREAD_CPUTIME_ID)
    }

    /// Now, on the process's CPU clock (every thread's time).
    pub(super) fn now_all_threads() -> Self {
        Self::on(libc::CLOCK_PROCESS_CPUTIME_ID)
    }

    fn on(clock: libc::clockid_t) -> Self {
        cpu_time_ns(clock).map_or_else(|| Stamp::Wall(Instant::now()), |ns| Stamp::Cpu(clock, ns))
    }
}

/// Milliseconds since `t` on the same clock.
pub(super) fn ms_since(t: Stamp) -> f64 {
    match t {
        Stamp::Cpu(clock, ns) => cpu_time_ns(clock).map_or(f64::NAN, |now| now.saturating_sub(ns) as f64 / 1e6),
        Stamp::Wall(i) => i.elapsed().as_secs_f64() * 1e3,
    }
}

/// Times `patches` random `size x size` patches (30% occupied cells) on `map`; returns the
/// per-patch milliseconds.
fn time_patches(map: &mut ClearanceMap, size: usize, patches: usize, seed: u64) -> Result<Vec<f64>, CliError> {
    let (w, h) = (map.info().width, map.info().height);
    let (pw, ph) = (size.min(w), size.min(h));
    let mut rng = Xorshift::seeded(seed);
    let mut times = Vec::with_capacity(patches);
    let mut data = vec![0i8; pw * ph];
    for _ in 0..patches {
        let (x, y) = (rng.below(w - pw + 1), rng.below(h - ph + 1));
        for v in data.iter_mut() {
            *v = if rng.below(100) < 30 { 100 } else { 0 };
        }
        let rect = PatchRect { x: x as i64, y: y as i64, width: pw as i64, height: ph as i64 };
        let t = Stamp::now();
        map.apply_patch(rect, &data)?;
        times.push(ms_since(t));
    }
    Ok(times)
}

/// Runs `blockstar bench-clearance`.
pub fn run(args: &BenchClearanceArgs) -> CliResult {
    if args.patch_size == 0 || args.patches == 0 || args.repeats == 0 {
        return Err(CliError("--patch-size, --patches and --repeats must be at least 1".into()));
    }
    let radius = super::non_negative("--radius", args.radius, crate::map::MapUnits::Cells)?;
    let occupancy = load_map_file(&args.map, "map", DEFAULT_MAX_MAP_CELLS)?;
    let config = ClearanceConfig { distance_cap: args.cap, clearance_cap: args.cap, ..ClearanceConfig::default() };
    let vehicle = Vehicle { capability: Capability::FREE, footprint: Footprint::circle(radius)? };

    // Full annotation: classification, obstacle distance and true clearance for one capability.
    let mut full = Vec::new();
    let mut map = None;
    for _ in 0..args.repeats {
        let t = Stamp::now();
        let m = ClearanceMap::new(&occupancy, config.clone(), &[Capability::FREE])?;
        full.push(ms_since(t));
        map = Some(m);
    }
    let mut map = map.expect("repeats >= 1");
    // The two annotations alone, on the blocked flags of the capability.
    let blocked: Vec<bool> = occupancy.data.iter().map(|&v| config.classifier.classify(v) != CellClass::FREE).collect();
    let (w, h) = (map.info().width, map.info().height);
    let (mut dist, mut clear) = (Vec::new(), Vec::new());
    for _ in 0..args.repeats {
        let t = Stamp::now();
        std::hint::black_box(DistanceField::new(w, h, &blocked, args.cap));
        dist.push(ms_since(t));
        let t = Stamp::now();
        std::hint::black_box(TrueClearance::new(w, h, &blocked, args.cap));
        clear.push(ms_since(t));
    }
    let (distance_ms, clearance_ms) = (median(dist), median(clear));
    let full_ms = median(full);
    let patch_ms = median(time_patches(&mut map, args.patch_size, args.patches, args.seed)?);

    // The same with a tracked vehicle: its mask and regions are built and kept current too.
    let t = Stamp::now();
    map.track_vehicle(vehicle)?;
    let track_ms = ms_since(t);
    let vehicle_times = time_patches(&mut map, args.patch_size, args.patches, args.seed + 1)?;
    let patch_vehicle_ms = median(vehicle_times.clone());
    // Regions fall back to a global flood fill when a patch may split one: report the tail too.
    let patch_vehicle_p95_ms = quantile(vehicle_times.clone(), 0.95);
    let patch_vehicle_max_ms = quantile(vehicle_times, 1.0);

    // Region queries between random cells (most answers "unreachable" on a cluttered map).
    let mut rng = Xorshift(args.seed | 1);
    let pairs: Vec<((usize, usize), (usize, usize))> =
        (0..100_000).map(|_| ((rng.below(w), rng.below(h)), (rng.below(w), rng.below(h)))).collect();
    let t = Stamp::now();
    let mut connected = 0usize;
    for (a, b) in &pairs {
        connected += usize::from(map.same_region(&vehicle, *a, *b)?);
    }
    let region_query_us = ms_since(t) * 1e3 / pairs.len() as f64;

    let out = serde_json::json!({
        "map": args.map.display().to_string(),
        "width": w,
        "height": h,
        "cap": args.cap,
        "patch_size": args.patch_size,
        "patches": args.patches,
        "clock": if cpu_time_ns(libc::CLOCK_THREAD_CPUTIME_ID).is_some() { "thread_cpu" } else { "wall" },
        "full_ms": full_ms,
        "distance_ms": distance_ms,
        "clearance_ms": clearance_ms,
        "patch_ms": patch_ms,
        "ratio": patch_ms / full_ms,
        "track_vehicle_ms": track_ms,
        "patch_with_vehicle_ms": patch_vehicle_ms,
        "ratio_with_vehicle": patch_vehicle_ms / full_ms,
        "patch_with_vehicle_p95_ms": patch_vehicle_p95_ms,
        "patch_with_vehicle_max_ms": patch_vehicle_max_ms,
        "region_query_us": region_query_us,
        "region_pairs_connected": connected,
        "region_pairs": pairs.len(),
    });
    if args.json {
        println!("{out}");
    } else {
        let clock =
            if cpu_time_ns(libc::CLOCK_THREAD_CPUTIME_ID).is_some() { "thread CPU time" } else { "wall-clock time" };
        println!("map {} ({w}x{h}), cap {} cells, times are {clock}", args.map.display(), args.cap);
        println!(
            "full annotation (classes + distance + clearance): {full_ms:.3} ms (median of {}); distance alone {distance_ms:.3} ms, clearance alone {clearance_ms:.3} ms",
            args.repeats
        );
        println!(
            "{0}x{0} patch: {patch_ms:.4} ms median of {1}, ratio {2:.5} ({3:.3}%)",
            args.patch_size,
            args.patches,
            patch_ms / full_ms,
            100.0 * patch_ms / full_ms
        );
        println!(
            "with a circle vehicle r={}: track {track_ms:.3} ms, patch {patch_vehicle_ms:.4} ms median (ratio {:.5}), p95 {patch_vehicle_p95_ms:.4} ms, max {patch_vehicle_max_ms:.3} ms",
            args.radius,
            patch_vehicle_ms / full_ms
        );
        println!("region query: {region_query_us:.4} us ({connected} of {} random pairs connected)", pairs.len());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CPU clocks count work, not waiting: a thread that sleeps 50 ms has used almost no
    /// CPU time, while the wall clock saw the whole sleep (what `bench-nav --cpu-time` relies on
    /// when other processes keep the cores busy). This thread's clock, since the test harness
    /// runs other tests in this process at the same time; the process's clock is the sum of
    /// every thread's, read the same way.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_cpu_clock_does_not_count_waiting() {
        let (cpu, wall) = (Stamp::now(), Stamp::Wall(Instant::now()));
        assert!(matches!(cpu, Stamp::Cpu(..)), "Linux reports a thread CPU clock");
        std::thread::sleep(std::time::Duration::from_millis(50));
        let (cpu_ms, wall_ms) = (ms_since(cpu), ms_since(wall));
        assert!(wall_ms >= 50.0, "{wall_ms} ms");
        assert!(cpu_ms < 25.0, "{cpu_ms} ms of CPU time while asleep");
        // And it counts work: a busy loop of 20 ms of wall time shows some (how much depends on
        // what else the core ran meanwhile).
        let (cpu, wall) = (Stamp::now(), Instant::now());
        let mut x = 0u64;
        while wall.elapsed().as_millis() < 20 {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        assert!(ms_since(cpu) > 0.0, "{x} steps counted no CPU time");
    }
}
