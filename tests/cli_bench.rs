//! `blockstar bench` as a user runs it: every algorithm name, the JSON report's fields, the
//! octile errors against the scenario file's optimal lengths, and the side-by-side ratio column.

use std::path::PathBuf;
use std::process::Command;

fn movingai(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/movingai").join(name)
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
