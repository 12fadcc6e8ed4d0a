//! `blockstar bench-fleet`: what each vehicle profile beyond the first costs on one map, in heap
//! bytes per cell and in patch time, measured side by side with a single profile and with one
//! planner per vehicle (one node per footprint, Nav2's way), and the bytes per cell of the
//! shared annotations and of each profile's own structures, by component; and the time to
//! prepare the map (`set_map`) and to apply a patch (median, p95, largest), in the process's CPU
//! time (every thread's: the cluster graph is built in parallel).
//!
//! Profiles are named as Nav2's `planner_plugins` and given parameters as the node's
//! `<profile>.<parameter>` names: `--profiles amr,tugger --set tugger.min_turning_radius=0.8`.
//! An unprefixed `--set NAME=VALUE` applies to every profile.

use super::bench_clearance::{median, ms_since, Stamp, Xorshift};
use super::plan::with_assignment;
use super::{CliError, CliResult};
use crate::map_io::load_map_file;
use crate::memory::{heap, minor_faults};
use crate::params::NodeParams;
use crate::planner::{Fleet, Planner, PlannerConfig};
use std::path::PathBuf;

/// Arguments of `blockstar bench-fleet`.
#[derive(Debug, clap::Args)]
pub struct BenchFleetArgs {
    /// Map file: a map_server YAML or a Moving AI `.map`.
    #[arg(long)]
    pub map: PathBuf,
    /// Measure on the map repeated from its origin to `WIDTHxHEIGHT` cells, as `bench-nav
    /// --tile` builds it (at most 100 000 000 cells).
    #[arg(long, value_parser = super::bench_nav::parse_size)]
    pub tile: Option<(usize, usize)>,
    /// The profiles' names, the default first (Nav2's `planner_plugins`).
    #[arg(long, value_delimiter = ',', default_value = "GridBased")]
    pub profiles: Vec<String>,
    /// `NAME=VALUE` (every profile) or `PROFILE.NAME=VALUE` (that profile), checked as the node
    /// checks its parameters.
    #[arg(long = "set", value_name = "[PROFILE.]NAME=VALUE")]
    pub set: Vec<String>,
    /// Random square patches to time.
    #[arg(long, allow_negative_numbers = true, default_value_t = 200)]
    pub patches: usize,
    /// Side of each patch (cells).
    #[arg(long, allow_negative_numbers = true, default_value_t = 10)]
    pub patch_size: usize,
    /// Rounds of the side-by-side patch timing (the fleet and the first profile alone
    /// alternate; each round patches anew, so every patch changes cells).
    #[arg(long, allow_negative_numbers = true, default_value_t = 3)]
    pub rounds: usize,
    /// Seed of the patches.
    #[arg(long, allow_negative_numbers = true, default_value_t = 1)]
    pub seed: u64,
}

/// The profiles' parameters: every unprefixed assignment for all, then each profile's own.
fn profile_configs(args: &BenchFleetArgs) -> Result<Vec<(String, PlannerConfig)>, CliError> {
    let (shared, own): (Vec<&String>, Vec<&String>) = args.set.iter().partition(|a| {
        let name = a.split_once('=').map_or(a.as_str(), |(n, _)| n);
        !name.contains('.')
    });
    let mut base = NodeParams::default();
    for a in shared {
        base = with_assignment(&base, a)?;
    }
    let mut out = Vec::new();
    for name in &args.profiles {
        let mut params = base.clone();
        for a in &own {
            let (target, rest) = a.split_once('.').expect("partitioned on a dot");
            if !args.profiles.iter().any(|p| p == target) {
                return Err(CliError(format!("--set {a}: there is no profile {target:?} in --profiles")));
            }
            if target == name {
                params = with_assignment(&params, rest)?;
            }
        }
        out.push((name.clone(), params.planner));
    }
    Ok(out)
}

/// Heap bytes held now (the counting allocator is installed in `blockstar`).
fn heap_bytes() -> Result<u64, CliError> {
    heap().map(|h| h.bytes).ok_or_else(|| CliError("heap figures need the counting allocator".into()))
}

