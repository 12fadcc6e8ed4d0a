//! `blockstar bench` as a user runs it: every algorithm name, the JSON report's fields, the
//! octile errors against the scenario file's optimal lengths, and the side-by-side ratio column.

use std::path::PathBuf;
use std::process::Command;

fn movingai(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/movingai").join(name)
}

fn bench(extra: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_blockstar"))
        .args(["bench", "--map"])
        .arg(movingai("arena2.map"))
        .arg("--scen")
        .arg(movingai("arena2.map.scen"))
        .args(extra)
        .output()
        .expect("run blockstar");
    assert!(out.status.success(), "blockstar bench failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("one JSON object on stdout")
}

#[test]
fn every_algorithm_reports_its_fields_side_by_side() {
    let names = [
        "block-aa",
        "block-oct",
        "block-tile",
        "astar-oct",
        "astar-euc",
        "theta",
        "lazy-theta",
        "block-aa+ps",
        "theta+ps",
    ];
    // The first 60 scenarios (the file lists them from short to long): quick, and every
    // algorithm answers them all.
    let v = bench(&["--algo", &names.join(","), "--limit", "60", "--json"]);
    let algos = v["algorithms"].as_array().expect("algorithms array");
    assert_eq!(algos.len(), names.len());
    for (a, name) in algos.iter().zip(names) {
        assert_eq!(a["name"], name);
        assert_eq!(a["queries"], 60, "{name}");
        assert_eq!(a["solved"], 60, "{name}: every arena2 scenario has a path");
        for field in ["mean_ms", "median_ms", "p95_ms", "mean_expansions", "mean_length", "queries_per_s"] {
            assert!(a[field].as_f64().is_some_and(|x| x.is_finite() && x >= 0.0), "{name}: {field} = {}", a[field]);
        }
        assert!(a["median_vs_first"].as_f64().is_some_and(|x| x.is_finite() && x > 0.0), "{name}");
        // Octile algorithms (without smoothing) are checked against the scenario file.
        let octile = matches!(name, "block-oct" | "astar-oct" | "astar-euc");
        match a.get("max_abs_err").and_then(|e| e.as_f64()) {
            Some(err) => {
                assert!(octile, "{name} reports an octile error");
                assert!(err < 1e-3, "{name}: optimal lengths reproduced, error {err}");
            }
            None => assert!(!octile, "{name} must report max_abs_err"),
        }
        match a.get("not_optimal").and_then(|n| n.as_u64()) {
            Some(n) => assert!(octile && n == 0, "{name}: {n} lengths outside the printed precision"),
            None => assert!(!octile, "{name} must report not_optimal"),
        }
    }
    assert_eq!(algos[0]["median_vs_first"], 1.0);
    // Any-angle paths are never longer than octile ones on the same queries (the octile lengths
    // use cell centres, the any-angle ones cell corners: same offsets, same geometry).
    let len = |i: usize| algos[i]["mean_length"].as_f64().unwrap_or(f64::NAN);
    assert!(len(0) <= len(1) + 1e-9, "block-aa {} vs block-oct {}", len(0), len(1));
    assert!(len(5) <= len(3) + 1e-9, "theta {} vs astar-oct {}", len(5), len(3));
    // Tile paths are never shorter than octile ones.
    assert!(len(2) >= len(1) - 1e-9);
}

#[test]
fn threads_share_one_database_and_give_the_same_answers() {
    let one = bench(&["--algo", "block-aa,block-oct", "--limit", "40", "--json"]);
    let two = bench(&["--algo", "block-aa,block-oct", "--limit", "40", "--threads", "2", "--json"]);
    assert_eq!(two["threads"], 2);
    for (a, b) in
        one["algorithms"].as_array().into_iter().flatten().zip(two["algorithms"].as_array().into_iter().flatten())
    {
        assert_eq!(a["solved"], b["solved"]);
        assert_eq!(a["mean_length"], b["mean_length"], "{}", a["name"]);
        assert_eq!(a["mean_expansions"], b["mean_expansions"], "{}", a["name"]);
    }
}

#[test]
fn bad_arguments_are_refused_with_a_reason() {
    for (args, want) in [
        (vec!["--algo", "block-zz"], "unknown algorithm"),
        (vec!["--algo", "block-aa", "--threads", "0"], "--threads"),
        (vec!["--algo", "block-aa", "--los", "sideways"], "unknown --los"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_blockstar"))
            .args(["bench", "--map"])
            .arg(movingai("arena2.map"))
            .arg("--scen")
            .arg(movingai("arena2.map.scen"))
            .args(&args)
            .output()
            .expect("run blockstar");
        assert!(!out.status.success(), "{args:?} accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

/// A benchmark of no pairs is refused before any work (bench-nav's printed a table of NaN).
#[test]
fn a_benchmark_of_no_pairs_is_refused() {
    for command in ["bench-nav", "bench-budget"] {
        let out = Command::new(env!("CARGO_BIN_EXE_blockstar"))
            .args([command, "--map"])
            .arg(movingai("arena2.map"))
            .args(["--pairs", "0"])
            .output()
            .expect("run blockstar");
        assert!(!out.status.success(), "{command} --pairs 0 accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--pairs must be at least 1"), "{err}");
    }
}

/// A fresh directory under the system's temporary directory for one test.
fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("blockstar-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch directory");
    dir
}

/// Runs `scripts/bench_ratios.py` on maps in `data` with the test build of `blockstar`.
fn bench_ratios(data: &std::path::Path, maps: &[&str]) -> std::process::Output {
    Command::new("python3")
        .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/bench_ratios.py"))
        .args(["--rounds", "2", "--bin", env!("CARGO_BIN_EXE_blockstar"), "--data"])
        .arg(data)
        .args(maps)
        .output()
        .expect("run python3")
}

#[test]
fn bench_ratios_script_prints_one_row_per_map_and_fails_on_unsolved_queries() {
    let dir = scratch_dir("ratios");
    let grid = "..........\n..........\n....@.....\n....@.....\n....@.....\n..........\n";
    std::fs::write(dir.join("wall.map"), format!("type octile\nheight 6\nwidth 10\nmap\n{grid}")).unwrap();
    // Octile optimal lengths of the three queries around the wall.
    std::fs::write(
        dir.join("wall.map.scen"),
        "version 1\n0\twall.map\t10\t6\t0\t2\t9\t3\t10.24264069\n\
         0\twall.map\t10\t6\t0\t0\t9\t5\t11.07106781\n0\twall.map\t10\t6\t1\t4\t8\t4\t7.82842712\n",
    )
    .unwrap();
    let out = bench_ratios(&dir, &["wall"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    let row = text.lines().find(|l| l.starts_with("wall ")).unwrap_or_else(|| panic!("no row for wall:\n{text}"));
    let cols: Vec<&str> = row.split_whitespace().collect();
    // map, block-aa median, two lo/med/hi ratio triples, two mean lengths.
    assert_eq!(cols.len(), 6, "{row}");
    // Timings of microsecond queries on a 10x6 map are noise and a ratio may print as 0.0: only
    // the shape is checked here (three ordered, non-negative ratios).
    for triple in &cols[2..4] {
        let r: Vec<f64> = triple.split('/').map(|x| x.parse().expect("a ratio")).collect();
        assert!(r.len() == 3 && r[0] >= 0.0 && r[0] <= r[1] && r[1] <= r[2], "{row}");
    }
    // Any-angle lengths are at most the octile ones: (10.243 + 11.071 + 7.828) / 3.
    let block_len: f64 = cols[4].parse().unwrap();
    assert!(block_len > 8.0 && block_len <= 9.7142 + 1e-3, "{row}");

    // A goal walled in: no algorithm solves it, and the script says so and fails.
    let grid = ".....\n.@@@.\n.@.@.\n.@@@.\n.....\n";
    std::fs::write(dir.join("ring.map"), format!("type octile\nheight 5\nwidth 5\nmap\n{grid}")).unwrap();
    std::fs::write(dir.join("ring.map.scen"), "version 1\n0\tring.map\t5\t5\t0\t0\t2\t2\t0\n").unwrap();
    let out = bench_ratios(&dir, &["ring"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("solved 0 of 1"), "{}", String::from_utf8_lossy(&out.stderr));
    // A map that is not there.
    let out = bench_ratios(&dir, &["missing"]);
    assert_eq!(out.status.code(), Some(1));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `bench-nav` at turning radius 0 (the pipeline alone): every pair a disc that turns on the spot
/// can join (decided by the benchmark's own flood fill on a quarter-cell lattice) is solved, and
/// every trajectory passes the independent verification. Directional A* needs a radius, so it is
/// refused at 0 with the reason.
#[test]
fn bench_nav_at_radius_zero_solves_every_disc_reachable_pair() {
    let run = |algo: &str| {
        Command::new(env!("CARGO_BIN_EXE_blockstar"))
            .args(["bench-nav", "--map"])
            .arg(movingai("arena2.map"))
            .args(["--pairs", "40", "--robot-radius", "1.5", "--min-turning-radius", "0", "--json", "--algo", algo])
            .output()
            .expect("run blockstar")
    };
    let out = run("pipeline");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let a = &v["algorithms"][0];
    assert!(a["disc_reachable"].as_u64().unwrap() > 30, "{a}");
    assert_eq!(a["solved_disc_reachable"], a["disc_reachable"], "{a}");
    assert_eq!(a["verified"], a["solved"], "{a}");
    // The planner's map structures by component: the occupancy values are one byte a cell, and
    // the components add up to the total.
    let s = &v["structures_bytes_per_cell"][0];
    assert_eq!(s["shared"]["occupancy"].as_f64(), Some(1.0), "{s}");
    let sum = |o: &serde_json::Value| {
        o.as_object().unwrap().iter().filter(|(k, _)| *k != "total").map(|(_, v)| v.as_f64().unwrap()).sum::<f64>()
    };
    for part in ["shared", "profile"] {
        assert!((sum(&s[part]) - s[part]["total"].as_f64().unwrap()).abs() < 1e-9, "{s}");
    }
    assert!(s["profile"]["blocks"].as_f64().unwrap() > 0.0, "{s}");
    assert!(v["thread_stores_bytes_per_cell"].as_f64().unwrap() > 0.0, "{v}");
    let out = run("pipeline,directional-24");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("or 0 with --algo pipeline alone"));
}

/// `blockstar bench-fleet` on depot with two profiles: the fleet holds less than one planner per
/// vehicle and more than its first profile alone, and a patch reaches both; an assignment to a
/// profile not in `--profiles` is refused naming it.
#[test]
fn bench_fleet_reports_what_a_second_profile_costs() {
    let depot = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/ros_maps/depot.yaml");
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_blockstar"))
            .args(["bench-fleet", "--map"])
            .arg(&depot)
            .args(["--profiles", "amr,tugger", "--set", "robot_radius=0.22", "--patches", "20", "--rounds", "1"])
            .args(extra)
            .output()
            .expect("run blockstar")
    };
    let out = run(&["--set", "tugger.robot_radius=0.45", "--set", "tugger.min_turning_radius=0.8"]);
    assert!(out.status.success(), "bench-fleet failed: {}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object on stdout");
    let f = |k: &str| v[k].as_f64().unwrap_or_else(|| panic!("{k} missing in {v}"));
    assert!(f("heap_one_profile_bytes_per_cell") > 1.0);
    assert!(f("heap_fleet_bytes_per_cell") > f("heap_one_profile_bytes_per_cell"));
    assert!(f("heap_fleet_bytes_per_cell") < f("heap_one_planner_per_vehicle_bytes_per_cell"));
    assert!(f("heap_per_extra_profile_bytes_per_cell") > 0.0);
    assert!(f("patch_fleet_ms") > 0.0 && f("patch_one_profile_ms") > 0.0);
    for (k, median) in
        [("patch_fleet_p95_max_ms", "patch_fleet_ms"), ("patch_one_profile_p95_max_ms", "patch_one_profile_ms")]
    {
        let (p95, max) = (v[k][0].as_f64().expect(k), v[k][1].as_f64().expect(k));
        assert!(f(median) <= p95 && p95 <= max, "{k}: {p95} {max} against the median {}", f(median));
    }
    assert!(f("prepare_one_profile_ms") > 0.0 && f("prepare_fleet_ms") > 0.0);
    assert!((f("prepare_one_profile_ns_per_cell") - f("prepare_one_profile_ms") * 1e6 / f("cells")).abs() < 1e-6);
    // The components the structures count (their buffers) add up to what the allocator counted
    // for the fleet, less what does not grow with the map: the Directional A* tables (under
    // 2 MB here) and allocator rounding (3%).
    let profiles = v["profile_bytes_per_cell"].as_array().expect("profile_bytes_per_cell");
    let counted = f("shared_bytes_per_cell") + profiles.iter().map(|p| p["total"].as_f64().unwrap()).sum::<f64>();
    let (heap, cells) = (f("heap_fleet_bytes_per_cell"), f("cells"));
    let unaccounted = (heap - counted) * cells;
    assert!(
        counted <= heap * 1.001 && unaccounted < 0.03 * heap * cells + 2e6,
        "components {counted} vs heap {heap} bytes per cell ({unaccounted} bytes unaccounted)"
    );
    // --tile measures on the map repeated (depot is 604 x 307 cells).
    let out = run(&["--tile", "700x400"]);
    assert!(out.status.success(), "bench-fleet --tile failed: {}", String::from_utf8_lossy(&out.stderr));
    let tiled: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object on stdout");
    assert_eq!(tiled["cells"].as_f64(), Some(280_000.0), "{tiled}");
    let out = run(&["--set", "forklift.robot_radius=0.45"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("forklift"), "{err}");
}

/// `blockstar bench-budget` on depot with a polygon footprint: every run is either answered
/// before its stop or measured after it, runs are stopped in mid-plan (the figures exist), and
/// a stopped plan answers with the stop's status (TIMEOUT for a deadline, SUPERSEDED for a
/// cancel) unless it had a path or another answer in hand at the moment it was stopped. Only
/// counts are checked: lateness is wall-clock time, measured by the benchmark, not asserted.
#[test]
fn bench_budget_stops_plans_in_mid_search_with_the_stops_status() {
    let depot = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/ros_maps/depot.yaml");
    let out = Command::new(env!("CARGO_BIN_EXE_blockstar"))
        .args(["bench-budget", "--map"])
        .arg(&depot)
        .args(["--pairs", "3", "--fractions", "0.1,0.6", "--min-turning-radius", "0.6", "--json"])
        .args(["--footprint", "[[0.5, 0.2], [0.5, -0.2], [-0.1, -0.2], [-0.1, 0.2]]"])
        .output()
        .expect("run blockstar");
    assert!(out.status.success(), "bench-budget failed: {}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object on stdout");
    assert_eq!(v["pairs"], 3);
    for stop in ["timeout", "cancel"] {
        let n = |k: &str| v[stop][k].as_u64().unwrap_or_else(|| panic!("{stop}.{k} missing in {v}"));
        assert_eq!(n("after_stop") + n("finished"), 6, "{v}");
        assert!(n("other_answer") <= n("after_stop"), "{v}");
    }
    // A deadline at a tenth of a plan's own time falls inside it (a cancel, raised by another
    // thread, may come after a short plan on a busy machine: not asserted).
    let stopped = v["timeout"]["after_stop"].as_u64().unwrap();
    assert!(stopped > 0, "no run was stopped: {v}");
    assert!(v["timeout"]["max_ms"].as_f64().is_some_and(|ms| ms >= 0.0), "{v}");
    let bad = Command::new(env!("CARGO_BIN_EXE_blockstar"))
        .args(["bench-budget", "--map"])
        .arg(&depot)
        .args(["--fractions", "0.5,1.5"])
        .output()
        .expect("run blockstar");
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--fractions"));
}