/// Runs `blockstar bench-fleet`.
pub fn run(args: &BenchFleetArgs) -> CliResult {
    if args.patches == 0 || args.patch_size == 0 || args.rounds == 0 {
        return Err(CliError("--patches, --patch-size and --rounds must be at least 1".into()));
    }
    let configs = profile_configs(args)?;
    let map = load_map_file(&args.map, "map", configs[0].1.max_map_cells)?;
    let map = match args.tile {
        None => map,
        Some((w, h)) => {
            map.tiled(w, h, configs[0].1.max_map_cells).map_err(|e| CliError(format!("--tile {w}x{h}: {e}")))?
        }
    };
    let cells = (map.info.width * map.info.height) as f64;
    let lddb = Planner::new(configs[0].1.clone())?.lddb().clone();

    // 1. Heap: one profile, then the whole fleet, then one planner per vehicle.
    //    Each set_map also timed: the preparation of the map for them.
    let before = heap_bytes()?;
    let mut one = Fleet::with_lddb(configs[..1].to_vec(), lddb.clone())?;
    let t = Stamp::now_all_threads();
    one.set_map(map.clone())?;
    let prepare_one_ms = ms_since(t);
    let one_bytes = heap_bytes()?.saturating_sub(before);
    let before = heap_bytes()?;
    let mut fleet = Fleet::with_lddb(configs.clone(), lddb.clone())?;
    let t = Stamp::now_all_threads();
    fleet.set_map(map.clone())?;
    let prepare_fleet_ms = ms_since(t);
    let fleet_bytes = heap_bytes()?.saturating_sub(before);
    let before = heap_bytes()?;
    let mut separate = Vec::new();
    for (_, config) in &configs {
        let mut p = Planner::with_lddb(config.clone(), lddb.clone())?;
        p.set_map(map.clone())?;
        separate.push(p);
    }
    let separate_bytes = heap_bytes()?.saturating_sub(before);
    drop(separate);
    // Those planners exist only to be weighed; what their drop freed is handed back as the
    // library does after replacing a map (`memory::trim_heap`), so the patches below find the
    // allocator as a node would.
    crate::memory::trim_heap();
    let extra = (configs.len() - 1).max(1) as f64;

    // 2. Patches: the same random patches on the fleet and on the first profile alone, in
    //    alternating rounds (the machine's drift falls on both).
    let (w, h) = (map.info.width, map.info.height);
    let side = args.patch_size.min(w).min(h);
    let mut rng = Xorshift::seeded(args.seed);
    let s = side as i64;
    let (mut fleet_ms, mut one_ms) = (Vec::new(), Vec::new());
    // The first profile's patches with the page faults each took: whether the largest ones
    // are work or the kernel mapping in memory first touched.
    let mut one_faults = Vec::new();
    // And the allocations each made: whether they are the allocator's first requests.
    let mut one_allocations = Vec::new();
    let allocations = || crate::memory::heap().map_or(0, |h| h.allocations);
    for _ in 0..args.rounds {
        // New patches every round: a patch repeated would change nothing the second time.
        let patches: Vec<(i64, i64, Vec<i8>)> = (0..args.patches)
            .map(|_| {
                let (x, y) = (rng.below(w - side + 1) as i64, rng.below(h - side + 1) as i64);
                let data = (0..side * side).map(|_| if rng.below(100) < 30 { 100 } else { 0 }).collect();
                (x, y, data)
            })
            .collect();
        for (x, y, data) in &patches {
            let t = Stamp::now_all_threads();
            fleet.apply_patch(*x, *y, s, s, data)?;
            fleet_ms.push(ms_since(t));
            let (faults, allocated) = (minor_faults(), allocations());
            let t = Stamp::now_all_threads();
            one.apply_patch(*x, *y, s, s, data)?;
            one_ms.push(ms_since(t));
            one_faults.push(minor_faults() - faults);
            one_allocations.push(allocations() - allocated);
        }
    }
    let tail = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (super::bench_nav::percentile(&v, 0.95), v.last().copied().unwrap_or(0.0))
    };
    let mut largest: Vec<(usize, f64)> = one_ms.iter().copied().enumerate().collect();
    largest.sort_by(|a, b| b.1.total_cmp(&a.1));
    let largest: Vec<serde_json::Value> = largest
        .iter()
        .take(5)
        .map(|&(i, ms)| {
            serde_json::json!({
                "patch": i,
                "ms": ms,
                "minor_faults": one_faults[i],
                "allocations": one_allocations[i],
                "fleet_ms": fleet_ms[i],
            })
        })
        .collect();
    let median_allocations = median(one_allocations.iter().map(|&a| a as f64).collect());
    let patches_faulting = one_faults.iter().filter(|&&f| f > 0).count();
    let first_patches: Vec<serde_json::Value> = (0..one_ms.len().min(5))
        .map(|i| serde_json::json!({ "ms": one_ms[i], "minor_faults": one_faults[i], "allocations": one_allocations[i] }))
        .collect();
    let ((fleet_p95, fleet_max), (one_p95, one_max)) = (tail(fleet_ms.clone()), tail(one_ms.clone()));
    let (fleet_patch, one_patch) = (median(fleet_ms), median(one_ms));
    // 3. By component, from the structures themselves (HeapSize: bytes of the buffers they own).
    let per_cell = |b: usize| b as f64 / cells;
    let (site, bytes) = fleet.memory().expect("a map is held");
    let components: Vec<serde_json::Value> = fleet
        .names()
        .iter()
        .zip(bytes)
        .map(|(name, own)| {
            let mut o = super::bytes_per_cell(&own.components(), cells);
            o["profile"] = serde_json::json!(name);
            o
        })
        .collect();
    let out = serde_json::json!({
        "map": args.map.display().to_string(),
        "cells": cells,
        "profiles": args.profiles,
        "heap_one_profile_bytes_per_cell": one_bytes as f64 / cells,
        "heap_fleet_bytes_per_cell": fleet_bytes as f64 / cells,
        "heap_per_extra_profile_bytes_per_cell": (fleet_bytes as f64 - one_bytes as f64) / extra / cells,
        "heap_one_planner_per_vehicle_bytes_per_cell": separate_bytes as f64 / cells,
        "shared_bytes_per_cell": per_cell(site.total()),
        "shared_by_component_bytes_per_cell": super::bytes_per_cell(&site.components(), cells),
        "profile_bytes_per_cell": components,
        "patch_size": side,
        "patches": args.patches,
        "rounds": args.rounds,
        "patch_fleet_ms": fleet_patch,
        "patch_one_profile_ms": one_patch,
        "patch_ratio": fleet_patch / one_patch,
        "patch_fleet_p95_max_ms": [fleet_p95, fleet_max],
        "patch_one_profile_p95_max_ms": [one_p95, one_max],
        "patch_one_profile_largest": largest,
        "patch_one_profile_faulting": patches_faulting,
        "patch_one_profile_median_allocations": median_allocations,
        "patch_one_profile_first": first_patches,
        "prepare_one_profile_ms": prepare_one_ms,
        "prepare_one_profile_ns_per_cell": prepare_one_ms * 1e6 / cells,
        "prepare_fleet_ms": prepare_fleet_ms,
    });
    println!("{}", serde_json::to_string_pretty(&out).map_err(|e| CliError(e.to_string()))?);
    Ok(())
}
